#!/usr/bin/env bash
# One device call: four teacher seeds of the shipped recipe side by side, their soft labels
# (bench/judges_distill.py), then three students side by side; results.json, ensemble.json and
# log.txt in $OUT, and the best student's fp16 weights (by mean validation AUC, the rows no
# model trained on) in 15 MB chunks. Settings: ITEMS (.gpu/items), BASE (.gpu/base), LIMIT
# (a smoke test: items of each kind), TLIMIT / SLIMIT (seconds for the teachers / students),
# STUDENTS (recipes), PICK (a part of the names of the students the best is chosen from).
set -u
ITEMS=${ITEMS:-.gpu/items}
BASE=${BASE:-.gpu/base}
OUT=${OUT:?}
LIM=${LIMIT:+--limit $LIMIT}
TEACHERS="allpq2_7e-5_x2 allpq2_7e-5_x2_s1 allpq2_7e-5_x2_s2 allpq2_7e-5_x2_s3"
STUDENTS=${STUDENTS:-"dist1_7e-5_x2 dist1_7e-5_x2_s1 dist2_7e-5_x2"}
if [ -d .whl ] && command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/sentence_transformers-*.whl && export PYTHONPATH=/tmp/site
fi
W=${WORK:-/tmp/sw}
mkdir -p "$W" "$OUT"
stage() {  # seconds, recipes...
  local lim=$1; shift
  for r in "$@"; do
    PYTHONUNBUFFERED=1 timeout "$lim" python3 bench/judges_recipe_sweep.py train "$ITEMS" "$BASE" "$W/$r" --recipes $r --save $r $LIM > "$W/$r.log" 2>&1 &
  done
  wait
  date +%T
}
date +%T
[ -n "${SKIP_TEACHERS:-}" ] || stage "${TLIMIT:-240}" $TEACHERS
[ -n "${SKIP_TEACHERS:-}" ] || PYTHONUNBUFFERED=1 timeout "${DLIMIT:-150}" python3 bench/judges_distill.py soft "$ITEMS" --items allpq2 --temps 1,2 --out "$OUT" $LIM \
  --teachers $(for r in $TEACHERS; do [ -d "$W/$r/model_$r" ] && echo "$W/$r/model_$r"; done) 2>&1 | grep -v "Loading weights"
cp "$ITEMS"/train_dist*.jsonl.gz "$OUT"/ 2>/dev/null  # the soft labels, so a later call can skip the teachers
date +%T
stage "${SLIMIT:-230}" $STUDENTS
python3 - "$W" <<'PY'
import glob, json, os, subprocess, sys
out, w = os.environ["OUT"], sys.argv[1]
res = {}
for f in glob.glob(f"{w}/*/results.json"):
    res.update(json.load(open(f)))
json.dump(res, open(f"{out}/results.json", "w"), indent=1)
val = lambda e: sum(e[f"val:{r}"]["auc"] for r in ("evaluator", "pair", "nli")) / 3  # noqa: E731
done = {k: round(val(v["epochs"][-1]), 4) for k, v in res.items() if v.get("done")}
print("mean validation AUC:", done)
students = {k: v for k, v in done.items() if os.environ.get("PICK", "dist") in k}
if students:
    best = max(students, key=students.get)
    print("model back:", best)
    subprocess.run(["split", "-b", "15M", "-d", f"{w}/{best}/model_{best}/model.safetensors", f"{out}/best_{best}.safetensors."], check=True)
PY
for r in $TEACHERS $STUDENTS; do echo "== $r"; grep "mean dev AUC\|Error\|error" "$W/$r.log" | cut -c1-600; done > "$OUT/log.txt"
tail -c 2500 "$OUT/log.txt"
