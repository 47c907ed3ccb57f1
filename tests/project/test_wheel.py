"""A wheel built from the tree works as well as the editable install.

The wheel is built from a copy of the checkout, installed into fresh virtual environments (bare,
then with every extra), and every console script is started from there, outside the checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
NETWORK_TROUBLE = ("Could not find a version", "ConnectionError", "Max retries exceeded",
                   "Temporary failure in name resolution", "No matching distribution")
# Each console script, and the extra it needs (None: the bare install is enough).
SCRIPT_EXTRAS: dict[str, str | None] = {
    "safefs-agent": "agent",
    "safefs-mcp": "mcp",
    "safefs-bench": None,
}
# How each command that needs an extra is used for real (the workspace path is appended).
SCRIPT_USE: dict[str, list[str]] = {
    "safefs-agent": ["run", "--workspace"],
    "safefs-mcp": [],
}
SKIP_COPY = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__",
                                   ".*_cache", ".hypothesis", ".benchmarks", "bench-results",
                                   "node_modules", "*.so")


def console_scripts() -> dict[str, str]:
    with open(PROJECT / "pyproject.toml", "rb") as f:
        scripts: dict[str, str] = tomllib.load(f)["project"]["scripts"]
    return scripts


def run(cmd: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def pip(env_dir: Path, *args: str, cwd: Path) -> None:
    done = run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "--quiet", *args], cwd)
    if done.returncode and any(s in done.stderr for s in NETWORK_TROUBLE):
        pytest.skip("the package index is unreachable")
    assert done.returncode == 0, done.stderr[-3000:]


def test_every_console_script_is_covered() -> None:
    assert set(console_scripts()) <= set(SCRIPT_EXTRAS)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(PROJECT, source, ignore=SKIP_COPY)
    built = run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(work / "dist"),
                 str(source)], work)
    if built.returncode and any(s in built.stderr for s in NETWORK_TROUBLE):
        pytest.skip("the package index is unreachable for the isolated build")
    assert built.returncode == 0, built.stderr[-3000:]
    (found,) = (work / "dist").glob("safefs-*.whl")
    return found


def fresh_env(path: Path) -> Path:
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    return path


def test_bare_install_is_the_library_alone(wheel: Path, tmp_path: Path) -> None:
    env = fresh_env(tmp_path / "bare")
    pip(env, str(wheel), cwd=tmp_path)
    py = str(env / "bin" / "python")
    listed = run([py, "-m", "pip", "list", "--format=freeze"], tmp_path).stdout.lower()
    names = {line.split("==")[0] for line in listed.split()}
    assert "anthropic" not in names and "mcp" not in names, names
    check = ("import safefs, tempfile; d = tempfile.mkdtemp()\n"
             "with safefs.Root(d) as r:\n"
             "    r.write_text('a/b', 'x', parents=True); print(r.resolver, r.read_text('a/b'))\n")
    done = run([py, "-c", check], tmp_path)
    assert done.returncode == 0, done.stderr
    expected = "openat2" if sys.platform.startswith("linux") and shutil.which("cc") else "walk"
    assert done.stdout.split() == [expected, "x"]
    for script in console_scripts():
        extra = SCRIPT_EXTRAS[script]
        if extra is None:
            started = run([str(env / "bin" / script), "--help"], tmp_path, timeout=120)
            assert started.returncode == 0, (script, started.stderr)
            continue
        # A real use of the command, which needs the extra.
        started = run([str(env / "bin" / script), *SCRIPT_USE[script], str(tmp_path)], tmp_path,
                      timeout=120)
        assert started.returncode != 0, (script, started.stdout, started.stderr)
        assert "Traceback" not in started.stderr
        assert started.stderr.count("\n") == 1, started.stderr
        assert f"pip install 'safefs[{extra}]'" in started.stderr


def test_install_with_every_extra_runs_every_script(wheel: Path, tmp_path: Path) -> None:
    env = fresh_env(tmp_path / "full")
    extras = ",".join(sorted({e for e in SCRIPT_EXTRAS.values() if e}))
    pip(env, f"{wheel}[{extras}]", cwd=tmp_path)
    for script in console_scripts():
        started = run([str(env / "bin" / script), "--help"], tmp_path, timeout=120)
        assert started.returncode == 0, (script, started.stderr[-2000:])
        assert "usage" in started.stdout.lower(), (script, started.stdout)
    # Every subpackage made it into the wheel: the demo runs the whole agent offline.
    demo = run([str(env / "bin" / "safefs-agent"), "demo", "--race-seconds", "0.3"], tmp_path)
    assert demo.returncode == 0, demo.stderr[-2000:]
    assert "Blocked" in demo.stdout
    imported = run([str(env / "bin" / "python"), "-c",
                    "import agent, safefs; print(agent.__file__, safefs.__file__)"], tmp_path)
    assert str(env) in imported.stdout and str(PROJECT) not in imported.stdout, imported.stdout
