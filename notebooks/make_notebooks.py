"""Write the notebooks of this folder (one per method and a comparison), and store their outputs.

    python notebooks/make_notebooks.py              # write the notebooks, without outputs
    python notebooks/make_notebooks.py --execute    # write them, run each, keep its outputs

``--execute`` runs every notebook top to bottom in a fresh kernel (nbclient and ipykernel, from
the ``notebooks`` extra), with ``RAGRAPHS_HOME`` in an empty temporary folder so that no state of
this machine (ERM4's reservoir, checkpoints) reaches the outputs, and writes the outputs into
the committed notebook: GitHub and JupyterLab show the drawing, the trace and the table without
running anything. Name notebooks after it to run only those (``--execute crag erm4``).

Each method notebook runs top to bottom offline on the embedded defaults (Gemma 3 270M,
MiniLM) over a few questions of the bundled sample corpus: it draws the graph, streams one
traced run (every node's custom ``node_trace`` event: scores, routes, queries) and scores a
small evaluation. ``tests/notebooks/test_notebooks.py`` executes them all.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

METHODS = {
    "vanilla": {
        "title": "Vanilla RAG",
        "module": "vanilla",
        "builder": "build_vanilla_graph",
        "context": ("ragraphs.settings", "RAGContext"),
        "settings": "k=3, max_new_tokens=16",
        "about": "Retrieve the top-k passages for the question, then answer from them in one LLM call. "
        "It is the baseline every advanced method is compared with.",
    },
    "none": {
        "title": "No retrieval (closed book)",
        "module": "none",
        "builder": "build_none_graph",
        "context": ("ragraphs.settings", "RAGContext"),
        "settings": "max_new_tokens=16",
        "about": "The LLM answers from its own parameters, without any passage: the lower bound that shows "
        "what retrieval adds.",
    },
    "crag": {
        "title": "CRAG: Corrective Retrieval-Augmented Generation (Yan et al. 2024)",
        "module": "crag",
        "builder": "build_crag_graph",
        "context": ("ragraphs.graphs.crag", "CRAGContext"),
        # no web search offline: an Incorrect/Ambiguous route answers from what it has and says so
        "settings": 'k=3, max_new_tokens=16, web="none"',
        "about": "A retrieval evaluator scores every retrieved document. **Correct** (a score above `upper`) "
        "refines the documents into knowledge strips; **Incorrect** (all below `lower`) rewrites the question "
        "into keywords and searches the web; **Ambiguous** does both. The trace shows the evaluator's scores, "
        "the thresholds and the route.",
    },
    "dr-rag": {
        "title": "DR-RAG: Dynamic-Relevant Retrieval-Augmented Generation (Hei et al. 2024)",
        "module": "dr_rag",
        "builder": "build_dr_rag_graph",
        "context": ("ragraphs.graphs.dr_rag", "DRRAGContext"),
        "settings": "k=3, max_new_tokens=16",
        "about": "A first retrieval with the question finds the statically relevant documents; a second "
        "retrieval with the question joined to each of them reaches the dynamically relevant ones (the "
        "multi-hop evidence). A pair classifier selects the documents (forward or inverse selection), "
        "and the LLM is called once.",
    },
    "erm4": {
        "title": "ERM4: four modules for RAG (Shi et al. 2024)",
        "module": "erm4",
        "builder": "build_erm4_graph",
        "context": ("ragraphs.graphs.erm4", "ERM4Context"),
        "settings": "k=3, max_new_tokens=16, reservoir_collection=\"sample\"",  # a corpus of its own: its own memory
        "about": "Query Rewriter+ turns the question into a clarified question and search queries; the "
        "retrieval trigger answers popular queries from the memory reservoir instead of retrieving; the "
        "knowledge filter keeps the passages that support the question; the answer updates the memory.",
    },
    "migres": {
        "title": "MIGRES: Missing-Information-Guided Retrieve-Extraction-Solving (Wang et al. 2024)",
        "module": "migres",
        "builder": "build_migres_graph",
        "context": ("ragraphs.graphs.migres", "MIGRESContext"),
        "settings": "k=3, max_new_tokens=16, max_iterations=2",
        "about": "Each iteration retrieves, filters the passages and extracts useful sentences; the main agent "
        "then answers if it can, or names the missing information as new queries for the next iteration "
        "(up to `max_iterations`).",
    },
}

SETUP = '''import json, os, time
os.environ.setdefault("HF_HUB_OFFLINE", "1")      # offline: every model is bundled
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
from importlib import resources

from IPython.display import Markdown, display

from ragraphs.components import Components
from ragraphs.datasets import load_dataset, pooled_passages
from ragraphs.evaluation.metrics import exact_match, f1_score, retrieval_recall
from ragraphs.tools.embeddings import MiniLMEmbeddings
from ragraphs.tools.llm import make_llm
from ragraphs.tools.vectorstore import InMemoryCorpus

# a few questions of the bundled HotpotQA sample; their paragraphs (gold and distractors) pooled
sample = resources.files("ragraphs") / "data" / "sample" / "hotpotqa_sample.jsonl"
examples = load_dataset(str(sample), "hotpotqa", limit={n_questions})
embeddings = MiniLMEmbeddings()
corpus = InMemoryCorpus(pooled_passages(examples), embeddings=embeddings)
llm = make_llm("gemma", max_tokens=32)   # the embedded Gemma 3 270M (GGUF, in process)
components = Components(llm=llm, retriever=corpus, embeddings=embeddings)
print(f"{{len(examples)}} questions, {{corpus.count()}} passages in the corpus")'''

TRACE = '''def traced_run(graph, question, context):
    """Stream one run: every node's update and its custom trace event (scores, routes, ...)."""
    t0 = time.perf_counter()
    final = {}
    for mode, chunk in graph.stream({"question": question}, context=context,
                                    stream_mode=["custom", "updates", "values"]):
        if mode == "custom" and chunk.get("event") == "node_trace":
            details = {k: v for k, v in chunk.items() if k not in ("event", "node", "elapsed_s")}
            print(f"[{time.perf_counter() - t0:6.2f}s] {chunk['node']:<18} {chunk['elapsed_s'] * 1000:7.0f} ms  "
                  + json.dumps(details, default=str)[:300])
        elif mode == "values":
            final = chunk
    return final'''

EVAL = '''def evaluate(graph, context, examples):
    rows = []
    for ex in examples:
        t0 = time.perf_counter()
        out = graph.invoke({"question": ex.question}, context=context)
        rows.append({
            "question": ex.question[:60],
            "gold": ex.answers[0],
            "answer": out.get("answer", ""),
            "EM": exact_match(out.get("answer"), ex.answers),
            "F1": round(f1_score(out.get("answer"), ex.answers), 3),
            "recall": retrieval_recall(out.get("passages") or [], ex.supporting),
            "llm_calls": out.get("llm_calls", 0),
            "seconds": round(time.perf_counter() - t0, 2),
        })
    return rows


