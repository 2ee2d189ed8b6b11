#!/usr/bin/env bash
# Baseline rows (none, vanilla, oracle) on the dev files with the embedded LLM (Gemma 3 270M).
#
#   bench/run_dev.sh DATA_DIR OUT_DIR "10 20 50"
#
# Runs every dataset at the first limit, then extends each to the next limit: `ragraphs eval`
# resumes from OUT_DIR, so a larger limit only answers the new questions. Stop it at any
# time; the summaries in OUT_DIR/<dataset>/summary.json cover the last finished pass.
set -u
DATA=${1:-../shared/data}
OUT=${2:-runs/dev}
LIMITS=${3:-"20"}
METHODS=${METHODS:-none,vanilla,oracle}
DATASETS=${DATASETS:-"hotpotqa 2wikimultihopqa musique popqa odqa"}
for L in $LIMITS; do
  for D in $DATASETS; do
    echo "=== $D limit $L $(date -u +%H:%M:%S)"
    ragraphs eval --compare "$METHODS" --dataset "$D" --data "$DATA/$D.dev.jsonl" \
      --limit "$L" --out "$OUT/$D" --json --quiet | tail -n 1 > "$OUT/$D.limit$L.json" || echo "failed: $D $L"
  done
done
