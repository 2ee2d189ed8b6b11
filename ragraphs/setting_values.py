"""Checks on run settings: each value has its field's kind, a ``--set`` name exists, and
``METHOD.KEY`` settings reach their method. The context dataclasses (:mod:`ragraphs.settings`)
call :func:`check_values` when they are built; :mod:`ragraphs.settings` re-exports the rest."""

from __future__ import annotations

import abc
import difflib
import functools
import inspect
import json
import math
import numbers
import os
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, field, fields, is_dataclass, replace
from typing import Any, Literal, TypeVar, cast

from .errors import ConfigError, InputError
from .web_specs import web_spec_error as web_spec_error  # re-exported (ragraphs.settings)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _finite(v: Any) -> bool:
    try:
        return math.isfinite(float(v))
    except OverflowError:  # 10**400 from a JSON context: no float holds it
        return False


def _accepts(tp: Any, v: Any) -> tuple[bool, str]:
    """Whether ``v`` fits the field type ``tp``, and the type's name for an error message."""
    origin = typing.get_origin(tp)
    if origin is Literal:
        choices = typing.get_args(tp)
        return v in choices, "one of " + " | ".join(map(str, choices))
    if origin in (typing.Union, types.UnionType):
        oks = [_accepts(a, v) for a in typing.get_args(tp)]
        return any(ok for ok, _ in oks), " or ".join(name for _, name in oks)
    if (origin or tp) in (list, tuple, set, frozenset, Sequence):  # JSON sends each as a list; a string is none
        each = [a for a in typing.get_args(tp) if a is not Ellipsis][:1] or [Any]
        kind = "a list" + ("" if each[0] is Any else f" of items each {_accepts(each[0], None)[1]}")
        return isinstance(v, (list, tuple, set, frozenset)) and all(_accepts(each[0], x)[0] for x in v), kind
    return _accepts_one(tp, origin, v)


def _accepts_one(tp: Any, origin: Any, v: Any) -> tuple[bool, str]:
    """:func:`_accepts` for a type that is neither a choice, a union nor a list."""
    if tp is type(None):
        return v is None, "null"
    if tp is bool:
        return isinstance(v, bool), "true or false"
    if tp is int:
        return isinstance(v, numbers.Integral) and not isinstance(v, bool) and int(v) >= 0, "a whole number >= 0"
    if tp is float:  # NaN passed every comparison a cut makes (upper=nan: no question was Correct)
        return isinstance(v, numbers.Real) and not isinstance(v, bool) and _finite(v), "a number"
    if tp is str:
        return isinstance(v, (str, os.PathLike)), "a string"
    if tp is dict or origin is dict:
        return isinstance(v, dict), "an object of names and values"
    return True, str(tp)


def schema_bounds(*classes: type) -> None:
    """Give each field's bounds, as :func:`check_values` reads them (``minimum``, ``range``; a
    whole number at least 0), to pydantic too (``ge``, ``le``), so the JSON schema a LangGraph
    Studio form is drawn from (``graph.get_context_jsonschema()``) shows them: until 2026-12-01
    the form took ``k=0`` and the run refused it. The values are still checked by
    :func:`check_values` alone (LangGraph builds the context class from a dict)."""
    for cls in classes:
        hints = _hints(cls)
        for f in fields(cls):
            extra: dict[str, Any] = {"ge": 0} if hints.get(f.name) is int else {}
            if f.metadata.get("minimum") is not None:
                extra["ge"] = f.metadata["minimum"]
            if f.metadata.get("range") is not None:
                extra.update(ge=f.metadata["range"][0], le=f.metadata["range"][1])
            if extra:
                f.metadata = types.MappingProxyType({**f.metadata, **extra})


