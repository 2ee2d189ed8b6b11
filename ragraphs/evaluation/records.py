"""A run's results on disk: ``results.jsonl`` appended one record at a time (flushed), the
run's ``config.json`` that guards a resume against other settings or data, and the progress
bar that shows the running metrics."""

from __future__ import annotations

import json
import os
import re
from dataclasses import MISSING, asdict, fields
from typing import Any, Callable

from ..errors import ConfigError, InputError, without_userinfo
from .progress import Progress
from .provenance import data_hashes, judge_hashes, judge_sources, rerank_path


def path_part(name: str) -> str:
    """``name`` as one folder name under ``--out``: the name itself where it stays one folder
    (``my data``, ``vanilla-llamacpp_.._models_x.gguf``: the folders earlier runs wrote, found
    again on a rerun); a name that would leave it (``.``, ``..``, a path separator, an absolute
    path, a drive) has characters other than letters, digits, ``.``, ``_`` and ``-`` and any run
    of dots made ``_``, and no leading ``.``, ``-`` or ``_`` (``"../../x"`` and ``"/tmp/x"``
    give ``x`` and ``tmp_x``); ``"dataset"`` when nothing is left."""
    seps = [sep for sep in ("/", "\\", os.sep, os.altsep) if sep]
    if name not in ("", ".", "..") and not any(sep in name for sep in seps) and not os.path.isabs(name) \
            and not os.path.splitdrive(name)[0]:
        return name
    safe = re.sub(r"\.{2,}", "_", re.sub(r"[^A-Za-z0-9._-]+", "_", name))
    return safe.strip("_").lstrip(".-").strip("_") or "dataset"


RUN_RESERVOIR = "reservoir.sqlite3"  # an ERM4 run's own memory, beside its results (runner.run_memory)


def check_run_places(out: str, dataset: str, labels: list[str]) -> None:
    """An :class:`InputError` naming the path where ``eval --out`` would meet something in the way
    of the folders and files it writes (``plots`` or a run's folder a file, a run's
    ``results.jsonl`` a folder), before any question runs: until 2026-12-03 a traceback, the
    report's after every question had run."""
    folders = [os.path.join(out, "plots"), os.path.join(out, "runs"), os.path.join(out, "runs", path_part(dataset))]
    folders += [run_dir(out, dataset, label) for label in labels]
    files = [os.path.join(out, name) for name in ("report.md", "summary.json")]
    files += [os.path.join(run_dir(out, dataset, label), name) for label in labels
              for name in ("results.jsonl", "config.json", "summary.json", RUN_RESERVOIR)]
    for path in folders:
        if os.path.lexists(path) and not os.path.isdir(path):
            raise InputError(f"--out {out}: {path} is in the way (a file where the run writes a folder); move it")
    for path in files:
        if os.path.isdir(path):
            raise InputError(f"--out {out}: {path} is a folder where the run writes a file; move it")


def run_dir(out: str, dataset: str, label: str) -> str:
    """Where one run's files go: ``OUT/runs/DATASET/LABEL``, each part made a folder name by
    :func:`path_part`. The dataset name comes from the data file (a row's ``dataset`` field), so
    ``"../../x"`` or an absolute path wrote outside ``--out`` until 2026-11-30; the name the
    summary and the report show stays the file's."""
    return os.path.join(out, "runs", path_part(dataset), path_part(label))


def read_results(path: str) -> dict[str, dict]:
    """Records of a results file by question id (the last record of an id wins)."""
    out: dict[str, dict] = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                r = json.loads(line)
            except ValueError:
                continue  # a line cut by a crash
            if isinstance(r, dict) and "id" in r:
                out[str(r["id"])] = r
    return out


def build_context(spec: Any):
    """The method's context with the settings of ``spec`` (a :class:`~.runner.RunSpec`); a
    setting the method lacks is an error."""
    from ..graphs import get_context_class
    from ..settings import check_setting_names, context_from

    cls = get_context_class(spec.graph_method)
    values = spec.context_values()
    check_setting_names(cls, values, spec.method)
    return context_from(cls, values)


def run_llm(spec: Any) -> str:
    """The model spec a run's context holds: ``--llm``, else ``--set llm=...``, else the
    setting's default (``gemma``; ``RAGRAPHS_LLM`` is not read by a run)."""
    if not callable(getattr(spec, "context_values", None)):  # a summary of records alone
        return str(getattr(spec, "llm", None) or "gemma")
    return str(getattr(build_context(spec), "llm", None) or "gemma")


