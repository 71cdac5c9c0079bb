#!/bin/bash
# Device command (the lent H200; repo root; .whl = keras, namex, optree wheels; .devdata =
# copies of ../shared/data/mnist and ../shared/data/ptb), run with timeout_s 600:
#
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD && bash benchmarks/zoo_gpu_runs.sh $OUT .devdata 420
#
# Trains five zoo runs at once on one GPU with JAX (no TensorFlow needed), each
# with the same time budget SECONDS (the learning rate's cosine decay spans it:
# --schedule-seconds), all through `seqmodels train` (the recipe framework):
#
#   pm_perm  pixel-mnist-permuted, the new layer (PM_LAYER, PM_UNITS x PM_BLOCKS)
#   pm_perm2 the same with a second new layer (PM_LAYER2 x PM_UNITS2; empty: no run); the
#            better of the two on validation is the one to ship
#   pm_seq   pixel-mnist, the same network in raster order
#   pm_lstm  pixel-mnist-permuted, the package's LSTM at about the same parameter
#            count (LSTM_UNITS x LSTM_BLOCKS): the baseline at equal training time
#   ptb      ptb-mingru (PTB_LAYER, 2 blocks of 650: ptb-lstm's parameter count)
#
#   bash benchmarks/zoo_gpu_runs.sh OUT_DIR DATA_DIR [SECONDS]
#
# DATA_DIR holds mnist/ and ptb/. What comes back is at most 8 files: a log per run (5)
# (OUT_DIR/<run>.log: the training output, then history.csv and best.json) and the
# selected models (<run>/<name>.keras, float16 weights; ptb/vocab.txt) in one tar archive cut into
# 15 MiB parts, OUT_DIR/models.tar.part-aa, -ab, ... (`cat models.tar.part-* | tar x`).
# The runs share the GPU; the machine is named at the top of each log.
set -u
out=${1:?usage: bash benchmarks/zoo_gpu_runs.sh OUT_DIR DATA_DIR [SECONDS]}
data=${2:?usage: bash benchmarks/zoo_gpu_runs.sh OUT_DIR DATA_DIR [SECONDS]}
budget=${3:-420}
mkdir -p "$out"
work=${WORK:-/tmp/zoo_gpu_runs}
mkdir -p "$work"
export KERAS_BACKEND=jax PYTHONUNBUFFERED=1
# Five processes on one GPU: each takes a sixth of its memory up front.
export XLA_PYTHON_CLIENT_MEM_FRACTION=${MEM_FRACTION:-0.16}
py=${PYTHON:-python3}
# Widths at about the same number of trained weights, 4 blocks: MinGRU 128 (267,018),
# LRU 104 (264,378), Hawk 96 (265,162), LSTM 81 (266,176).
PM_LAYER=${PM_LAYER:-mingru} PM_UNITS=${PM_UNITS:-128} PM_BLOCKS=${PM_BLOCKS:-4}
PM_LAYER2=${PM_LAYER2:-lru} PM_UNITS2=${PM_UNITS2:-104}
LSTM_UNITS=${LSTM_UNITS:-81} LSTM_BLOCKS=${LSTM_BLOCKS:-4}
PTB_LAYER=${PTB_LAYER:-mingru}
PM_OPTIONS=${PM_OPTIONS:-"--batch-size 128 --learning-rate 3e-3 --epochs 200"}
PTB_OPTIONS=${PTB_OPTIONS:-"--batch-size 32 --bptt 70 --epochs 200"}

machine=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1)
versions=$("$py" -c 'import jax, keras; print("JAX", jax.__version__, "Keras", keras.__version__)' 2>&1 | tail -n 1)

train() {  # train TAG NAME OPTIONS...: one run, its log in OUT_DIR/TAG.log
    local tag=$1 name=$2
    shift 2
    local dir="$work/$tag"
    {
        echo "== $tag: $machine; $versions; $(date -u +%FT%TZ)"
        echo "== seqmodels train $name --data-dir $data --time-budget $budget" \
            "--schedule-seconds $budget --work-dir $dir --verbose 2 --weights-dtype float16 $*"
        local t0=$SECONDS
        # Cut off LATE seconds after the budget (compilation, the last validation and the
        # save fit well inside), so that the archive below is always written.
        timeout "$((budget + ${LATE:-120}))" "$py" -c \
            'import sys; from keras_seqmodels.cli.main import main; sys.exit(main(sys.argv[1:]))' \
            train "$name" --data-dir "$data" --time-budget "$budget" --schedule-seconds "$budget" \
            --work-dir "$dir" --verbose 2 --weights-dtype float16 "$@"
        echo "== $tag: exit $? after $((SECONDS - t0)) s"
        echo "== history.csv"
        cat "$dir/history.csv" 2>/dev/null
        echo "== best.json"
        cat "$dir/best.json" 2>/dev/null
        echo
    } > "$out/$tag.log" 2>&1
}

# shellcheck disable=SC2086  # the options are words
train pm_perm pixel-mnist-permuted --layer "$PM_LAYER" --units "$PM_UNITS" \
    --blocks "$PM_BLOCKS" $PM_OPTIONS &
if [[ -n "$PM_LAYER2" ]]; then
    train pm_perm2 pixel-mnist-permuted --layer "$PM_LAYER2" --units "$PM_UNITS2" \
        --blocks "$PM_BLOCKS" $PM_OPTIONS &
fi
train pm_seq pixel-mnist --layer "$PM_LAYER" --units "$PM_UNITS" --blocks "$PM_BLOCKS" \
    $PM_OPTIONS &
train pm_lstm pixel-mnist-permuted --layer lstm --units "$LSTM_UNITS" \
    --blocks "$LSTM_BLOCKS" $PM_OPTIONS &
train ptb ptb-mingru --layer "$PTB_LAYER" $PTB_OPTIONS &
wait

# The selected models, in one archive cut into parts under the 16 MiB a file may have
# (a pixel run cut off before it saved NAME.keras contributes its best.keras).
files=()
for pair in pm_perm/pixel-mnist-permuted pm_perm2/pixel-mnist-permuted pm_seq/pixel-mnist pm_lstm/pixel-mnist-permuted \
    ptb/ptb-mingru; do
    if [[ -f "$work/$pair.keras" ]]; then
        files+=("$pair.keras")
    elif [[ $pair == pm_* && -f "$work/${pair%%/*}/best.keras" ]]; then
        files+=("${pair%%/*}/best.keras")
    fi
done
[[ -f "$work/ptb/vocab.txt" ]] && files+=(ptb/vocab.txt)  # what evaluate --model reads beside it
if ((${#files[@]})); then
    (cd "$work" && tar cf - "${files[@]}") | split -b 15M - "$out/models.tar.part-"
fi
ls -l "$out"
