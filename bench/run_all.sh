#!/usr/bin/env bash
# The README's full tables: every method (and the oracle) on every dev file with the
# embedded LLM, then DR-RAG's recall table (retrieval only, no LLM call).
#
#   bench/run_all.sh DATA_DIR OUT_DIR            # whole files
#   LIMIT=50 bench/run_all.sh DATA_DIR OUT_DIR   # the first 50 questions of each file
#
# Every `ragraphs eval` resumes from its --out directory: re-run the script after an
# interruption, or with a larger LIMIT, and only the missing questions are answered.
# Tables: python bench/collect.py OUT_DIR; python bench/collect.py OUT_DIR --recall
set -u
DATA=${1:-../shared/data}
OUT=${2:-runs/all}
METHODS=${METHODS:-none,vanilla,crag,dr-rag,erm4,migres,oracle}
DATASETS=${DATASETS-"hotpotqa 2wikimultihopqa musique popqa odqa strategyqa"}
RECALL_DATASETS=${RECALL_DATASETS-"hotpotqa 2wikimultihopqa musique"}
KS=${KS:-2,4,6}
LIMIT_ARGS=()
[ -n "${LIMIT:-}" ] && LIMIT_ARGS=(--limit "$LIMIT")
# more flags for every run, e.g. EVAL_ARGS="--llm openai:qwen2.5-7b-instruct"
read -r -a EXTRA <<< "${EVAL_ARGS:-}"
mkdir -p "$OUT"

for D in $DATASETS; do
  WEB=()
  # the only offline web corpus in the data: search results captured for PopQA questions
  [ "$D" = popqa ] && [ -f "$DATA/popqa.web.dev.jsonl" ] && WEB=(--web "$DATA/popqa.web.dev.jsonl")
  echo "=== answers: $D $(date -u +%H:%M:%S)"
  ragraphs eval --compare "$METHODS" --dataset "$D" --data "$DATA/$D.dev.jsonl" "${LIMIT_ARGS[@]}" \
    "${WEB[@]}" "${EXTRA[@]}" --out "$OUT/answers/$D" --json --quiet | tail -n 1 > "$OUT/answers-$D.json"
done

for D in $RECALL_DATASETS; do
  echo "=== DR-RAG recall: $D $(date -u +%H:%M:%S)"
  ragraphs eval --method dr-rag --strategy sm,qdc,cis,cfs --k "$KS" --retrieval-only \
    --dataset "$D" --data "$DATA/$D.dev.jsonl" "${LIMIT_ARGS[@]}" "${EXTRA[@]}" \
    --out "$OUT/recall/$D" --json --quiet | tail -n 1 > "$OUT/recall-$D.json"
done

[ -d "$OUT/answers" ] && python "$(dirname "$0")/collect.py" "$OUT/answers" > "$OUT/answers.md"
[ -d "$OUT/recall" ] && python "$(dirname "$0")/collect.py" "$OUT/recall" --recall > "$OUT/recall.md"
echo "tables: $OUT/answers.md $OUT/recall.md"
