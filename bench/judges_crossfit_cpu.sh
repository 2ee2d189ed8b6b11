#!/usr/bin/env bash
# The dev files as training data, cross-fitted, on the CPU with train-judge itself: the shipped
# recipe (bench/judges_train_eval.sh) plus half K of the HotpotQA, 2Wiki and MuSiQue dev files
# (cfK), then cfK and the shipped judges measured on the other half H = 1 - K:
#   - judge-eval rows (evaluator and pair on the three files, NLI on 2Wiki and MuSiQue);
#   - DR-RAG CFS recall@4, retrieval only (`eval --data FILE@H/2`: half H's questions over the
#     whole file's paragraphs), each judge at cuts fitted on half H's rows (the shipped cuts
#     were fitted on the whole dev files, half H included, so both read a cut that saw half H).
# Usage (from the repository root, venv active): bash bench/judges_crossfit_cpu.sh K [DATA_DIR] [OUT_DIR]
# About 2 hours of training (cf0: 2,588 steps, 7,598 s; cf1: 2,598 steps, 6,057 s; 2 cores) and 10 minutes of measuring.
# Both halves side by side: python bench/judges_crossfit_pool.py RESULTS_CF0 RESULTS_CF1 OUT.
# SKIP_TRAIN=1 measures a cfK trained before (OUT_DIR/cfK/judges).
set -euo pipefail
K=${1:?usage: judges_crossfit_cpu.sh K [DATA_DIR] [OUT_DIR]}
D=${2:-../shared/data}
OUT=${3:-runs/judges_crossfit_cpu}
H=$((1 - K))
FILES="hotpotqa 2wikimultihopqa musique"
J="$OUT/cf$K/judges"
mkdir -p "$OUT/cf$K"
if [ "${SKIP_TRAIN:-0}" != 1 ]; then
  ragraphs train-judge --data "$D"/train/*.jsonl "$D/popqa.dev.jsonl@0/2" \
      $(for f in $FILES; do echo "$D/$f.dev.jsonl@$K/2"; done) --out "$J" \
      --epochs 2 --lr 7e-5 --warmup 0.1 --batch-size 16 --max-length 256 --neg-ratio 2 --no-cap --seed 0 \
      --threads 2 > "$OUT/cf$K/train.log" 2>&1
fi
cp -r ragraphs/data/judges "$OUT/shipped_h$H.judges"   # its cuts are refitted below, on a copy
measure() {  # name, judges directory
  local name=$1 dir=$2 res="$OUT/${1}_h$H"
  mkdir -p "$res"
  for f in $FILES; do
    for role in evaluator pair; do
      ragraphs judge-eval --judge $role --data "$D/$f.dev.jsonl@$H/2" --weights "$dir" --baseline --json \
          --no-timing | tail -n 1 > "$res/$role.$f.json"
    done
  done
  for f in 2wikimultihopqa musique; do
    ragraphs judge-eval --judge nli --data "$D/$f.dev.jsonl@$H/2" --weights "$dir" --json --no-timing \
        | tail -n 1 > "$res/nli.$f.json"
  done
  python bench/judges_fit_cuts.py "$res" "$dir/ragraphs_judge.json" > "$res/cuts.json"
  for f in $FILES; do
    RAGRAPHS_JUDGES_DIR="$dir" ragraphs eval --method dr-rag --strategy cfs --k 4 --retrieval-only \
        --dataset "$f" --data "$D/$f.dev.jsonl@$H/2" --out "$res/eval" --json --quiet | tail -n 1 > "$res/drrag.$f.json"
  done
}
measure "cf$K" "$J"
measure shipped "$OUT/shipped_h$H.judges"
rm -rf "$OUT/shipped_h$H.judges"
python - "$OUT" "$K" "$H" <<'EOF'
import json, sys
from pathlib import Path
out, k, h = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
rows = ["| dev half %s (items) | role | shipped: best-cut accuracy / AUC | cf%s: best-cut accuracy / AUC | change in AUC |" % (h, k),
        "| --- | --- | --- | --- | --- |"]
def get(name, role, f):
    p = out / f"{name}_h{h}" / f"{role}.{f}.json"
    return json.loads(p.read_text()) if p.is_file() else None
for f in ("hotpotqa", "2wikimultihopqa", "musique"):
    for role in ("evaluator", "pair", "nli"):
        a, b = get("shipped", role, f), get(f"cf{k}", role, f)
        if not a or not b:
            continue
        fmt = lambda r: f"{100 * r['best_threshold_accuracy']:.1f} / {r['auc']:.3f}"
        rows.append(f"| {f} ({a['n']} items) | {role} | {fmt(a)} | {fmt(b)} | {b['auc'] - a['auc']:+.3f} |")
rows += ["", "| dev half %s | n with gold | DR-RAG CFS recall@4, shipped | cf%s | change |" % (h, k), "| --- | --- | --- | --- | --- |"]
for f in ("hotpotqa", "2wikimultihopqa", "musique"):
    a = json.loads((out / f"shipped_h{h}" / f"drrag.{f}.json").read_text())
    b = json.loads((out / f"cf{k}_h{h}" / f"drrag.{f}.json").read_text())
    a, b = (x[0] if isinstance(x, list) else x for x in (a, b))
    rows.append(f"| {f} | {a['n_with_gold']} | {100 * a['recall']:.1f} | {100 * b['recall']:.1f} | {100 * (b['recall'] - a['recall']):+.1f} |")
(out / f"table_cf{k}.md").write_text("\n".join(rows) + "\n")
print("\n".join(rows))
EOF