def describe_settings(cls: type) -> list[dict[str, Any]]:
    """Each setting of the context class ``cls``: name, default, kind (as :func:`check_values`
    reads it) and description."""
    hints = _hints(cls)
    try:
        ctx = cls()
    except ConfigError:  # a user's class with a setting of no default: the field defaults, that one "(required)"
        ctx = None
    rows = []
    for f in fields(cls):
        kind = _accepts(hints.get(f.name, Any), None)[1]
        if f.metadata.get("minimum") is not None:
            kind = kind.replace(">= 0", f">= {f.metadata['minimum']}")
        if f.metadata.get("range") is not None:
            kind = f"{kind.replace(' >= 0', '')} from {f.metadata['range'][0]:g} to {f.metadata['range'][1]:g}"
        default = getattr(ctx, f.name) if ctx is not None else (
            f.default if f.default is not MISSING else f.default_factory() if f.default_factory is not MISSING
            else "(required)")
        rows.append({"name": f.name, "default": default, "kind": kind,
                     "description": f.metadata.get("description", "")})
    return rows


def locked_settings(cls: type) -> set[str]:
    """The setting names ``$RAGRAPHS_LOCKED_SETTINGS`` locks; a name no settings class has (a
    typo would leave the setting open) is a :class:`ConfigError` naming the closest ones."""
    locked = {n.strip() for n in os.environ.get("RAGRAPHS_LOCKED_SETTINGS", "").split(",") if n.strip()}
    if not locked:
        return locked
    roots: list[type] = [c for c in cls.__mro__ if type(c) is NamesChecked] or [cls]
    known: set[str] = set()
    todo: list[type] = [roots[-1]]  # every settings class: the root the metaclass was first used on, and its subclasses
    while todo:
        c = todo.pop()
        known |= {f.name for f in fields(c)} if is_dataclass(c) else set()
        todo += c.__subclasses__()
    unknown = sorted(locked - known)
    if unknown:
        close = difflib.get_close_matches(unknown[0], sorted(known), n=3)
        raise ConfigError(f"RAGRAPHS_LOCKED_SETTINGS names no setting {unknown[0]!r}"
                          + (f" (did you mean {', '.join(map(repr, close))}?)" if close else ""))
    return locked


