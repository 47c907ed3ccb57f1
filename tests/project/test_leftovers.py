"""The leftovers check (tests/leftovers.py) fails a session that leaves a file in $HOME or a
``safefs-*`` directory in the temporary directory, and only then.

Each case runs a small pytest session in a subprocess whose $HOME and $TMPDIR are directories of
this test's own, so what it leaves lands there and nowhere else.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.leftovers import CHECKOUT, untracked_files

LEAVES = """
import os
from pathlib import Path

def test_leaves_a_file() -> None:
    Path(os.environ["HOME"], "stray-file").write_text("left\\n")
"""

LEAVES_TEMP = """
import tempfile

def test_leaves_a_temporary_directory() -> None:
    tempfile.mkdtemp(prefix="safefs-stray-")
"""

CLEAN = """
def test_leaves_nothing(tmp_path) -> None:
    (tmp_path / "kept-inside").write_text("fine\\n")
"""


def run_session(
    tmp_path: Path, source: str, workers: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    home, temp = tmp_path / "home", tmp_path / "temp"
    home.mkdir()
    temp.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_case.py").write_text(source)
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}  # the outer run's options
    env.update(HOME=str(home), TMPDIR=str(temp), PYTHONPATH=str(CHECKOUT))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "tests.leftovers", "-p", "no:cacheprovider"]
    command += ["--rootdir", str(project), "--basetemp", str(tmp_path / "basetemp"), *workers, str(project)]
    return subprocess.run(
        command,
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


# Alone, and as make check runs it: on pytest-xdist workers, where the controller checks.
@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one-process", "xdist"])
def test_a_file_left_in_home_fails_the_session(tmp_path: Path, workers: tuple[str, ...]) -> None:
    done = run_session(tmp_path, LEAVES, workers)
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert f"{tmp_path / 'home'}/stray-file" in done.stdout, done.stdout


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one-process", "xdist"])
def test_a_safefs_directory_left_in_the_temporary_directory_fails_the_session(
    tmp_path: Path, workers: tuple[str, ...]
) -> None:
    done = run_session(tmp_path, LEAVES_TEMP, workers)
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert f"{tmp_path / 'temp'}/safefs-stray-" in done.stdout, done.stdout


def test_a_session_that_keeps_to_its_temp_dirs_passes(tmp_path: Path) -> None:
    done = run_session(tmp_path, CLEAN)
    assert done.returncode == pytest.ExitCode.OK, done.stdout + done.stderr
    assert "left behind" not in done.stdout


def test_the_checkout_check_sees_new_untracked_files_and_not_ignored_ones(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True, timeout=60)

    git("init", "-q")
    (tmp_path / ".gitignore").write_text("build/\n")
    before = untracked_files(tmp_path)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.o").write_text("ignored\n")
    (tmp_path / "stray.txt").write_text("left\n")
    assert untracked_files(tmp_path) - before == {"stray.txt"}
