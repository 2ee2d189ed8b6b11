#!/usr/bin/env bash
# The dev-data lever on a CPU, cheaply: the shipped judge continued for one epoch (lr 3e-5) on
# the first 50 questions of each training file, without (ctrl) or with one half of the MuSiQue
# dev file (cf0: half 0, read on half 1; cf1: the reverse); then DR-RAG's CFS recall@4 and the
# MuSiQue judge-eval rows on each half, through `ragraphs eval --data FILE@K/2`.
# Usage (from the repository root, venv active): bash bench/judges_crossfit_continue.sh [DATA_DIR] [OUT_DIR]
# About 45 minutes of training and 8 of measuring on 2 cores.
set -u
D=${1:-../shared/data}
OUT=${2:-runs/judges_crossfit_continue}
mkdir -p "$OUT"
common="--init ragraphs/data/judges --limit 50 --epochs 1 --lr 3e-5 --warmup 0.1 --batch-size 16 --max-length 256 --neg-ratio 2 --no-cap --seed 0 --threads 2"
for m in ctrl cf0 cf1; do
  case $m in ctrl) extra="";; cf0) extra="$D/musique.dev.jsonl@0/2";; cf1) extra="$D/musique.dev.jsonl@1/2";; esac
  ragraphs train-judge --data "$D"/train/*.jsonl $extra --out "$OUT/$m" $common > "$OUT/$m.log" 2>&1 || exit 1
done
measure() {  # judges (shipped or a directory under OUT), half
  local m=$1 h=$2
  if [ "$m" = shipped ]; then unset RAGRAPHS_JUDGES_DIR; else export RAGRAPHS_JUDGES_DIR=$OUT/$m; fi
  ragraphs eval --method dr-rag --strategy cfs --k 4 --retrieval-only --dataset musique --data "$D/musique.dev.jsonl@$h/2" \
    --out "$OUT/eval_${m}_h$h" --json --quiet > "$OUT/${m}_h$h.drrag.json"
  for j in evaluator pair; do
    ragraphs judge-eval --judge $j --data "$D/musique.dev.jsonl@$h/2" --json --no-timing > "$OUT/${m}_h$h.$j.json"
  done
  unset RAGRAPHS_JUDGES_DIR
}
for h in 0 1; do measure shipped $h; measure ctrl $h; done
measure cf0 1
measure cf1 0
