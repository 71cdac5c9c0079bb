"""Every zoo recipe takes the distribution options of training.recipe_utils.

``seqmodels train NAME --help`` of each recipe under ``zoo/`` (discovered, so
a new recipe joins) lists ``--strategy`` with its four choices, ``--tpu`` and
``--precision`` (issue 9: every recipe builds model, optimizer and data under
``strategy.scope()``; ``keras_seqmodels.training.recipe_utils`` adds the
options).
"""

import glob
import os

import pytest

from keras_seqmodels.cli.main import main

ZOO = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "zoo"
)
RECIPES = sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(f"{ZOO}/*/recipe.py"))
# Recipes still being moved onto recipe_utils (reason shown by pytest); none now.
PENDING = {}


def test_recipes_are_found():
    assert {"mnist-renet", "multi30k-en-de", "ud-ewt-upos"} <= set(RECIPES)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(reason=PENDING[n], strict=False))
        if n in PENDING
        else n
        for n in RECIPES
    ],
)
def test_train_help_lists_strategy_tpu_and_precision(name, capsys):
    with pytest.raises(SystemExit) as info:
        main(["train", name, "--help"])
    assert info.value.code in (0, None)
    text = capsys.readouterr().out
    assert "--strategy" in text, f"{name}: `seqmodels train {name} --help` has no --strategy"
    for choice in ("default", "mirrored", "multi-worker", "tpu"):
        assert choice in text.split("--strategy", 1)[1], f"{name}: --strategy lacks {choice}"
    assert "--tpu" in text and "--precision" in text, f"{name}: no --tpu/--precision"
    for policy in ("mixed_float16", "mixed_bfloat16"):
        assert policy in text, f"{name}: --precision lacks {policy}"
