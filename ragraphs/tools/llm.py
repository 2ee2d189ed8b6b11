"""LLM factory: the embedded Gemma 3 270M GGUF (llama-cpp-python) or a LangChain chat or completion model.

Spec strings accepted by :func:`make_llm`:

- ``gemma`` (default): the bundled Gemma 3 270M base model, in process, no network.
- ``llamacpp:/path/model.gguf``: any local GGUF file, in process.
- ``openai:<model>``: an OpenAI-compatible server through langchain-openai; the URL and key
  come from ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (vLLM, llama.cpp server, Ollama, OpenAI).
- ``openai-completion:<model>``: the same server's plain completions endpoint
  (``/v1/completions``), for *base* models served remotely: the prompt is sent verbatim,
  with no chat template.
- ``fake:<answer>``: a deterministic model that always answers ``<answer>`` (tests, dry runs).

All prompts in ragraphs are plain few-shot completion prompts sent as one user message, so
they work on a base completion model (rendered verbatim, no chat template) and on a chat
model alike. :func:`complete` is the one place that calls a model and counts the call.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.language_models import BaseLanguageModel
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.language_models.llms import BaseLLM
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.errors import GraphBubbleUp
from pydantic import Field, PrivateAttr

from ..errors import ConfigError, LLMError, redact, without_userinfo
from .aio import run_to_end
from .completion_chat import CompletionChat
from .env import positive_number, whole_number
from .llama import LlamaCppCompletionChat, check_gguf, gemma_gguf_path, render_messages
from .model_marks import ModelMarks
from .text import message_text

DEFAULT_LLM = "gemma"


class FakeAnswerChat(BaseChatModel):
    """Deterministic chat model for tests and dry runs: replies from a list, cycling."""

    responses: list[str] = Field(default_factory=lambda: ["unknown"])
    _i: int = PrivateAttr(default=0)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    prompts: list[str] = Field(default_factory=list)
    keep_prompts: int | None = None  # the last this many prompts kept (None: all; ``fake:`` keeps 100)

    @property
    def _llm_type(self) -> str:
        return "fake-answer"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        with self._lock:
            text = self.responses[self._i % len(self.responses)]
            self._i += 1
            self.prompts.append(render_messages(messages))
            if self.keep_prompts is not None and len(self.prompts) > self.keep_prompts:
                del self.prompts[: -self.keep_prompts or None]
        n_in = len(render_messages(messages).split())
        msg = AIMessage(
            content=text,
            usage_metadata={"input_tokens": n_in, "output_tokens": len(text.split()), "total_tokens": n_in},
        )
        return ChatResult(generations=[ChatGeneration(message=msg)])


_CACHE: dict[tuple, BaseLanguageModel] = {}
_CACHE_LOCK = threading.Lock()


def _env_retries() -> int:
    return whole_number("RAGRAPHS_LLM_RETRIES", 1)


PLACEHOLDER_KEY = "not-needed"
"""The key sent when ``OPENAI_API_KEY`` is unset: a keyless local server takes any."""


def _key_unset_note(llm: Any, e: Exception) -> str:
    """For a refused key (HTTP 401) where ``OPENAI_API_KEY`` is unset and the placeholder was sent:
    a note saying so, in place of the server's "Incorrect API key provided: not-needed" alone
    (until 2026-11-30); "" otherwise."""
    if getattr(e, "status_code", None) != 401 and not type(e).__name__.endswith("AuthenticationError"):
        return ""
    key: Any = getattr(wrapped_model(llm), "openai_api_key", None)
    key = key.get_secret_value() if hasattr(key, "get_secret_value") else key
    if os.environ.get("OPENAI_API_KEY") or key != PLACEHOLDER_KEY:
        return ""
    return "OPENAI_API_KEY is not set (ragraphs sends a placeholder key for keyless local servers); the server said "


def _openai_kwargs(model: str, max_tokens: int, timeout: float, retries: int) -> dict:
    """Settings of an OpenAI-compatible client (chat or completions), from the environment."""
    return {
        "model": model,
        "base_url": os.environ.get("OPENAI_BASE_URL") or None,
        "api_key": os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_KEY,
        "temperature": 0.0,
        "max_tokens": max_tokens,
        "timeout": timeout,
        "max_retries": retries,
    }


def _digest(secret: str | None) -> str | None:
    import hashlib

    return hashlib.sha256(secret.encode()).hexdigest()[:16] if secret else None


def make_llm(spec: str | None = None, *, max_tokens: int = 64, timeout: float | None = None) -> BaseLanguageModel:
    """Build (once per spec, then cached) a LangChain model from a spec string: a chat model
    (``BaseChatModel``), except for ``openai-completion:<model>``, which gives langchain-openai's
    completion model ``OpenAI`` (a ``BaseLLM``). :func:`complete` calls either.

    Remote models wait at most ``RAGRAPHS_LLM_TIMEOUT`` seconds (default 120) for each read and are
    retried ``RAGRAPHS_LLM_RETRIES`` times (default 1).
    """
    spec = (spec or os.environ.get("RAGRAPHS_LLM") or DEFAULT_LLM).strip()
    kind, _, arg = spec.partition(":")
    kind = kind.lower()
    key: tuple = (spec, max_tokens)
    retries = 0
    if kind.startswith("openai"):  # the variables govern remote models only (read for every model until 2026-11-30)
        if timeout is None:  # 0 read as a connection error, a negative or NaN one inside the client
            timeout = positive_number("RAGRAPHS_LLM_TIMEOUT", 120.0)
        retries = _env_retries()
        # a remote model also depends on where it is and how it is called: a change of
        # endpoint, key, timeout or retries in the same process gets a new client
        key += (os.environ.get("OPENAI_BASE_URL"), _digest(os.environ.get("OPENAI_API_KEY")), timeout, retries)
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
    if kind in ("gemma", "llamacpp", "gguf"):
        if kind != "gemma" and not arg:
            raise ConfigError("llamacpp spec needs a path: llamacpp:/path/to/model.gguf")
        if kind != "gemma":
            check_gguf(arg)  # before any run: a file of another kind failed every call as an LLM error
        path = gemma_gguf_path() if kind == "gemma" else arg
        # one loaded model per file, whatever names it ("gemma", "Gemma", "llamacpp:" or "gguf:" its path):
        # keyed by the spec as typed, each loaded another copy until 2026-12-01; each limit is a view of it
        file_key = ("gguf-file", os.path.realpath(os.path.expanduser(path)))
        with _CACHE_LOCK:
            base = cast(LlamaCppCompletionChat | None, _CACHE.get(file_key))
            if base is None:
                base = LlamaCppCompletionChat(model_path=path, max_tokens=max_tokens)
                _CACHE[file_key] = base
        llm: BaseLanguageModel = base if base.max_tokens == max_tokens else base.with_max_tokens(max_tokens)
    elif kind == "openai":
        if not arg:
            raise ConfigError("openai spec needs a model name: openai:<model>")
        try:
            from langchain_openai import ChatOpenAI
        except ImportError as e:  # pragma: no cover
            raise ConfigError("'openai:' models need langchain-openai (pip install langchain-openai)") from e
        kw = _openai_kwargs(arg, max_tokens, cast(float, timeout), retries)
        # (a local server's copy of the limit as `max_tokens` is added per call, by complete())
        # usage in streamed replies too (Studio's messages stream): langchain-openai asks for it
        # only from api.openai.com, so a local server's runs counted no output tokens
        llm = ChatOpenAI(**kw, stream_usage=True)
    elif kind in ("openai-completion", "openai-completions"):
        if not arg:
            raise ConfigError("openai-completion spec needs a model name: openai-completion:<model>")
        from langchain_openai import OpenAI

        llm = OpenAI(**_openai_kwargs(arg, max_tokens, cast(float, timeout), retries))
    elif kind == "fake":
        # the process keeps this model: its prompts are bounded (every one was kept, a dry run of
        # 10,000 MIGRES questions about 200 MB, until 2026-12-01)
        llm = FakeAnswerChat(responses=[arg or "unknown"], keep_prompts=100)
    else:
        raise ConfigError(
            f"unknown LLM spec {spec!r}: use 'gemma', 'llamacpp:/path.gguf', 'openai:<model>', "
            "'openai-completion:<model>' or 'fake:<text>'"
        )
    with _CACHE_LOCK:
        _CACHE.setdefault(key, llm)
        return _CACHE[key]


@dataclass
class Completion:
    text: str
    input_tokens: int
    output_tokens: int
    finish_reason: str | None = None  # "length" when max_tokens cut the output (where the model says)


def llm_usage(completion: Any, calls: int = 1) -> dict:
    """State counters for one LLM completion (see :func:`complete`): ``llm_calls``,
    ``input_tokens`` and ``output_tokens``, summed by the states' reducers."""
    return {
        "llm_calls": calls,
        "input_tokens": int(getattr(completion, "input_tokens", 0)),
        "output_tokens": int(getattr(completion, "output_tokens", 0)),
    }


