#!/usr/bin/env bash
# Train the shipped judges' recipe (one multi-task cross-encoder, ONNX int8) with train-judge,
# measure them on the dev files and fit the cuts the methods read by default.
# Usage (from the repository root, venv active):
#   bash bench/judges_train_eval.sh [DATA_DIR] [OUT_DIR]
# DATA_DIR defaults to ../shared/data, OUT_DIR to runs/judges. Training reads every file of
# DATA_DIR/train/, half 0 of PopQA dev (FILE@0/2: a stable hash split of the questions; there is
# no PopQA training file; half 1 stays out for CRAG's calibration) and, as #14 asks, the whole
# HotpotQA, 2Wiki and MuSiQue dev files, with PopQA's half read twice (the dev files' multi-hop
# items otherwise cost the PopQA row about 0.02 AUC). The judge-eval rows of those files are then in-training
# numbers, so the cuts are the cross-fitted ones (bench/judges_fit_cuts.py --crossfit: judges
# of this recipe trained with one half of the dev files, read on the other).
# WITH_DEV=0 leaves the dev files (and PopQA's second reading) out: the judge shipped on
# 2026-11-26, bit for bit (seeded), with
# cuts fitted on the dev files it did not see.
# One phase from the packaged MiniLM (2 cores: about 97 minutes without the dev files, about 2
# hours with them; a GPU is used when present): every labelled item, 2 negatives per positive
# for the evaluator and pair roles, learning rate 7e-5 with 10% warm-up and linear decay, 2
# epochs, batch 16, 256 tokens (the train-judge defaults). The recipe was chosen on the dev files
# among eleven (bench/judges_recipe_sweep.py, bench/results/judges_recipe_sweep/). The shipped
# file of 2026-11-27 is this recipe trained on a lent GPU by that sweep's loop
# (bench/results/judges_all_dev/), so this command trains the same recipe, not the same bits.
# SEED (default 0) trains another seed. TEACHERS="DIR0 DIR1 DIR2 DIR3" (four seeds trained by this
# script) trains the judge shipped on 2026-11-28: the same items labelled sigmoid(mean teacher
# logit / 2) (train-judge --teachers; bench/results/judges_distill/); the teachers first score
# the 22,874 items (dequantized from their int8 files).
set -euo pipefail
D=${1:-../shared/data}
OUT=${2:-runs/judges}
DEV=()
POPQA_AGAIN=()
if [ "${WITH_DEV:-1}" != 0 ]; then
  DEV=("$D/hotpotqa.dev.jsonl" "$D/2wikimultihopqa.dev.jsonl" "$D/musique.dev.jsonl")
  POPQA_AGAIN=("$D/popqa.dev.jsonl@0/2")  # named twice, read twice: the shipped recipe (allpq2)
fi

DISTIL=()
if [ -n "${TEACHERS:-}" ]; then
  read -r -a T <<< "$TEACHERS"
  DISTIL=(--teachers "${T[@]}" --temperature 2)
fi
ragraphs train-judge --data "$D"/train/*.jsonl "$D/popqa.dev.jsonl@0/2" "${POPQA_AGAIN[@]}" "${DEV[@]}" --out "$OUT" \
    --epochs 2 --lr 7e-5 --warmup 0.1 --batch-size 16 --max-length 256 --neg-ratio 2 --no-cap --seed "${SEED:-0}" --threads 2 \
    "${DISTIL[@]}"
python bench/judges_loss_plot.py "$OUT/ragraphs_judge.json" "$OUT/judges_loss.png"

# judge-eval on the dev files (in-training rows when they were trained on), then the cuts
bash bench/judges_dev_eval.sh "$OUT" "$OUT/judge_eval" "$D"
if [ "${WITH_DEV:-1}" != 0 ]; then
  python bench/judges_fit_cuts.py --crossfit bench/results/judges_crossfit/cpu_cf0/cf0_h1 \
      bench/results/judges_crossfit/cpu_cf1/cf1_h0 "$OUT/ragraphs_judge.json"
fi
