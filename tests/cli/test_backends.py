"""The commands whose zoo models read text with TensorFlow ops say, in one
line, that they need the TensorFlow backend when Keras runs on another, before
any model is loaded."""

import os
import subprocess
import sys

import keras
import pytest
from cli_helpers import assert_one_line_error, run_cli

COMMANDS = [
    ["translate", "A man is riding a bicycle."],
    ["tag", "I can't eat butter!"],
    ["sentiment", "A gorgeous, witty movie."],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: argv[0])
def test_text_commands_need_the_tensorflow_backend(argv, monkeypatch):
    from keras_seqmodels import zoo

    monkeypatch.setattr(keras.config, "backend", lambda: "jax")

    def no_load(*args, **kwargs):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(zoo, "load", no_load)
    code, out, err = run_cli(argv)
    assert_one_line_error(code, err, "needs the TensorFlow backend", "'jax'",
                          "KERAS_BACKEND=tensorflow")  # fmt: skip
    assert out == ""


def test_under_jax_for_real():
    env = dict(os.environ, KERAS_BACKEND="jax")
    result = subprocess.run(
        [sys.executable, "-m", "keras_seqmodels.cli.main", "tag", "I eat ."],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stderr
    assert lines[-1] == (
        "seqmodels tag: error: this command needs the TensorFlow backend (its model "
        "reads text with TensorFlow string ops) and Keras is running on 'jax'; run it "
        "with KERAS_BACKEND=tensorflow"
    )
