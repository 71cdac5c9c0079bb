"""What the benchmark scripts record about the machine they ran on (imported
by the scripts beside it: ``python benchmarks/NAME.py`` puts this folder on
the path)."""

import os
import platform


def cpu_name():
    """The CPU's model name from ``/proc/cpuinfo``, else ``platform.processor()``."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def machine():
    """``"x86_64 <CPU model>, 2 cores"``: architecture, CPU model and core count."""
    return f"{platform.machine()} {cpu_name()}, {os.cpu_count()} cores"
