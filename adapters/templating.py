"""Message templates: a sandboxed Jinja environment per adapter, `StrictUndefined`, HTML autoescaped.

JSON payloads are written as JSON templates in which every value goes through the `json` filter, so a title
with quotes, newlines or `{{` can never break the payload; the output is parsed, and a template that does not
produce valid JSON fails with its name and line. Any failure raises `TemplateFailure`: nothing half-rendered is
ever sent.
"""

from __future__ import annotations

import hashlib
import json
import logging
import pickle
import traceback
import weakref
from collections.abc import MutableMapping, Sequence
from functools import cache
from importlib.metadata import version
from json.encoder import encode_basestring  # what JSONEncoder(ensure_ascii=False) writes for text
from pathlib import Path
from typing import Any

import msgspec
from jinja2 import (
    FileSystemBytecodeCache,
    FileSystemLoader,
    StrictUndefined,
    TemplateError,
    TemplateSyntaxError,
    pass_eval_context,
)
from jinja2.bccache import Bucket
from jinja2.nodes import EvalContext
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import Markup

from adapters.contract import TemplateFailure
from adapters.limits import truncate_chars
from app.shipped import TEMPLATES_DIR  # templates/ in a checkout, app/templates/ in a wheel

SHARED_DIR = TEMPLATES_DIR / "_shared"
log = logging.getLogger("beacon.templates")


_DECODE = msgspec.json.Decoder().decode
# How the `json` filter writes every value (json.dumps with these options).
_JSON = json.JSONEncoder(ensure_ascii=False, default=str)


_HTML_SAFE_JSON = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "'": "\\u0027"})


@pass_eval_context
def to_json(eval_ctx: EvalContext, value: Any) -> str:
    """The value as JSON, as `_JSON.encode` writes it; text, null, booleans and integers without the encoder: its
    `encode` sets up a new C encoder for every value but text, which was a quarter of a message's render."""
    kind = type(value)
    if kind is str:
        text = encode_basestring(value)
    elif value is None:
        text = "null"
    elif kind is bool:
        text = "true" if value else "false"
    elif kind is int:
        text = int.__repr__(value)
    else:
        text = _JSON.encode(value)
    if not eval_ctx.autoescape:
        return text
    # In HTML, as Jinja's own `tojson` writes it: still the same JSON, and no `<`, `>`, `&` or `'` that could end
    # the element or attribute it is in (a value `</p><script>` stays text).
    return Markup(text.translate(_HTML_SAFE_JSON))


def plain(value: Any) -> str:
    """Text, never markup: the shared macros produce plain text, which an HTML template must escape."""
    return str.__str__(str(value))


def oneline(value: Any) -> str:
    return " ".join(str(value).split())


