"""``ragraphs eval``: run methods on a benchmark file and report the papers' metrics.

Examples::

    ragraphs eval --method vanilla --dataset hotpotqa --data hotpotqa.dev.jsonl --limit 50 --json
    ragraphs eval --compare none,vanilla,oracle --dataset musique --data musique.dev.jsonl --out runs/musique
    ragraphs eval --method dr-rag --strategy sm,qdc,cis,cfs --k 2,4,6 --retrieval-only \\
        --dataset 2wikimultihopqa --data 2wikimultihopqa.dev.jsonl --out runs/drrag-recall
    ragraphs eval --method crag --server http://127.0.0.1:2024 --concurrency 8 \\
        --dataset popqa --data popqa.dev.jsonl --out runs/popqa-served
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..errors import ConfigError, InputError, check_writable_folder
from .records import run_dir
from .report import fmt as _fmt, recall_over, scored_over, summary_table
from .records import check_run_places
from .runner import ORACLE, RunSpec, iter_specs, refuse_a_folder_of_another_run, run_spec, unique_ids

SUMMARY_KEYS = ("em", "f1", "acc", "empty_answers", "recall", "docs_avg", "llm_calls_avg", "iterations_avg", "parse_failures", "guard_hit_rate", "web_calls_avg", "latency_s_avg")


def _csv(value: str | None, option: str) -> list[str]:
    """A comma list's items, each once (``--k 4,4`` ran twice until 2026-12-03); none for no
    value, an :class:`InputError` for an empty item (``2,,4``, ``,``: one dropped without a
    word, or no run at all, until 2026-12-03)."""
    items = [v.strip() for v in (value or "").split(",")]
    if (value or "").strip() and not all(items):
        raise InputError(f"{option} has an empty item in {value!r} (a comma too many?)")
    return list(dict.fromkeys(v for v in items if v))


def _ks(value: str | None) -> list[int | None]:
    if not value:
        return [None]
    out: list[int | None] = []
    for v in _csv(value, "--k"):
        try:
            k = int(v)
        except ValueError:
            raise InputError(f"--k expects integers like 4 or 2,4,6; got {value!r}") from None
        if k < 1:
            raise InputError("--k must be at least 1")
        out.append(k)
    return list(dict.fromkeys(out))  # 4 and 04 once


def resolve_methods(args: argparse.Namespace) -> list[str]:
    from ..graphs import METHODS, method_names

    if args.compare:
        methods = method_names() + [ORACLE] if args.compare == "all" else _csv(args.compare, "--compare")
    else:
        methods = _csv(args.method, "--method") or ["vanilla"]
    if args.oracle and ORACLE not in methods:
        methods.append(ORACLE)
    known = method_names()
    for m in methods:
        if m == ORACLE:
            continue
        if m not in known:
            hint = " (not installed yet)" if m in METHODS else ""
            raise ConfigError(f"unknown method {m!r}{hint}; choose from {', '.join(known + [ORACLE])}")
    # keep order, drop repeats
    return list(dict.fromkeys(methods))


def corpus_named(args: argparse.Namespace) -> dict[str, Any]:
    """What the questions retrieve from, as the command line names it (empty: the data file's
    own paragraphs): recorded beside a run's results, so a resume over another corpus is refused."""
    named: dict[str, Any] = {}
    if getattr(args, "corpus", None):
        named["corpus"], named["collection"] = os.path.abspath(args.corpus), args.collection
    if getattr(args, "pool", None):
        named["pool"] = sorted(os.path.abspath(p) for p in args.pool)
    if getattr(args, "web", None):
        named["web"] = sorted(os.path.abspath(p) for p in args.web)
    return named