def shown_value(v: Any, limit: int = 80) -> str:
    """A setting's value in an error line as the user wrote it: ``--set``, Studio and the SDK send
    JSON, so a non-text value is shown as JSON (``true``, ``null``, ``Infinity`` for ``1e400``; it
    was Python's ``True``, ``None``, ``inf`` until 2026-11-30); text keeps its quotes (``'abc'``);
    a value JSON has no form for, as Python writes it; cut at ``limit`` characters."""
    if isinstance(v, str):
        text = repr(v)
    else:
        try:
            text = json.dumps(v, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(v)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_values(ctx: Any) -> None:
    """Each setting of the context dataclass ``ctx`` has its field's type (a number where a
    number is read, a listed choice for a ``Literal``, counts >= 0, or the field's
    ``minimum``) and passes the field's own ``check``; a :class:`ConfigError` naming the
    setting otherwise, rather than a failure deep inside a node. A setting named in
    ``$RAGRAPHS_LOCKED_SETTINGS`` (a server's list, comma-separated) must keep its default."""
    hints = _hints(ctx.__class__)
    locked = locked_settings(ctx.__class__)
    for f in fields(ctx):
        v = getattr(ctx, f.name)
        tp = hints.get(f.name, Any)
        if typing.get_origin(tp) is Literal and isinstance(v, str):  # "CFS" reads as "cfs"
            v = next((c for c in typing.get_args(tp) if isinstance(c, str) and c.lower() == v.lower()), v)
            object.__setattr__(ctx, f.name, v)
        if f.name in locked:
            _refuse_unlocked(f, v)
        ok, want = _in_bounds(f, *_accepts(tp, v), v)
        if not ok:
            # --set reads a value as JSON: reservoir_collection=2024 is a number (the shell drops "")
            hint = (f" (--set reads values as JSON: write --set {f.name}='\"{shown_value(v)}\"' for the text)"
                    if want == "a string" and isinstance(v, (numbers.Real, bool)) else "")
            raise ConfigError(f"run setting {f.name!r} must be {want}, got {shown_value(v)}{hint}")
        problem = f.metadata.get("check", lambda _: None)(v)
        if problem:
            raise ConfigError(f"run setting {f.name!r}: {problem}")


def _refuse_unlocked(f: Any, v: Any) -> None:
    """A locked setting (``$RAGRAPHS_LOCKED_SETTINGS``) keeps its default (a field without any
    default is the caller's to give: never locked)."""
    default = f.default if f.default is not MISSING else (
        f.default_factory() if f.default_factory is not MISSING else MISSING)
    if default is not MISSING and v != default:
        means = " (the server's own choice, from its environment)" if default in ("", None) else ""
        raise ConfigError(f"run setting {f.name!r} is locked here (RAGRAPHS_LOCKED_SETTINGS): it keeps its "
                          f"default {shown_value(default)}{means}")


def _in_bounds(f: Any, ok: bool, want: str, v: Any) -> tuple[bool, str]:
    """The type check's verdict with the field's own ``minimum`` and ``range`` applied, and what
    it then wants (one message for -2 and 0 alike: the field's own floor)."""
    low = f.metadata.get("minimum")
    if low is not None:
        want = want.replace(">= 0", f">= {low}")
        if ok and isinstance(v, numbers.Real) and v < low:
            ok = False
    span = f.metadata.get("range")
    if span is not None and ok and isinstance(v, numbers.Real) and not span[0] <= v <= span[1]:
        ok, want = False, f"{want.replace(' >= 0', '')} from {span[0]:g} to {span[1]:g}"
    return ok, want


RERANK_NONE = ("", "none", "off", "false", "no")


def rerank_name(value: Any) -> str:
    """A ``rerank`` value as the nodes read it: ``none`` (also blank, off, false, no), ``evaluator``
    (in any case: ``Evaluator`` was taken for a model name until 2026-11-30, night), else the
    CrossEncoder folder or cached model name as given, stripped."""
    spec = str(value if value is not None else "").strip()
    if spec.lower() in RERANK_NONE:
        return "none"
    return "evaluator" if spec.lower() == "evaluator" else spec


def rerank_error(value: Any) -> str | None:
    """What is wrong with a ``rerank`` value, found without loading a model: a bare word (no
    ``/``) that is neither none, evaluator, a folder here nor a model cached here (a typo such as
    ``evalutor`` failed only when the first question retrieved, until 2026-11-30, night). A value
    with a ``/`` (a folder, ``org/name``) is left to the loader, which names it: it may be a path
    on the LangGraph server that runs the graph, not here."""
    spec = rerank_name(value)
    if spec in ("none", "evaluator") or "/" in spec or os.sep in spec or os.path.isdir(os.path.expanduser(spec)):
        return None
    from .tools.judges.core import is_cached_model

    if is_cached_model(spec):
        return None
    near = difflib.get_close_matches(spec.lower(), ["none", "evaluator"], n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    return (f"{spec!r} is not none, evaluator, a folder here or a model in the local Hugging Face cache "
            f"(a CrossEncoder folder or a cached model name, org/name){hint}")


def rerank_field(what: str, default: str = "none") -> Any:
    """A ``rerank`` setting: none | evaluator | a CrossEncoder folder or cached name, checked by
    :func:`rerank_error`."""
    return field(default=default, metadata={"description": what, "check": rerank_error})


def web_field(what: str) -> Any:
    """A ``web`` setting (CRAG's, ERM4's): a web search spec, checked by :func:`web_spec_error`."""
    return field(default="", metadata={"description": f"{what} when the graph has none: offline:PATH | searxng:URL | "
                                                      "ddg | none (default $RAGRAPHS_WEB)", "check": web_spec_error})


# the page-fetch settings CRAG and ERM4 share: one description, default and bound (a field
# object belongs to one class, so each is made per use)
def fetch_timeout_field() -> Any:
    return field(default=5.0, metadata={"description": "socket timeout of a page fetch, in seconds; a page's "
                                        "whole fetch may take twice this", "range": (0.01, 600)})


def fetch_max_bytes_field() -> Any:
    return field(default=2_000_000, metadata={"description": "size cap of one fetched page", "minimum": 1})


def fetch_allow_private_field() -> Any:
    return field(default=False, metadata={"description": "allow fetching pages on private or loopback addresses"})


def check_setting_names(cls: type, values: dict[str, Any], method: str | None = None) -> None:
    """A :class:`ConfigError` for a key of ``values`` that ``method``'s context class lacks
    (a mistyped ``--set`` name), with the closest setting names; without ``method`` the class
    is named."""
    names = sorted(f.name for f in fields(cls))
    unknown = sorted(k for k in values if k not in names)
    if unknown:
        close = sorted({m for k in unknown for m in difflib.get_close_matches(k, names, n=2)})
        hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
        owner = f"method {method!r}" if method else cls.__name__
        raise ConfigError(f"{owner} has no setting {', '.join(map(repr, unknown))}{hint}; "
                          f"its settings: {', '.join(names)}")


def check_shared_settings(values: dict[str, Any], classes: dict[str, type]) -> None:
    """For a comparison (``classes``: method -> its context class): a plain ``KEY`` that only
    some of the methods have is a :class:`ConfigError` that names the ``METHOD.KEY`` form."""
    for key, v in values.items():
        if "." in key:
            continue
        having = [m for m, cls in classes.items() if key in {f.name for f in fields(cls)}]
        if having and len(having) < len(classes):
            lacking = [m for m in classes if m not in having]
            scoped = " ".join(f"--set {m}.{key}={json.dumps(v)}" for m in having)
            raise ConfigError(f"{key!r} is not a setting of {', '.join(lacking)}; to set it for "
                              f"{', '.join(having)} only: {scoped}")


def settings_for(method: str, values: dict[str, Any], methods: list[str] | None = None) -> dict[str, Any]:
    """The settings of ``values`` that ``method`` reads: every plain ``KEY`` and every
    ``METHOD.KEY`` scoped to it (``--set crag.upper=0.9`` beside ``--compare vanilla,crag``),
    the scope removed. A scope that names none of ``methods`` (default: ``[method]``) is a
    :class:`ConfigError`."""
    methods = methods or [method]
    out: dict[str, Any] = {}
    for key, v in values.items():
        scope, dot, name = key.rpartition(".")
        if not dot:
            out[key] = v
            continue
        if scope not in methods:
            raise ConfigError(f"setting {key!r} is scoped to {scope!r}, which is not run here ({', '.join(methods)})")
        if scope == method:
            out[name] = v
    return out


def parse_settings(pairs: list[str] | None) -> dict[str, Any]:
    """``--set KEY=VALUE`` options as a dict; a value is JSON when it parses (numbers, true,
    null, lists), else the string itself. A key given twice with two values is an
    :class:`InputError` (the last one won, silently, until 2026-12-03)."""
    out: dict[str, Any] = {}
    for kv in pairs or []:
        key, eq, val = kv.partition("=")
        if not eq or not key.strip():
            raise InputError(f"--set expects KEY=VALUE, got {kv!r}")
        try:
            value = json.loads(val)
        except ValueError:
            value = val
        if key.strip() in out and out[key.strip()] != value:
            raise InputError(f"--set {key.strip()} is given twice ({out[key.strip()]!r}, then {value!r}); give it once")
        out[key.strip()] = value
    return out


T = TypeVar("T")


def _other_settings(ctx: Any, cls: type) -> ConfigError:
    return ConfigError(f"this graph runs with {cls.__name__} (or a dict of its settings), got {type(ctx).__name__}")


def refuse_other_settings(ctx: Any, cls: type) -> None:
    """A :class:`ConfigError` when ``ctx`` is one of ragraphs' settings classes other than
    ``cls`` exactly (``DRRAGContext`` handed to the vanilla graph, whose nodes' :func:`context_in`
    takes a subclass for its base); a user's own class, a dict or none passes (read by name), as
    does ``cls`` watched for the settings a run reads (``replay``'s, ``_watches``)."""
    if ctx is None or type(ctx) is cls or getattr(type(ctx), "_watches", None) is cls or not is_dataclass(ctx):
        return
    # any module of the package: a method's own settings module too (ragraphs/settings_<method>.py, as
    # docs/extending.md has new methods keep them; only ragraphs/settings.py's were refused until 2026-12-01)
    if type(ctx).__module__.split(".")[0] == cls.__module__.split(".")[0]:
        raise _other_settings(ctx, cls)


def context_in(ctx: Any, cls: type[T], family: type) -> T:
    """A run's context ``ctx`` read as the settings class ``cls``: ``cls()`` for none, ``ctx``
    itself when it is one; a :class:`ConfigError` for another class of the ``family`` (another
    method's settings, a likely mistake); from any other object or a dict, the settings of
    ``cls`` it carries by name, checked, the rest defaults. LangGraph hands a subgraph its
    parent's context, so a user's graph with a context class of its own can run ours as a node."""
    if ctx is None:
        return cls()
    if isinstance(ctx, cls):
        return ctx
    if isinstance(ctx, family) and type(ctx).__module__.split(".")[0] == __name__.split(".")[0]:
        raise _other_settings(ctx, cls)  # another of ragraphs' own settings classes; a user's subclass is read by name
    names = [f.name for f in fields(cast(Any, cls))]
    if isinstance(ctx, Mapping):
        values = {k: ctx[k] for k in names if k in ctx}
    else:
        values = {k: getattr(ctx, k) for k in names if hasattr(ctx, k)}
    return context_from(cls, values, keep_none=True)


def context_from(cls: type[Any], values: dict[str, Any] | None = None, base: Any = None, *, keep_none: bool = False):
    """Build a context dataclass from a dict, ignoring unknown keys; clear errors for bad ones.
    A None value means "not given" (an option left unset), unless ``keep_none``: then it is the
    value a user wrote (``filter_threshold=None``: the judge's own cut)."""
    values = dict(values or {})
    names = {f.name for f in fields(cls)}
    known = {k: v for k, v in values.items() if k in names and (keep_none or v is not None)}
    try:
        if base is not None and isinstance(base, cls):
            return replace(base, **known)
        return cls(**known)
    except TypeError as e:
        raise ConfigError(f"bad run setting: {e}") from e


class NamesChecked(abc.ABCMeta):
    """The settings classes' metaclass: a setting name the class lacks is a :class:`ConfigError`
    naming the closest ones, wherever the class is built: ``RAGContext(kk=3)``, or a plain dict
    ``context={"kk": 3}``, which LangGraph turns into the graph's settings class before any node
    runs (a bare ``TypeError`` from the dataclass before). A subclass whose own ``__init__``
    takes ``**kwargs`` is left to it; ``ABCMeta``, so an ``abc.ABC`` mixin still fits."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if is_dataclass(cls):
            params: Mapping[str, inspect.Parameter]
            try:
                params = inspect.signature(cls.__init__).parameters
            except (TypeError, ValueError):  # pragma: no cover - no signature to read
                params = {}
            if params and not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
                if unknown := {k: v for k, v in kwargs.items() if k not in params}:
                    check_setting_names(cls, unknown)
                # a setting of a user's class with no default, not given (a bare TypeError until 2026-12-03)
                if missing := [n for n, p in list(params.items())[1 + len(args):]
                               if p.default is p.empty and p.kind is not p.VAR_POSITIONAL and n not in kwargs]:
                    raise ConfigError(f"{cls.__name__}: the setting {missing[0]!r} has no default: give it a value "
                                      "(--set NAME=VALUE, or in the run's context)")
        return super().__call__(*args, **kwargs)


RUN_SETTINGS = "run_settings"
"""The state key where a run's first node records the settings it runs with: the routers read
them where LangGraph gives them no runtime (``update_state``; ``ragraphs.graphs._common.routed``)."""


def recorded_settings(ctx: Any) -> dict[str, Any]:
    """A run's settings as the plain values a checkpoint keeps (a value that is not plain data,
    say a user's object, is left out: its router falls back to the default)."""
    def plain(v: Any) -> bool:
        if v is None or isinstance(v, (str, int, float, bool)):
            return True
        if isinstance(v, (list, tuple)):
            return all(plain(x) for x in v)
        if isinstance(v, dict):
            return all(isinstance(k, str) and plain(x) for k, x in v.items())
        return False

    if not is_dataclass(ctx):
        return {}
    own = getattr(ctx, "__dict__", {})  # past __getattribute__: recording them is no node reading them (replay's warning)
    values = {f.name: own[f.name] if f.name in own else getattr(ctx, f.name) for f in fields(ctx)}
    return {k: v for k, v in values.items() if plain(v)}
