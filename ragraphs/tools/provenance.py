"""Where a result came from, in what a file records beside it: the sha256 of a file read in
1 MiB blocks and the versions of installed packages (used by ``eval``'s results folders,
``calibrate-crag --out`` and ``train-judge``'s ``ragraphs_judge.json``)."""

from __future__ import annotations

import hashlib
import os
from importlib import metadata

_BLOCK = 1 << 20
_HASHED: dict[tuple, str] = {}  # (path, size, mtime_ns) -> sha256: a grid of runs hashes each file once


def file_sha256(path: str | os.PathLike) -> str:
    """The sha256 of a file, read in 1 MiB blocks (kept per path, size and mtime in this process)."""
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    if key not in _HASHED:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(_BLOCK), b""):
                h.update(block)
        _HASHED[key] = h.hexdigest()
    return _HASHED[key]


def versions(packages: tuple[str, ...] | list[str]) -> dict[str, str]:
    """{distribution: version} of the installed ``packages`` (those not installed are left out)."""
    out = {}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out