def llm_endpoint(spec: str | None) -> str | None:
    """Where an ``openai:`` / ``openai-completion:`` model's calls go (``OPENAI_BASE_URL``, or
    OpenAI's own API), without credentials; None for the embedded and file models. Until
    2026-11-30 an empty spec read ``RAGRAPHS_LLM``, which the run does not use."""
    spec = (spec or "").strip()
    if not spec.lower().startswith("openai"):
        return None
    base = os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    return without_userinfo(base.rstrip("/"))


def web_label(spec: str) -> str:
    """A web search spec as a results folder records it: ``offline:`` files as absolute paths
    (as ``--web`` files are), an address without credentials, ``none`` for no web search."""
    kind, _, arg = spec.partition(":")
    if not spec.strip() or spec.strip().lower() in ("none", "off"):
        return "none"
    if kind.strip().lower() == "offline":
        return "offline:" + ",".join(os.path.abspath(p.strip()) for p in arg.split(",") if p.strip())
    return without_userinfo(spec.strip())


JUDGE_VARIABLES = ("RAGRAPHS_RERANKER", "RAGRAPHS_JUDGES_DIR")


def run_sources(spec: Any, ctx: Any, components: Any) -> dict[str, Any]:
    """What a local run takes from the environment beside its settings, recorded in its
    ``config.json`` so that a resume under others is refused: the web search (``web_search``:
    the ``web`` setting or ``RAGRAPHS_WEB``, for the methods with a ``web`` setting; a backend
    given to the components by its name), the judges (``judges``: ``RAGRAPHS_RERANKER`` /
    ``RAGRAPHS_JUDGES_DIR`` by name, a judge given to the components by its role, a ``rerank``
    path or model name as ``rerank``; ``{}``: the shipped ones, or no judge loaded) and the
    sha256 of each judge folder's ``ragraphs_judge.json`` (``judge_sha256``, by the same
    sources and ``shipped``: a folder edited in place, with other thresholds, is not the same
    judge), each only where the run loads that judge (:func:`judge_roles`; when first recorded,
    on 2026-11-30, they were for every method, so vanilla without a re-ranker was refused under
    another ``RAGRAPHS_RERANKER``; and a role the components were given, or a ``rerank`` path,
    recorded the variables, which such a run does not read). Nothing for ``none`` and the
    oracle, which search nothing and judge nothing."""
    if getattr(spec, "method", None) in ("none", "oracle"):
        return {}
    out: dict[str, Any] = {}
    if "web" in {f.name for f in fields(ctx)}:
        given = getattr(components, "web_search", None)
        if given is not None:  # --web: its files are in the corpus record
            out["web_search"] = "given: " + str(getattr(given, "name", type(given).__name__))
        else:
            from ..nodes.web import web_spec

            out["web_search"] = web_label(web_spec(ctx))
    given_judges = dict(getattr(components, "given_judges", None) or {})
    roles = judge_roles(spec.method, ctx)
    env_roles = roles - set(given_judges)  # a role the components were given reads no variable
    judges: dict[str, Any] = {}
    reads = [var for var in JUDGE_VARIABLES if (env_roles if var == "RAGRAPHS_JUDGES_DIR" else "evaluator" in env_roles)]
    out["judge_variables"] = reads  # read, set or not: an old entry of one of them that is unset now is refused
    for var in reads:
        v = os.environ.get(var, "").strip()
        if v:
            # a folder as its absolute path, a cached model name as it is
            judges[var] = os.path.abspath(os.path.expanduser(v)) if os.path.exists(os.path.expanduser(v)) else v
    sources = judge_sources({r: j for r, j in given_judges.items() if r in roles}, rerank_path(ctx))
    for role in sorted(roles & set(given_judges)) + (["rerank"] if "rerank" in sources else []):
        judges[role] = sources[role]["folder"]
    out["judges"] = judges
    used = roles | {"rerank"}
    out["judge_sha256"] = judge_hashes({src: e for src, e in sources.items() if used & set(e["roles"])})
    return out


BUILT_IN_METHODS = ("none", "oracle", "vanilla", "crag", "dr-rag", "erm4", "migres")


