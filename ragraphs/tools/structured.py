"""Structured LLM decisions: one pydantic schema per decision, constrained decoding where
the model allows it, lenient parsing plus one repair retry where it does not.

Every decision a method asks an LLM for (MIGRES's main judge, query generator and leaf
extraction, ERM4's Rewriter+ and LLM knowledge filter, CRAG's keyword rewrite, the chat
graph's follow-up rewrite) has a schema below. :func:`decide` sends the decision's few-shot
prompt (its examples written in the schema's JSON) and returns a validated object:

- the embedded model and ``llamacpp:`` GGUFs (:class:`~ragraphs.tools.llm.LlamaCppCompletionChat`):
  decoding follows a llama.cpp grammar built from the schema's JSON schema
  (``llama_cpp.llama_grammar.json_schema_to_gbnf``); strings and lists carry ``maxLength`` /
  ``maxItems``, so even a small model that repeats itself must close the object;
- OpenAI-compatible chat servers (``openai:``): ``response_format`` with the JSON schema;
- any other model (``openai-completion:``, fakes, a user's chat model): the text is read
  leniently (``langchain_core.utils.json.parse_json_markdown``, then ragraphs' repairing
  reader, then the decision's legacy text format if it has one), and if nothing valid
  comes out the model is asked ONCE to repair its response.

A decision whose first output was not valid JSON of the schema (it needed the lenient
reader, the legacy format or the repair) or that failed altogether is a *parse failure*:
:attr:`Decision.parse_failure` is 1, and the nodes add it to the state's
``parse_failures`` counter, which ``ragraphs eval`` sums per question.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Generic, Literal, TypeVar

from langchain_core.language_models import BaseLanguageModel
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationError, ValidationInfo, WithJsonSchema

from ..errors import LLMError
from .llama import LlamaCppCompletionChat
from .llm import Completion, complete, has_fallbacks, wrapped_model
from .model_marks import ModelMarks
from .parsing import parse_json_object

M = TypeVar("M", bound=BaseModel)


# ---------------------------------------------------------------- bounded field types


def _text_in(v: Any) -> Any:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return str(v)
    return v


def _fixed(info: ValidationInfo, what: str) -> None:
    """Note that a value had to be mended to fit the schema: :func:`read_strict` then refuses
    the object, and the decision counts as a parse failure (read leniently)."""
    if isinstance(info.context, dict):
        info.context.setdefault("fixes", []).append(what)


def _cut_text(max_chars: int) -> Callable[[str, ValidationInfo], str]:
    def cut(s: str, info: ValidationInfo) -> str:
        flat = " ".join(s.split())
        if len(flat) <= max_chars:
            return flat
        _fixed(info, "cut")  # a server that ignores maxLength (OpenAI's does), or a lenient read
        head = flat[:max_chars]
        words = head.rsplit(" ", 1)[0].rstrip(",;:") if " " in head else head
        return words if len(words) >= max_chars // 2 else head  # at a word's end where one is near

    return cut


def Text(max_chars: int, min_chars: int = 0) -> Any:
    """A string the grammar bounds to ``max_chars``; longer text (a server that ignores
    ``maxLength``, a lenient read) is cut at a word's end and the read is not strict."""
    schema: dict[str, Any] = {"type": "string", "maxLength": max_chars}
    if min_chars:
        schema["minLength"] = min_chars
    return Annotated[
        str,
        BeforeValidator(_text_in),
        AfterValidator(_cut_text(max_chars)),
        WithJsonSchema(schema),
    ]


def _one_item(v: Any, info: ValidationInfo) -> Any:
    if isinstance(v, str):  # a string where the schema wants a list: the list of it
        _fixed(info, "list")
        return [v]
    return v


def _first_items(max_items: int) -> Callable[[list, ValidationInfo], list]:
    def first(v: list, info: ValidationInfo) -> list:
        if len(v) > max_items:
            _fixed(info, "items")
        return list(v)[:max_items]

    return first


def Items(item: Any, max_items: int, min_items: int = 0) -> Any:
    """A list the grammar bounds to ``max_items``; extra items are dropped, and one string
    stands for a list of it (each a mend: the read is not strict)."""
    from pydantic import TypeAdapter

    item_schema = TypeAdapter(item).json_schema()
    schema: dict[str, Any] = {"type": "array", "items": item_schema, "maxItems": max_items}
    if min_items:
        schema["minItems"] = min_items
    return Annotated[list[item], BeforeValidator(_one_item), AfterValidator(_first_items(max_items)),
                     WithJsonSchema(schema)]


