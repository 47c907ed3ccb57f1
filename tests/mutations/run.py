"""Plants each mutation of ``tests/mutations/table.py`` in a copy of the tree and runs the tests
it names there: a mutation the tests fail on is killed, one they pass is a survivor.

    python -m tests.mutations.run                 # every mutation (make test-mutations)
    python -m tests.mutations.run --only walk-dotdot-above-root,atomic-temp-without-excl
    python -m tests.mutations.run --list

The copy is the checkout's tracked files as they are in the working tree, plus its built
extensions, in a temporary directory; the checkout itself is never changed. Each mutation is
planted by exact string replacement (a snippet no longer found fails the run, naming it), its
tests run in the copy (``python -m pytest -x``, bytecode never written, so no stale ``.pyc`` of
another mutation is ever imported), and the file is put back. The named tests first run on the
unmutated copy: a mutation whose tests fail there already is reported as such, never as killed.
A mutation of a framework drop-in runs in that framework's pinned environment
(``tests/compat_envs.py``), built when missing. Exit status 1 when any mutation survived or
could not be judged.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.mutations.table import MUTATIONS, Mutation

PROJECT = Path(__file__).resolve().parents[2]
TIMEOUT = 900  # seconds for one run of a mutation's tests
BUILT = ("*.so",)  # the extensions the copy needs beside the tracked files


@dataclass
class Outcome:
    mutation: Mutation
    verdict: str  # killed, survived, baseline fails, error
    seconds: float
    detail: str = ""


def tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(PROJECT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout
    return [name for name in out.decode().split("\0") if name and (PROJECT / name).is_file()]


def make_copy(into: Path) -> None:
    """The working tree's files (tracked, and new ones git does not ignore) and the built
    extensions, copied into ``into``."""
    for name in tracked_files():
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PROJECT / name, target, follow_symlinks=False)
    for pattern in BUILT:
        for built in (PROJECT / "safefs").rglob(pattern):
            target = into / built.relative_to(PROJECT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(built, target)


def python_for(env: str) -> str:
    """The interpreter a mutation's tests run in: .venv's, or a framework's pinned environment."""
    if not env:
        return str(PROJECT / ".venv" / "bin" / "python")
    out = subprocess.run(
        [sys.executable, str(PROJECT / "tests" / "compat_envs.py"), "pinned", "--only", env, "--build-only"],
        capture_output=True,
        text=True,
        check=True,
        cwd=PROJECT,
    ).stdout
    return str(Path(out.strip().splitlines()[-1]) / "bin" / "python")


def run_tests(copy: Path, python: str, tests: tuple[str, ...]) -> tuple[int, str]:
    race = os.environ.get("SAFEFS_RACE_SECONDS", "0.5")
    # PYTHONPATH: every Python the tests start (a server, a console script, a writer) imports the
    # copy's packages too, ahead of the checkout's editable install.
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", SAFEFS_RACE_SECONDS=race, PYTHONPATH=str(copy))
    command = [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--benchmark-disable", *tests]
    try:
        done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {TIMEOUT} s"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    failed = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    return done.returncode, (failed[0] if failed else (lines[-1] if lines else done.stderr.strip()[-300:]))


def require_imports_from(copy: Path, python: str) -> None:
    """The copy's own packages are the ones its tests import (not the checkout's editable ones)."""
    where = subprocess.run(
        [python, "-c", "import agent, safefs; print(safefs.__file__); print(agent.__file__)"],
        cwd=tempfile.gettempdir(),  # as a subprocess of a test may: only PYTHONPATH leads to the copy
        env=dict(os.environ, PYTHONPATH=str(copy)),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    outside = [w for w in where if not Path(w).resolve().is_relative_to(copy.resolve())]
    if outside:
        raise SystemExit(f"the copy's tests would import {outside[0]}, not the copy's own packages")


def judge(copy: Path, mutation: Mutation, python: str) -> Outcome:
    path = copy / mutation.file
    original = path.read_text()
    planted = mutation.plant(original)  # ValueError when the snippet is gone
    start = time.monotonic()
    path.write_text(planted)
    try:
        code, detail = run_tests(copy, python, mutation.tests)
    finally:
        path.write_text(original)
    seconds = time.monotonic() - start
    if code == 0:
        return Outcome(mutation, "survived", seconds, detail)
    if code in (1, 2):  # tests failed, or collection broke on the mutation
        return Outcome(mutation, "killed", seconds, detail)
    return Outcome(mutation, "error", seconds, f"pytest exit {code}: {detail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", default="", help="comma-separated mutation names")
    parser.add_argument("--list", action="store_true", help="print the mutations and exit")
    args = parser.parse_args(argv)
    chosen = list(MUTATIONS)
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {m.name for m in MUTATIONS}
        if unknown:
            parser.error(f"no such mutation: {', '.join(sorted(unknown))}")
        chosen = [m for m in MUTATIONS if m.name in wanted]
    if args.list:
        for m in chosen:
            print(f"{m.name:44} {m.area:22} {m.file}")
        return 0
    for m in chosen:  # fail loudly, before anything runs, on a snippet that is gone
        m.plant((PROJECT / m.file).read_text())
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="safefs-mutations-") as scratch:
        copy = Path(scratch)
        make_copy(copy)
        baselines: dict[tuple[str, tuple[str, ...]], tuple[int, str]] = {}
        pythons: dict[str, str] = {}
        for m in chosen:
            if m.env not in pythons:
                pythons[m.env] = python_for(m.env)
                require_imports_from(copy, pythons[m.env])
            python = pythons[m.env]
            key = (m.env, m.tests)
            if key not in baselines:
                baselines[key] = run_tests(copy, python, m.tests)
            code, detail = baselines[key]
            outcome = Outcome(m, "baseline fails", 0.0, detail) if code != 0 else judge(copy, m, python)
            outcomes.append(outcome)
            line = f"{outcome.verdict:15} {m.name:44} {outcome.seconds:6.1f} s  {outcome.detail[:120]}"
            print(line, flush=True)
    killed = sum(o.verdict == "killed" for o in outcomes)
    print()
    print("| mutation | area | verdict | tests |")
    print("| --- | --- | --- | --- |")
    for o in outcomes:
        print(f"| {o.mutation.name} | {o.mutation.area} | {o.verdict} | {', '.join(o.mutation.tests)} |")
    print(f"\n{killed} of {len(outcomes)} mutations killed")
    return 0 if killed == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
