#!/usr/bin/env bash
# DR-RAG's title links, one part at a time: CFS recall@4 and retrieval time on the three
# multi-hop dev files (each file's paragraphs pooled as its corpus), for links off (the
# paper's cascade), each part alone, and all of them (the defaults).
#
#   bash bench/dr_rag_links.sh [DATA_DIR] [OUT_DIR]
#
# One summary line per (configuration, dataset) on stdout; the runs stay under OUT_DIR.
set -u
DATA=${1:-../shared/data}
OUT=${2:-runs/dr_rag_links}
OFF="--set link_question=false --set link_expand=0 --set link_bonus=0"
declare -A CONFIGS=(
  [off]="$OFF"
  [question]="--set link_expand=0 --set link_bonus=0"
  [expand]="--set link_question=false --set link_bonus=0"
  [bonus]="--set link_question=false --set link_expand=0"
  [expand+bonus]="--set link_question=false"
  [all]=""
)
for name in off question expand bonus expand+bonus all; do
  for ds in hotpotqa 2wikimultihopqa musique; do
    # shellcheck disable=SC2086
    line=$(ragraphs eval --method dr-rag --strategy cfs --k 4 --retrieval-only --quiet --json \
      --dataset "$ds" --data "$DATA/$ds.dev.jsonl" ${CONFIGS[$name]} --out "$OUT/$name/$ds" | tail -n 1)
    python3 - "$name" "$ds" "$line" <<'PY'
import json, sys
name, ds, line = sys.argv[1:4]
r = json.loads(line)
r = r["runs"][0] if "runs" in r else r
print(f"{name:13s} {ds:16s} recall@4 {100 * r['recall']:5.1f}  docs {r['docs_avg']:.2f}  "
      f"retrieval {r['retrieval_ms_avg']:6.1f} ms/question")
PY
  done
done
