"""What a serving process would otherwise do inside its first notification, done when it starts.

In a profile of a fresh `beacon serve` (py-spy, 1 kHz, bench/alertmanager.py), its first notification waited for
SQLAlchemy configuring its mappers (~40 ms, at the first ORM object: the notifier its claim reads), Jinja compiling
the message's templates (~11 ms) and msgspec learning the types it decodes (~5 ms): ~60 ms of one-time work on the
path of the first page after a start. A process does it once, before it takes requests: ~0.3 s of CPU on a
slow machine, 0.03 s when a process before it kept the compiled templates on disk (adapters/templating.py,
bench/first_use.py).
"""

from __future__ import annotations

import msgspec
from sqlalchemy.orm import configure_mappers

from adapters.contract import Event
from adapters.registry import AdapterRegistry
from adapters.templating import templates_of
from app.notifiers.service import Sealed


def prepare_first_use(adapters: AdapterRegistry) -> None:
    configure_mappers()
    for struct in (Event, Sealed):
        msgspec.json.Decoder(struct)  # the type's decoding plan, kept on the type
    for adapter_cls in adapters.values():
        templates_of(adapter_cls).compile_all()
