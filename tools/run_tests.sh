#!/usr/bin/env bash
# The whole test suite: lint, every test on TensorFlow, the backend-agnostic
# layer tests again on JAX. Same steps as .ci/run after its install.
# Every step runs even when an earlier one failed; the script fails at the end
# if any did, naming them.
set -uo pipefail
cd "$(dirname "$0")/.."
export TF_CPP_MIN_LOG_LEVEL=3
failed=()
python -m ruff check keras_seqmodels tests benchmarks examples zoo || failed+=("ruff")
# Both runs compile thousands of small XLA programs (the fused loops, the
# scans, JAX's every op) that each run for milliseconds: without LLVM's
# optimisation passes XLA emits the same operations in less time (the JAX
# run's CPU time 1,007 s -> 776 s on 2 cores, the same tests pass). Users'
# programs keep XLA's default. Results may round differently in the last
# bits; what the docs print does not depend on it (their examples give the
# same output both ways).
export XLA_FLAGS="--xla_backend_optimization_level=0${XLA_FLAGS:+ $XLA_FLAGS}"
KERAS_BACKEND=tensorflow python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile tests \
    || failed+=("pytest on TensorFlow")
KERAS_BACKEND=jax python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile -m "not tf_only" \
    tests/cells tests/layers tests/tagging tests/trees tests/memory tests/seq2seq tests/training tests/linear_rnn \
    || failed+=("pytest on JAX")
if [ "${#failed[@]}" -gt 0 ]; then
    printf 'FAILED: %s\n' "${failed[@]}" >&2
    exit 1
fi
echo "All steps passed."
