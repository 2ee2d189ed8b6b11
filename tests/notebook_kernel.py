"""The notebooks executed in one Jupyter kernel, in a background thread.

The kernel is its own process, like a server a test starts: the session starts it as soon as
the tests are collected (``conftest.py``), at a lower priority and on one core, so the
notebooks execute while the other tests run; the notebook tests run last, and each waits for
its notebook's outputs and checks them. One kernel serves
every notebook, as a user's Jupyter keeps one per server: the models load once; each notebook
starts with ``%reset -f``, so no variable of an earlier notebook is left for it to lean on."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
# The kernel runs on one core in Linux's idle scheduling class (``chrt --idle``): it gets
# what the tests leave idle and yields as soon as a test needs the CPU; where chrt is
# missing, the lowest priority (``nice``). (Two threads measured slower: 342 s against 307 s.)
KERNEL_ENV = {"RAGRAPHS_LLM_THREADS": "1", "OMP_NUM_THREADS": "1"}  # one core
NICE = ["chrt", "--idle", "0"] if shutil.which("chrt") else ["nice", "-n", "19"] if shutil.which("nice") else []


class NotebookRuns:
    def __init__(self, names: list[str], timeout: float = 900):
        self.names, self.timeout = list(names), timeout
        self.base = Path(tempfile.mkdtemp(prefix="ragraphs-notebooks-"))
        self._done = {n: threading.Event() for n in self.names}
        self._results: dict[str, tuple] = {}
        self._stop = threading.Event()
        self._km = None
        self._thread = threading.Thread(target=self._run_all, name="notebooks", daemon=True)

    def start(self) -> "NotebookRuns":
        self._thread.start()
        return self

    def result(self, name: str):
        """``(notebook, text of its outputs)`` once executed; re-raises what stopped it."""
        if name not in self._done:
            raise KeyError(f"notebook {name!r} was not scheduled")
        if not self._done[name].wait(self.timeout * (len(self.names) + 1)):
            raise TimeoutError(f"notebook {name!r} did not finish")
        outcome, value = self._results[name]
        if outcome == "error":
            raise value
        return value

    def close(self) -> None:
        """Stop at once, also mid-notebook (a session stopped by ``-x`` or Ctrl-C)."""
        self._stop.set()
        if self._thread.is_alive() and self._km is not None:
            self._km.shutdown_kernel(now=True)  # a running notebook fails at once
        self._thread.join(timeout=60)
        if self._km is not None and self._km.has_kernel:
            self._km.shutdown_kernel(now=True)
        shutil.rmtree(self.base, ignore_errors=True)

    def _start_kernel(self):
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import KernelManager

        kdir = self.base / "kernels" / "ragraphs-test"
        kdir.mkdir(parents=True)
        (kdir / "kernel.json").write_text(json.dumps({
            "argv": [*NICE, sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "ragraphs test",
            "language": "python",
        }))
        ksm = KernelSpecManager(kernel_dirs=[str(self.base / "kernels")])
        km = KernelManager(kernel_name="ragraphs-test", kernel_spec_manager=ksm)
        km.start_kernel(cwd=str(self.base), env={**os.environ, "RAGRAPHS_HOME": str(self.base / "home"), **KERNEL_ENV})
        return km

    def _run_all(self) -> None:
        try:
            self._km = self._start_kernel()
        except Exception as e:  # every notebook reports it
            for n in self.names:
                self._results[n] = ("error", e)
                self._done[n].set()
            return
        for n in self.names:
            if self._stop.is_set():
                self._results[n] = ("error", RuntimeError("the session ended first"))
            else:
                try:
                    self._results[n] = ("ok", self._execute(n))
                except Exception as e:
                    self._results[n] = ("error", e)
            self._done[n].set()

    def _execute(self, name: str):
        import nbformat
        from nbclient import NotebookClient

        nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
        run = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%reset -f"), *nb.cells], metadata=nb.metadata)
        client = NotebookClient(run, km=self._km, timeout=self.timeout, allow_errors=False)
        try:
            client.execute()
        finally:
            if client.kc is not None:
                client.kc.stop_channels()
        nb.cells = run.cells[1:]
        text = []
        for cell in nb.cells:
            for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
                if out.get("output_type") == "stream":
                    text.append(out["text"])
                for v in (out.get("data") or {}).values():
                    text.append(v if isinstance(v, str) else "")
        return nb, "\n".join(text)
