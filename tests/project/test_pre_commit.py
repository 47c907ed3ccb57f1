"""The pre-commit hooks run offline and catch what each is for.

Every hook is local (``.pre-commit-config.yaml``), so each run here is the real pre-commit running
the real tools, in a scratch git repository or over the checkout, with no network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

PROJECT = Path(__file__).resolve().parents[2]
CONFIG = PROJECT / ".pre-commit-config.yaml"
HOOKS = {"ruff-check", "ruff-format", "detect-private-key"}
# Spelled in two parts so that this file is not itself a key to the detector.
KEY_HEADER = "-----BEGIN RSA " + "PRIVATE KEY-----"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")


def pre_commit(repo: Path, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    # The hooks are `language: system`: they find the tools of this interpreter's environment.
    env = dict(
        os.environ,
        PRE_COMMIT_HOME=str(home),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    )
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_the_config_names_the_three_local_hooks(tmp_path: Path) -> None:
    config = yaml.safe_load(CONFIG.read_text())
    hooks = [hook for repo in config["repos"] for hook in repo["hooks"]]
    assert {repo["repo"] for repo in config["repos"]} == {"local"}  # nothing to clone
    assert {hook["id"] for hook in hooks} == HOOKS
    assert all(hook["language"] == "system" for hook in hooks)  # nothing to download
    done = pre_commit(PROJECT, "validate-config", str(CONFIG), home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A git repository with the project's hook and ruff configuration and one clean module."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    shutil.copy(CONFIG, repo / CONFIG.name)
    shutil.copy(PROJECT / "pyproject.toml", repo / "pyproject.toml")
    (repo / "clean.py").write_text('"""Clean."""\n\nVALUE = 1\n')
    return repo


def test_a_clean_repository_passes_every_hook(scratch: Path, tmp_path: Path) -> None:
    git(scratch, "add", ".")
    done = pre_commit(scratch, "run", "--all-files", home=tmp_path / "home")
    assert done.returncode == 0, done.stdout + done.stderr
    for hook in ("ruff check", "ruff format", "detect private key"):
        assert any(line.startswith(hook) and line.endswith("Passed") for line in done.stdout.splitlines())


@pytest.mark.parametrize(
    ("hook", "name", "content"),
    [
        ("ruff-check", "unused.py", "import os\n"),
        ("ruff-format", "unformatted.py", "VALUE   =  [1,2]\n"),
        ("detect-private-key", "id_rsa", f"{KEY_HEADER}\nMIIEow\n"),
    ],
)
def test_each_hook_fails_on_what_it_is_for(
    scratch: Path, tmp_path: Path, hook: str, name: str, content: str
) -> None:
    (scratch / name).write_text(content)
    git(scratch, "add", ".")
    done = pre_commit(scratch, "run", hook, "--all-files", home=tmp_path / "home")
    assert done.returncode == 1, done.stdout + done.stderr
    output = done.stdout
    if hook == "ruff-format":
        assert "files were modified by this hook" in output
        assert (scratch / name).read_text() == "VALUE = [1, 2]\n"
    else:
        assert name in output, output
    assert "clean.py" not in output


@pytest.mark.skipif(not (PROJECT / ".git").exists(), reason="needs the git checkout")
@pytest.mark.parametrize("hook", ["detect-private-key", "ruff-check"])
def test_the_checkout_passes(hook: str, tmp_path: Path) -> None:
    # ruff-format is left out here: it rewrites files, and a test must not edit the checkout.
    done = pre_commit(PROJECT, "run", hook, "--all-files", home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