def open_corpus(args: argparse.Namespace, examples: list, embeddings_fast: bool = True):
    """The retriever of the run: an existing store (``--corpus``) or the pooled file corpus."""
    from ..tools.embeddings import MiniLMEmbeddings

    if args.corpus:
        from ..tools.vectorstore import ChromaCorpus

        if not os.path.isdir(args.corpus):
            raise InputError(f"--corpus: no such store directory: {args.corpus}")
        try:
            store = ChromaCorpus(args.corpus, collection=args.collection, embeddings=MiniLMEmbeddings(fast=True), create=False)
        except ConfigError:  # the store was built with the float32 encoder (`ingest --exact`)
            store = ChromaCorpus(args.corpus, collection=args.collection, embeddings=MiniLMEmbeddings(fast=False), create=False)
        if store.count() == 0:
            raise InputError(f"--corpus {args.corpus}: collection {args.collection!r} is empty")
        return store
    from ..datasets import pooled_passages
    from .corpus import PooledCorpus

    pool = list(examples)
    for path in getattr(args, "pool", None) or []:
        from ..datasets import load_dataset

        if not os.path.isfile(path):
            raise InputError(f"--pool: no such file: {path}")
        pool += load_dataset(path)  # each pooled file in its own format: any dataset's paragraphs are distractors
    passages = pooled_passages(pool)
    if not passages:  # question-answer rows only: nothing to search
        raise InputError(f"{args.data}: its rows hold no paragraphs to search; give a store with --corpus DIR "
                         "(`ragraphs ingest` your documents first) or --pool a file that holds paragraphs")
    return PooledCorpus(passages, MiniLMEmbeddings(fast=embeddings_fast), quiet=args.quiet)


def _file_format(path: str) -> str | None:
    """The format the file's first readable row is detected as (``odqa`` for NQ + TriviaQA rows)."""
    from ..datasets import detect_format, iter_rows

    for row in iter_rows(path, warn=lambda m: None):
        fmt = detect_format(row)
        if fmt:
            return fmt
    return None


def _refuse_clashes(args: argparse.Namespace, methods: list[str], ks: list, strategies: list, settings: dict[str, Any]) -> None:
    """``--k 4 --set k=6`` (or ``--llm``, ``--retrieval``, ``--strategy``, ``--retrieval-only``
    against ``--set``, also scoped as ``dr-rag.k=6``): refused as ``ask`` refuses it. Until
    2026-11-30 (night) ``--set`` won and the run's folder was named after the option it ignored. A
    list (``--k 2,4``) clashes with any ``--set`` of the same setting."""
    from ..cli.common import refuse_clashes

    options = {
        "llm": args.llm, "retrieval": args.retrieval,
        "k": ks[0] if len(ks) == 1 else args.k,
        "strategy": strategies[0] if len(strategies) == 1 else args.strategy,
        "skip_generation": True if args.retrieval_only else None,
    }
    for m in methods:
        refuse_clashes(options, settings, m, flags={"skip_generation": "--retrieval-only"})


def _refuse_unused(args: argparse.Namespace) -> None:
    """Options this run would not read, refused by name as ``ingest`` and ``judge-eval`` refuse
    theirs (until 2026-12-01 each was ignored without a word)."""
    if args.compare is not None and args.method is not None:
        raise InputError("--method and --compare both name the methods; give one (--compare M1,M2 runs several)")
    if args.concurrency is not None and not args.server:
        raise InputError("--concurrency is the questions in flight on a --server; local runs answer one at a time")
    if args.fresh and not args.out:
        raise InputError("--fresh starts an --out folder over; without --out nothing is kept to start over")
    if args.collection is not None and not args.corpus:
        raise InputError("--collection names the collection of --corpus; the pooled file corpus has none")
    if args.corpus and args.collection is None:
        args.collection = "ragraphs"


