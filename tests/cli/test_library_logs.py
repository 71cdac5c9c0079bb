"""A failed command prints its one error line and nothing from the libraries'
loggers before it (TensorFlow Datasets logs through absl); a library user's
loggers are left as they were."""

import logging
import os
import subprocess
import sys

import pytest
from cli_helpers import run_cli

from keras_seqmodels.cli import zoo_commands


@pytest.mark.slow  # two runs of a recipe's data preparation in a subprocess
def test_ptb_file_that_is_not_text_gives_one_line(tmp_path):
    data = tmp_path / "data" / "ptb"
    data.mkdir(parents=True)
    (data / "ptb.train.txt").write_bytes(bytes(range(256)) * 4)
    for split in ("valid", "test"):
        (data / f"ptb.{split}.txt").write_text("a b c\n")
    env = dict(os.environ, KERAS_SEQMODELS_CACHE_DIR=str(tmp_path / "cache"))
    argv = [sys.executable, "-m", "keras_seqmodels.cli.main", "train", "ptb-lstm",
            "--data-dir", str(tmp_path / "data"), "--epochs", "1"]  # fmt: skip
    # The first run leaves TFDS's variant folder without dataset_info.json;
    # the second one is where TFDS warned about it.
    for _ in range(2):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env,
                              cwd=tmp_path)  # fmt: skip
        assert done.returncode == 1
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr[-2000:]
        assert lines[0].startswith("seqmodels train: error: ") and "not UTF-8" in lines[0]


class _ToStderr(logging.Handler):
    """Writes to whatever ``sys.stderr`` is at the time (the CLI's, here)."""

    def emit(self, record):
        sys.stderr.write(f"{record.levelname}:{record.name}:{record.getMessage()}\n")


def test_library_warnings_hidden_in_the_command_and_restored_after(monkeypatch):
    def noisy(args):
        logging.getLogger("absl").warning("Variant folder X has no dataset_info.json")
        raise ValueError("the data file is not text")

    monkeypatch.setattr(zoo_commands, "_list", noisy)
    absl = logging.getLogger("absl")
    before = absl.level
    handler = _ToStderr()
    absl.addHandler(handler)
    try:
        code, _, err = run_cli(["zoo", "list"])
        assert code == 1 and err.count("\n") == 1, err
        assert err.startswith("seqmodels zoo list: error: ValueError: the data file is not text")
        assert absl.level == before  # the process's loggers as they were
        code, _, err = run_cli(["zoo", "list", "--debug"])  # --debug shows everything
        assert code == 1 and "WARNING:absl:Variant folder X" in err
    finally:
        absl.removeHandler(handler)
