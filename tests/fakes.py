"""Test doubles shared by the graph-logic tests (scripted chat model, BM25 retriever)."""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from ragraphs.tools.bm25 import BM25Index
from ragraphs.tools.llm import render_messages


class ScriptedChat(BaseChatModel):
    """Answers each prompt with ``script(prompt)``; records the prompts."""

    script: Any
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    _prompts: list = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        prompt = render_messages(messages)
        with self._lock:
            self._prompts.append(prompt)
        text = self.script(prompt)
        msg = AIMessage(content=text, usage_metadata={"input_tokens": len(prompt.split()), "output_tokens": len(text.split()), "total_tokens": 0})
        return ChatResult(generations=[ChatGeneration(message=msg)])


class LexicalRetriever:
    """BM25 over the given passages, behind the retriever interface."""

    def __init__(self, passages):
        self.index = BM25Index(passages)

    def search(self, query: str, k: int, mode: str = "dense"):
        return self.index.search(query, k)
