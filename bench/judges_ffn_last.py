"""A feed-forward cut whose last layer is made whole again (#14's pair speed target).

    python bench/judges_ffn_last.py CUT_MODEL STUDENT ITEMS_DIR OUT --mode whole|add
    python bench/judges_import.py JUDGES OUT/model.safetensors --config OUT --name NAME

CUT_MODEL is a model cut by ``bench/judges_ffn_prune.py`` (every layer, then trained), STUDENT
the judge it was cut from (a judges directory or a transformers model). The exported graph
computes the last layer for the first position only, so that layer's feed-forward width costs
about nothing; OUT gets CUT_MODEL with the last layer's feed-forward 1,536 wide again:

- ``whole``: the student's feed-forward of that layer (its two linear maps), as it was;
- ``add``: the cut's trained neurons kept, the student's neurons the cut dropped added back
  (which neurons the cut kept is found again the way the prune script chose them, on the first
  ``--sample`` training items, and checked against the cut's weights).

The layer norm after it stays the cut's. OUT is a transformers model (fp32) whose config names
each layer's width (``ffn_widths``), which ``bench/judges_recipe_sweep.py train`` and
``bench/judges_import.py`` read.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judges_ffn_prune import importance, kept, open_judge, sample_pairs  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cut")
    ap.add_argument("student")
    ap.add_argument("items", help="the directory bench/judges_recipe_sweep.py dump wrote")
    ap.add_argument("out")
    ap.add_argument("--mode", choices=("whole", "add"), required=True)
    ap.add_argument("--sample", type=int, default=256, help="training items the prune script read")
    a = ap.parse_args()

    import torch
    from safetensors.torch import load_file

    from ragraphs.tools.judges.widths import fit_ffn_widths

    out = Path(a.out)
    model = open_judge(a.student, out)
    student = {k: v.clone() for k, v in model.model.state_dict().items()}
    state = {k: v.float() if v.is_floating_point() else v for k, v in load_file(str(Path(a.cut) / "model.safetensors")).items()}
    last = len(model.model.base_model.encoder.layer) - 1
    p = f"bert.encoder.layer.{last}."
    w_in, b_in, w_out = p + "intermediate.dense.weight", p + "intermediate.dense.bias", p + "output.dense.weight"
    width = state[w_in].shape[0]
    if a.mode == "whole":
        for k in (w_in, b_in, w_out, p + "output.dense.bias"):
            state[k] = student[k]
    else:
        keep = kept(importance(model, sample_pairs(a.items, a.sample))[last], width)
        cos = torch.nn.functional.cosine_similarity(student[w_in][keep], state[w_in], dim=1)
        print(f"the cut's neurons against the student's it kept: cosine median {cos.median():.3f}, min {cos.min():.3f}")
        if cos.median() < 0.8:
            raise SystemExit("the kept neurons were not found again: was CUT_MODEL cut from STUDENT with --sample items?")
        full_in, full_b, full_out = student[w_in].clone(), student[b_in].clone(), student[w_out].clone()
        full_in[keep], full_b[keep], full_out[:, keep] = state[w_in], state[b_in], state[w_out]
        state[w_in], state[b_in], state[w_out] = full_in, full_b, full_out  # the output bias stays the cut's
    fit_ffn_widths(model.model, state)
    missing, unexpected = model.model.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith("position_ids")]
    if missing or unexpected:
        raise SystemExit(f"the weights do not fit: missing {missing[:3]}, unexpected {unexpected[:3]}")
    model.save(str(out))
    shutil.rmtree(out / "_fp32", ignore_errors=True)
    n = sum(t.numel() for t in model.model.parameters())
    print(f"{out}: feed-forward widths {model.model.config.ffn_widths}, {n:,} parameters")


if __name__ == "__main__":
    main()
