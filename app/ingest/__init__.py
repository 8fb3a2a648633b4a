"""Ingest: POST /v1/ingest/{dataset} and the shippers' bodies, parsed as they stream in, flattened to rows and
written with binary COPY into the partitioned `events` table."""
