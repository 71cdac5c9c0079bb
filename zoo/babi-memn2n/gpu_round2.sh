#!/bin/bash
# babi-memn2n round 2: three JAX processes, each vectorised over its seeds; best-so-far weights
# of every seed in $JOB_OUT/{c,d,e}.
# Run from the repo root with JOB_DIR=runs/gpu/babi-memn2n JOB_OUT=OUT KERAS_BACKEND=jax, after
#   python zoo/babi-memn2n/recipe.py assemble --result R1/a R1/b --export-top 32 --out-dir D
#   cp D/init_top32.npz runs/gpu/babi-memn2n/init_r1top32.npz   (R1: round 1's $JOB_OUT)
#  c: continue the 32 best seeds of round 1 (by valid error; init_r1top32.npz), softmax in,
#     45 epochs at lr 0.002 halved every 15, new data order and noise.
#  d: 32 new seeds: LS for a fixed 20 epochs at lr 0.005, then 64 epochs at lr 0.01 halved
#     every 16 (round 1's best configuration "b", trained longer).
#  e: 24 new seeds of round 1's "b" with embedding size 100 instead of 50.
set -u
export OMP_NUM_THREADS=3
export XLA_PYTHON_CLIENT_MEM_FRACTION=0.05   # 0.15 shared by the three processes
if [ "${SMOKE:-0}" = "1" ]; then
  COMMON="--smoke --seeds 2 --epochs 2 --budget-s 100"; C=""; D="--ls-max-epochs 1"; E="$D"
else
  COMMON="--seeds 32 --budget-s 480"; C=""; D="--ls-max-epochs 20 --ls-patience 1000"
  E="$D --seeds 24 --epochs 60 --anneal-every 15"
fi
mkdir -p "$JOB_OUT/c" "$JOB_OUT/d" "$JOB_OUT/e"
python -u zoo/babi-memn2n/seeds_jax.py --data "$JOB_DIR/babi.npz" --out "$JOB_OUT/c" \
  --seed0 200 --init "$JOB_DIR/init_r1top32.npz" --lr 0.002 --epochs 45 --anneal-every 15 \
  $COMMON $C > "$JOB_OUT/c/log.txt" 2>&1 &
PC=$!
python -u zoo/babi-memn2n/seeds_jax.py --data "$JOB_DIR/babi.npz" --out "$JOB_OUT/d" \
  --seed0 300 --lr 0.01 --epochs 64 --anneal-every 16 $COMMON $D > "$JOB_OUT/d/log.txt" 2>&1 &
PD=$!
python -u zoo/babi-memn2n/seeds_jax.py --data "$JOB_DIR/babi.npz" --out "$JOB_OUT/e" \
  --seed0 400 --lr 0.01 --embed-dim 100 $COMMON $E > "$JOB_OUT/e/log.txt" 2>&1 &
PE=$!
wait $PC $PD $PE
for f in c d e; do tail -n 3 "$JOB_OUT/$f/log.txt"; done
