#!/usr/bin/env bash
# One device call: every recipe in its own process on the one GPU, then the best model back in chunks.
set -u
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python3 -c "import torch, sentence_transformers, transformers; print(torch.__version__, sentence_transformers.__version__, transformers.__version__, torch.cuda.is_available())"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/sentence_transformers-6.2.0-py3-none-any.whl && export PYTHONPATH=/tmp/site
python3 -c "import sentence_transformers as s; print(s.__version__, s.__file__)"
mkdir -p /tmp/sw
R=${RECIPES:-"full_7e-5_x2 full_7e-5_x2_s1 cf0_7e-5_x2 cf1_7e-5_x2 cf0_7e-5_x2_s1 cf1_7e-5_x2_s1"}
for r in $R; do
  PYTHONUNBUFFERED=1 timeout ${LIMIT:-230} python3 bench/judges_recipe_sweep.py train .gpu/items4 .gpu/base /tmp/sw/$r --recipes $r --save $r > /tmp/sw/$r.log 2>&1 &
done
wait
python3 - <<'PY'
import json, os, glob, subprocess
out = os.environ["OUT"]
res = {}
for f in glob.glob("/tmp/sw/*/results.json"):
    res.update(json.load(open(f)))
json.dump(res, open(f"{out}/results.json", "w"), indent=1)
done = {k: v["epochs"][-1]["mean_dev_auc"] for k, v in res.items() if v.get("done")}
print("final mean dev AUC:", done)
best = os.environ.get("SAVE") or (max(done, key=done.get) if done else None)
print("best:", best)
if best:
    m = f"/tmp/sw/{best}/model_{best}/model.safetensors"
    if os.environ.get("NOSAVE"): best = None
if best:
    subprocess.run(["split", "-b", "15M", "-d", m, f"{out}/best_{best}.safetensors."], check=True)
PY
for r in $R; do echo "== $r"; grep -v "Writing\|MISSING\|Notes\|^$\|newly initialized\|LOAD REPORT\|^Key\|^---\|classifier" /tmp/sw/$r.log | cut -c1-400; done > $OUT/log.txt
tail -c 3000 $OUT/log.txt
