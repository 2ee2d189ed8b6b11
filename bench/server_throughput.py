"""Throughput of `ragraphs eval --server` against the number of runs in flight.

Usage (from the repository root, venv active):
    python bench/server_throughput.py --llm-cmd "llama-server -m MODEL.gguf --parallel 4 -t 2 \\
        -c 16384 --host 127.0.0.1 --port {port} --alias gemma-local" [--concurrency 1,4] [--repeats 2]

What it does, all on 127.0.0.1:

1. ingests the data file's paragraphs (default: the bundled HotpotQA sample, 30 questions)
   into a fresh store;
2. starts `langgraph dev` (the repository's `langgraph.json`, `--n-jobs-per-worker`
   `--jobs`) over that store, its `openai:` / `openai-completion:` models pointed at the LLM
   server's port;
3. for each round (every concurrency N of `--concurrency`, in alternating order over
   `--repeats`), starts the LLM server **afresh** (`--llm-cmd`, `{port}` filled in), so that
   no round is served from the prompt cache an earlier round left (or uses the running
   server at `--llm-url` as it is), and runs
   `ragraphs eval --method M --server URL --concurrency N` over every question;
4. prints one row per round (wall time of the questions, questions per second, speed-up
   over the mean of the N = 1 rounds, errors, EM, F1) and writes them as JSON to `--out`.

The LLM is the only thing the graphs share; where it runs on the same cores as the graphs
(as here, on a 2-core machine), the speed-up cannot pass the share of the N = 1 time that
is not compute. Compare rows within one run of this script: the machine's other load moves
them all.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "ragraphs" / "data" / "sample" / "hotpotqa_sample.jsonl"
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def offline_env(home: Path, llm_base_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "RAGRAPHS_HOME": str(home),
        "RAGRAPHS_WEB": "none",
        "OPENAI_BASE_URL": llm_base_url,
        "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "none"),
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
        "PYTHONUNBUFFERED": "1",
    }


def wait_for(url: str, proc: subprocess.Popen, what: str, log: Path, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            sys.exit(f"{what} exited early; its log ({log}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            sys.exit(f"{what} did not answer {url} in {timeout:.0f} s; its log: {log}")
        time.sleep(0.5)


def start(cmd: list[str], env: dict, log: Path, cwd: Path | None = None) -> subprocess.Popen:
    with open(log, "w") as fh:
        return subprocess.Popen(cmd, env=env, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)


def stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def portable(text: str) -> str:
    """What the JSON records of a path or a command: paths under the repository relative to it,
    other absolute paths by their file name (a result must not carry one machine's layout)."""
    def one(tok: str) -> str:
        if not os.path.isabs(tok):
            return tok
        p = Path(tok)
        return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else p.name
    return " ".join(one(t) for t in text.split(" "))


def schedule(levels: list[int], repeats: int) -> list[int]:
    """Every level once per repeat, the order reversed on every other repeat."""
    out: list[int] = []
    for i in range(repeats):
        out += levels if i % 2 == 0 else levels[::-1]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--llm-cmd", help="command that starts an OpenAI-compatible LLM server on {port} (started afresh "
                                         "for every round)")
    where.add_argument("--llm-url", help="base URL of an LLM server that is already running (e.g. a GPU machine's "
                                         "http://HOST:8000/v1); it is not restarted between rounds, so its prompt cache can answer "
                                         "what an earlier round sent: turn that cache off, or use --llm-cmd")
    ap.add_argument("--llm", default="openai-completion:gemma-local", help="the --llm spec the runs use")
    ap.add_argument("--method", default="vanilla")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--data", default=str(SAMPLE))
    ap.add_argument("--dataset", default="hotpotqa")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--concurrency", default="1,4", help="comma-separated levels")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=8, help="langgraph dev --n-jobs-per-worker")
    ap.add_argument("--out", default="bench/results/server_throughput.json")
    args = ap.parse_args()
    levels = [int(x) for x in args.concurrency.split(",")]
    if not levels or min(levels) < 1:
        sys.exit("--concurrency takes positive integers, e.g. 1,4")

    work = Path(tempfile.mkdtemp(prefix="ragraphs-throughput-"))
    home, llm_port, lg_port = work / "home", free_port(), free_port()
    env = offline_env(home, args.llm_url or f"http://127.0.0.1:{llm_port}/v1")
    subprocess.run([str(BIN / "ragraphs"), "ingest", args.data, "--quiet"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    lg = start([str(BIN / "langgraph"), "dev", "--config", str(ROOT / "langgraph.json"), "--host", "127.0.0.1",
                "--port", str(lg_port), "--no-browser", "--no-reload", "--n-jobs-per-worker", str(args.jobs)],
               env, work / "langgraph.log", cwd=ROOT)
    url = f"http://127.0.0.1:{lg_port}"
    rows = []
    try:
        wait_for(url + "/ok", lg, "langgraph dev", work / "langgraph.log")
        for i, n in enumerate(schedule(levels, args.repeats)):
            log = work / f"llm.{i}.log"
            llm = start(shlex.split(args.llm_cmd.format(port=llm_port)), env, log) if args.llm_cmd else None
            try:
                if llm is not None:
                    wait_for(f"http://127.0.0.1:{llm_port}/v1/models", llm, "the LLM server", log)
                cmd = [str(BIN / "ragraphs"), "eval", "--method", args.method, "--k", str(args.k), "--llm", args.llm,
                       "--dataset", args.dataset, "--data", args.data, "--server", url, "--concurrency", str(n),
                       "--out", str(work / f"round{i}"), "--json", "--quiet"]
                if args.limit:
                    cmd += ["--limit", str(args.limit)]
                done = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True)
                if done.returncode != 0:
                    sys.exit(f"eval failed (rc {done.returncode}):\n{done.stderr[-3000:]}")
                s = json.loads(done.stdout.strip().splitlines()[-1])
            finally:
                if llm is not None:
                    stop(llm)
            rows.append({"round": i + 1, "concurrency": n, "n": s["n"], "errors": s["errors"], "run_s": s["run_s"],
                         "questions_per_s": round(s["n"] / s["run_s"], 4), "em": s["em"], "f1": s["f1"]})
            print(f"round {i + 1}: N={n} {s['n']} questions in {s['run_s']:.1f} s", file=sys.stderr)
    finally:
        stop(lg)
    base = [r["run_s"] for r in rows if r["concurrency"] == 1]
    ref = sum(base) / len(base) if base else None
    print("| round | N | questions | errors | run_s | questions/s | speed-up vs N=1 | EM | F1 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        r["speedup"] = round(ref / r["run_s"], 2) if ref else None
        print(f"| {r['round']} | {r['concurrency']} | {r['n']} | {r['errors']} | {r['run_s']:.1f} | "
              f"{r['questions_per_s']:.3f} | {r['speedup'] if ref else '-'} | {100 * r['em']:.1f} | {100 * r['f1']:.1f} |")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"llm_cmd": portable(args.llm_cmd) if args.llm_cmd else None, "llm_url": args.llm_url, "llm": args.llm,
            "method": args.method, "k": args.k, "data": portable(str(Path(args.data).resolve())), "jobs": args.jobs}
    out.write_text(json.dumps({**meta, "rounds": rows}, indent=1) + "\n")
    print(f"written: {out}  (logs: {work})", file=sys.stderr)


if __name__ == "__main__":
    main()
