"""Where train-judge writes a judge: the ``--out`` folder checked before the work, and the
finished judge put in its place whole."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ...errors import InputError


def check_out_dir(out: Path) -> None:
    """The folder a judge is written to: new, empty, or a judges folder to replace. Anything
    else is refused, since writing the judge replaces the folder's contents."""
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file; give a folder for the judge")
    above = next(p for p in out.absolute().parents if p.exists())
    if not above.is_dir():  # a NotADirectoryError traceback after the work had begun until 2026-12-03
        raise InputError(f"--out {out}: {above} is a file, not a folder")
    if not out.is_dir():
        return
    held = [p.name for p in out.iterdir() if p.name != "_train"]
    if held and "ragraphs_judge.json" not in held:
        shown = ", ".join(sorted(held)[:5]) + (", ..." if len(held) > 5 else "")
        raise InputError(f"--out {out} holds files that are not a judge's ({shown}); writing the judge would "
                         "replace them: give a new or empty folder, or a judges folder to replace")


def put_in_place(new: Path, out: Path) -> None:
    """The judge written in ``new`` as ``out``, the folder it replaces removed."""
    old = out.parent / f".{out.name}.replaced"
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        os.replace(out, old)
    os.replace(new, out)
    shutil.rmtree(old, ignore_errors=True)
