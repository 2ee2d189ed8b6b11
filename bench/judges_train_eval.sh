#!/usr/bin/env bash
# Rebuild the shipped judge weights and measure them on files they were not trained on.
# Usage: bash bench/judges_train_eval.sh [DATA_DIR] [OUT_DIR]
#   DATA_DIR defaults to ../shared/data (the project's benchmark files), OUT_DIR to ragraphs/data/judges.
# The embedding cache only avoids re-encoding the same texts across the runs below; it does
# not change any result. Evaluation timings are measured in separate runs without it.
set -euo pipefail
D=${1:-../shared/data}
OUT=${2:-ragraphs/data/judges}
CACHE=${JUDGES_EMB_CACHE:-/tmp/judges_emb.npz}
TRAIN="$D/train/hotpotqa.train.jsonl $D/train/2wikimultihopqa.train.jsonl $D/hotpotqa.dev.jsonl $D/2wikimultihopqa.dev.jsonl"

# evaluator and pair: HotpotQA + 2Wiki (train/ and dev); held out: PopQA, MuSiQue
ragraphs train-judge --judge evaluator --data $TRAIN --out "$OUT" --embedding-cache "$CACHE"
ragraphs train-judge --judge pair --data $TRAIN --out "$OUT" --embedding-cache "$CACHE"
# nli: 2Wiki evidences (train/ and dev); held out: MuSiQue decompositions
ragraphs train-judge --judge nli --data $D/train/2wikimultihopqa.train.jsonl $D/2wikimultihopqa.dev.jsonl --out "$OUT" --embedding-cache "$CACHE"

for f in popqa musique; do
  ragraphs judge-eval --judge evaluator --weights "$OUT" --data $D/$f.dev.jsonl --baseline --json --embedding-cache "$CACHE"
done
ragraphs judge-eval --judge pair --weights "$OUT" --data $D/musique.dev.jsonl --baseline --json --embedding-cache "$CACHE"
ragraphs judge-eval --judge nli --weights "$OUT" --data $D/musique.dev.jsonl --baseline --json --embedding-cache "$CACHE"