def complete(
    llm: BaseLanguageModel,
    prompt: str,
    *,
    stop: list[str] | None = None,
    max_tokens: int | None = None,
    grammar: str | None = None,
    response_format: dict | None = None,
    tags: list[str] | None = None,
) -> Completion:
    """Send one completion-style prompt to any chat model; returns text and token counts.

    ``grammar`` (GBNF, llama.cpp models) and ``response_format`` (OpenAI-compatible chat
    servers) constrain the output (see :mod:`ragraphs.tools.structured`); ``tags`` go to the
    call's run (``["nostream"]`` keeps it out of LangGraph's messages stream). Connection
    failures are raised as :class:`LLMError` with a one-line message.
    """
    kwargs = _call_kwargs(llm, stop, max_tokens, grammar, response_format)
    while True:
        try:
            return _reply(llm, prompt, tags, kwargs)
        except LLMError as e:
            if not _drop_refused(llm, kwargs, e):
                raise


def _drop_refused(llm: BaseLanguageModel, kwargs: dict[str, Any], e: LLMError) -> bool:
    """Whether the call may go again without the parameter its endpoint refused, for this model
    from then on: `max_tokens` (an empty extra_body too: it replaces the model's own), `stop`
    (OpenAI's reasoning models: every call failed until 2026-12-03; answers are cut after), or a
    `temperature` of a model :func:`make_llm` built (the o-series take only their default)."""
    if "extra_body" in kwargs and "max_tokens" in kwargs["extra_body"] and _refused(e, "max_tokens"):
        kwargs["extra_body"] = {k: v for k, v in kwargs["extra_body"].items() if k != "max_tokens"}
        _NO_EXTRA_MAX.add(llm)
        return True
    if "stop" in kwargs and _refused(e, "stop"):
        del kwargs["stop"]
        _NO_STOP.add(wrapped_model(llm))
        return True
    model = wrapped_model(llm)
    if getattr(model, "temperature", None) is not None and _refused(e, "temperature") and _made_here(model):
        model.temperature = None  # OpenAI's o-series take the default alone (every call failed until 2026-12-03)
        return True
    return False


