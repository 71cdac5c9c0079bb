"""Every zoo model takes the distribution options through ``seqmodels train``.

``seqmodels train NAME --help`` of each zoo model (the ones on the recipe
framework and, until they are ported, the old scripts the command runs)
lists ``--strategy`` with its four choices, ``--tpu`` and ``--precision``.
"""

import pytest

from keras_seqmodels.cli.main import main
from keras_seqmodels.zoo.models import MODEL_PACKAGES


@pytest.mark.parametrize("name", sorted(MODEL_PACKAGES))
def test_train_help_lists_strategy_tpu_and_precision(name, capfd):
    try:
        code = main(["train", name, "--help"])
    except SystemExit as info:
        code = info.code
    assert code in (0, None)
    text = capfd.readouterr().out
    assert "--strategy" in text, f"{name}: `seqmodels train {name} --help` has no --strategy"
    for choice in ("default", "mirrored", "multi-worker", "tpu"):
        assert choice in text.split("--strategy", 1)[1], f"{name}: --strategy lacks {choice}"
    assert "--tpu" in text and "--precision" in text, f"{name}: no --tpu/--precision"
    for policy in ("mixed_float16", "mixed_bfloat16"):
        assert policy in text, f"{name}: --precision lacks {policy}"
