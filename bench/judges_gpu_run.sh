#!/usr/bin/env bash
# One device call of bench/judges_recipe_sweep.py: every recipe in its own process on the one
# GPU, then results.json and log.txt in $OUT, and one model's fp16 weights back in 15 MB chunks.
# Needs sentence-transformers only (the wheel in .whl/ upgrades the machine's). Settings:
#   RECIPES  the recipe names, space-separated (required)
#   ITEMS    the items directory written by `dump` (default .gpu/items); BASE the base MiniLM (.gpu/base)
#   LIMIT    seconds each recipe may run (default 430)
#   SAVE     the recipe whose model comes back (default: the best mean dev AUC); NOSAVE=1: none
set -u
: "${RECIPES:?name the recipes}"
ITEMS=${ITEMS:-.gpu/items}
BASE=${BASE:-.gpu/base}
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python3 -c "import torch, sentence_transformers, transformers; print(torch.__version__, sentence_transformers.__version__, transformers.__version__, torch.cuda.is_available())"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/sentence_transformers-*.whl && export PYTHONPATH=/tmp/site
python3 -c "import sentence_transformers as s; print(s.__version__, s.__file__)"
mkdir -p /tmp/sw
for r in $RECIPES; do
  PYTHONUNBUFFERED=1 timeout "${LIMIT:-430}" python3 bench/judges_recipe_sweep.py train "$ITEMS" "$BASE" /tmp/sw/$r --recipes $r --save $r > /tmp/sw/$r.log 2>&1 &
done
wait
python3 - <<'PY'
import glob, json, os, subprocess
out = os.environ["OUT"]
res = {}
for f in glob.glob("/tmp/sw/*/results.json"):
    res.update(json.load(open(f)))
json.dump(res, open(f"{out}/results.json", "w"), indent=1)
done = {k: v["epochs"][-1]["mean_dev_auc"] for k, v in res.items() if v.get("done")}
print("final mean dev AUC:", done)
best = os.environ.get("SAVE") or (max(done, key=done.get) if done else None)
print("model back:", None if os.environ.get("NOSAVE") else best)
if best and not os.environ.get("NOSAVE"):
    m = f"/tmp/sw/{best}/model_{best}/model.safetensors"
    subprocess.run(["split", "-b", "15M", "-d", m, f"{out}/best_{best}.safetensors."], check=True)
PY
for r in $RECIPES; do echo "== $r"; grep -v "Writing\|MISSING\|Notes\|^$\|newly initialized\|LOAD REPORT\|^Key\|^---\|classifier" /tmp/sw/$r.log | cut -c1-400; done > "$OUT/log.txt"
tail -c 3000 "$OUT/log.txt"