def _made_here(model: Any) -> bool:
    """Whether :func:`make_llm` built ``model`` (its settings are ours to change; a user's are theirs)."""
    with _CACHE_LOCK:
        return any(m is model for m in _CACHE.values())


def _call_kwargs(llm: BaseLanguageModel, stop: list[str] | None, max_tokens: int | None, grammar: str | None,
                 response_format: dict | None) -> dict[str, Any]:
    """The call's keyword arguments as this kind of model reads them: its constraint, its stop
    strings and its length limit."""
    kwargs: dict[str, Any] = {}
    if grammar:
        kwargs["grammar"] = grammar
    if response_format:
        kwargs["response_format"] = response_format
    completion = is_completion_model(llm)
    if stop and completion:  # a completion endpoint: the stops as they are, at most 4
        stop = stop[:4]
    elif stop and not isinstance(wrapped_model(llm), (LlamaCppCompletionChat, FakeAnswerChat)):
        # a chat model may open its reply with a blank line: keep only visible stop
        # strings (answers are cut to their first non-empty line afterwards), at most 4
        stop = [s for s in stop if s.strip()][:4]
    if stop and wrapped_model(llm) not in _NO_STOP:  # the model, however it is wrapped
        kwargs["stop"] = stop
    if max_tokens:
        kwargs["max_tokens"] = max_tokens
    base = endpoint_of(llm)
    limit = max_tokens or getattr(wrapped_model(llm), "max_tokens", None)
    if (base and not any(h in base for h in OPENAI_HOSTS) and limit and not completion
            and llm not in _NO_EXTRA_MAX):
        # an OpenAI-compatible server, whoever built the model (make_llm or the user's own
        # ChatOpenAI): langchain-openai sends `max_completion_tokens`, which llama-cpp-python's
        # server ignores (it wrote until its context was full); they all read `max_tokens`
        kwargs["extra_body"] = {**bound_extra_body(llm), "max_tokens": int(limit)}
    return kwargs


