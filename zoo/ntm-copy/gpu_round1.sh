#!/bin/bash
# ntm-copy round 1: 4 NTM runs (seeds/batch sizes/curricula) and the LSTM
# baseline in parallel, each stopping cleanly at its time budget; best and
# last weights (selected on generated validation sequences) in $JOB_OUT/<run>/.
set -u
mkdir -p "$JOB_OUT"
export XLA_PYTHON_CLIENT_MEM_FRACTION=0.03 OMP_NUM_THREADS=2
BUDGET=${BUDGET:-440}
EXTRA=""
if [ "${SMOKE:-0}" = "1" ]; then BUDGET=20; EXTRA="--epochs 1 --steps-per-epoch 3"; fi
run() {  # name, then recipe arguments
  local name=$1; shift
  python zoo/ntm-copy/recipe.py train --out-dir "$JOB_OUT" --run-name "$name" \
    --backup-dir "/tmp/ntm_backup_$name" --time-budget "$BUDGET" --epochs 10000 \
    "$@" $EXTRA > "$JOB_OUT/$name.log" 2>&1
}
nvidia-smi > "$JOB_OUT/nvidia-smi.txt" 2>&1 || true
run ntm-s1-b32 --model ntm --seed 1 --batch-size 32 &
run ntm-s2-b64 --model ntm --seed 2 --batch-size 64 &
run ntm-s3-b128 --model ntm --seed 3 --batch-size 128 &
run ntm-s4-b64-nocur --model ntm --seed 4 --batch-size 64 --curriculum-start 0 &
run lstm-s1-b64 --model lstm --seed 1 --batch-size 64 &
wait
rm -f "$JOB_OUT"/*/last.keras.tmp 2>/dev/null
du -sh "$JOB_OUT" > "$JOB_OUT/size.txt"
tail -n 3 "$JOB_OUT"/*.log
