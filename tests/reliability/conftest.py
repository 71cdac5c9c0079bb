import json
import os

import fuzz_record


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
