"""Report where the installed packages differ from a lock file.

    python tools/check_lock.py requirements/test.lock

A lock (``requirements/*.lock``) records the versions the suite last ran
with (``pip freeze --exclude-editable`` lines, ``#`` comments). This script
compares them with what is installed in the running interpreter and prints
one line per difference: a package whose installed version is another, a
locked package that is not installed, and a package installed but not
locked. Exit status: 0 when the two sets agree, 1 when they differ (CI
prints the report and goes on: the library's requirements are ranges, so a
new upstream release is news, not a failure), 2 for an unreadable lock.

New versions are expected; this says which ones arrived, so a failure that
appears with them can be traced to them (rerun with ``-c LOCK`` to compare).
"""

import argparse
import re
import sys
from importlib import metadata

_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)\s*(?:#.*)?$")


def canonical(name):
    """PEP 503 normalised name (``Jinja2`` and ``jinja2`` are one package)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path):
    """``{canonical name: version}`` from a lock file.

    Raises:
        ValueError: a line that is neither a comment nor ``name==version``,
            naming the file and line.
    """
    pins = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            match = _LINE.match(line)
            if match is None:
                raise ValueError(f"{path}:{number}: expected 'name==version', got {line!r}")
            pins[canonical(match.group(1))] = match.group(2)
    return pins


def installed(exclude=()):
    """``{canonical name: version}`` of the running interpreter's distributions."""
    found = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name and canonical(name) not in exclude:
            found[canonical(name)] = dist.version
    return found


# Part of every venv, not of a freeze.
_TOOLS = {"pip", "setuptools", "wheel", "keras-seqmodels"}


def differences(locked, present):
    """Sorted report lines: changed, missing and unlocked packages."""
    lines = []
    for name in sorted(set(locked) | set(present)):
        if name in _TOOLS:
            continue
        want, have = locked.get(name), present.get(name)
        if want is None:
            lines.append(f"not in the lock: {name}=={have}")
        elif have is None:
            lines.append(f"locked but not installed: {name}=={want}")
        elif want != have:
            lines.append(f"changed: {name} {want} (locked) -> {have} (installed)")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lock", help="a requirements/*.lock file")
    args = parser.parse_args(argv)
    try:
        locked = read_lock(args.lock)
    except (OSError, ValueError) as err:
        print(f"check_lock: {err}", file=sys.stderr)
        return 2
    lines = differences(locked, installed())
    if not lines:
        print(f"check_lock: the installed packages match {args.lock} ({len(locked)} pinned)")
        return 0
    print(f"check_lock: {len(lines)} difference(s) from {args.lock}:")
    for line in lines:
        print("  " + line)
    return 1


if __name__ == "__main__":
    sys.exit(main())