def _refused(e: LLMError, parameter: str) -> bool:
    """Whether the server refused the call for its ``parameter`` (a 400 naming it unsupported)."""
    said = str(e.__cause__ or "").lower()
    return (getattr(e.__cause__, "status_code", None) == 400 and re.search(rf"\b{parameter}\b", said) is not None
            and any(w in said for w in ("unsupported parameter", "unsupported value", "not supported", "does not support",
                                        "unrecognized", "extra inputs")))


OPENAI_HOSTS = ("api.openai.com", "openai.azure.com")  # endpoints that read max_completion_tokens only


# the chat models whose endpoint refused `max_tokens` beside `max_completion_tokens`, or `stop`
_NO_EXTRA_MAX, _NO_STOP = ModelMarks(), ModelMarks()


def _layers(llm: Any) -> list[Any]:
    """``llm`` and what it wraps, outermost first, down to the model: ``bind`` / ``with_retry``
    (``bound``), ``with_fallbacks`` (``runnable``, its first model), ``configurable_fields``
    (``default``)."""
    layers = [llm]
    for _ in range(16):  # wrappers of wrappers, not a cycle
        if isinstance(llm, BaseLanguageModel):
            break
        llm = getattr(llm, "bound", None) or getattr(llm, "runnable", None) or getattr(llm, "default", None)
        if llm is None:
            break
        layers.append(llm)
    return layers


def wrapped_model(llm: Any) -> Any:
    """The model inside LangChain's wrappers (itself when it is one)."""
    return _layers(llm)[-1]


def bound_extra_body(llm: Any) -> dict[str, Any]:
    """The ``extra_body`` a call to ``llm`` sends: the model's own, under what each ``bind``
    around it adds (the outer wins). A call's own ``extra_body`` replaces it whole, so one that
    adds a key starts from this (a bound ``chat_template_kwargs`` was dropped until 2026-11-30)."""
    body: dict[str, Any] = {}
    for layer in reversed(_layers(llm)):  # the model first, then each binding around it
        own = getattr(layer, "extra_body", None) if isinstance(layer, BaseLanguageModel) else \
            (getattr(layer, "kwargs", None) or {}).get("extra_body")
        body.update(own or {})
    return body


def has_fallbacks(llm: Any) -> bool:
    """Whether ``llm`` is, or wraps, a ``with_fallbacks`` runnable (its fallbacks may be other
    kinds of model: a constraint for the first may not suit them)."""
    return any(getattr(layer, "fallbacks", None) for layer in _layers(llm)[:-1])


def is_completion_model(llm: Any) -> bool:
    """Whether ``llm`` is a completion model (``BaseLLM``: text in, text out), bare or wrapped
    (a ``FakeListLLM(...).bind(stop=...)`` was called as a chat model until 2026-11-30, and its
    plain-text reply failed as an LLMError that read like a server failure)."""
    return isinstance(wrapped_model(llm), BaseLLM)


def endpoint_of(llm: Any) -> str:
    """An OpenAI-compatible model's base URL: its own setting, else its client's (langchain-openai
    leaves ``openai_api_base`` empty when ``OPENAI_BASE_URL`` gives it); "" for other models.
    A model behind ``bind`` / ``with_retry`` / ``with_fallbacks`` is read inside them."""
    llm = wrapped_model(llm)
    base = getattr(llm, "openai_api_base", None)
    if not base and hasattr(llm, "openai_api_base"):
        base = getattr(getattr(llm, "root_client", None), "base_url", None)
    return str(base or "")


