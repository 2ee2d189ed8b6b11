#!/usr/bin/env bash
# Measure judges on the dev files they were not trained on: one `judge-eval --json` per
# (role, file), written to OUT_DIR/ROLE.FILE.json; then fit the cuts the methods read by
# default (bench/judges_fit_cuts.py) into JUDGES_DIR/ragraphs_judge.json, or, for the shipped
# judges (the default), into a copy in OUT_DIR: their cross-fitted cuts stay.
# Usage (from the repository root, venv active):
#   bash bench/judges_dev_eval.sh [JUDGES_DIR] [OUT_DIR] [DATA_DIR]
set -euo pipefail
J=${1:-ragraphs/data/judges}
OUT=${2:-runs/judges_dev_eval}  # not a committed results folder: name one to write there
D=${3:-../shared/data}
mkdir -p "$OUT"
export RAGRAPHS_JUDGES_DIR="$J"
ev() {  # role, data spec, name
  ragraphs judge-eval --judge "$1" --data "$2" --weights "$J" --baseline --json | tail -n 1 > "$OUT/$1.$3.json"
}
for f in hotpotqa 2wikimultihopqa musique; do
  ev evaluator "$D/$f.dev.jsonl" "$f"
  ev pair "$D/$f.dev.jsonl" "$f"
done
ev evaluator "$D/popqa.dev.jsonl@1/2" popqa
for f in 2wikimultihopqa musique; do
  ev nli "$D/$f.dev.jsonl" "$f"
done
META="$J/ragraphs_judge.json"
if [ "$(cd "$J" && pwd -P)" = "$(cd ragraphs/data/judges && pwd -P)" ]; then
  # the shipped judges' cuts are cross-fitted (README, Judges): in-sample cuts must not replace them
  cp "$META" "$OUT/ragraphs_judge.json"
  META="$OUT/ragraphs_judge.json"
  echo "the shipped judges' cuts stay as they are; the in-sample cuts are written to $META" >&2
fi
python bench/judges_fit_cuts.py "$OUT" "$META"