def judge_roles(method: str, ctx: Any) -> set[str]:
    """The judges (``evaluator``, ``pair``, ``nli``) a run of ``method`` with the settings ``ctx``
    scores with, each the shipped one unless ``RAGRAPHS_JUDGES_DIR`` (or, for the evaluator,
    ``RAGRAPHS_RERANKER``) names another: ``rerank=evaluator`` (vanilla, CRAG, DR-RAG, ERM4),
    CRAG's evaluator, DR-RAG's pair classifier (``cis``, ``cfs``), ERM4's evaluator trigger and
    judge filter, MIGRES's evaluator and NLI judge. A ``rerank`` path loads that model alone.

    A method added to ``METHODS`` declares its own on its context class, a classmethod
    ``judge_roles(ctx) -> set[str]`` (``rerank=evaluator`` adds the evaluator); one that declares
    none is taken to score with every judge, so a resume under other judges is refused (until
    2026-11-30 it recorded none, and such a resume mixed two judges' answers)."""
    from ..nodes.rerank import rerank_spec
    from ..tools.judges.core import JUDGES

    roles = {"evaluator"} if rerank_spec(ctx) == "evaluator" else set()
    declared = getattr(type(ctx), "judge_roles", None)
    if callable(declared):
        return roles | set(declared(ctx))
    if method not in BUILT_IN_METHODS:
        return set(JUDGES)
    if method == "crag":
        roles.add("evaluator")
    elif method == "dr-rag" and ctx.strategy in ("cis", "cfs"):
        roles.add("pair")
    elif method == "erm4":
        if ctx.use_memory and ctx.trigger == "evaluator":
            roles.add("evaluator")
        if ctx.filter == "judge":
            roles.add(ctx.filter_judge)
    elif method == "migres":
        roles |= {"evaluator", "nli"}
    return roles


# what a results folder records beside the settings, and how a refused resume names it
# (a folder written before a key was recorded resumes as before)
GUARDED = {"llm_endpoint": "answers of {old}, not {new}",
           "web_search": "answers with the web search {old}, not {new}",
           "judges": "answers of the judges {old}, not {new}",
           "judge_sha256": "answers of judges with another ragraphs_judge.json (sha256 {old}, not {new})"}


def open_results(spec: Any, out_dir: str | None, *, resume: bool, dataset: str = "", data: str = "",
                 corpus: dict[str, Any] | None = None,
                 sources: dict[str, Any] | None = None,
                 provenance: dict[str, Any] | None = None) -> tuple[str | None, dict[str, dict]]:
    """Prepare ``out_dir`` for a run of ``spec`` (a :class:`~.runner.RunSpec`): (the results
    file, the finished records to keep by id). Refuses a directory that holds results of
    other settings, data or corpus (``corpus``: what the questions retrieve from, as the
    command line names it), or of another model endpoint, web search or judges (``sources``:
    :func:`run_sources`), or of a data, ``--pool`` or ``--web`` file edited since (its sha256,
    ``data_sha256``; until 2026-11-30 only the data file's path was compared). ``provenance``
    (see :mod:`.provenance`) is recorded and not compared. Failed records are not kept, so
    those questions run again."""
    if not out_dir:
        return None, {}
    os.makedirs(out_dir, exist_ok=True)
    results_path, cfg_path = os.path.join(out_dir, "results.jsonl"), os.path.join(out_dir, "config.json")
    cfg = _run_config(spec, dataset, data, corpus, sources)
    if resume:
        refuse_another_run(spec, out_dir, dataset=dataset, data=data, corpus=corpus, sources=sources, cfg=cfg)
    if not resume and os.path.exists(results_path):
        os.replace(results_path, results_path + ".old")
    if provenance is not None:
        cfg["provenance"] = provenance
    tmp = cfg_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:  # whole or not at all: a half-written one is unreadable
        json.dump(cfg, fh, indent=1, default=str)
    os.replace(tmp, cfg_path)
    done = {i: r for i, r in read_results(results_path).items() if not r.get("error")} if resume else {}
    return results_path, done


