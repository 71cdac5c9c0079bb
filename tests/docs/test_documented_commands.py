"""Every shell command shown in README.md, docs/*.md and examples/README.md runs.

The commands are read from the ```bash blocks of those files (continued lines
joined, comments dropped, ``a && b`` split, ``echo X | cmd`` and
``cat F | cmd`` read as standard input). Each distinct ``seqmodels ...``,
``python examples/...``, ``python benchmarks/...`` and ``python -c ...``
command is run once, in one Python process (TensorFlow starts once and each
zoo model is loaded once; a ``python benchmarks/...`` script, which sets up
devices when imported, runs in its own), from a scratch directory holding the
files the docs name (``sentences.txt``, ``reviews.txt``, ``english.txt``, a
link to the checkout's ``zoo/``). Each must exit with status 0 and print no traceback.

Commands that need a full data set for minutes, several machines or an
accelerator run with ``--help`` instead (their parser and recipe import are
checked); the reason is listed in ``HELP_ONLY``. Programs that are not the
package's (``pip``, ``git``, ...) are listed with a reason in ``NOT_RUN``. A
command that fits neither list fails ``test_every_command_is_classified``.
"""

import glob
import json
import os
import re
import shlex
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC_FILES = (
    [os.path.join(ROOT, "README.md")]
    + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    + [os.path.join(ROOT, "examples", "README.md")]
)
BLOCK = re.compile(r"```(?:bash|sh|shell)\n(.*?)```", re.S)

# Programs shown in the docs that are not the package's commands.
NOT_RUN = {
    "pip": "installs the package (CI runs the README's install in a brand-new venv)",
    "source": "activates the virtual environment that CI makes and uses",
    "bash": "tools/run_tests.sh runs the whole test suite (what CI runs)",
    "saved_model_cli": "TensorFlow's own tool; the SavedModel it reads is made and "
    "called below (seqmodels export, python -c)",
    "git": "version control, not the package",
    "cd": "changes directory (the data page's checksum step)",
    "sha256sum": "checks the data set's files (needs the data set)",
}
# (pattern, reason): commands run with --help instead of for real.
HELP_ONLY = [
    (r"^seqmodels (train|evaluate) ", "needs the full data set and minutes to hours"),
    (r"--strategy (multi-worker|tpu)", "needs several machines or a TPU"),
    (r"^seqmodels plot ntm --model-path runs/", "needs a model trained by the recipe"),
    (r"^python examples/", "trains for a minute or more (tests/examples/ runs each example "
     "with its smallest settings)"),
    (r"^python benchmarks/", "measures for minutes"),
    (r"^python tests/", "a measurement script reading runs made beforehand"),
    (r"^seqmodels export \S+\.keras ", "exports the .keras file that the page's Python trains"),
]
# What the docs say some commands print (checked as well as the exit status).
EXPECTED = {
    "seqmodels translate 'A man is riding a bicycle.'": "Ein Mann fährt Fahrrad.",
    shlex.join(["seqmodels", "tag", "I can't eat butter!"]):
        "I/PRON ca/AUX n't/PART eat/VERB butter/NOUN !/PUNCT",
    "seqmodels sentiment 'A gorgeous, witty, seductive movie.'": "very positive",
    "seqmodels zoo info multi30k-en-de": "non-commercial",
    "seqmodels tag 'The old man the boats.'": "The/DET old/ADJ man/NOUN the/DET boats/NOUN ./PUNCT",
}
# Input files the docs' commands read.
FILES = {
    "sentences.txt": "The old man the boats.\nI can't eat butter!\n",
    "english.txt": "A man is riding a bicycle.\nTwo dogs play in the snow.\n",
    "reviews.txt": "A gorgeous, witty, seductive movie.\n(2 (2 a) (2 (2 boring) (2 mess)))\n",
}


def _logical_lines(block):
    """Lines of a shell block with continuations and multi-line quotes joined."""
    lines, current = [], ""
    for raw in block.splitlines():
        current = f"{current}\n{raw}" if current else raw
        if current.endswith("\\"):
            current = current[:-1]
            continue
        try:
            shlex.split(current, comments=True)
        except ValueError:  # an open quote: the command goes on
            continue
        lines.append(current)
        current = ""
    if current:
        lines.append(current)
    return lines


