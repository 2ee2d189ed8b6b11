"""Run a ``ragraphs`` command with the pair classifier taken from another judges directory,
every other role (the evaluator, NLI) from the default ones: measures a pair classifier alone.
A directory holding ``model.safetensors`` is read in fp32 by torch (its ``ragraphs_judge.json``
cuts as they are). The first load of the pair role says which directory it read, on stderr.

    python bench/with_pair_judge.py JUDGES_DIR eval --method dr-rag --strategy cfs --k 4 --retrieval-only ...
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def use_pair_judge(pair_dir: str) -> None:
    """Make every default-judge load in this process (``Components.judge`` goes through
    ``judges.core.judge_for``, which reads ``core.load_default_judge``) take the pair role from
    ``pair_dir``. Until 2026-12-01 only the package's re-export was replaced, which nothing
    read after 2026-11-29 (7544085): the shipped pair judge ran instead."""
    import ragraphs.tools.judges as judges
    from ragraphs.tools.judges import core

    backend = "torch" if (Path(pair_dir) / "model.safetensors").is_file() else None
    default = core.load_default_judge

    def load(name, embeddings=None):
        if name != "pair":
            return default(name, embeddings=embeddings)
        judge = core.load_judge("pair", pair_dir, backend=backend)
        print(f"with_pair_judge: the pair judge from {pair_dir} ({backend or 'onnx'})", file=sys.stderr)
        return judge

    core.load_default_judge = judges.load_default_judge = load


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    use_pair_judge(sys.argv[1])
    from ragraphs.cli.main import main as cli

    return cli(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
