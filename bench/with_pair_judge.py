"""Run a ``ragraphs`` command with the pair classifier taken from another judges directory,
every other role (the evaluator, NLI) from the default ones: measures a pair classifier alone.
A directory holding ``model.safetensors`` is read in fp32 by torch (its ``ragraphs_judge.json``
cuts as they are).

    python bench/with_pair_judge.py JUDGES_DIR eval --method dr-rag --strategy cfs --k 4 --retrieval-only ...
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    pair_dir = sys.argv[1]
    import ragraphs.tools.judges as judges

    backend = "torch" if (Path(pair_dir) / "model.safetensors").is_file() else None

    default = judges.load_default_judge

    def load(name, embeddings=None):
        return judges.load_judge("pair", pair_dir, backend=backend) if name == "pair" else default(name, embeddings=embeddings)

    judges.load_default_judge = load
    from ragraphs.cli.main import main as cli

    return cli(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