def show(rows):
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    display(Markdown("\\n".join(lines)))'''


def method_notebook(name: str, spec: dict) -> nbformat.NotebookNode:
    mod, ctx_cls = spec["context"]
    cells = [
        new_markdown_cell(
            f"# {spec['title']}\n\n{spec['about']}\n\n"
            "This notebook runs offline on the embedded defaults (Gemma 3 270M base GGUF, all-MiniLM-L6-v2) "
            "over a few questions of the bundled HotpotQA sample. A 270M base model answers few questions "
            "right: the point is to see the graph work, step by step. Swap in your own chat model with "
            "`Components(llm=...)`."
        ),
        new_markdown_cell("## Setup: a small corpus and the embedded models"),
        new_code_cell(SETUP.format(n_questions=3)),
        new_markdown_cell(
            "## The graph\n\n`build_" + spec["module"] + "_graph(components)` compiles the typed state graph "
            "over your components (LLM, retriever or vector store, judges, web search, checkpointer). "
            "The drawing is Mermaid source (GitHub and JupyterLab render it; no network needed); `mermaid_of` "
            "is LangGraph's `draw_mermaid()` with each edge naming every route that takes it."
        ),
        new_code_cell(
            f"from ragraphs.graphs.{spec['module']} import {spec['builder']}\n"
            f"from {mod} import {ctx_cls}\n"
            "from ragraphs.graphs.draw import mermaid_of\n\n"
            f"graph = {spec['builder']}(components)\n"
            f"context = {ctx_cls}({spec['settings']})\n"
            "mermaid = mermaid_of(graph)\n"
            "display(Markdown(\"```mermaid\\n\" + mermaid + \"\\n```\"))\n"
            "print([n for n in graph.nodes if not n.startswith('__')])"
        ),
        new_markdown_cell(
            "## A traced run\n\nEvery node sends a custom stream event (`stream_mode=\"custom\"`) with its time "
            "and the details that explain the branch taken. The same trace is in the final state's `trace`, "
            "and `ragraphs ask --trace` prints it."
        ),
        new_code_cell(
            TRACE
            + "\n\n\nex = examples[0]\nprint('question:', ex.question)\nfinal = traced_run(graph, ex.question, context)\n"
            "print('\\nanswer:', repr(final.get('answer')), '| gold:', ex.answers)\n"
            "ran = [e['node'] for e in final['trace']]\n"
            "assert ran and set(ran) <= set(graph.nodes)\n"
            "assert isinstance(final.get('answer'), str)"
        ),
        new_markdown_cell(
            "## A small evaluation\n\nExact match, token F1 and the recall of the gold supporting paragraphs "
            "among the passages handed to the generator (`ragraphs eval` does this at scale)."
        ),
        new_code_cell(
            EVAL
            + "\n\n\nrows = evaluate(graph, context, examples[:2])\nshow(rows)\n"
            "assert len(rows) == 2 and all(0.0 <= r['F1'] <= 1.0 for r in rows)"
        ),
        new_markdown_cell(
            "## Next\n\n"
            "- from the shell, over a store of your own (this notebook's corpus lives in memory): "
            f"`ragraphs ingest ragraphs/data/sample` once, then `ragraphs ask \"...\" --method {name} --trace`\n"
            f"- step-by-step debugging: `ragraphs ask \"...\" --method {name} --thread t1`, then "
            "`ragraphs history t1` and `ragraphs replay t1 --from STEP` (docs/debugging.md)\n"
            f"- in LangGraph Studio: `langgraph dev`, then pick the `{name}` graph (docs/deployment.md)"
        ),
    ]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def comparison_notebook() -> nbformat.NotebookNode:
    imports = "\n".join(
        f"from ragraphs.graphs.{s['module']} import {s['builder']}\nfrom {s['context'][0]} import {s['context'][1]}"
        for s in METHODS.values()
    )
    table = ",\n".join(
        f"    {name!r}: ({s['builder']}(components), {s['context'][1]}({s['settings']}))" for name, s in METHODS.items()
    )
    cells = [
        new_markdown_cell(
            "# Comparing the methods\n\nThe six graphs on the same questions of the bundled sample, with the same "
            "embedded models: answer quality, recall of the gold paragraphs, LLM calls and time. With two questions "
            "and a 270M base model the numbers only show how to compare; `ragraphs eval` runs the full benchmarks."
        ),
        new_code_cell(SETUP.format(n_questions=3)),
        new_code_cell(imports + "\n\nruns = {\n" + table + "\n}"),
        new_code_cell(EVAL + "\n\n\nresults = {name: evaluate(g, ctx, examples[:2]) for name, (g, ctx) in runs.items()}"),
        new_code_cell(
            "def mean(xs):\n    xs = [x for x in xs if x is not None]\n    return round(sum(xs) / len(xs), 3) if xs else None\n\n"
            "summary = [{\"method\": name, \"EM\": mean(r[\"EM\"] for r in rows), \"F1\": mean(r[\"F1\"] for r in rows),\n"
            "            \"recall\": mean(r[\"recall\"] for r in rows), \"llm_calls\": mean(r[\"llm_calls\"] for r in rows),\n"
            "            \"seconds\": mean(r[\"seconds\"] for r in rows)} for name, rows in results.items()]\n"
            "show(summary)\n"
            "assert [s['method'] for s in summary] == list(runs)\n"
            "assert next(s for s in summary if s['method'] == 'none')['recall'] in (None, 0.0)"
        ),
        new_code_cell(
            "import matplotlib\nmatplotlib.use(\"Agg\")\nimport matplotlib.pyplot as plt\n\n"
            "fig, axes = plt.subplots(1, 3, figsize=(12, 3))\n"
            "for ax, key in zip(axes, [\"F1\", \"llm_calls\", \"seconds\"]):\n"
            "    ax.bar([s[\"method\"] for s in summary], [s[key] or 0 for s in summary])\n"
            "    ax.set_title(key)\n    ax.tick_params(axis=\"x\", rotation=45)\n"
            "fig.tight_layout()\n\n"
            "# shown as a PNG whatever the kernel's matplotlib backend is\n"
            "import io\nfrom IPython.display import Image, display\n\n"
            "buf = io.BytesIO()\nfig.savefig(buf, format=\"png\", dpi=80)\nplt.close(fig)\ndisplay(Image(buf.getvalue()))"
        ),
    ]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def notebooks() -> dict[str, nbformat.NotebookNode]:
    """Every notebook of this folder by name, as the generator writes it (no outputs)."""
    out = {name: method_notebook(name, spec) for name, spec in METHODS.items()}
    out["comparison"] = comparison_notebook()
    return out


def execute(nb: nbformat.NotebookNode, timeout: int = 900) -> nbformat.NotebookNode:
    """Run ``nb`` top to bottom in a fresh kernel, in an empty ``RAGRAPHS_HOME``; its outputs are
    filled in place (no timings, so that a run again changes only what the models printed)."""
    from nbclient import NotebookClient

    before = os.environ.get("RAGRAPHS_HOME")
    with tempfile.TemporaryDirectory(prefix="ragraphs-notebook-") as home:
        os.environ["RAGRAPHS_HOME"] = home  # the kernel inherits this process's environment
        try:
            NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                           resources={"metadata": {"path": home}}).execute()
        finally:
            if before is None:
                os.environ.pop("RAGRAPHS_HOME", None)
            else:
                os.environ["RAGRAPHS_HOME"] = before
    return nb


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Write the notebooks of this folder; --execute stores their outputs.")
    ap.add_argument("--execute", nargs="*", metavar="NAME", default=None,
                    help="run the notebooks (all, or these) and store their outputs")
    args = ap.parse_args(argv)
    made = notebooks()
    run = set(made) if args.execute == [] else set(args.execute or ())
    unknown = run - set(made)
    if unknown:
        ap.error(f"no such notebook: {', '.join(sorted(unknown))} (one of {', '.join(made)})")
    for name, nb in made.items():
        if name in run:
            print(f"running {name}.ipynb ...", flush=True)
            execute(nb)
        elif (HERE / f"{name}.ipynb").exists():  # keep the outputs stored before
            old = nbformat.read(HERE / f"{name}.ipynb", as_version=4)
            if [c.source for c in old.cells] == [c.source for c in nb.cells]:
                nb = old
        nbformat.write(nb, HERE / f"{name}.ipynb")


if __name__ == "__main__":
    main()
