"""What `seqmodels --version` and the help of `train` / `evaluate` tell a user."""

import pytest
from cli_helpers import run_cli

import keras_seqmodels


def test_version():
    code, out, err = run_cli(["--version"])
    assert code == 0 and out == f"seqmodels {keras_seqmodels.__version__}\n", (out, err)


@pytest.mark.parametrize("action", ["train", "evaluate"])
def test_train_and_evaluate_help_list_the_models_and_the_common_options(action):
    from keras_seqmodels.zoo.models import specs

    code, out, _ = run_cli([action, "--help"])
    assert code == 0
    models = out.split("models: ", 1)[1].split("\n", 1)[0].split(", ")
    assert models == sorted(name for name, spec in specs().items() if spec.recipe)
    common = out.split("options of every model", 1)[1]
    for option in ("--data-dir", "--epochs", "--batch-size", "--seed", "--smoke", "--verbose"):
        assert option in common
    only = {"train": "--work-dir", "evaluate": "--split"}
    assert only[action] in common