def _split_commands(line):
    """``[(stdin_source, words)]`` of one logical line."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars="&|;")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words = list(lexer)
    commands, current, stdin = [], [], None
    for word in words + [";"]:
        if word in ("&&", ";", "|"):
            if word == "|" and current[:1] in (["echo"], ["cat"]):
                stdin = tuple(current)
            elif current:
                commands.append((stdin, current))
                stdin = None
            current = []
        else:
            current.append(word)
    return commands


def documented_commands():
    """``[(where, stdin, words)]`` for every command of the docs' bash blocks."""
    found = []
    for path in DOC_FILES:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for match in BLOCK.finditer(text):
            line_no = text.count("\n", 0, match.start()) + 2
            for line in _logical_lines(match.group(1)):
                for stdin, words in _split_commands(line):
                    env = [w for w in words if re.match(r"^[A-Z_]+=", w)]
                    words = words[len(env):] if words[: len(env)] == env else words
                    if words:
                        found.append((f"{os.path.relpath(path, ROOT)}:{line_no}", stdin, words))
    return found


def classify(words):
    """``("run" | "help" | "not_run", reason)`` for one command."""
    program = words[0]
    command = shlex.join(words)
    if program in NOT_RUN:
        return "not_run", NOT_RUN[program]
    if program not in ("seqmodels", "python"):
        return None, f"unknown program {program!r}"
    if words[:3] == ["python", "-m", "venv"]:
        return "not_run", "makes a virtual environment (CI makes one the same way)"
    if program == "python" and words[1:2] != ["-c"] and not re.match(
        r"^python (examples|benchmarks|tests)/", command
    ):
        return None, f"unknown python command {command!r}"
    for pattern, reason in HELP_ONLY:
        if re.search(pattern, command):
            return "help", reason
    return "run", ""


def _help_words(words):
    if words[0] == "python":
        return [words[0], words[1], "--help"]
    # seqmodels COMMAND [SUB] [NAME] --help: keep the words before the options.
    kept = []
    for word in words:
        if word.startswith("-"):
            break
        kept.append(word)
    if kept[1:2] in (["train"], ["evaluate"]):
        kept = kept[:3]
    return kept + ["--help"]


def _plan():
    """The distinct invocations to run: ``[(key, stdin, words)]`` and, per
    documented command, the key of the run that checks it."""
    runs, by_where = {}, []
    for where, stdin, words in documented_commands():
        kind, reason = classify(words)
        if kind == "not_run" or kind is None:
            by_where.append((where, words, kind, reason, None))
            continue
        if kind == "help":
            words = _help_words(words)
        # Absolute scratch paths (/tmp/...) go into the scratch directory.
        words = [w[len("/tmp/"):] if w.startswith("/tmp/") else w for w in words]
        key = json.dumps([stdin, words])
        if words[:2] == ["seqmodels", "export"] and len(words) == 4:
            # The same export into another folder: one run checks both.
            key = json.dumps([stdin, words[:3]])
        runs.setdefault(key, (stdin, words))
        by_where.append((where, words, kind, reason, key))
    return runs, by_where