def _run_config(spec: Any, dataset: str, data: str, corpus: dict[str, Any] | None,
                sources: dict[str, Any] | None) -> dict[str, Any]:
    """What a run's ``config.json`` records of it, and a resume compares."""
    cfg = {"label": spec.label, "spec": asdict(spec), "dataset": dataset, "data": os.path.abspath(data) if data else "",
           "corpus": corpus or {}}
    endpoint = llm_endpoint(run_llm(spec))  # the run's model: --set llm=... too
    if endpoint:  # two servers may serve one model name: the answers of one must not resume the other's
        cfg["llm_endpoint"] = endpoint
    cfg.update(sources or {})
    cfg["data_sha256"] = data_hashes(data, corpus)
    return cfg


def refuse_another_run(spec: Any, out_dir: str, *, dataset: str = "", data: str = "", corpus: dict[str, Any] | None = None,
                       sources: dict[str, Any] | None = None, cfg: dict[str, Any] | None = None) -> None:
    """The :class:`ConfigError` :func:`open_results` raises for a folder holding another run,
    raised without writing anything: a comparison checks each run's folder before its first
    question (until 2026-12-03 a later run's folder was refused after the earlier runs' work)."""
    cfg_path = os.path.join(out_dir, "config.json")
    if os.path.exists(cfg_path):
        cfg = cfg or _run_config(spec, dataset, data, corpus, sources)
        _refuse_another_run(out_dir, spec, cfg, _read_config(cfg_path, os.path.join(out_dir, "results.jsonl")))


def _read_config(cfg_path: str, results_path: str) -> dict | None:
    """The ``config.json`` an earlier run wrote, or None where it cannot be read and no
    results stand beside it; with results beside it, an error: resuming would keep them
    whatever they were run with (until 2026-12-01 a damaged config.json skipped every check)."""
    try:
        with open(cfg_path, encoding="utf-8") as fh:
            old = json.load(fh)
    except (OSError, ValueError):
        old = None
    if isinstance(old, dict):
        return old
    if read_results(results_path):
        raise ConfigError(f"{cfg_path} cannot be read (damaged or not a JSON object), so the results beside it "
                          "cannot be checked against this run; use another --out or --fresh")
    return None


def _refuse_another_run(out_dir: str, spec: Any, cfg: dict, old: dict | None) -> None:
    """A :class:`ConfigError` when the folder's earlier run (``old``, its config) differs from
    this one (``cfg``) in settings, data file, a data file's content, model endpoint, web
    search, judges or corpus; a folder written before one of them was recorded resumes as before."""
    if old is None:
        return
    _refuse_other_settings_or_data(out_dir, spec, cfg, old)
    for key, what in GUARDED.items():
        if key == "llm_endpoint" and not _names_openai(old.get("spec")):
            continue  # written from RAGRAPHS_LLM before 2026-11-30: the answers are the spec's model's
        if key in old and _differs(key, old[key], cfg.get(key), cfg.get("judge_variables") or []):
            empty = "none" if key != "judges" else "the shipped ones" if _loads_judge(spec) else "no judge loaded"
            named = what.format(old=_named(old[key], empty), new=_named(cfg.get(key), empty))
            raise ConfigError(f"{out_dir} holds {named}; use another --out or --fresh")
    if "corpus" in old and old["corpus"] != cfg["corpus"]:
        raise ConfigError(f"{out_dir} holds results retrieved from another corpus ({old['corpus'] or 'the data file'}, "
                          f"now {cfg['corpus'] or 'the data file'}); use another --out or --fresh")


def _refuse_other_settings_or_data(out_dir: str, spec: Any, cfg: dict, old: dict) -> None:
    """A :class:`ConfigError` when the earlier run had other settings, another data file, or
    another version of a data file (its sha256, recorded since 2026-11-30)."""
    # a setting added since the old run was written reads as its default there
    defaults = {f.name: f.default for f in fields(spec) if f.default is not MISSING}
    old_spec = {**defaults, **old["spec"]} if isinstance(old.get("spec"), dict) else None
    if old_spec != cfg["spec"] or old.get("data") != cfg["data"]:
        raise ConfigError(f"{out_dir} holds results of other settings or another data file; use another --out or --fresh")
    old_hashes = old.get("data_sha256")  # none: written before 2026-11-30
    edited = [p for p, h in old_hashes.items() if cfg["data_sha256"].get(p, h) != h] if isinstance(old_hashes, dict) else []
    if edited:
        raise ConfigError(f"{out_dir} holds results of another version of {edited[0]} (its sha256 differs: edited "
                          "since); use another --out or --fresh")


