"""The suite leaves nothing behind outside its temporary directories.

A pytest plugin (``tests/conftest.py`` loads it for every run of ``tests/``): when the session
starts it notes what lies at the top of ``/`` and of ``$HOME``, the entries of the temporary
directory named ``safefs-*`` (the prefix of every temporary directory the suite makes itself) and
the checkout's untracked files that no ``.gitignore`` rule covers (``git status``); when it ends,
anything new there fails the run (exit status 1), the entries named. Git-ignored build
directories (``.venv``, ``.hypothesis``, ``.bench-node``, ...) are left to the tests that fill
them.

A file someone else creates there while the suite runs (another program, or you in the checkout)
is reported too: look at the names before suspecting a test.

Under pytest-xdist (``make check`` runs the suite on a worker per core) only the controlling
process checks: it starts before its workers and ends after them, so one worker's test cannot be
mistaken for another's leftover.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]
# tests/conftest.py's directory for the tools' state ($XDG_*_HOME, named by SESSION_STATE_VARIABLE):
# each session's own, removed when it exits, so another session's is seen here while it runs.
SESSION_STATE_PREFIX = "safefs-tests-home-state-"
SESSION_STATE_VARIABLE = "SAFEFS_TESTS_HOME_STATE"


def session_directory(prefix: str) -> str:
    """A new directory that may outlive the test making it: inside the session's state directory,
    removed with it when the session's first process exits (after this check, which an atexit
    handler of a test's own would come too late for); a plain temporary one outside a session."""
    return tempfile.mkdtemp(prefix=prefix, dir=os.environ.get(SESSION_STATE_VARIABLE) or None)


@dataclass(frozen=True)
class Snapshot:
    root: frozenset[str]
    home: frozenset[str]
    temp: frozenset[str]
    checkout: frozenset[str]

    def new_since(self, before: Snapshot) -> list[str]:
        """What appeared since ``before``, one path (or ``git status`` line) each."""
        home = os.environ.get("HOME", "")
        return [
            *(f"/{name}" for name in sorted(self.root - before.root)),
            *(f"{home}/{name}" for name in sorted(self.home - before.home)),
            *(os.path.join(tempfile.gettempdir(), name) for name in sorted(self.temp - before.temp)),
            *(f"{CHECKOUT}: {line}" for line in sorted(self.checkout - before.checkout)),
        ]


def _entries(directory: str) -> frozenset[str]:
    try:
        return frozenset(os.listdir(directory)) if directory else frozenset()
    except OSError:
        return frozenset()


def untracked_files(checkout: Path) -> frozenset[str]:
    """The untracked files of the checkout that are not ignored; empty outside a git checkout."""
    try:
        done = subprocess.run(
            ["git", "-C", str(checkout), "status", "--porcelain=v1", "-z", "--untracked-files=all"],
            capture_output=True,
            check=False,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    if done.returncode:
        return frozenset()
    entries = (entry.decode(errors="replace") for entry in done.stdout.split(b"\0"))
    return frozenset(entry.removeprefix("?? ") for entry in entries if entry.startswith("?? "))


def snapshot() -> Snapshot:
    temp = frozenset(
        name
        for name in _entries(tempfile.gettempdir())
        if name.startswith("safefs-") and not name.startswith(SESSION_STATE_PREFIX)
    )
    return Snapshot(_entries("/"), _entries(os.environ.get("HOME", "")), temp, untracked_files(CHECKOUT))


_BEFORE = pytest.StashKey[Snapshot]()


def _is_xdist_worker(session: pytest.Session) -> bool:
    return hasattr(session.config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    if not _is_xdist_worker(session):
        session.stash[_BEFORE] = snapshot()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.stash.get(_BEFORE, None)
    if before is None:
        return
    left = snapshot().new_since(before)
    if not left:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = ["the tests left these behind, outside their temporary directories:", *left]
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_sep("=", "left behind", red=True, bold=True)
        for line in lines:
            reporter.write_line(line)
    else:
        print("\n".join(lines))
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
