"""``keras_seqmodels.testing.peak_rss_bytes``: a child process's own peak,
not its parent's (which ``ru_maxrss`` reports after fork + exec on Linux)."""

import subprocess
import sys

import pytest

from keras_seqmodels.testing import memory, peak_rss_bytes

# The module alone (the package would import Keras, hundreds of MB).
CHILD = (
    "import importlib.util, resource, sys\n"
    "spec = importlib.util.spec_from_file_location('memory', sys.argv[1])\n"
    "memory = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(memory)\n"
    "print(memory.peak_rss_bytes(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)\n"
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is Linux's")
def test_a_child_reports_its_own_peak_not_its_parents():
    grown = bytearray(400 << 20)
    grown[:: 1 << 12] = b"x" * len(grown[:: 1 << 12])  # touch every page
    assert peak_rss_bytes() > 400 << 20
    out = subprocess.run([sys.executable, "-c", CHILD, memory.__file__], capture_output=True,
                         text=True, check=True, timeout=120).stdout.split()  # fmt: skip
    own, inherited = int(out[0]), int(out[1])
    assert own < 100 << 20  # the child imports nearly nothing: about 10 MB
    assert inherited > own  # what ru_maxrss reports instead: at least the parent's peak
    del grown