def cmd_eval(args: argparse.Namespace) -> int:
    from ..settings import parse_settings

    _refuse_unused(args)
    methods = resolve_methods(args)
    ks = _ks(args.k)
    strategies: list[str | None] = list(_csv(args.strategy, "--strategy")) or [None]
    settings = parse_settings(args.set)
    _refuse_clashes(args, methods, ks, strategies, settings)
    if args.limit is not None and args.limit < 1:
        raise InputError("--limit must be at least 1")
    examples, all_examples, dataset = _questions(args)
    if args.out:  # before the corpus is embedded and the questions run; after the data is read (a refused
        # file left an empty --out folder behind until 2026-12-01)
        check_writable_folder(args.out)
    withhold = bool(getattr(args, "withhold_gold", False))
    methods, specs = _specs(args, methods, ks, strategies, settings, withhold)
    if args.out:
        check_run_places(args.out, dataset, [spec.label for spec in specs])
    if args.server:  # an offline web file is the server's
        return _eval_on_server(args, specs, examples, dataset)
    summaries, all_records = _run_local(args, specs, examples, all_examples, dataset, withhold)
    return _report(args, methods, summaries, all_records, examples, dataset)


def _specs(args: argparse.Namespace, methods: list[str], ks: list, strategies: list, settings: dict[str, Any],
           withhold: bool) -> tuple[list[str], list[RunSpec]]:
    """The runs: each method with each ``--k`` and ``--strategy``; their settings are checked
    against every method's context before any model is loaded (and, locally, that a web
    backend they name is there)."""
    if settings.get("skip_generation") is True:  # --set skip_generation=true is --retrieval-only (RunSpec)
        args.retrieval_only = True
    if args.retrieval_only and "none" in methods:  # it retrieves nothing, and would still ask its LLM
        methods = [m for m in methods if m != "none"]
        if not methods:
            raise ConfigError("--retrieval-only: method 'none' answers without retrieving; choose a method that retrieves")
        if not args.quiet:
            print("--retrieval-only: method 'none' left out (it retrieves nothing)", file=sys.stderr)
    specs = iter_specs(
        methods, ks, strategies,
        retrieval=args.retrieval, retrieval_only=args.retrieval_only, llm=args.llm, settings=settings,
        withhold_gold=withhold,
    )
    if withhold:
        if ORACLE in methods:
            raise InputError("--withhold-gold leaves the oracle nothing to read (it reads the gold paragraphs); drop the oracle")
        if args.server:
            raise InputError("--withhold-gold is for local runs (the pooled file corpus or --corpus); drop --server")
    from ..cli.common import refuse_missing_web
    from ..graphs import get_context_class
    from ..settings import check_shared_settings
    from .runner import build_context

    if len(methods) > 1:
        check_shared_settings(settings, {m: get_context_class("vanilla" if m == ORACLE else m) for m in methods})
    contexts = [build_context(spec) for spec in specs]
    if not args.server and not args.web:  # --web's files are the run's web search; on a server, the server's
        for ctx in contexts:
            refuse_missing_web(ctx)
    return methods, specs


def _run_local(args: argparse.Namespace, specs: list[RunSpec], examples: list, all_examples: list, dataset: str,
               withhold: bool) -> tuple[list[dict], dict[str, list[dict]]]:
    """Each run here, over the parts they share (the oracle reads each question's gold): its
    summary and records, a line printed as each ends."""
    from ..components import Components

    retriever, web = _local_parts(args, specs, examples, all_examples, withhold)
    embeddings = getattr(retriever, "embeddings", None)
    shared = Components(retriever=retriever, embeddings=embeddings, web_search=web)
    summaries: list[dict] = []
    all_records: dict[str, list[dict]] = {}
    for spec in specs if args.out and not args.fresh else []:  # every folder checked before the first question
        refuse_a_folder_of_another_run(spec, shared, run_dir(args.out, dataset, spec.label), dataset=dataset,
                                       data=args.data, corpus=corpus_named(args))
    oracle_components = None
    for spec in specs:
        comps = shared
        if spec.method == ORACLE:
            from .corpus import OracleRetriever

            if oracle_components is None:
                oracle_components = Components(retriever=OracleRetriever(examples), embeddings=embeddings, web_search=web)
            comps = oracle_components
        out_dir = run_dir(args.out, dataset, spec.label) if args.out else None
        summary, records = run_spec(
            spec, examples, comps, dataset=dataset, data=args.data, out_dir=out_dir,
            resume=not args.fresh, progress=not args.quiet, corpus=corpus_named(args),
        )
        summaries.append(summary)
        all_records[spec.label] = records
        _print_line(args, spec, summary)
        if spec.retrieval_only and not args.json and not args.quiet:
            print(stage_lines(summary), file=sys.stderr)
    return summaries, all_records


