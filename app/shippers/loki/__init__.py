"""Loki's push API at `POST /v1/loki/api/v1/push`: JSON, or snappy-compressed protobuf (`logproto.PushRequest`)."""
