"""ERM4's efficiency experiment (paper section 6, Table 2) on 2WikiMultihopQA.

1. First set: ``--n`` dev questions that have ``top_rank_questions`` are answered by ERM4
   with an empty reservoir and tau = 1.0 (all external), which fills the reservoir with
   the knowledge the filter kept. External corpus: the paragraphs of all dev questions,
   pooled (in memory, MiniLM dense retrieval).
2. For each tau: a copy of that reservoir; ERM4 answers the *similar* questions (the first
   ``top_rank_questions`` entry of each first-set question: real questions from the same
   corpus, without gold answers), then the first-set questions again (these have gold
   answers, so they give the hit rate at that tau). The reservoir keeps growing as in real
   use.

Per question: wall time of the whole graph run, time outside the LLM nodes, external and
memory knowledge instances, instances filtered out, back-offs. Hit rate = the gold
answer (normalised) is contained in the normalised response (the paper's "hit").

Every run is appended to ``--out`` (JSONL) as it finishes; ``--report`` prints the
table from such a file.

With ``--external web`` the external source is a SearXNG-format server on 127.0.0.1
(``bench/searxng_pages.py``, its own process) serving the same pooled paragraphs as HTML
pages: every outside query costs a search request, page fetches and text extraction.
``--taus`` takes ``default`` for the shipped tau; ``--json`` ends with one line keyed by tau
(``tau, n, external_per_q, memory_per_q, non_llm_s, wall_s, hit_rate``).

    python bench/erm4_efficiency.py --data ../shared/data/2wikimultihopqa.dev.jsonl \\
        --n 30 --taus 1.0,default --external web --json --out bench/results/erm4_efficiency_web.jsonl
    python bench/erm4_efficiency.py --report bench/results/erm4_efficiency_web.jsonl --json
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

LLM_NODES = {"rewrite", "generate", "backoff"}


def hit(answer: str, golds: list[str]) -> bool:
    from ragraphs.tools.text import normalize_answer

    a = f" {normalize_answer(answer)} "
    return any(normalize_answer(g) and f" {normalize_answer(g)} " in a for g in golds)


def record(phase: str, tau: float, question: str, golds: list[str], out: dict, seconds: float) -> dict:
    times = defaultdict(float)
    for t in out.get("trace") or []:
        times[t["node"]] += float(t.get("elapsed_s") or 0.0)
    return {
        "phase": phase,
        "tau": tau,
        "question": question,
        "golds": golds,
        "answer": out.get("answer", ""),
        "hit": hit(out.get("answer", ""), golds) if golds else None,
        "seconds": round(seconds, 3),
        "non_llm_seconds": round(sum(v for k, v in times.items() if k not in LLM_NODES), 3),
        "node_seconds": {k: round(v, 3) for k, v in times.items()},
        "rewritten": out.get("rewritten_question"),
        "queries": out.get("queries"),
        "inside": len(out.get("inside") or []),
        "outside": len(out.get("outside") or []),
        "external_knowledge": len(out.get("external_knowledge") or []),
        "memory_knowledge": len(out.get("memory_knowledge") or []),
        "filtered_out": int(out.get("filtered_out") or 0),
        "kept": len(out.get("passages") or []),
        "backoff": bool(out.get("backoff")),
        "rechecked": len(out.get("memory_missed") or []),  # inside queries searched outside after all
        "llm_calls": out.get("llm_calls", 0),
    }


def copy_db(src: str, dst: str) -> None:
    """A consistent copy of a SQLite reservoir (the backup API, safe with WAL)."""
    if os.path.exists(dst):
        os.remove(dst)
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)


def mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.fmean(xs) if xs else float("nan")


def hit_rate(rows: list[dict]) -> str:
    return f"{100 * mean(float(r['hit']) for r in rows):.1f}% (n={len(rows)})" if rows else "-"


def report(path: str) -> str:
    rows = [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]
    meta = next((r for r in rows if r.get("phase") == "meta"), {})
    runs = [r for r in rows if r.get("phase") != "meta"]
    lines = []
    if meta:
        lines.append(
            f"n first-set questions = {meta.get('n')}, similar questions = {meta.get('n_similar')}, "
            f"external = {meta.get('external', 'corpus')} over {meta.get('corpus_passages')} pooled paragraphs, "
            f"trigger = {meta.get('trigger', 'title')}, filter = {meta.get('filter_judge', 'nli')} judge "
            f"({meta.get('judge')}) at {meta.get('filter_threshold')}, theta = {meta.get('theta')}, k = {meta.get('k')}, "
            f"llm = {meta.get('llm', 'gemma')} ({meta.get('threads')} thread), similar questions answered = "
            f"{meta.get('similar_answers', True)}, judges = {meta.get('judges_dir') or 'shipped'}, reservoir after first set = {meta.get('reservoir_entries')} entries"
        )
        lines.append("")
    head = (
        "| tau | time/question (s) | non-LLM time (s) | external knowledge | memory knowledge "
        "| filtered out | back-offs | queries inside / outside | hit rate, first set asked again |"
    )
    lines += [head, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    first = [r for r in runs if r["phase"] == "first"]
    if meta.get("llm") == "none":  # no answers were written: no hit rate
        for r in runs:
            r["hit"] = None
    if first:
        lines.append(
            f"| first set (empty reservoir, tau 1.0) | {mean(r['seconds'] for r in first):.1f} | "
            f"{mean(r['non_llm_seconds'] for r in first):.2f} | {mean(r['external_knowledge'] for r in first):.2f} | "
            f"{mean(r['memory_knowledge'] for r in first):.2f} | {mean(r['filtered_out'] for r in first):.2f} | "
            f"{sum(r['backoff'] for r in first)}/{len(first)} | "
            f"{mean(r['inside'] for r in first):.2f} / {mean(r['outside'] for r in first):.2f} | "
            f"{hit_rate([r for r in first if r.get('hit') is not None])} |"
        )
    taus = sorted({r["tau"] for r in runs if r["phase"] == "similar"})
    for tau in taus:
        sim = [r for r in runs if r["phase"] == "similar" and r["tau"] == tau]
        again = [r for r in runs if r["phase"] == "again" and r["tau"] == tau]
        hr = hit_rate([r for r in again if r.get("hit") is not None])
        lines.append(
            f"| {tau:g} | {mean(r['seconds'] for r in sim):.1f} | {mean(r['non_llm_seconds'] for r in sim):.2f} | "
            f"{mean(r['external_knowledge'] for r in sim):.2f} | {mean(r['memory_knowledge'] for r in sim):.2f} | "
            f"{mean(r['filtered_out'] for r in sim):.2f} | {sum(r['backoff'] for r in sim)}/{len(sim)} | "
            f"{mean(r['inside'] for r in sim):.2f} / {mean(r['outside'] for r in sim):.2f} | {hr} |"
        )
    if any("rechecked" in r for r in runs):  # memory_recheck (2026-11-30): inside queries searched outside after all
        for tau in taus:
            part = {ph: sum(r.get("rechecked", 0) for r in runs if r["phase"] == ph and r["tau"] == tau) for ph in ("similar", "again")}
            lines.append(f"Rechecked queries at tau {tau:g}: {part['similar']} over the similar questions, {part['again']} over the first set asked again.")
    lines.append("")
    lines.append(
        "Columns except the last: means over the similar questions (n per row as above). "
        "time/question: wall time of the whole graph run; non-LLM time: memory check, retrieval, filter and "
        "reservoir update. Hit rate: gold answer contained in the response, on the first-set questions asked "
        "again after the similar ones at that tau."
    )
    return "\n".join(lines)


def summary(path: str) -> dict:
    """One object keyed by tau: the similar questions' means and the first set's hit rate."""
    rows = [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]
    out = {}
    for tau in sorted({r["tau"] for r in rows if r.get("phase") == "similar"}):
        sim = [r for r in rows if r.get("phase") == "similar" and r["tau"] == tau]
        again = [r for r in rows if r.get("phase") == "again" and r["tau"] == tau and r.get("hit") is not None]
        out[f"{tau:g}"] = {
            "tau": tau,
            "n": len(sim),
            "external_per_q": round(mean(r["external_knowledge"] for r in sim), 3),
            "memory_per_q": round(mean(r["memory_knowledge"] for r in sim), 3),
            "non_llm_s": round(mean(r["non_llm_seconds"] for r in sim), 3),
            "wall_s": round(mean(r["seconds"] for r in sim), 3),
            "hit_rate": round(100 * mean(float(r["hit"]) for r in again), 1) if again else None,
            "n_hit": len(again),
        }
    return out


def start_page_server(data: str) -> tuple[subprocess.Popen, str]:
    """bench/searxng_pages.py in its own process; returns (process, base URL)."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "searxng_pages.py")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, script, data, "--port", "0"], stdout=subprocess.PIPE, text=True, env=env)
    url = (proc.stdout.readline() if proc.stdout else "").strip()
    if not url.startswith("http://127.0.0.1:"):
        proc.kill()
        raise SystemExit(f"the page server did not start (got {url!r})")
    return proc, url


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="2wikimultihopqa dev JSONL (rows with top_rank_questions)")
    ap.add_argument("--n", type=int, default=30, help="first-set questions (default 30)")
    ap.add_argument("--taus", default="1.0,default", help="comma list; 'default' is the shipped tau")
    ap.add_argument("--theta", type=int, default=None, help="popularity threshold (default: the shipped one)")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--external", choices=("corpus", "web"), default="corpus",
                    help="corpus: in-memory dense retrieval; web: a SearXNG-format server on 127.0.0.1 "
                    "serving the paragraphs as HTML pages (search + fetch + extraction)")
    ap.add_argument("--trigger", default=None, help="title | evaluator (default: the shipped one)")
    ap.add_argument("--filter-judge", default=None, help="nli | evaluator (default: the shipped one)")
    ap.add_argument("--judge", default="default", help="nli judge: default (shipped) or cosine (baseline)")
    ap.add_argument("--filter-threshold", type=float, default=None)
    ap.add_argument("--no-again", action="store_true", help="skip asking the first set again (no hit rate per tau)")
    ap.add_argument("--skip-similar-answers", action="store_true",
                    help="similar questions (no gold answers) stop before the answer: their wall time is the time "
                    "to the filtered knowledge; everything else is unchanged")
    ap.add_argument("--no-llm", action="store_true",
                    help="no LLM at all: a model that writes nothing, so Rewriter+ falls back to the question as the "
                    "only query, and no answers (no hit rate); trigger, retrieval, filter and reservoir are real")
    ap.add_argument("--threads", type=int, default=1, help="llama.cpp threads (1 suits a crowded CPU)")
    ap.add_argument("--out", default="bench/results/erm4_efficiency.jsonl")
    ap.add_argument("--workdir", default=None, help="where the reservoir copies go (default: a temp dir)")
    ap.add_argument("--json", action="store_true", help="print the summary keyed by tau as the last line")
    ap.add_argument("--report", metavar="JSONL", help="only print the table of a finished run")
    args = ap.parse_args(argv)
    if args.report:
        print(report(args.report))
        if args.json:
            print(json.dumps(summary(args.report)))
        return 0
    if not args.data:
        ap.error("--data is required")

    from ragraphs.components import Components
    from ragraphs.datasets import load_dataset, pooled_passages
    from ragraphs.graphs.erm4 import ERM4Context, build_erm4_graph
    from ragraphs.tools.embeddings import MiniLMEmbeddings
    from ragraphs.tools.judges import CosineNLIJudge
    from ragraphs.tools.llm import LlamaCppCompletionChat, gemma_gguf_path
    from ragraphs.tools.reservoir import Reservoir
    from ragraphs.tools.vectorstore import InMemoryCorpus
    from ragraphs.tools.websearch import SearxngSearch

    shipped = ERM4Context()
    taus = [shipped.tau if x.strip() == "default" else float(x) for x in args.taus.split(",") if x.strip()]
    settings = {k: v for k, v in {"theta": args.theta, "k": args.k, "trigger": args.trigger,
                                  "filter_judge": args.filter_judge, "filter_threshold": args.filter_threshold}.items()
                if v is not None}
    exs = load_dataset(args.data, "2wikimultihopqa")
    first = [e for e in exs if e.extra.get("top_rank_questions")][: args.n]
    similar = []
    for e in first:
        q = next((s for s in e.extra["top_rank_questions"] if s.strip() and s.strip() != e.question.strip()), None)
        if q:
            similar.append(q)
    emb = MiniLMEmbeddings()
    server = None
    web = corpus = None
    if args.external == "web":
        import signal

        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped run still stops its page server
        server, url = start_page_server(args.data)
        web = SearxngSearch(url)
        settings.update(external="web", fetch_allow_private=True)
        n_passages = len({p["id"] for p in pooled_passages(exs)})
    else:
        t0 = time.time()
        corpus = InMemoryCorpus(pooled_passages(exs), embeddings=emb)
        n_passages = corpus.count()
        print(f"corpus: {n_passages} passages embedded in {time.time() - t0:.0f}s", file=sys.stderr)
    judges = {"nli": CosineNLIJudge(emb)} if args.judge == "cosine" else {}
    if args.no_llm:
        from ragraphs.tools.llm import FakeAnswerChat

        llm = FakeAnswerChat(responses=[""])
        args.skip_similar_answers, args.no_again = True, True
    else:
        llm = LlamaCppCompletionChat(model_path=gemma_gguf_path(), max_tokens=32, n_threads=args.threads)
    work = args.workdir or tempfile.mkdtemp(prefix="erm4-eff-")
    os.makedirs(work, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    out_f = open(args.out, "w", encoding="utf-8")

    def emit(rec: dict) -> None:
        out_f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        out_f.flush()

    def graph_for(path: str):
        res = Reservoir(path, embeddings=emb)
        c = Components(llm=llm, retriever=corpus, embeddings=emb, web_search=web, judges=dict(judges),
                       extra={"reservoir": res})
        return build_erm4_graph(c), res

    def ctx(tau: float, **kw) -> ERM4Context:
        return ERM4Context(tau=tau, **settings, **kw)

    def ask(g, phase: str, tau: float, q: str, golds: list[str]) -> None:
        t = time.perf_counter()
        skip = (phase == "similar" and args.skip_similar_answers) or args.no_llm
        out = g.invoke({"question": q}, context=ctx(tau, skip_generation=skip))
        rec = record(phase, tau, q, [] if skip else golds, out, time.perf_counter() - t)
        emit(rec)
        print(f"[{phase} tau={tau}] {rec['seconds']:.1f}s non-llm={rec['non_llm_seconds']:.2f}s "
              f"ext={rec['external_knowledge']} mem={rec['memory_knowledge']} kept={rec['kept']} hit={rec['hit']} "
              f"| {q[:60]}", file=sys.stderr, flush=True)

    try:
        base = os.path.join(work, "first.sqlite3")
        if os.path.exists(base):
            os.remove(base)
        g, res = graph_for(base)
        for e in first:
            ask(g, "first", 1.0, e.question, e.answers)
        c0 = ctx(1.0)
        emit({"phase": "meta", "n": len(first), "n_similar": len(similar), "corpus_passages": n_passages,
              "external": args.external, "judge": args.judge, "trigger": c0.trigger, "filter_judge": c0.filter_judge,
              "filter_threshold": c0.filter_threshold, "theta": c0.theta, "k": args.k, "taus": taus,
              "threads": args.threads, "reservoir_entries": res.count(),
              "similar_answers": not args.skip_similar_answers, "llm": "none" if args.no_llm else "gemma",
              "judges_dir": os.environ.get("RAGRAPHS_JUDGES_DIR", "")})
        res.close()
        for tau in taus:
            path = os.path.join(work, f"tau{tau}.sqlite3")
            copy_db(base, path)
            g, res = graph_for(path)
            for q in similar:
                ask(g, "similar", tau, q, [])
            if not args.no_again:
                for e in first:
                    ask(g, "again", tau, e.question, e.answers)
            res.close()
    finally:
        out_f.close()
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    print(report(args.out))
    if args.json:
        print(json.dumps(summary(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
