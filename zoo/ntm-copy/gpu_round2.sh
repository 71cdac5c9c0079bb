#!/bin/bash
# ntm-copy round 2: the LSTM baseline continued from round 1 (a second 440 s,
# from its curriculum stage 12), a 256-unit LSTM from scratch, and two more
# NTM seeds from scratch (how often an NTM converges within 440 s).
set -u
mkdir -p "$JOB_OUT"
export XLA_PYTHON_CLIENT_MEM_FRACTION=0.0375 OMP_NUM_THREADS=2
BUDGET=${BUDGET:-440}
EXTRA=""
if [ "${SMOKE:-0}" = "1" ]; then BUDGET=20; EXTRA="--epochs 1 --steps-per-epoch 3"; fi
run() {  # name, then recipe arguments
  local name=$1; shift
  python zoo/ntm-copy/recipe.py train --out-dir "$JOB_OUT" --run-name "$name" \
    --backup-dir "/tmp/ntm_backup2_$name" --time-budget "$BUDGET" --epochs 10000 \
    "$@" $EXTRA > "$JOB_OUT/$name.log" 2>&1
}
run lstm-s1-b64-cont --model lstm --seed 11 --batch-size 64 --curriculum-start 12 \
  --init-from "$JOB_DIR/init_lstm.keras" &
run lstm256-s2-b64 --model lstm --lstm-units 256 --seed 2 --batch-size 64 &
run ntm-s5-b32 --model ntm --seed 5 --batch-size 32 &
run ntm-s6-b32 --model ntm --seed 6 --batch-size 32 &
wait
du -sh "$JOB_OUT" > "$JOB_OUT/size.txt"
tail -n 3 "$JOB_OUT"/*.log
