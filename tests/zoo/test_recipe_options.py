"""Every zoo model takes the distribution options through ``seqmodels train``.

``seqmodels train NAME --help`` of each zoo model (the ones on the recipe
framework and, until they are ported, the old scripts the command runs)
lists ``--strategy`` with its four choices, ``--tpu`` and ``--precision``.
"""

import pytest

from keras_seqmodels.cli.main import main
from keras_seqmodels.zoo.models import specs


@pytest.mark.parametrize("name", sorted(specs()))
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


def _numeric_options(name, action):
    from keras_seqmodels.cli.recipe_commands import load_recipe
    from keras_seqmodels.zoo.framework import arguments

    recipe = load_recipe(name)
    parser = arguments.parser_for(recipe, action)
    found = []
    for action_ in parser._actions:
        default = action_.default
        if isinstance(default, (int, float)) and not isinstance(default, bool) and (
            action_.option_strings
        ):
            found.append((action_.option_strings[0], default))
    return parser, found


@pytest.mark.parametrize("name", sorted(specs()))
def test_every_numeric_option_refuses_nan_infinity_and_text(name, capsys):
    parser, found = _numeric_options(name, "train")
    assert any(flag == "--time-budget" for flag, _ in found)
    for flag, default in found:
        if flag == "--seed":
            continue
        for bad in ("nan", "inf", "-inf", "ten"):
            with pytest.raises(SystemExit) as info:
                parser.parse_args([f"{flag}={bad}"])
            assert info.value.code == 2, (flag, bad)
            assert f"argument {flag}: must be" in capsys.readouterr().err, (flag, bad)
        parser.parse_args([flag, str(default)])  # the default itself is accepted


@pytest.mark.parametrize(
    "name, argv",
    [
        ("ntm-copy", ["--time-budget=-1"]),
        ("ntm-copy", ["--ensemble=-2"]),
        ("ptb-lstm", ["--units", "0"]),
        ("ptb-lstm", ["--dropout", "1"]),
        ("ptb-lstm", ["--lr=-0.5"]),
        ("ud-ewt-upos", ["--word-dropout=-0.1"]),
        ("multi30k-en-de", ["--beam", "0"]),
    ],
)
def test_out_of_range_options_are_usage_errors(name, argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(["train", name, *argv, "--epochs", "1"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    flag, _, value = "=".join(argv).partition("=")
    assert f"argument {flag}: must be" in err and repr(value) in err, err


def test_sweep_values_are_checked_like_the_option(tmp_path):
    from keras_seqmodels.cli.recipe_commands import load_recipe
    from keras_seqmodels.zoo import framework

    with pytest.raises(ValueError, match=r"--sweep dropout: must be a finite number >= 0"):
        argv = ["--smoke", "--work-dir", str(tmp_path), "--sweep", "dropout=0.1,nan"]
        framework.main(load_recipe("ptb-lstm"), "train", argv)
