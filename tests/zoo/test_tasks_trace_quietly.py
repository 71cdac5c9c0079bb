"""Several zoo tasks in one process answer without TensorFlow's retracing
warnings: the tasks call their models directly, so the first trace of each
model's Keras predict function (one tf.function code, counted together by
TensorFlow) no longer adds up to a warning of retracing that never happened."""

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.tf_only

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    from keras_seqmodels import zoo

    answers = [
        zoo.load("mnist-renet").predict(np.zeros((28, 28))),
        zoo.load("ntm-copy").predict(np.zeros((3, 8))),
        zoo.load("babi-memn2n").predict(("Mary went home.", "Where is Mary?")),
        zoo.load("ptb-lstm-small").predict("the cat", top_k=1),
        zoo.load("sst-treelstm").predict("A fine film .")["label"],
        zoo.load("ud-ewt-upos").predict("I eat ."),
    ]
    print("ANSWERS", answers)
    """
)


def test_six_tasks_in_one_process_print_no_retracing_warning():
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "ANSWERS" in result.stdout
    assert "retracing" not in result.stderr, result.stderr[-2000:]
