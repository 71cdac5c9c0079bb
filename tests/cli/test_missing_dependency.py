"""A command whose optional package is missing says what to install, in one line."""

import sys

from cli_helpers import assert_one_line_error, run_cli


def test_plot_without_matplotlib_names_the_package(tmp_path, monkeypatch):
    history = tmp_path / "history.csv"
    history.write_text("epoch,loss\n0,1.0\n1,0.5\n")
    # A None entry in sys.modules makes `import matplotlib...` raise ModuleNotFoundError,
    # as on an install where the package was removed.
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, _, err = run_cli(["plot", "curves", str(history), "-o", str(tmp_path / "c.png")])
    assert_one_line_error(code, err, "pip install matplotlib")
    assert "Traceback" not in err
