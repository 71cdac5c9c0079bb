#!/bin/bash
# babi-memn2n GPU round 1 (the job that produced the weights shipped at 16.45% test error):
# two configurations x 32 seeds, each configuration one JAX process vectorised over its
# seeds; best-so-far weights of every seed in $JOB_OUT/{a,b}. Run from the repo root with
#   JOB_DIR=runs/gpu/babi-memn2n JOB_OUT=OUT KERAS_BACKEND=jax bash zoo/babi-memn2n/gpu_round1.sh
# after `python zoo/babi-memn2n/recipe.py export-arrays --out-dir runs/gpu/babi-memn2n`.
#  a: the paper's joint PE LS RN schedule: LS at lr 0.005 until valid loss stalls 3 epochs
#     (at most 30), then 60 epochs at lr 0.005 halved every 15.
#  b: LS for a fixed 20 epochs at lr 0.005, then 60 epochs at lr 0.01 halved every 15.
set -u
export OMP_NUM_THREADS=3
export XLA_PYTHON_CLIENT_MEM_FRACTION=0.075   # 0.15 shared by the two processes
if [ "${SMOKE:-0}" = "1" ]; then
  COMMON="--smoke --seeds 2 --epochs 2 --budget-s 100"; A="--ls-max-epochs 1"; B="--ls-max-epochs 1"
else
  COMMON="--seeds 32 --budget-s 485"; A=""; B="--ls-max-epochs 20 --ls-patience 1000 --lr 0.01"
fi
mkdir -p "$JOB_OUT/a" "$JOB_OUT/b"
python -u zoo/babi-memn2n/seeds_jax.py --data "$JOB_DIR/babi.npz" --out "$JOB_OUT/a" \
  --seed0 0 $COMMON $A > "$JOB_OUT/a/log.txt" 2>&1 &
PA=$!
python -u zoo/babi-memn2n/seeds_jax.py --data "$JOB_DIR/babi.npz" --out "$JOB_OUT/b" \
  --seed0 100 $COMMON $B > "$JOB_OUT/b/log.txt" 2>&1 &
PB=$!
wait $PA $PB
for f in a b; do tail -n 3 "$JOB_OUT/$f/log.txt"; done
