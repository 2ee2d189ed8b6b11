"""A completion model (LangChain ``BaseLLM``: text in, text out) called as a chat model.

LangGraph's ``stream_mode="messages"`` (what LangGraph Studio shows as a run streams) and
``astream_events``' ``on_chat_model_stream`` deliver the tokens of chat-model runs only: a
``BaseLLM``'s tokens carry no message, so a base model behind ``/v1/completions``
(``openai-completion:``) or a user's own completion model reached the messages stream not at
all. :func:`~ragraphs.tools.llm.complete` therefore calls such a model through
:class:`CompletionChat`: the prompt goes to the model verbatim, as before, and its run is a
chat-model run, so its tokens stream where a listener asks for them (the model's ``stream``;
one piece when it cannot stream) and a plain call is one ``generate``. The model's own run
nests inside it, with its own callbacks, tags and trace. A completion model behind LangChain's
wrappers (``bind``, ``with_retry``, ``with_fallbacks``) is called through them the same way, so
its retries and fallbacks still hold and its tokens stream too (not until 2026-12-02, night: it
answered in one piece, outside the messages stream).
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from langchain_core.callbacks import CallbackManager, CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.language_models.llms import BaseLLM
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from pydantic import ConfigDict

from .llama import render_messages
from .text import message_text


def _child(run_manager: Optional[CallbackManagerForLLMRun]) -> Optional[CallbackManager]:
    """The callbacks of a run nested in ``run_manager``'s (an LLM run's manager has no
    ``get_child``: LangChain's model runs are leaves)."""
    if run_manager is None:
        return None
    child = CallbackManager(handlers=[], parent_run_id=run_manager.run_id)
    child.set_handlers(run_manager.inheritable_handlers)
    child.add_tags(run_manager.inheritable_tags)
    child.add_metadata(run_manager.inheritable_metadata)
    return child


def _text(piece: Any) -> str:
    """A reply's text: a completion model's string, or a message's text parts (a chat model
    among a completion model's fallbacks answers with one)."""
    return piece if isinstance(piece, str) else message_text(getattr(piece, "content", piece), sep="")


class CompletionChat(BaseChatModel):
    """``llm`` (a ``BaseLLM``, bare or behind ``bind`` / ``with_retry`` / ``with_fallbacks``)
    as a chat model: the messages rendered verbatim (no chat template) are its prompt; the
    reply carries its token counts and finish reason where the model reports them (a bare
    model's; through a wrapper, the text alone: the caller counts the tokens)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    llm: Runnable

    @property
    def _llm_type(self) -> str:
        return f"completion-chat:{getattr(self.llm, '_llm_type', None) or type(self.llm).__name__}"

    def _generate(self, messages: list[BaseMessage], stop: Optional[list[str]] = None,
                  run_manager: Optional[CallbackManagerForLLMRun] = None, **kwargs: Any) -> ChatResult:
        if not isinstance(self.llm, BaseLLM):  # a wrapper: its own invoke (retries, fallbacks, bound arguments)
            reply = self.llm.invoke(render_messages(messages), {"callbacks": _child(run_manager)}, stop=stop, **kwargs)
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=_text(reply)))])
        res = self.llm.generate([render_messages(messages)], stop=stop,
                                callbacks=_child(run_manager), **kwargs)
        gen = res.generations[0][0]
        usage = (res.llm_output or {}).get("token_usage") or {}
        n_in, n_out = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        msg = AIMessage(content=gen.text, response_metadata={"finish_reason": (gen.generation_info or {}).get("finish_reason")},
                        usage_metadata={"input_tokens": n_in, "output_tokens": n_out, "total_tokens": n_in + n_out}
                        if n_in or n_out else None)
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def _stream(self, messages: list[BaseMessage], stop: Optional[list[str]] = None,
                run_manager: Optional[CallbackManagerForLLMRun] = None, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        """The model's ``stream``, each piece a message chunk (the model's own ``invoke``, in
        one piece, where it cannot stream). A stream reports no token counts: the caller
        counts them from the text."""
        for piece in self.llm.stream(render_messages(messages), {"callbacks": _child(run_manager)}, stop=stop, **kwargs):
            text = _text(piece)
            if not text:
                continue
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=text))
            if run_manager:
                run_manager.on_llm_new_token(text, chunk=chunk)
            yield chunk


__all__ = ["CompletionChat"]
