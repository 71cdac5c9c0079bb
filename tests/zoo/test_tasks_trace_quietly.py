"""Every zoo task in one process answers without TensorFlow's retracing
warnings: the tasks call their models directly (``Task.run_model``) or through
``utils.calling.call_model`` (each model's own compiled call), so the first
trace of each model's Keras predict function (one tf.function code, counted
together by TensorFlow) no longer adds up to a warning of retracing that never
happened; ``call_model`` gives what ``predict_on_batch`` gives."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from keras_seqmodels import zoo

pytestmark = pytest.mark.tf_only

# One input per shipped model, each task loaded and run in the same process.
INPUTS = {
    "mnist-renet": "np.zeros((28, 28))",
    "ntm-copy": "np.zeros((3, 8))",
    "pixel-mnist": "np.zeros((28, 28))",
    "pixel-mnist-permuted": "np.zeros((28, 28))",
    "babi-memn2n": '("Mary went home.", "Where is Mary?")',
    "ptb-lstm-small": '"the cat", top_k=1',
    "ptb-lstm": '"the cat", top_k=1',
    "sst-treelstm": '"A fine film ."',
    "ud-ewt-upos": '"I eat ."',
    "multi30k-en-de": '"A man is riding a bicycle."',
}
SCRIPT = textwrap.dedent(
    """
    import numpy as np
    from keras_seqmodels import zoo

    answers = {{}}
    for name, args in {calls}:
        task = zoo.load(name)
        answers[name] = eval("task.predict(" + args + ")")
        if name in ("ptb-lstm", "ptb-lstm-small"):
            answers[name + " generate"] = task.generate("the cat", length=3, seed=0)
    print("ANSWERS", sorted(answers))
    """
)


def test_every_zoo_task_in_one_process_prints_no_retracing_warning():
    assert set(INPUTS) == set(zoo.list_models())
    script = SCRIPT.format(calls=sorted(INPUTS.items()))
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stderr[-2000:]
    for name in INPUTS:
        assert repr(name) in result.stdout, result.stdout[-2000:]
    assert "retracing" not in result.stderr, result.stderr[-2000:]


def test_call_model_gives_what_predict_on_batch_gives():
    """The tagger (strings in), the tree model (three inputs) and the language
    model's stepper (several outputs), as the zoo tasks call them."""
    from keras_seqmodels.language_model.decoding import decoder_for
    from keras_seqmodels.trees.encoding import encode
    from keras_seqmodels.trees.ptb import parse_ptb
    from keras_seqmodels.utils.calling import call_model

    tagger = zoo.load_model("ud-ewt-upos")
    text = np.array(["I eat .", "The cat sat on the mat ."], dtype=object)
    np.testing.assert_array_equal(call_model(tagger, text), tagger.predict_on_batch(text))

    trees = zoo.load_model("sst-treelstm")
    batch = encode([parse_ptb("(1 (0 a) (1 (1 fine) (1 film)))"), parse_ptb("(1 (1 .))")], arity=2)
    x = [batch["tokens"].astype(object), batch["children"], batch["levels"]]
    np.testing.assert_allclose(call_model(trees, x), trees.predict_on_batch(x), atol=1e-6)

    stepper = decoder_for(zoo.load_model("ptb-lstm-small")).stepper
    states = [np.random.default_rng(k).normal(size=(1,) + tuple(t.shape[1:])).astype("float32")
              for k, t in enumerate(stepper.inputs[1:])]  # fmt: skip
    x = [np.array([[3, 14, 15]], "int32"), *states]
    got, expected = call_model(stepper, x), stepper.predict_on_batch(x)
    assert len(got) == len(expected) == len(stepper.outputs) > 1
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, atol=1e-5)
