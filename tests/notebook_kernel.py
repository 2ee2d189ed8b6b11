"""The notebooks executed in one Jupyter kernel by a background process.

The runner is its own process, like a server a test starts: the session starts it as soon as
the tests are collected (``conftest.py``), so the notebooks execute while the other tests run;
the notebook tests run last, and each waits for its executed notebook and checks its outputs.
One kernel serves every notebook, as a user's Jupyter keeps one per server: the models load
once; each notebook starts with ``%reset -f``, so no variable of an earlier notebook is left
for it to lean on.

Run as a script (``python notebook_kernel.py OUT NAME...``), it executes the notebooks in
order and writes ``OUT/NAME.ipynb`` (or ``OUT/NAME.error``) for each."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
# The runner and its kernel use one core in Linux's idle scheduling class (``chrt --idle``):
# they get what the tests leave idle and yield as soon as a test needs the CPU; where chrt is
# missing, the lowest priority (``nice``). (Two threads measured slower: 342 s against 307 s.)
KERNEL_ENV = {"RAGRAPHS_LLM_THREADS": "1", "OMP_NUM_THREADS": "1"}
NICE = ["chrt", "--idle", "0"] if shutil.which("chrt") else ["nice", "-n", "19"] if shutil.which("nice") else []


class NotebookRuns:
    """The test side: starts the runner, hands out each executed notebook, stops it."""

    def __init__(self, names: list[str], timeout: float = 900):
        self.names, self.timeout = list(names), timeout
        self.base = Path(tempfile.mkdtemp(prefix="ragraphs-notebooks-"))
        self.proc: subprocess.Popen | None = None

    def start(self) -> "NotebookRuns":
        log = open(self.base / "runner.log", "w")
        env = {**os.environ, "RAGRAPHS_HOME": str(self.base / "home"), **KERNEL_ENV}
        self.proc = subprocess.Popen([*NICE, sys.executable, __file__, str(self.base), *self.names], env=env,
                                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        return self

    def result(self, name: str):
        """``(executed notebook, text of its outputs)``; raises what stopped it."""
        import nbformat

        if name not in self.names:
            raise KeyError(f"notebook {name!r} was not scheduled")
        done, error = self.base / f"{name}.ipynb", self.base / f"{name}.error"
        deadline = time.monotonic() + self.timeout * (self.names.index(name) + 1)
        while not (done.exists() or error.exists()):
            if self.proc.poll() is not None and not (done.exists() or error.exists()):
                log = (self.base / "runner.log").read_text(errors="replace")[-4000:]
                raise RuntimeError(f"the notebook runner exited ({self.proc.returncode}) before {name}:\n{log}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"notebook {name!r} did not finish")
            time.sleep(0.2)
        if error.exists():
            raise RuntimeError(f"notebook {name} failed:\n{error.read_text()}")
        nb = nbformat.read(done, as_version=4)
        return nb, outputs_text(nb)

    def close(self) -> None:
        """Stop at once, also mid-notebook (a session stopped by ``-x`` or Ctrl-C)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()  # the runner shuts its kernel down
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:  # the kernel exits with its parent (JPY_PARENT_PID)
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        shutil.rmtree(self.base, ignore_errors=True)


def outputs_text(nb) -> str:
    text = []
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.get("output_type") == "stream":
                text.append(out["text"])
            for v in (out.get("data") or {}).values():
                text.append(v if isinstance(v, str) else "")
    return "\n".join(text)


def _start_kernel(base: Path):
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    kdir = base / "kernels" / "ragraphs-test"
    kdir.mkdir(parents=True)
    (kdir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "ragraphs test",
        "language": "python",
    }))
    km = KernelManager(kernel_name="ragraphs-test", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(base / "kernels")]))
    km.start_kernel(cwd=str(base), env=dict(os.environ))
    return km


def _execute(name: str, km, timeout: float = 900):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    run = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%reset -f"), *nb.cells], metadata=nb.metadata)
    client = NotebookClient(run, km=km, timeout=timeout, allow_errors=False)
    try:
        client.execute()
    finally:
        if client.kc is not None:
            client.kc.stop_channels()
    nb.cells = run.cells[1:]
    return nb


def main(argv: list[str]) -> int:
    import nbformat

    out, names = Path(argv[0]), argv[1:]
    km = _start_kernel(out)

    def stop(*_):  # leaves the running notebook; the kernel is shut down below
        raise SystemExit(1)

    signal.signal(signal.SIGTERM, stop)
    try:
        for name in names:
            try:
                nb = _execute(name, km)
            except Exception:
                (out / f"{name}.error").write_text(traceback.format_exc())
                continue
            part = out / f"{name}.ipynb.part"
            nbformat.write(nb, part)
            part.rename(out / f"{name}.ipynb")
    finally:
        km.shutdown_kernel(now=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