class _Schema(BaseModel):
    model_config = ConfigDict(extra="ignore")


# ---------------------------------------------------------------- the decisions


class MainVerdict(_Schema):
    """MIGRES Main Module: a short answer, or "unanswerable" and what is missing."""

    answer: Text(60, 1)  # type: ignore[valid-type]
    missing_information: Text(120)  # type: ignore[valid-type]


class QueryList(_Schema):
    """MIGRES Query Generator: up to three simple queries."""

    queries: Items(Text(100, 3), 3, 1)  # type: ignore[valid-type]


class Statement(_Schema):
    info: Text(150, 3)  # type: ignore[valid-type]
    support_passages: Items(Annotated[int, WithJsonSchema({"type": "integer", "minimum": 0, "maximum": 19})], 3)  # type: ignore[valid-type]


class LeafExtraction(_Schema):
    """MIGRES Leaf Module: statements with the indexes of the passages that support them."""

    useful_information: Items(Statement, 3)  # type: ignore[valid-type]


class RewritePlus(_Schema):
    """ERM4 Query Rewriter+: a rewritten question and up to three search queries."""

    rewritten_question: Text(200, 3)  # type: ignore[valid-type]
    queries: Items(Text(80, 2), 3, 1)  # type: ignore[valid-type]


class Keywords(_Schema):
    """CRAG keyword rewrite: at most three keywords for a web search."""

    keywords: Items(Text(40, 1), 3, 1)  # type: ignore[valid-type]


class Standalone(_Schema):
    """Chat follow-up rewrite: the user's last message as a question that stands alone."""

    question: Text(300, 3)  # type: ignore[valid-type]


class Entailment(_Schema):
    """ERM4 LLM knowledge filter: does the knowledge help answer the question?"""

    entailment: Literal["yes", "no"]


# ---------------------------------------------------------------- schemas -> grammar, budget


def choice_gbnf(options: list[str]) -> str:
    """A llama.cpp grammar (GBNF) whose only sentences are ``options``, verbatim. One optional
    space may open them (the prompts end with a label such as "Short answer:"), and a full stop
    and a newline may close them: a model that would end its phrase there may, where the end
    of text alone would leave it to go on into a longer option."""
    if not options:
        raise ValueError("choice_gbnf needs at least one option")

    def literal(text: str) -> str:
        kept = "".join(ch for ch in text if ch.isprintable())
        return '"' + kept.replace("\\", "\\\\").replace('"', '\\"') + '"'

    alternatives = dict.fromkeys(literal(o) for o in options if o)
    return 'root ::= " "? choice "."? "\\n"?\nchoice ::= ' + " | ".join(alternatives) + "\n"