# the judge sources a run reads from the environment (a judge given to the components, by its
# role, or a ``rerank`` path, is not one)
ENV_JUDGE_SOURCES = JUDGE_VARIABLES + ("shipped",)


def _differs(key: str, old: Any, new: Any, reads: list[str]) -> bool:
    """Whether a recorded ``key`` (:data:`GUARDED`) refuses a resume. ``judges`` and
    ``judge_sha256`` compare the entries the current run records: an entry both have with
    another value is refused, and so is an environment source (``RAGRAPHS_RERANKER``,
    ``RAGRAPHS_JUDGES_DIR``, ``shipped``) the old record lacks (the variable was unset then, or
    the shipped judges served the role). An entry only the old record has is refused only for a
    variable the current run reads (``reads``: set then, unset now); otherwise it is ignored (a
    folder written before 2026-11-30 recorded the variables for runs that load no judge, and for
    roles the components were given), as is a given judge or ``rerank`` entry the old record
    lacks (not recorded before 2026-11-30). So a resume in the same environment, with the same
    given judges, is never refused; until 2026-11-30 the whole dicts were compared, and such a
    folder was."""
    if key not in ("judges", "judge_sha256") or not isinstance(old, dict) or not isinstance(new, dict):
        return bool(old != new)
    return any(old[k] != v if k in old else k in ENV_JUDGE_SOURCES for k, v in new.items()) \
        or any(k in reads and k not in new for k in old)


def _loads_judge(spec: Any) -> bool:
    """Whether a run of ``spec`` scores with a judge (:func:`judge_roles`): what an empty
    ``judges`` record means, the shipped ones or no judge at all."""
    if not callable(getattr(spec, "context_values", None)) or getattr(spec, "method", None) in ("none", "oracle"):
        return False
    try:
        ctx = build_context(spec)
        return bool(judge_roles(spec.method, ctx) or rerank_path(ctx))
    except Exception:  # only the wording of a message hangs on it
        return True


def _names_openai(spec: Any) -> bool:
    """Whether a recorded spec's model (``llm``, or its ``llm`` setting) is an ``openai*`` one,
    the only kind whose recorded ``llm_endpoint`` says where its answers came from."""
    if not isinstance(spec, dict):
        return False
    settings = spec.get("settings")
    settings = settings if isinstance(settings, dict) else {}
    return any(str(v or "").strip().lower().startswith("openai") for v in (spec.get("llm"), settings.get("llm")))


def _named(value: Any, empty: str = "the shipped ones") -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={_named(v)}" for k, v in value.items()) or empty
    if isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value):
        return value[:12]  # a sha256, shortened
    return str(value) if value else "none"


def _ends_mid_line(path: str) -> bool:
    """Whether the file is not empty and its last byte is not a newline."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            if fh.tell() == 0:
                return False
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) != b"\n"
    except OSError:
        return False


class Recorder:
    """Keeps a run's records: appends each new one to the results file at once (flushed),
    calls ``on_record`` and moves the progress bar. Use as a context manager."""

    def __init__(self, spec: Any, examples: list, done: dict[str, dict], results_path: str | None,
                 *, progress: bool, on_record: Callable[[dict], None] | None = None):
        self.records: dict[str, dict] = {ex.id: done[ex.id] for ex in examples if ex.id in done}
        self.todo = [ex for ex in examples if ex.id not in self.records]
        self._bar = Progress(len(self.todo), spec.label, progress, self.records.values())
        self._fh = open(results_path, "a", encoding="utf-8") if results_path else None
        if results_path and self._fh is not None and _ends_mid_line(results_path):
            # a record cut by a crash (SIGKILL, out of memory): the next one starts on a line of
            # its own, so it is not glued to the broken one and lost with it
            self._fh.write("\n")
            self._fh.flush()
        self._on_record = on_record

    def add(self, rec: dict) -> None:
        self.records[rec["id"]] = rec
        if self._fh is not None:
            self._fh.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")
            self._fh.flush()
        if self._on_record:
            self._on_record(rec)
        self._bar.update(rec)

    def __enter__(self) -> "Recorder":
        return self

    def __exit__(self, *exc) -> None:
        self._bar.close()
        if self._fh is not None:
            self._fh.close()
