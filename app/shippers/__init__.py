"""Events in from the log shippers teams already run: OTLP/HTTP logs, Elasticsearch's bulk API, Loki's push API.

Each protocol decodes its body into events and stores them through the path of `POST /v1/ingest`
(app/ingest/batches.py), and answers, errors included, in the protocol's own shape (`error_shapes`).
"""