def _questions(args: argparse.Namespace) -> tuple[list, list, str]:
    """The questions to run (``FILE@K/N``'s part, the first ``--limit``), every question of the
    file (whose paragraphs the corpus pools) and the dataset's name."""
    from ..datasets import load_dataset, normalize_dataset_name, parse_data_spec, select_part

    path, part, nparts = parse_data_spec(args.data)
    if os.path.isdir(path):
        raise InputError(f"--data {path} is a folder; give a data file (JSONL or JSON)")
    if not os.path.isfile(path):
        raise InputError(f"--data: no such file: {path}")
    ds_name = normalize_dataset_name(args.dataset)
    loaded = load_dataset(path, ds_name)
    if not loaded:
        raise InputError(f"{path}: no questions could be read")
    # FILE@K/N: part K, hashed on the loader's ids (unique_ids then renames the same objects);
    # the corpus still pools the whole file
    examples = select_part(loaded, part, nparts)
    if not examples:
        raise InputError(f"{args.data}: part {part} of {nparts} holds no questions")
    all_examples = unique_ids(loaded)
    # a file of several subsets (NQ + TriviaQA rows) is named by its format, not by its first row
    subsets = {ex.dataset for ex in all_examples}
    dataset = ds_name or (all_examples[0].dataset if len(subsets) == 1 else _file_format(path) or "mixed")
    return (examples[: args.limit] if args.limit else examples), all_examples, dataset


def _local_parts(args: argparse.Namespace, specs: list[RunSpec], examples: list, all_examples: list,
                 withhold: bool) -> tuple[Any, Any]:
    """What every local run shares: the corpus (the file's paragraphs pooled, or ``--corpus``;
    each question's gold withheld with ``--withhold-gold``; None when no run retrieves) and the
    ``--web`` files' search (None without them)."""
    web = None
    if args.web:
        from ..tools.websearch import OfflineCorpusSearch

        for w in args.web:
            if not os.path.isfile(w):
                raise InputError(f"--web: no such file: {w}")
        web = OfflineCorpusSearch(args.web)
    needs_corpus = any(s.method not in ("none", ORACLE) for s in specs)
    retriever = open_corpus(args, all_examples) if needs_corpus else None
    if retriever is not None and withhold:
        from .corpus import WithheldRetriever

        gold = sorted({i for ex in examples for i in ex.supporting_ids})
        if hasattr(retriever, "existing_ids") and not retriever.existing_ids(gold):
            raise InputError(f"--withhold-gold: the store {args.corpus} holds none of the questions' gold paragraphs, so "
                             "withholding them would change nothing (ingest the benchmark file itself, or drop --corpus)")
        retriever = WithheldRetriever(retriever)
    return retriever, web


