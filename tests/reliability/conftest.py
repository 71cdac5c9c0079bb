import json
import os

import fuzz_record
import pytest

from keras_seqmodels.zoo import api, registry


@pytest.fixture
def zoo_dir(tmp_path, monkeypatch):
    """An empty zoo of one's own: its index, folder and cache under
    ``tmp_path``, no mirror."""
    index = tmp_path / "index.json"
    index.write_text("{}")
    for module in (api, registry):
        monkeypatch.setattr(module, "INDEX_PATH", str(index))
    monkeypatch.setenv(api.ENV_DIR, str(tmp_path / "zoo"))
    monkeypatch.setenv(api.ENV_CACHE, str(tmp_path / "cache"))
    monkeypatch.delenv(api.ENV_URL, raising=False)
    return tmp_path


def pytest_terminal_summary(terminalreporter):
    if not fuzz_record.CASES:
        return
    terminalreporter.section("reliability cases tried")
    rows = sorted(fuzz_record.CASES.items())
    for (kind, outcome), n in rows:
        terminalreporter.write_line(f"{kind:<28} {outcome:<24} {n}")
    total = sum(fuzz_record.CASES.values())
    terminalreporter.write_line(f"{'total':<53} {total}")
    path = os.environ.get("RELIABILITY_REPORT")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump([[k, o, n] for (k, o), n in rows], f, indent=1)