@functools.lru_cache(maxsize=64)
def json_schema(schema: type[BaseModel]) -> dict:
    """The decision's JSON schema, ``$defs`` inlined (what grammars and servers get)."""
    raw = schema.model_json_schema()
    defs = raw.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(defs[node["$ref"].split("/")[-1]])
            return {k: inline(v) for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [inline(x) for x in node]
        return node

    out = inline(raw)
    out["additionalProperties"] = False
    return out


@functools.lru_cache(maxsize=64)
def gbnf(schema: type[BaseModel]) -> str:
    """The llama.cpp grammar (GBNF) of the decision's JSON schema, keys in schema order."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    js = json_schema(schema)
    text = json_schema_to_gbnf(json.dumps(js), prop_order=list(js.get("properties", {})))
    # no raw control characters (a newline) inside strings: JSON does not allow them
    text = re.sub(r'^(char ::= )\[\^"\\\\\]', lambda m: m.group(1) + '[^"\\\\\\x7F\\x00-\\x1F]', text, count=1, flags=re.M)
    # the prompts end with a label ("Your response:"): one optional space may open the object
    return re.sub(r"^root ::=", "json-root ::=", text, count=1, flags=re.M) + '\nroot ::= " "? json-root\n'


def token_budget(schema: type[BaseModel]) -> int:
    """Tokens that any object the grammar allows fits in: its longest JSON text in characters,
    every string at its ``maxLength`` and every list at its ``maxItems``, since a token covers
    at least one character (digits and rare words are one token per character or close; a
    budget of two characters per token once cut a Main Module verdict before it closed).
    The budget costs nothing when the object closes early: generation stops at the grammar's end."""

    def size(node: dict) -> int:
        t = node.get("type")
        if "enum" in node:
            return 2 + max(len(json.dumps(x)) for x in node["enum"])
        if t == "string":
            return int(node.get("maxLength", 200)) + 2  # the quotes
        if t == "array":
            return 2 + int(node.get("maxItems", 8)) * (size(node["items"]) + 2)  # ", "
        if t == "object":
            return 2 + sum(len(k) + 6 + size(v) for k, v in node.get("properties", {}).items())  # "k": v,
        if t == "integer" and "maximum" in node:
            return len(str(int(node["maximum"]))) + 1
        return 8  # other numbers, booleans

    return size(json_schema(schema)) + 4


def response_format(schema: type[BaseModel]) -> dict:
    """OpenAI ``response_format`` for the decision (servers that honour JSON schemas)."""
    return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": json_schema(schema), "strict": False}}


# ---------------------------------------------------------------- reading text


def _validate(schema: type[M], obj: Any, fixes: list[str] | None = None) -> M | None:
    if not isinstance(obj, dict):
        return None
    try:
        return schema.model_validate(obj, context={"fixes": fixes if fixes is not None else []})
    except ValidationError:
        return None


def read_strict(schema: type[M], text: str) -> M | None:
    """The object when ``text`` is one valid JSON object of the schema, as it is (no string
    cut, no item dropped, no list made of a string), alone or on its first line (what a stop
    at the newline would have kept), else None."""
    text = (text or "").strip()
    for candidate in dict.fromkeys((text, text.split("\n", 1)[0].strip())):
        try:
            obj = json.loads(candidate)
        except ValueError:
            continue
        fixes: list[str] = []
        got = _validate(schema, obj, fixes)
        if got is not None and not fixes:
            return got
    return None


def read_lenient(schema: type[M], text: str) -> M | None:
    """The object read from fenced, cut-off or almost-JSON text, else None."""
    from langchain_core.utils.json import parse_json_markdown

    try:
        got = _validate(schema, parse_json_markdown(text or ""))
    except Exception:  # langchain raises on text with no JSON in it
        got = None
    return got or _validate(schema, parse_json_object(text or ""))


# ---------------------------------------------------------------- the call


@dataclass
class Decision(Generic[M]):
    """What :func:`decide` got: the object (None when every attempt failed) and its cost."""

    value: M | None
    text: str  # the last raw output
    mode: str  # "grammar" | "json_schema" | "lenient"
    how: str  # "strict" | "lenient" | "legacy" | "repair" | "failed"
    calls: int
    input_tokens: int
    output_tokens: int
    finish_reason: str | None = None  # of the last output, where the model reports it

    @property
    def parse_failure(self) -> int:
        return 0 if self.how == "strict" else 1

    def usage(self) -> dict:
        """State counters of the decision (LLM calls, tokens, parse failures)."""
        return {
            "llm_calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "parse_failures": self.parse_failure,
        }

    def trace(self) -> dict:
        out = {"decision_mode": self.mode, "parsed": self.how, "calls": self.calls, "raw": self.text[:500]}
        if self.finish_reason == "length":  # the output ran out of tokens (a cut object does not parse)
            out["cut_by_max_tokens"] = True
        return out


# the chat models whose server refused response_format (a user's model, collected, left its id
# to the next one until 2026-11-30)
_NO_SCHEMA = ModelMarks()


def _schema_refused(e: LLMError) -> bool:
    """Whether the server refused the call for its ``response_format`` (an HTTP error naming it:
    a server that offers ``json_object`` or nothing, not ``json_schema``; llama-cpp-python's
    server answers such a request with HTTP 500 and a validation error, others with 400/422)."""
    cause = e.__cause__
    said = str(cause or "").lower()
    kinds = {k.__name__ for k in type(cause).__mro__}  # langchain-openai's own subclasses of openai's
    # vLLM's xgrammar / outlines refusals ("...JSON schema contains features not supported by xgrammar",
    # "Failed to transform json schema into a grammar") read as other errors until 2026-12-03
    names_it = any(w in said for w in ("response_format", "json_schema", "response format", "json schema"))
    if kinds & {"BadRequestError", "UnprocessableEntityError"}:
        return names_it
    # a 500 only when it is the request's validation that failed (not a transient fault of the
    # server's guided decoding, which would leave the model unconstrained for good)
    return "InternalServerError" in kinds and names_it and "validation error" in said


def constraint_mode(llm: BaseLanguageModel) -> str:
    """How a model's output can be constrained: "grammar", "json_schema" or "lenient" (a chat
    server that refused a JSON schema once is read leniently from then on). A model behind
    ``bind`` / ``with_retry`` is constrained as the model inside (it was read leniently until
    2026-11-30); one with fallbacks is read leniently (a first model that refuses the schema
    would hand every decision to its fallback, unnoticed)."""
    inner = wrapped_model(llm)
    if has_fallbacks(llm):
        return "lenient"
    if isinstance(inner, LlamaCppCompletionChat):
        return "grammar"
    if llm in _NO_SCHEMA or inner in _NO_SCHEMA:  # the model the server refused, however wrapped
        return "lenient"
    try:  # ChatOpenAI and AzureChatOpenAI alike (Azure's was read leniently until 2026-12-01)
        from langchain_openai.chat_models.base import BaseChatOpenAI
    except ImportError:  # pragma: no cover
        return "lenient"
    return "json_schema" if isinstance(inner, BaseChatOpenAI) else "lenient"


REPAIR_NOTE = "The response above is not one valid JSON object in the format of the examples. Corrected response:"


def repair_prompt(prompt: str, bad: str) -> str:
    """The one retry: the original prompt, the bad response on one line, a request to correct it."""
    flat = " ".join((bad or "").split())[:800]
    return f"{prompt} {flat or '(empty)'}\n{REPAIR_NOTE}"


def decide(
    llm: BaseLanguageModel,
    prompt: str,
    schema: type[M],
    *,
    max_tokens: int | None = None,
    stop: list[str] | None = None,
    legacy: Callable[[str], M | None] | None = None,
    tags: list[str] | None = None,
) -> Decision[M]:
    """Ask ``llm`` for one decision of ``schema`` (see the module docstring).

    ``max_tokens`` is raised to the schema's :func:`token_budget` so that a constrained
    object is never cut. ``stop`` applies to unconstrained models only (a JSON object may
    hold a newline). ``legacy`` reads the decision's older plain-text format (counted as a
    parse failure when used). ``tags`` go to each call's run (see :func:`complete`), beside
    ``nostream``: a decision is the method's own working, kept out of LangGraph's
    ``stream_mode="messages"``, where only the answer's tokens stream.
    """
    tags = ["nostream", *[t for t in (tags or []) if t != "nostream"]]
    mode = constraint_mode(llm)
    budget = max(int(max_tokens or 0), token_budget(schema))
    kw: dict[str, Any] = {"max_tokens": budget, "tags": tags}
    if mode == "grammar":
        kw["grammar"] = gbnf(schema)
    elif mode == "json_schema":
        kw["response_format"] = response_format(schema)
    else:
        kw["stop"] = stop
    try:
        outs: list[Completion] = [complete(llm, prompt, **kw)]
    except LLMError as e:
        if mode != "json_schema" or not _schema_refused(e):
            raise
        _NO_SCHEMA.add(wrapped_model(llm))  # each wrapping of it too; until 2026-11-30 every decision failed the question on such a server
        mode, kw = "lenient", {"max_tokens": budget, "stop": stop, "tags": tags}
        outs = [complete(llm, prompt, **kw)]

    def result(value: M | None, how: str) -> Decision[M]:
        return Decision(
            value, outs[-1].text, mode, how, len(outs),
            sum(o.input_tokens for o in outs), sum(o.output_tokens for o in outs), outs[-1].finish_reason,
        )

    text = outs[0].text
    got = read_strict(schema, text)
    if got is not None:
        return result(got, "strict")
    got = read_lenient(schema, text)
    if got is not None:
        return result(got, "lenient")
    if legacy is not None:
        got = legacy(text)
        if got is not None:
            return result(got, "legacy")
    # ONE repair retry
    outs.append(complete(llm, repair_prompt(prompt, text), **kw))
    text = outs[1].text
    got = read_strict(schema, text) or read_lenient(schema, text) or (legacy(text) if legacy else None)
    return result(got, "repair" if got is not None else "failed")
