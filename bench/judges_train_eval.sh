#!/usr/bin/env bash
# Rebuild the shipped judges (one multi-task cross-encoder, ONNX int8) and measure them on the
# dev files they were not trained on.
# Usage (from the repository root, venv active):
#   bash bench/judges_train_eval.sh [DATA_DIR] [OUT_DIR]
# DATA_DIR defaults to ../shared/data, OUT_DIR to ragraphs/data/judges. Training reads every
# file of DATA_DIR/train/ plus half of PopQA dev (FILE@0/2: a stable hash split of the
# questions; there is no PopQA training file); the other half and the whole HotpotQA, 2Wiki
# and MuSiQue dev files are held out. Seeded: the same commands give the same model.
# Three phases (about 90 minutes on 2 CPU cores; a GPU is used when present): at lr 1e-4 the
# loss stays at ln 2 for most of an epoch (it starts falling only as the rate decays), so a
# second epoch continues from the first at 2e-5; a third continues at 2e-5 on every labelled
# item with 2 negatives per positive for the evaluator and pair roles (--neg-ratio 2 --no-cap).
set -euo pipefail
D=${1:-../shared/data}
OUT=${2:-ragraphs/data/judges}

FILES=("$D"/train/*.jsonl "$D/popqa.dev.jsonl@0/2")
ARGS=(--epochs 1 --batch-size 16 --max-length 256 --seed 0 --threads 2)
P1=$(mktemp -d)
P2=$(mktemp -d)
ragraphs train-judge --data "${FILES[@]}" --out "$P1" "${ARGS[@]}" --lr 1e-4 --warmup 0.1 --keep-torch
ragraphs train-judge --data "${FILES[@]}" --out "$P2" "${ARGS[@]}" --lr 2e-5 --warmup 0.05 --init "$P1" --keep-torch
ragraphs train-judge --data "${FILES[@]}" --out "$OUT" "${ARGS[@]}" --lr 2e-5 --warmup 0.05 --init "$P2" \
    --neg-ratio 2 --no-cap
python bench/judges_loss_plot.py "$OUT/ragraphs_judge.json" docs/judges_loss.png

# judge-eval on the dev files, then the cuts the methods read by default, fitted on them
bash bench/judges_dev_eval.sh "$OUT" bench/results/judges_dev "$D"