def _eval_on_server(args: argparse.Namespace, specs: list[RunSpec], examples: list, dataset: str) -> int:
    """Every question a run on the LangGraph server at ``--server`` (see evaluation/remote.py)."""
    from .remote import run_spec_remote

    if args.corpus or args.web or getattr(args, "pool", None):
        raise InputError("--corpus, --pool and --web are for local runs; with --server the server's graphs use "
                         "the server's store and web search (RAGRAPHS_HOME / RAGRAPHS_STORE_URL, RAGRAPHS_WEB)")
    if args.concurrency is not None and args.concurrency < 1:
        raise InputError("--concurrency must be at least 1")
    if any(s.method == ORACLE for s in specs):
        raise InputError("the oracle runs locally only (it reads the gold paragraphs of the data file); drop it with --server")
    summaries: list[dict] = []
    all_records: dict[str, list[dict]] = {}
    for spec in specs:
        out_dir = run_dir(args.out, dataset, spec.label) if args.out else None
        summary, records = run_spec_remote(
            spec, examples, args.server, concurrency=args.concurrency or 4, dataset=dataset, data=args.data,
            out_dir=out_dir, resume=not args.fresh, progress=not args.quiet,
        )
        summaries.append(summary)
        all_records[spec.label] = records
        _print_line(args, spec, summary)
    return _report(args, [s.method for s in specs], summaries, all_records, examples, dataset)


def _print_line(args: argparse.Namespace, spec: RunSpec, summary: dict) -> None:
    if not args.json and not args.quiet:
        gold, scored = recall_over(summary), scored_over(summary)
        over = (f" (EM, F1, acc over {scored} with a gold answer)" if scored is not None else "") + (
            f" (recall over {gold} with gold)" if gold is not None else "")
        print(f"{spec.label}: " + ", ".join(f"{k}={_fmt(summary[k], k in ('em', 'f1', 'acc', 'recall'))}" for k in SUMMARY_KEYS)
              + over, file=sys.stderr)


def _report(args: argparse.Namespace, methods: list[str], summaries: list[dict], all_records: dict, examples: list,
            dataset: str) -> int:
    methods = list(dict.fromkeys(methods))
    if args.out:
        from .report import write_report

        path = write_report(args.out, summaries, all_records, dataset=dataset, data=args.data, argv=getattr(args, "_argv", None))
        if not args.json:
            print(f"report: {path}", file=sys.stderr)

    if args.json:
        if len(summaries) == 1:
            print(json.dumps(summaries[0]))
        else:
            print(json.dumps({"method": ",".join(methods), "dataset": dataset, "n": len(examples), "runs": summaries}))
    else:
        print(summary_table(summaries))
    for s in summaries:  # why questions failed, not only how many (the records hold every message)
        failed = [r for r in all_records.get(s.get("label"), []) if r.get("error")]
        if failed:
            first = failed[0]
            print(f"{s.get('label')}: {len(failed)} of {s['n']} questions failed; the first ({first.get('id')}): "
                  f"{str(first['error'])[:300]}", file=sys.stderr)
        lost = [r for r in all_records.get(s.get("label"), []) if r.get("web_error")]
        if lost:  # answered, but without the web search the run was given
            print(f"{s.get('label')}: {len(lost)} of {s['n']} questions had no web results; the first ({lost[0].get('id')}): "
                  f"{lost[0]['web_error']}", file=sys.stderr)
    return 0 if all(s["errors"] < s["n"] for s in summaries) else 1


def stage_lines(summary: dict) -> str:
    """The retrieval stages of a run: recall@stage of the gold paragraphs, documents handed on, ms per question."""
    lines = []
    for name, st in (summary.get("stages") or {}).items():
        if name == "generate":
            continue
        rec = "-" if st.get("recall") is None else f"{100 * st['recall']:.1f}"
        docs = "-" if st.get("docs") is None else f"{st['docs']:.1f}"
        ran = f"  (ran on {100 * st['ran']:.0f}% of the questions)" if st.get("ran") is not None else ""
        lines.append(f"  {name:15s} recall {rec:>5s}  docs {docs:>5s}  {st.get('ms') or 0:8.1f} ms/question{ran}")
    lines.append(f"  {'retrieval':15s} recall {_fmt(summary.get('recall'), True):>5s}  docs {_fmt(summary.get('docs_avg')):>5s}  "
                 f"{summary.get('retrieval_ms_avg') or 0:8.1f} ms/question (all stages)")
    return "\n".join(lines)