def _reply(llm: Any, prompt: str, tags: list[str] | None, kwargs: dict[str, Any]) -> "Completion":
    """One call of :func:`complete`, with its arguments made."""
    usage: Any
    try:
        # a completion model (bare or wrapped) as a chat model, the prompt verbatim: its run reaches the run's callbacks,
        # traces and event streams (not until 2026-12-01), its tokens the messages stream (not until 2026-12-02; behind
        # bind / with_retry / with_fallbacks, not until 2026-12-02, night)
        chat = CompletionChat(llm=llm) if is_completion_model(llm) else llm
        messages, config = [HumanMessage(content=prompt)], cast(Any, {"tags": tags} if tags else None)
        try:
            msg = chat.invoke(messages, config, **kwargs)
        except NotImplementedError:  # an async-only model (`_agenerate` alone): awaited (failed until 2026-12-03)
            msg = run_to_end(lambda: chat.ainvoke(messages, config, **kwargs))
        # a reply in content parts (reasoning first, or text blocks): its text parts only
        text = message_text(msg.content, sep="")
        usage = getattr(msg, "usage_metadata", None) or {}
        finish = (getattr(msg, "response_metadata", None) or {}).get("finish_reason")
    except ConfigError:
        raise
    except GraphBubbleUp:  # an interrupt() inside a component pauses the run; it is no failure
        raise
    except Exception as e:  # network errors, server errors, ...
        cut = _cut_by_length(e)
        if cut is not None:
            return cut
        first = " ".join(str(e).split())[:400]  # one line, the cause included (a first line may be "1 validation error:")
        # a server may echo the key it was sent: the message must not carry it on
        note = _key_unset_note(llm, e)
        key = getattr(getattr(wrapped_model(llm), "openai_api_key", None), "get_secret_value", lambda: None)()
        raise LLMError(redact(f"LLM call failed ({model_label(llm)}): {note}{type(e).__name__}: {first}", key)) from e
    text = without_thinking(text, cut=finish == "length")
    # a server that reports no usage (llama-cpp-python's when streaming): about 4 characters a token
    n_in = int(usage.get("input_tokens") or 0) or max(1, len(prompt) // 4)
    n_out = int(usage.get("output_tokens") or 0) or (max(1, len(text) // 4) if text.strip() else 0)
    return Completion(text=text, input_tokens=n_in, output_tokens=n_out,
                      finish_reason=finish if isinstance(finish, str) else None)


_THINKING = re.compile(r"^\s*<(think|thinking|reasoning)>.*?</\1>\s*", re.S | re.I)
_UNCLOSED_THINKING = re.compile(r"^\s*<(think|thinking|reasoning)>(?!.*</\1>).*\Z", re.S | re.I)


def without_thinking(text: str, cut: bool = False) -> str:
    """A reply without the thinking a reasoning model served without a reasoning parser writes
    inline, first: closed blocks (one or more), a block whose opening tag the chat template wrote
    (the reply starts inside it: "...</think>answer"), and, for a reply the token limit cut
    (``cut``), a block that never closed (no answer then)."""
    while True:
        shorter = _THINKING.sub("", text, count=1)
        if shorter == text:
            break
        text = shorter
    head, tag, rest = text.partition("</think>")
    if tag and "<think>" not in head.lower():
        text = rest.lstrip()
    return _UNCLOSED_THINKING.sub("", text) if cut else text


def model_label(llm: Any) -> str:
    """Which model a call went to, for error messages: an OpenAI-compatible model's name and
    endpoint, a GGUF's path, else the class name."""
    llm = wrapped_model(llm)
    name = getattr(llm, "model_name", None) or getattr(llm, "model", None)
    base = endpoint_of(llm) or None
    if name and base:
        return f"{name} at {without_userinfo(str(base))}"
    path = getattr(llm, "model_path", None)
    return str(name or path or type(llm).__name__)


def _cut_by_length(e: BaseException) -> Completion | None:
    """The output of a call that the openai client refused to hand back because ``max_tokens``
    cut it (``LengthFinishReasonError``, raised when ``response_format`` is set): a cut
    completion like any other, for the decision's lenient reader and repair (until
    2026-11-30 it failed the whole question)."""
    completion = getattr(e, "completion", None)
    if type(e).__name__ != "LengthFinishReasonError" or completion is None:
        return None
    try:
        text = completion.choices[0].message.content or ""
    except (AttributeError, IndexError):
        return None
    usage = getattr(completion, "usage", None)
    return Completion(text=without_thinking(text, cut=True), input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                      output_tokens=int(getattr(usage, "completion_tokens", 0) or 0), finish_reason="length")
