"""Helpers shared by the graph modules: timed nodes and the trace convention.

Every node returns a partial state update. It may include a ``"_trace"`` dict of details
(scores, routes, queries...); :func:`timed` pops it and appends one trace entry
``{"node", "elapsed_s", **details}`` to the state's ``trace``, so every run carries a
trace of every step with its time. Details are also sent as a custom stream event
(``stream_mode="custom"``) while the run goes on.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import time
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, TypeVar, cast

import typing_extensions as tx
from langgraph.managed.base import is_managed_value
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import Overwrite
from langgraph.typing import ContextT as C

from ..errors import ConfigError
from ..setting_values import RUN_SETTINGS, check_values, recorded_settings, refuse_other_settings
from ..settings import context_of
from ..state.types import Node
from ..tools.aio import is_async

if TYPE_CHECKING:
    from ..components import Components

S = TypeVar("S")

Routes = dict[Hashable, str]
"""A conditional edge's path map: each route the router may return -> the node it leads to."""


def components_of(components: Any, builder: str) -> Components:
    """The :class:`~ragraphs.components.Components` a graph builder runs with: ``components``, or
    the embedded defaults for None. Anything else (a vector store, a chat model, a dict) is a
    :class:`ConfigError` naming its type: it built a graph that failed in its first node with an
    AttributeError until 2026-11-30."""
    from ..components import Components, default_components

    if components is None:
        return default_components()
    if isinstance(components, Components):
        return components
    from langchain_core.language_models import BaseLanguageModel
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.vectorstores import VectorStore

    name = (f"the class {components.__name__} (not an instance of it)" if isinstance(components, type)
            else type(components).__name__)
    if isinstance(components, (VectorStore, BaseRetriever)):
        hint = "; pass Components(vectorstore=...) for a vector store or retriever of yours"
    elif isinstance(components, BaseLanguageModel) or callable(getattr(components, "invoke", None)):
        hint = "; pass Components(llm=...) for a chat model of yours"
    elif isinstance(components, dict):
        hint = "; pass Components(**that_dict), e.g. Components(llm=..., vectorstore=...)"
    else:
        hint = "; e.g. Components(vectorstore=...) or Components(llm=...)"
    raise ConfigError(f"{builder}: components must be a ragraphs Components (or None for the embedded "
                      f"defaults), got {name}{hint}")


def _emit(runtime: Any, entry: dict) -> None:
    writer = getattr(runtime, "stream_writer", None)
    if writer is None:
        return
    try:
        writer({"event": "node_trace", **entry})
    except Exception:  # a stream writer must never break a run
        pass