def register(subparsers) -> None:
    from ..graphs import METHODS

    p = subparsers.add_parser(
        "eval",
        help="run methods on a benchmark file and report EM/F1/acc, recall, calls and time",
        description="Run one or more methods on the questions of a benchmark file and score them.",
    )
    p.add_argument("--method", default=None, help=f"method(s), comma-separated: {', '.join(list(METHODS) + [ORACLE])} (default vanilla)")
    p.add_argument("--compare", nargs="?", const="all", default=None, metavar="M1,M2,...",
                   help="run several methods on the same questions and write one table (no value: every installed method and the oracle)")
    p.add_argument("--oracle", action="store_true", help="also run the oracle: the gold supporting paragraphs handed to the vanilla generator")
    p.add_argument("--dataset", default="auto", help="hotpotqa, 2wikimultihopqa, musique, popqa, odqa/nq/triviaqa, strategyqa, flashrag, or auto (default)")
    p.add_argument("--data", required=True, metavar="PATH", help="the benchmark file (JSONL or JSON array) in its own format; "
                   "PATH@K/N: only part K of N of its questions (a stable hash split, as train-judge and calibrate-crag "
                   "read it), the corpus still pooling the whole file")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="the first N questions only (the corpus still pools the whole file)")
    p.add_argument("--k", default=None, metavar="K", help="passages per retrieval; a list like 2,4,6 runs one configuration per value")
    p.add_argument("--strategy", default=None, metavar="S", help="DR-RAG strategy sm|qdc|cis|cfs; a list runs one configuration per value")
    p.add_argument("--retrieval", choices=["dense", "bm25", "hybrid"], default=None, help="retrieval mode")
    p.add_argument("--retrieval-only", action="store_true", help="skip generation: recall and docs only")
    p.add_argument("--llm", default=None, metavar="SPEC", help="gemma (default) | llamacpp:PATH | openai:MODEL | fake:TEXT")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="any other setting of the method's context (JSON values); METHOD.KEY=VALUE sets it "
                   "for that method only, e.g. --compare vanilla,crag --set crag.upper=0.93")
    p.add_argument("--pool", action="append", metavar="PATH", help="also pool the paragraphs of this benchmark file, of any supported format, into the corpus "
                   "(a larger distractor pool; questions still come from --data)")
    p.add_argument("--withhold-gold", action="store_true",
                   help="withhold each question's gold paragraphs from the corpus while it runs: every retrieval "
                   "truly misses (what CRAG's Incorrect route is for); not with the oracle or --server")
    p.add_argument("--corpus", default=None, metavar="PATH", help="an existing Chroma store (from `ragraphs ingest`) instead of the pooled file corpus")
    p.add_argument("--collection", default=None, help="collection of --corpus (default ragraphs)")
    p.add_argument("--web", action="append", metavar="PATH", help="offline web-search corpus JSONL for methods that search the web (CRAG, ERM4)")
    p.add_argument("--out", default=None, metavar="DIR", help="write per-question results (JSONL), summaries and a Markdown report with plots; re-running resumes")
    p.add_argument("--server", default=None, metavar="URL",
                   help="run every question on the LangGraph server at URL (e.g. `langgraph dev`'s http://127.0.0.1:2024): "
                        "the graph named like the method, the run settings as the run's context; the server's store is the corpus")
    p.add_argument("--concurrency", type=int, default=None, metavar="N", help="with --server: questions in flight at once (default 4)")
    p.add_argument("--fresh", action="store_true", help="with --out: start over instead of resuming")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object on the last line")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_entry)


def _entry(args: argparse.Namespace) -> int:
    args._argv = ["ragraphs"] + sys.argv[1:] if sys.argv and "eval" in sys.argv else None
    return cmd_eval(args)
