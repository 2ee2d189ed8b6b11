#!/usr/bin/env bash
# Rebuild the shipped judge weights and measure them on questions they were not trained on.
# Usage (from the repository root, venv active):
#   bash bench/judges_train_eval.sh [DATA_DIR] [OUT_DIR]
# DATA_DIR defaults to ../shared/data (the project's benchmark files), OUT_DIR to
# ragraphs/data/judges. FILE@K/N is part K of N of a file's questions (a stable hash split):
# @0/2 is trained on, @1/2 is held out. The embedding cache only avoids re-encoding the same
# texts across runs; it changes no score (judge-eval skips timing when it is used; timings
# come from bench/judges_speed.sh).
set -euo pipefail
D=${1:-../shared/data}
OUT=${2:-ragraphs/data/judges}
CACHE=${JUDGES_EMB_CACHE:-/tmp/judges_emb.npz}
C="--embedding-cache $CACHE"
MULTI="$D/train/hotpotqa.train.jsonl $D/train/2wikimultihopqa.train.jsonl $D/hotpotqa.dev.jsonl $D/2wikimultihopqa.dev.jsonl"

ragraphs train-judge --judge evaluator --data $MULTI $D/popqa.dev.jsonl@0/2 $D/musique.dev.jsonl@0/2 --out "$OUT" $C
ragraphs train-judge --judge pair --data $MULTI $D/musique.dev.jsonl@0/2 --out "$OUT" $C
ragraphs train-judge --judge nli --data $D/train/2wikimultihopqa.train.jsonl $D/musique.dev.jsonl@0/2 --out "$OUT" $C

ragraphs judge-eval --judge evaluator --weights "$OUT" --data $D/popqa.dev.jsonl@1/2 --baseline $C
ragraphs judge-eval --judge evaluator --weights "$OUT" --data $D/musique.dev.jsonl@1/2 --baseline $C
ragraphs judge-eval --judge pair --weights "$OUT" --data $D/musique.dev.jsonl@1/2 --baseline $C
ragraphs judge-eval --judge nli --weights "$OUT" --data $D/musique.dev.jsonl@1/2 --baseline $C
ragraphs judge-eval --judge nli --weights "$OUT" --data $D/2wikimultihopqa.dev.jsonl --baseline $C