def _caller(fn: Callable[..., Any]) -> Callable[[Any, Any], Any]:
    """``fn`` called as ``(state, runtime)``, in any of LangGraph's node forms: ``node(state)``,
    ``node(state, runtime)`` (by position or by name), ``node(state, config)``, and the
    parameters LangGraph injects by name, ``store`` and ``writer``, read from the runtime."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin or a callable without a signature
        return lambda state, runtime: fn(state, runtime)
    if not params or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params[1:]):
        return lambda state, runtime: fn(state, runtime)

    def config(runtime: Any) -> Any:
        from langgraph.config import get_config

        return get_config()

    given: dict[str, Callable[[Any], Any]] = {
        "runtime": lambda runtime: runtime,
        "config": config,
        "store": lambda runtime: getattr(runtime, "store", None),
        "writer": lambda runtime: getattr(runtime, "stream_writer", None),
    }
    plan: list[tuple[str | None, Callable[[Any], Any]]] = []  # (keyword or None for positional, value)
    for p in params[1:]:
        if p.name in given:
            plan.append((None if p.kind == p.POSITIONAL_ONLY else p.name, given[p.name]))
        elif p.default is not p.empty:
            continue  # a parameter of the node's own, left at its default
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and not plan:
            plan.append((None, given["runtime"]))  # node(state, rt): the runtime by position
        else:
            return lambda state, runtime: fn(state, runtime)

    def call(state: Any, runtime: Any) -> Any:
        args = [value(runtime) for key, value in plan if key is None]
        kwargs = {key: value(runtime) for key, value in plan if key is not None}
        return fn(state, *args, **kwargs)

    return call


def _with_entry(result: Any, name: str, t0: float, runtime: Any) -> Any:
    """The node's result with its trace entry: a dict update, or a ``Command`` whose update is
    one (a node that routes from inside, LangGraph's ``Command(update=..., goto=...)``)."""
    from langgraph.types import Command

    if isinstance(result, Command):
        if result.update is None or isinstance(result.update, dict):
            return dataclasses.replace(result, update=_with_entry(dict(result.update or {}), name, t0, runtime))
        return result  # an update given as pairs: passed on as it is, without an entry
    update = dict(result or {})
    details = update.pop("_trace", None) or {}
    entry = {"node": name, "elapsed_s": round(time.perf_counter() - t0, 6), **details}
    if update.get("llm_calls"):  # the eval's retrieval time leaves out the nodes that ask the LLM
        entry["llm_calls"] = update["llm_calls"]
    prior = update.get("trace")
    # a node that starts the trace afresh (Overwrite) keeps its own entry first
    update["trace"] = Overwrite([*list(prior.value or []), entry]) if isinstance(prior, Overwrite) else [entry]
    _emit(runtime, entry)
    return update


@tx.overload
def timed(name: str, fn: Node[S, C]) -> Node[S, C]: ...
@tx.overload
def timed(name: str, fn: Callable[..., Any]) -> Node[Any, Any]: ...  # async, (state), (state, config), a Command


def timed(name: str, fn: Callable[..., Any]) -> Any:
    """Wrap a node so that it records its time and details in ``trace``; an ``async def``
    node stays one (it runs under ``ainvoke`` / ``astream``). The node may be written
    ``(state, runtime)``, ``(state)`` or ``(state, config)``, and may return a ``Command``."""
    call = _caller(fn)

    if is_async(fn):
        @functools.wraps(fn)
        async def anode(state: Any, runtime: Runtime[Any]) -> Any:
            t0 = time.perf_counter()
            return _with_entry(await call(state, runtime), name, t0, runtime)

        del anode.__wrapped__  # LangGraph reads this signature, (state, runtime), not fn's
        anode.__annotations__ = {"state": dict, "runtime": Runtime, "return": dict}
        return anode

    @functools.wraps(fn)
    def node(state: Any, runtime: Runtime[Any]) -> Any:
        t0 = time.perf_counter()
        return _with_entry(call(state, runtime), name, t0, runtime)

    del node.__wrapped__  # LangGraph reads this signature, (state, runtime), not fn's
    # LangGraph injects `runtime` by the parameter's annotation
    node.__annotations__ = {"state": dict, "runtime": Runtime, "return": dict}
    return node


def _channels(schema: type) -> dict[str, tuple[Any, Callable | None]]:
    """Each key of a state TypedDict -> (its empty value, its reducer or None)."""
    import collections.abc as abc

    empty_of = {list: list, dict: dict, int: int, float: float, bool: bool, str: str, set: set,
                frozenset: frozenset, tuple: tuple, abc.Sequence: list, abc.MutableSequence: list,
                abc.Set: set, abc.MutableSet: set, abc.Mapping: dict, abc.MutableMapping: dict}  # as LangGraph's
    fields = getattr(schema, "model_fields", None) or {}  # a pydantic state: its fields' defaults
    out: dict[str, tuple[Any, Callable | None]] = {}
    for key, hint in tx.get_type_hints(schema, include_extras=True).items():
        if tx.get_origin(hint) in (tx.NotRequired, tx.Required):
            hint = tx.get_args(hint)[0]
        reducer = None
        if tx.get_origin(hint) is tx.Annotated and any(is_managed_value(m) for m in hint.__metadata__):
            continue  # LangGraph's own (RemainingSteps): read, never written
        if tx.get_origin(hint) is tx.Annotated:
            reducer = next((m for m in reversed(hint.__metadata__) if callable(m)), None)
            hint = tx.get_args(hint)[0]
        base = tx.get_origin(hint) or hint
        make = empty_of.get(base) or (base if isinstance(base, type) else None)
        try:  # a type of a user's state key (Counter, a class of their own): its empty instance
            empty = make() if make else None
        except Exception:
            empty = None
        f = fields.get(key)
        if reducer is None and f is not None and not f.is_required():  # LangGraph's reducer keys start empty
            empty = Fresh(f, empty) if f.default_factory is not None else f.default
        out[key] = (empty, reducer)
    return out


class Fresh:
    """A pydantic field's ``default_factory``, called at each reset (called once when the graph
    was built, every reset wrote that one value, until 2026-11-30); the type's empty value where
    the factory needs the validated data."""

    def __init__(self, field: Any, fallback: Any) -> None:
        self.field, self.fallback = field, fallback

    def __call__(self) -> Any:
        try:
            return self.field.get_default(call_default_factory=True)
        except Exception:
            return self.fallback


def state_dict(state: Any) -> dict:
    """A node's state as a dict: a TypedDict or pydantic state as it is, a dataclass by its
    fields (``dict()`` of one failed: 'object is not iterable', until 2026-11-30)."""
    if dataclasses.is_dataclass(state) and not isinstance(state, type):
        return {f.name: getattr(state, f.name) for f in dataclasses.fields(state)}
    return dict(state)


RUN_QUESTION_CHARS = 500


def _reset(held: dict, keep: frozenset, update: dict[str, Any], channels: dict) -> dict[str, Any]:
    """``update`` on a thread that holds an earlier run: every other key the state holds, but the
    input keys ``keep``, set back to its empty value, past its reducer (``Overwrite``)."""
    out: dict[str, Any] = {}
    for key in held:
        if key in keep or key in update or key not in channels:
            continue
        empty, reducer = channels[key]
        empty = empty() if isinstance(empty, Fresh) else empty
        out[key] = Overwrite(empty) if reducer else empty
    for key, value in update.items():
        empty, reducer = channels.get(key, (None, None))
        out[key] = Overwrite(reducer(empty, value)) if reducer else value
    return out


def _no_run_settings(where: str, schema: type) -> None:
    import warnings

    warnings.warn(f"{where}: the state {getattr(schema, '__name__', schema)} has no {RUN_SETTINGS!r} key, so a "
                  "router that reads the run's settings takes the defaults after update_state; subclass "
                  "RAGState, or declare run_settings: NotRequired[dict]", UserWarning, stacklevel=3)


def _written(value: Any, empty: Any) -> bool:
    try:
        return bool(value != empty)
    except Exception:  # a value of the user's that compares as an array: written
        return True


ENTRY = "start"
"""The name of the entry node :func:`start_at` adds."""


def start_at(
    graph: Any, first: str, *, settings: type | None = None, inputs: Iterable[str] = ("question",),
    name: str = ENTRY,
) -> None:
    """In place of ``graph.add_edge(START, first)``: an entry node ``name`` ("start"), reached
    from ``START`` only, that begins each run, then ``first``, the method's real first node (a
    plain :func:`timed` node).

    The entry node checks the input question (``question_of``, where ``"question"`` is among
    ``inputs``), refuses another method's settings class (with ``settings``, the graph's settings
    class: a :class:`ConfigError` naming both) and records the run's settings in
    ``run_settings``. Its trace entry, the run's first, names the question (``asked``). On a
    thread that already holds a run (a ``thread_id`` used again, Studio's next input on the same
    thread, ``ragraphs ask --thread`` twice) it sets every
    key of the state but the ``inputs`` back to its empty value (``Overwrite`` past its reducer)
    and its trace entry says so (``earlier_run_reset``): the new run's passages, LLM calls and
    trace are its own from its first step on, whatever the next node does (fails, pauses on
    ``interrupt()``).

    A new input always passes it (a new run); ``invoke(None, config)`` after a failure resumes at
    the failed node without passing it (the same run), and so does a loop back to ``first``.
    :func:`starts_a_run` is the older form, which resets inside the first node itself."""
    from langgraph.graph import START

    from ..state.types import question_of

    schema = graph.state_schema
    channels = _channels(schema)
    if settings is not None and RUN_SETTINGS not in channels:
        _no_run_settings(f"start_at(graph, {first!r}, settings=...)", schema)
    keep = frozenset(inputs)

    def entry(state: Any, runtime: Runtime[Any]) -> dict[str, Any]:
        t0 = time.perf_counter()
        if settings is not None:
            refuse_other_settings(getattr(runtime, "context", None), settings)
        held: dict = state_dict(state)
        asked = question_of(held) if "question" in keep else str(held.get("question") or "")
        update: dict[str, Any] = {}
        if settings is not None:  # what the routers read where LangGraph gives them no runtime
            ctx: Any = context_of(runtime, settings)
            if ctx is getattr(runtime, "context", None):  # the caller's object: changed since it was made?
                check_values(ctx)  # (a value set after it was built ran unchecked until 2026-12-03)
            update[RUN_SETTINGS] = recorded_settings(ctx)
            _warn_configurable_settings(ctx, getattr(runtime, "context", None))
        mark: dict[str, Any] = {"node": name, "elapsed_s": 0.0, "asked": asked[:RUN_QUESTION_CHARS]}
        # the thread holds an earlier run: its trace (every run's entry node writes one); a state
        # without a trace key, by its values (LangGraph hands a fresh run its reducers' empty values)
        reused = bool(held.get("trace")) if "trace" in channels else any(
            key not in keep and key in channels and not isinstance(channels[key][0], Fresh)
            and _written(held[key], channels[key][0]) for key in held)
        if reused:
            mark["earlier_run_reset"] = True  # `--trace` says so, in place of every emptied key
        mark["elapsed_s"] = round(time.perf_counter() - t0, 6)
        update["trace"] = [mark]
        _emit(runtime, mark)
        return _reset(held, keep, update, channels) if reused else update

    entry.__name__ = entry.__qualname__ = name
    graph.add_node(name, entry)
    graph.add_edge(START, name)
    graph.add_edge(name, first)


def _warn_configurable_settings(ctx: Any, given: Any) -> None:
    """A warning for run settings given the older way, in ``config["configurable"]``, which the
    graphs do not read (the run's context, ``given``, does): each one the context does not give
    (they were dropped without a word until 2026-12-03; a LangGraph server, which copies the
    context there and the configurable values into the context, says nothing)."""
    from langgraph.config import get_config

    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:  # outside a run
        return
    names = [f.name for f in dataclasses.fields(ctx) if f.name in configurable
             and not (f.name in given if isinstance(given, dict) else hasattr(given, f.name))]
    if names:
        import warnings

        warnings.warn(f"run setting(s) {', '.join(names)} given in config['configurable'] are not read: pass the run's "
                      f"settings as its context, invoke(..., context={{{names[0]!r}: ...}})", UserWarning, stacklevel=2)


class RecordedRuntime:
    """What a router reads as its runtime when LangGraph gives none (``update_state``): the
    settings its run recorded, as a dict (read them with ``context_of(runtime, YourContext)``);
    no store and a stream writer that drops what it is given."""

    def __init__(self, context: Any) -> None:
        self.context = context
        self.store = None
        self.previous = None
        self.stream_writer: Callable[[Any], None] = lambda *_: None


def _runtime_for(state: Any) -> Any:
    try:
        runtime = get_runtime()
    except Exception:  # outside a graph run
        runtime = None
    if runtime is not None:
        return runtime
    recorded = state.get(RUN_SETTINGS) if isinstance(state, dict) else None
    return RecordedRuntime(recorded if isinstance(recorded, dict) else None)


def routed(source: str, fn: Callable[..., str], path_map: Routes | None = None) -> Callable[..., str]:
    """Wrap a conditional edge's router so that its decision is a custom stream event too:
    ``{"event": "route", "node": source, "route": choice, "to": target}``.

    ``g.add_conditional_edges("evaluate", routed("evaluate", route_action, PATHS), PATHS)``
    makes ``--trace``, ``ragraphs replay --trace`` and Studio show every branch taken.

    A router that reads the run's settings (``fn(state, runtime)``) gets them from the running
    graph; LangGraph's ``update_state`` (a paused thread edited, Studio's state editing) runs the
    router again without a runtime and refused one that asks for it by parameter ("Missing
    required config key"). There the router reads the settings the run's first node recorded in
    the state (``run_settings``), so the edited thread goes on by the same route as its run.
    """

    def tell(choice: Any) -> None:
        try:
            from langgraph.config import get_stream_writer

            event = {"event": "route", "node": source, "route": choice}
            if path_map and isinstance(choice, str) and choice in path_map:
                event["to"] = path_map[choice]
            get_stream_writer()(event)
        except Exception:  # outside a graph run, or no stream: routing must never fail
            pass

    call = _caller(fn)  # router(state), (state, runtime), (state, config): as a node is called

    if is_async(fn):  # an async router stays one
        async def aroute(state: dict) -> str:
            choice = await call(state, _runtime_for(state))
            tell(choice)
            return choice

        return cast(Callable[..., str], _named_like(aroute, fn))

    def route(state: dict) -> str:
        choice = call(state, _runtime_for(state))
        tell(choice)
        return choice

    return _named_like(route, fn)


def _named_like(router: Any, fn: Callable[..., Any]) -> Any:
    """``router`` under ``fn``'s name and docstring (Studio and traces show it), with its own
    signature: LangGraph reads it, and a ``runtime`` parameter there fails update_state."""
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        if hasattr(fn, attr):
            setattr(router, attr, getattr(fn, attr))
    try:  # its return type stays: LangGraph reads a Literal of targets where no path map is given
        ret = tx.get_type_hints(fn).get("return", str)
    except Exception:
        ret = str
    router.__annotations__ = {"state": dict, "return": ret}
    return router


def nested_run() -> dict[str, Any]:
    """The run options of a method's graph run inside another graph's step (the chat's
    ``answer``, an agent's tool, a node that calls ``method_retriever``): under a checkpointer,
    ``durability="exit"``, so the method writes its checkpoints only when it stops early (an
    error, an interrupt): a resumed turn goes on from the failed step, or answers the method's
    next ``interrupt()``, and a finished run leaves none in the caller's thread (it wrote its
    state at every step until 2026-11-30; compiled without a checkpointer, for one afternoon,
    its second interrupt could never be answered). Nothing without a checkpointer above, where
    LangGraph would warn that durability has no effect."""
    from langgraph.config import get_config
    from langgraph.constants import CONF, CONFIG_KEY_CHECKPOINTER

    try:
        config = get_config()
    except RuntimeError:  # not inside a graph's step
        return {}
    return {"durability": "exit"} if (config.get(CONF) or {}).get(CONFIG_KEY_CHECKPOINTER) is not None else {}
