#!/bin/bash
# The GPU checks and timings of BENCHMARKS.md ("Recurrent layers on a GPU"), in
# one script: the library kernels (cuDNN) tested equal to the generic loop on
# the GPU, and the throughput matrix on JAX (each layer alone as one compiled
# function, and through Keras's train_on_batch / predict_on_batch), with
# torch.nn on the same GPU and Keras on the torch backend beside it. It starts
# with the whole JAX layer suite (pass/fail counts in OUT_DIR/layer_suite.txt;
# WORKERS sets pytest-xdist's -n, default 8).
#
#   bash benchmarks/gpu.sh OUT_DIR [SECONDS]
#
# Needs JAX's CUDA build and PyTorch with CUDA; TensorFlow is not used. The
# steps run in order of importance, each cut off when SECONDS (default 1800)
# have passed since the start; what a step finished stays in OUT_DIR. STEPS
# (comma-separated step names, e.g. STEPS=layer_suite,tests_torch,tests_jax)
# runs only those; the default runs them all.
set -u
out=${1:?usage: bash benchmarks/gpu.sh OUT_DIR [SECONDS]}
budget=${2:-1800}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
bench=benchmarks/rnn_throughput.py
gpu_configs=b32_t100_128to256,b128_t50_512to512

step() {  # step NAME MAX_SECONDS COMMAND...: run with the time left, log to OUT_DIR/steps.log
    local name=$1 max=$2
    shift 2
    if [[ -n "${STEPS:-}" && ",$STEPS," != *",$name,"* ]]; then
        echo "== $name: not in STEPS" >> "$out/steps.log"
        return
    fi
    local left=$((budget - SECONDS))
    ((left < max)) && max=$left
    if ((max < 10)); then
        echo "== $name: skipped, no time left" | tee -a "$out/steps.log"
        return
    fi
    local t0=$SECONDS
    echo "== $name: $*" >> "$out/steps.log"
    timeout "$max" "$@" > "$out/last.log" 2>&1
    local rc=$?
    cat "$out/last.log" >> "$out/steps.log"
    echo "== $name: exit $rc after $((SECONDS - t0)) s" | tee -a "$out/steps.log"
    tail -n 4 "$out/last.log"
    rm -f "$out/last.log"
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
# First, the whole backend-agnostic layer suite on JAX on this GPU (what CI runs
# on a CPU), with its pass/fail counts in OUT_DIR/layer_suite.txt.
workers=${WORKERS:-8}
step layer_suite 600 env KERAS_BACKEND=jax "$py" -m pytest -q -p no:cacheprovider \
    -m "not tf_only" -n "$workers" --dist loadfile -rf \
    tests/cells tests/layers tests/tagging tests/memory tests/trees
grep -E "^(FAILED|ERROR) |[0-9]+ (passed|failed)" "$out/steps.log" | tail -n 80 \
    > "$out/layer_suite.txt"
step tests_torch 120 env KERAS_BACKEND=torch "$py" -m pytest -q -rs -p no:cacheprovider \
    tests/layers/test_backend_rnn.py
step torch_cuda 90 "$py" $bench --worker torch --torch-device cuda --configs $gpu_configs \
    --cells LSTM,GRU,Elman --masks none,padded --out "$out/torch_cuda.json"
step jax_jit 240 env KERAS_BACKEND=jax "$py" $bench --worker jax --jit --configs $gpu_configs \
    --cells LSTM,GRU --masks none,padded --out "$out/jax_jit.json"
step torch_keras 150 "$py" $bench --worker torch --torch-keras --torch-device cuda \
    --configs $gpu_configs --cells LSTM,GRU,Elman --masks none,padded \
    --out "$out/torch_keras_cuda.json"
step tests_jax 120 env KERAS_BACKEND=jax "$py" -m pytest -q -rs -p no:cacheprovider \
    tests/layers/test_backend_rnn.py
step jax_model 240 env KERAS_BACKEND=jax "$py" $bench --worker jax --configs $gpu_configs \
    --cells LSTM,GRU --masks none,padded --out "$out/jax_model.json"
