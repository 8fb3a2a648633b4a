"""OTLP/HTTP logs at `POST /v1/logs`: protobuf or JSON, each log record one event (see docs/shippers.md)."""
