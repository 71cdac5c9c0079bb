"""The peak resident memory of this process since it started its program.

`resource.getrusage(RUSAGE_SELF).ru_maxrss` is not that on Linux: a process
started by `fork` + `exec` (every `subprocess`) inherits its parent's peak,
so a child of a 4 GB test runner reports at least 4 GB whatever it does. The
kernel's `VmHWM` (in `/proc/self/status`) is the high-water mark of the
current address space, which `exec` starts afresh.
"""

import resource
import sys


def peak_rss_bytes():
    """Peak resident set size of this process's program, in bytes.

    `VmHWM` from `/proc/self/status` where the kernel gives it (Linux), else
    `ru_maxrss` (kilobytes on Linux, bytes on macOS).

    Returns:
        An `int`: the largest resident memory of this program so far.

    Example:

    >>> peak_rss_bytes() > 0
    True
    """
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024