def mrkdwn(value: Any) -> str:
    """Escape for chat_a's mrkdwn: `&`, `<`, `>` would otherwise start entities, links and mentions."""
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def number(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _autoescape(name: str | None) -> bool:
    return name is not None and ".html" in name


# What `getattr` finds on a plain dict: its methods, nothing else (a dict instance has no attributes of its own).
_DICT_ATTRIBUTES = frozenset(dir(dict))


class _Sandbox(ImmutableSandboxedEnvironment):
    """The sandbox, with `x.name` on a plain dict looked up as the item at once when a dict has no such attribute:
    what Jinja does too, after an AttributeError raised and caught, for every field of every message (the
    context's values are dicts)."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)

    def make_globals(self, d: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
        """A template's globals as one dict, not Jinja's ChainMap over the environment's: every render copies them
        and every `{% import %}` compares their keys, slowly through a ChainMap. Nothing changes the environment's
        globals once it is made (`_environment`)."""
        return {**self.globals, **(d or {})}


@cache
def _environment(dirs: tuple[str, ...]) -> ImmutableSandboxedEnvironment:
    env = _Sandbox(
        loader=FileSystemLoader(list(dirs)),
        undefined=StrictUndefined,
        autoescape=_autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        # Templates ship with the app (or a plugin) and are read once per process; not looked at again (two
        # file stats) on every message. A changed template takes effect when the server restarts.
        auto_reload=False,
    )
    env.filters.update(
        json=to_json, truncate_chars=truncate_chars, oneline=oneline, mrkdwn=mrkdwn, number=number, plain=plain
    )
    env.bytecode_cache = _compiled_cache(env)
    return env


class _CompiledCache(FileSystemBytecodeCache):
    """Compiled templates kept on disk: every serving process compiles every template as it starts
    (app/first_use.py), ~0.3 s of CPU on a slow machine, and ~0.03 s when it finds them compiled
    (bench/first_use.py). A file that cannot be written or read back is compiled again, never an error."""

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, EOFError, ValueError, TypeError, pickle.UnpicklingError):  # cut short, or not Jinja's
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


@cache
def _jinja_version() -> str:
    return version("jinja2")  # read from the package's metadata: once, not for each adapter's environment


def _compiled_cache(env: ImmutableSandboxedEnvironment) -> FileSystemBytecodeCache | None:
    """In Jinja's own directory for this user (created 0700 and refused unless it is the user's own: a file there
    is code that runs). A file's name holds a digest of what, beside the template's text, shapes its compiled
    code (Jinja's version, the environment's class, options, and its filters and tests with what each is passed
    besides its value: the compiled call passes it): Jinja keys it by the template's path and checks its text,
    nothing else. None where no such directory can be made (a read-only file system)."""
    shape = (
        _jinja_version(),
        type(env).__qualname__,
        env.trim_blocks,
        env.lstrip_blocks,
        env.keep_trailing_newline,
        sorted((name, str(getattr(f, "jinja_pass_arg", ""))) for name, f in env.filters.items()),
        sorted((name, str(getattr(f, "jinja_pass_arg", ""))) for name, f in env.tests.items()),
    )
    digest = hashlib.sha256(repr(shape).encode()).hexdigest()[:16]
    try:
        return _CompiledCache(pattern=f"beacon-{digest}-%s.cache")
    except (OSError, RuntimeError) as exc:
        log.info("compiled templates are not kept on disk (%s)", exc)
        return None


def _failure_from(exc: Exception, fallback: str) -> TemplateFailure:
    if isinstance(exc, TemplateSyntaxError):
        return TemplateFailure(exc.name or fallback, exc.lineno, exc.message or str(exc))
    # Jinja rewrites tracebacks so that template frames carry the template's file name and line.
    name, line = fallback, None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename.endswith(".j2"):
            name, line = _short_name(frame.filename), frame.lineno
    return TemplateFailure(name, line, str(exc) or type(exc).__name__)


def _short_name(filename: str) -> str:
    path = Path(filename)
    try:
        return str(path.relative_to(TEMPLATES_DIR))
    except ValueError:
        return path.name


_BY_TYPE: weakref.WeakKeyDictionary[type, Templates] = weakref.WeakKeyDictionary()


def templates_of(adapter_cls: Any) -> Templates:
    """An adapter type's (stateless) Templates, made once per process: its `templates_dir`, else
    `templates/<type>/` (`adapter_cls`: an adapters.base.Adapter subclass)."""
    found = _BY_TYPE.get(adapter_cls)
    if found is None:
        found = _BY_TYPE[adapter_cls] = Templates(adapter_cls.templates_dir or TEMPLATES_DIR / adapter_cls.type)
    return found


class Templates:
    """The templates of one adapter: its own directory first, then the shared macros."""

    def __init__(self, directory: Path, shared: Sequence[Path] = (SHARED_DIR,)) -> None:
        self.directory = directory
        self._env = _environment(tuple(str(d) for d in (directory, *shared)))
        self._has: dict[str, bool] = {}

    def has(self, name: str) -> bool:
        # Asked for every message; looked up once per process, as the templates themselves are (`auto_reload`).
        found = self._has.get(name)
        if found is None:
            found = self._has[name] = (self.directory / name).is_file()
        return found

    def compile_all(self) -> None:
        """Compile every template this adapter may render (its own and the shared macros) now rather than at its
        first message. One that does not compile is left as it is: its message fails with its name and line."""
        for name in self._env.list_templates(extensions=["j2"]):
            try:
                self._env.get_template(name)
            except TemplateError:
                continue

    def _label(self, name: str) -> str:
        return _short_name(str(self.directory / name))

    def text(self, name: str, **context: Any) -> str:
        try:
            return self._env.get_template(name).render(**context)
        except (TemplateError, TypeError, ValueError, KeyError, AttributeError) as exc:
            raise _failure_from(exc, self._label(name)) from None

    def json(self, name: str, **context: Any) -> dict[str, Any]:
        rendered = self.text(name, **context)
        try:
            value = _DECODE(rendered)  # msgspec: a third of json.loads' time on a message
        except (msgspec.DecodeError, UnicodeEncodeError):
            # What msgspec refuses and json.loads takes (NaN, which the `json` filter writes for a NaN value; a lone
            # surrogate) is taken as before; json.loads also names the line of what neither takes.
            try:
                value = json.loads(rendered)
            except json.JSONDecodeError as exc:
                raise TemplateFailure(self._label(name), exc.lineno, f"output is not valid JSON: {exc.msg}") from None
        if not isinstance(value, dict):
            raise TemplateFailure(self._label(name), None, "output must be a JSON object")
        return value
