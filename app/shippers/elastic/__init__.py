"""An Elasticsearch 8 cluster, as far as log shippers see one: `_bulk` and the probes they make before sending."""