RUNNER = textwrap.dedent(
    r"""
    import contextlib, functools, io, json, os, runpy, shlex, sys, time, traceback
    from keras_seqmodels.cli.main import main
    import keras_seqmodels.zoo as zoo

    # Each zoo model is loaded (and its SHA-256 checked) once, not once per command.
    zoo.load = functools.lru_cache(maxsize=None)(zoo.load)

    plan_path, results_path = sys.argv[1], sys.argv[2]
    plan = json.load(open(plan_path))
    results = {}
    for key, (stdin, words) in plan.items():
        text = ""
        if stdin and stdin[0] == "echo":
            text = " ".join(stdin[1:]) + "\n"
        elif stdin and stdin[0] == "cat":
            text = open(stdin[1], encoding="utf-8").read()
        out, start, cpu = io.StringIO(), time.time(), time.process_time()
        sys.stdin = io.StringIO(text)
        code = None
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                if words[0] == "seqmodels":
                    code = main(words[1:])
                elif words[1] == "-c":
                    exec(compile(words[2], "<python -c>", "exec"), {"__name__": "__main__"})
                    code = 0
                elif not words[1].startswith("examples/"):
                    # Benchmarks set up devices when imported: their own process.
                    import subprocess
                    done = subprocess.run([sys.executable] + words[1:], capture_output=True,
                                          text=True, stdin=subprocess.DEVNULL)
                    print(done.stdout + done.stderr)
                    code = done.returncode
                else:
                    saved_argv, sys.argv = sys.argv, words[1:]
                    try:
                        runpy.run_path(words[1], run_name="__main__")
                    finally:
                        sys.argv = saved_argv
                    code = 0
            except SystemExit as exit:
                code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
            except BaseException:
                traceback.print_exc()
                code = "exception"
        results[key] = {"code": code, "output": out.getvalue()[-3000:],
                        "seconds": round(time.time() - start, 1),
                        "cpu_seconds": round(time.process_time() - cpu, 1)}
        json.dump(results, open(results_path, "w"))
    """
)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    scratch = tmp_path_factory.mktemp("documented")
    for name, text in FILES.items():
        (scratch / name).write_text(text, encoding="utf-8")
    os.symlink(os.path.join(ROOT, "zoo"), scratch / "zoo")
    os.symlink(os.path.join(ROOT, "examples"), scratch / "examples")
    os.symlink(os.path.join(ROOT, "benchmarks"), scratch / "benchmarks")
    os.symlink(os.path.join(ROOT, "tests"), scratch / "tests")
    runs, _ = _plan()
    # Exports first: the `python -c` that calls the SavedModel reads them.
    ordered = dict(sorted(runs.items(), key=lambda kv: (kv[1][1][:2] != ["seqmodels", "export"],
                                                        kv[1][1][:2] == ["python", "-c"])))
    (scratch / "plan.json").write_text(json.dumps(ordered))
    (scratch / "runner.py").write_text(RUNNER)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", MPLBACKEND="Agg")
    env.setdefault("KERAS_BACKEND", "tensorflow")
    proc = subprocess.run(
        [sys.executable, "runner.py", "plan.json", "results.json"],
        cwd=scratch, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=900,
    )
    done = {}
    if (scratch / "results.json").exists():
        done = json.loads((scratch / "results.json").read_text())
    return {"done": done, "runner": proc.stdout[-2000:] + proc.stderr[-2000:]}


CASES = _plan()[1]


def test_docs_show_commands():
    kinds = [case[2] for case in CASES]
    assert kinds.count("run") >= 10, kinds


def test_every_command_is_classified():
    unknown = [(where, shlex.join(words), reason) for where, words, kind, reason, _ in CASES
               if kind is None]
    assert not unknown, f"add these to the runner or to NOT_RUN/HELP_ONLY: {unknown!r}"


@pytest.mark.slow
@pytest.mark.tf_only
@pytest.mark.parametrize(
    "where,words,kind,reason,key",
    [c for c in CASES if c[2] in ("run", "help")],
    ids=[f"{c[0]} {shlex.join(c[1])[:60]}" for c in CASES if c[2] in ("run", "help")],
)
def test_documented_command_runs(results, where, words, kind, reason, key):
    result = results["done"].get(key)
    assert result is not None, f"the runner stopped before {shlex.join(words)}: {results['runner']}"
    assert "Traceback (most recent call last)" not in result["output"], result["output"]
    assert result["code"] == 0, f"{where}: {shlex.join(words)} -> {result}"
    expected = EXPECTED.get(shlex.join(words))
    if expected is not None:
        assert expected in result["output"], (shlex.join(words), result["output"])


def test_expected_outputs_belong_to_documented_commands():
    shown = {shlex.join(words) for _, words, _, _, _ in CASES}
    assert set(EXPECTED) <= shown, set(EXPECTED) - shown
