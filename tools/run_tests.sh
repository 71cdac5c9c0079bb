#!/usr/bin/env bash
# The whole test suite: lint, every test on TensorFlow, the backend-agnostic
# layer tests again on JAX. Same steps as .ci/run after its install.
set -euo pipefail
cd "$(dirname "$0")/.."
export TF_CPP_MIN_LOG_LEVEL=3
python -m ruff check keras_seqmodels tests benchmarks examples zoo
KERAS_BACKEND=tensorflow python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile tests
KERAS_BACKEND=jax python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile -m "not tf_only" \
    tests/cells tests/layers tests/tagging tests/trees tests/memory tests/seq2seq tests/training
