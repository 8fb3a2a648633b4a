"""Loki's `logproto.PushRequest`, the messages of Grafana's push.proto, described by hand for the `protobuf` runtime.

push.proto is small (four messages) and pulls in gogoproto's options, which mean nothing to Python: its
descriptor is written here field by field (the numbers and wire types are what make the bytes), and the
`protobuf` runtime (upb) builds the message classes from it in a pool of their own. No generated code, so no
pairing of a protoc version with the runtime's. Two deliberate differences, invisible on the wire: the line and
the labels are `bytes` (Loki's Go decoder does not check UTF-8; upb would refuse the whole request for one bad
line, where Beacon fails that entry alone), and the entry's timestamp is a local message with
google.protobuf.Timestamp's fields.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_ONE, _MANY = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
# message -> [(field, number, type, label, message type)]
_MESSAGES: dict[str, list[tuple[str, int, int, int, str]]] = {
    "Timestamp": [("seconds", 1, _F.TYPE_INT64, _ONE, ""), ("nanos", 2, _F.TYPE_INT32, _ONE, "")],
    "LabelPairAdapter": [("name", 1, _F.TYPE_BYTES, _ONE, ""), ("value", 2, _F.TYPE_BYTES, _ONE, "")],
    "EntryAdapter": [
        ("timestamp", 1, _F.TYPE_MESSAGE, _ONE, ".logproto.Timestamp"),
        ("line", 2, _F.TYPE_BYTES, _ONE, ""),
        ("structuredMetadata", 3, _F.TYPE_MESSAGE, _MANY, ".logproto.LabelPairAdapter"),
    ],
    "StreamAdapter": [
        ("labels", 1, _F.TYPE_BYTES, _ONE, ""),
        ("entries", 2, _F.TYPE_MESSAGE, _MANY, ".logproto.EntryAdapter"),
        ("hash", 3, _F.TYPE_UINT64, _ONE, ""),
    ],
    "PushRequest": [("streams", 1, _F.TYPE_MESSAGE, _MANY, ".logproto.StreamAdapter")],
}


@cache
def _classes() -> dict[str, Any]:
    file = descriptor_pb2.FileDescriptorProto(name="beacon/loki_push.proto", package="logproto", syntax="proto3")
    for name, fields in _MESSAGES.items():
        message = file.message_type.add(name=name)
        for field, number, kind, label, type_name in fields:
            message.field.add(name=field, number=number, type=kind, label=label, type_name=type_name or None)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"logproto.{name}")) for name in _MESSAGES}


def push_request() -> Any:
    """The class of `logproto.PushRequest`."""
    return _classes()["PushRequest"]


def stream_adapter() -> Any:
    return _classes()["StreamAdapter"]
