"""Text piped or redirected is UTF-8 whatever the platform's default code page (Windows'
cp1252, a C locale's ASCII): the command line's streams, checked in a child process whose
locale gives ASCII."""

from __future__ import annotations

import os
import subprocess
import sys

CODE = ("import sys\n"
        "from ragraphs.cli.main import utf8_pipes\n"
        "utf8_pipes()\n"
        "sys.stdout.write(sys.stdin.read().strip().upper() + ' \\u00eb \\u0561\\n')\n")


def _run(extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "PYTHONUTF8", "LC_ALL", "LANG")}
    env.update({"PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0", "LC_ALL": "C", **extra})
    return subprocess.run([sys.executable, "-c", CODE], input="zoë\n".encode("utf-8"), env=env,
                          capture_output=True, timeout=120)


def test_piped_text_reads_and_writes_utf8_where_the_default_is_another_code_page():
    """An answer outside the code page ended ``ask ... > out.txt`` with a UnicodeEncodeError,
    and a UTF-8 question file piped into ``chat`` was misread, until 2026-11-30."""
    out = _run({})
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-1000:]
    assert out.stdout == "ZOË ë ա\n".encode("utf-8")


def test_pythonioencoding_when_set_is_kept():
    out = _run({"PYTHONIOENCODING": "latin-1:backslashreplace"})
    assert out.returncode == 0 and out.stdout == "ZOÃ« ë \\u0561\n".encode("latin-1")  # read as latin-1 too
