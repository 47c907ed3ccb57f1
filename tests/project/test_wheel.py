"""The three distributions, built as wheels, install what they should and nothing else, and every
console script works from the install.

``safefs`` (the root ``pyproject.toml``), ``safefs-agent`` (``agent/pyproject.toml``) and
``safefs-bench`` (``safefs_bench/pyproject.toml``) are built from a copy of the checkout into one
wheelhouse. Fresh virtual environments then install ``safefs``, ``safefs[mcp]``,
``safefs[agent]``, ``safefs[anthropic]`` and ``safefs-bench`` with ``--find-links`` on it (so
``safefs-agent`` is found by name, as from an index), and each is checked from outside the
checkout: which top-level packages our distributions put into site-packages, and a real use of
each command. A bare install is checked whole: which distributions it added to site-packages.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from safefs_bench.mcp_client import mcp_session
from tests.project.source_tree import NETWORK_TROUBLE, PROJECT, copy_sources

pytestmark = pytest.mark.slow  # builds three wheels and fresh environments

OURS = {"safefs", "safefs-agent", "safefs-bench"}
# Each console script: the distribution that installs it.
SCRIPT_DIST = {
    "safefs-bench": "safefs-bench",
    "safefs-mcp": "safefs",
    "safefs-extract": "safefs",
    "safefs-agent": "safefs-agent",
}
# A bare ``pip install safefs``: the library and cffi (with the parser cffi needs), nothing else.
BARE_INSTALL = {"safefs", "cffi", "pycparser"}
# A command that fetches or runs Node packages, in any file a distribution installs.
NODE_PACKAGE_RUNNER = re.compile(r"\b(npm|npx)\b")
# Run in an installed environment: for each distribution, the first path component of every file
# its RECORD lists inside site-packages; and what site-packages holds.
SITE_REPORT = """
import importlib.metadata as md, json, os, sysconfig
site = sysconfig.get_path("purelib")
owned = {}
for dist in md.distributions():
    tops = {f.parts[0] for f in dist.files or () if f.parts[0] != ".."}
    owned.setdefault(dist.metadata["Name"].lower(), set()).update(tops)
print(json.dumps({"owned": {k: sorted(v) for k, v in owned.items()}, "entries": os.listdir(site)}))
"""


# Run in an installed environment: every file of the safefs package (not its metadata, which
# carries the README) that names a command fetching or running Node packages.
NODE_RUNNER_REPORT = f"""
import importlib.metadata as md, json, re
found, scanned = [], 0
for f in md.distribution("safefs").files or ():
    if f.parts[0] == "safefs" and f.suffix != ".so":
        scanned += 1
        text = f.locate().read_text(encoding="utf-8", errors="replace")
        if re.search({NODE_PACKAGE_RUNNER.pattern!r}, text):
            found.append(str(f))
print(json.dumps({{"scanned": scanned, "found": found}}))
"""


def scripts(pyproject: Path) -> dict[str, str]:
    with open(pyproject, "rb") as f:
        found: dict[str, str] = tomllib.load(f)["project"]["scripts"]
    return found


def run(cmd: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def skip_on_network_trouble(done: subprocess.CompletedProcess[str], what: str) -> None:
    if done.returncode and any(s in done.stderr for s in NETWORK_TROUBLE):
        pytest.skip(f"the package index is unreachable for {what}")
    assert done.returncode == 0, done.stderr[-3000:]


def test_every_console_script_is_covered() -> None:
    declared = {
        script: project
        for project in ("", "agent", "safefs_bench")
        for script in scripts(PROJECT / project / "pyproject.toml")
    }
    assert set(declared) == set(SCRIPT_DIST)
    # The core distribution's commands, each started from the bare install below.
    assert not scripts(PROJECT / "pyproject.toml").keys() - {"safefs-mcp", "safefs-extract"}


@dataclass(frozen=True)
class Wheelhouse:
    path: Path
    safefs: Path
    agent: Path
    bench: Path


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Wheelhouse:
    work = tmp_path_factory.mktemp("wheel")
    source, house = work / "source", work / "wheelhouse"
    copy_sources(source)
    for tree in (source, source / "agent", source / "safefs_bench"):
        built = run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(house), str(tree)], work
        )
        skip_on_network_trouble(built, "the isolated build")
    (safefs_wheel,) = house.glob("safefs-*.whl")
    (agent_wheel,) = house.glob("safefs_agent-*.whl")
    (bench_wheel,) = house.glob("safefs_bench-*.whl")
    return Wheelhouse(house, safefs_wheel, agent_wheel, bench_wheel)


def wheel_files(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as z:
        return {name for name in z.namelist() if ".dist-info/" not in name}


def source_modules(package: str) -> set[str]:
    """Every .py file of a package in the checkout, as its path inside a wheel."""
    top = PROJECT / package
    return {
        f"{package}/{p.relative_to(top)}"
        for p in top.rglob("*.py")
        if not {"build", "__pycache__"} & set(p.relative_to(top).parts)
    }


def test_each_wheel_holds_its_package_whole_and_nothing_else(wheelhouse: Wheelhouse) -> None:
    safefs_files, agent_files = wheel_files(wheelhouse.safefs), wheel_files(wheelhouse.agent)
    bench_files = wheel_files(wheelhouse.bench)
    assert {name.split("/")[0] for name in safefs_files} == {"safefs"}
    assert {name.split("/")[0] for name in agent_files} == {"agent"}
    assert {name.split("/")[0] for name in bench_files} == {"safefs_bench"}
    # Every module made it in, subpackages without an __init__.py too.
    assert source_modules("safefs") <= safefs_files, source_modules("safefs") - safefs_files
    assert source_modules("agent") <= agent_files, source_modules("agent") - agent_files
    assert source_modules("safefs_bench") <= bench_files, source_modules("safefs_bench") - bench_files
    assert {"safefs/py.typed", "agent/py.typed", "safefs_bench/py.typed"} <= (
        safefs_files | agent_files | bench_files
    )
    if sys.platform.startswith("linux") and shutil.which("cc"):
        for extension in ("safefs/_native", "safefs/_native_read", "safefs/sandbox/_native"):
            assert any(name.startswith(extension + ".") and name.endswith(".so") for name in safefs_files), (
                extension
            )


@dataclass(frozen=True)
class Installed:
    env: Path
    cwd: Path  # outside the checkout
    seeds: frozenset[str]  # the distributions the fresh environment had before the install

    def bin(self, name: str) -> Path:
        return self.env / "bin" / name

    def run(self, name: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return run([str(self.bin(name)), *args], self.cwd, timeout=timeout)

    def report(self) -> dict[str, Any]:
        done = self.run("python", "-c", SITE_REPORT)
        assert done.returncode == 0, done.stderr
        found: dict[str, Any] = json.loads(done.stdout)
        return found

    def distributions(self) -> set[str]:
        return set(self.report()["owned"])

    def our_top_levels(self) -> set[str]:
        """The top-level names our distributions put into site-packages (besides their
        .dist-info), after checking that nothing else there is unaccounted for."""
        report = self.report()
        owned: dict[str, list[str]] = report["owned"]
        # Every entry of site-packages belongs to an installed distribution: nothing was put
        # there beside the RECORDs (a stray top-level package would be).
        recorded = {top for tops in owned.values() for top in tops}
        assert set(report["entries"]) - {"__pycache__"} <= recorded, report
        theirs = {top for name, tops in owned.items() if name not in OURS for top in tops}
        assert not theirs & {"safefs", "agent", "safefs_bench"}, owned
        return {top for name in OURS for top in owned.get(name, ()) if not top.endswith(".dist-info")}


def install(house: Wheelhouse, tmp_path: Path, extra: str | None, *also: Path) -> Installed:
    env = tmp_path / "env"
    venv.EnvBuilder(with_pip=True, clear=True).create(env)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    seeds = Installed(env, cwd, frozenset()).distributions()
    # The safefs wheel by its file (an index could hold another safefs), and any other wheel of
    # ours asked for by file too; what they need of ours (safefs-agent) by name from the
    # wheelhouse, the rest from the index.
    wanted = [f"safefs{f'[{extra}]' if extra else ''} @ {house.safefs.as_uri()}"]
    wanted += [f"{wheel.name.split('-')[0].replace('_', '-')} @ {wheel.as_uri()}" for wheel in also]
    done = run(
        [
            str(env / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--find-links",
            str(house.path),
            *wanted,
        ],
        cwd,
    )
    skip_on_network_trouble(done, "the install")
    return Installed(env, cwd, frozenset(seeds))


def assert_from_the_install(installed: Installed, *packages: str) -> None:
    shown = "; ".join(f"print({p}.__file__)" for p in packages)
    done = installed.run("python", "-c", f"import {', '.join(packages)}; {shown}")
    assert done.returncode == 0, done.stderr
    for line in done.stdout.splitlines():
        assert line.startswith(str(installed.env)) and str(PROJECT) not in line, done.stdout


def test_bare_install_is_the_library_alone(wheelhouse: Wheelhouse, tmp_path: Path) -> None:
    installed = install(wheelhouse, tmp_path, None)
    assert installed.our_top_levels() == {"safefs"}
    # What the install added to site-packages, whole: the library and cffi.
    assert installed.distributions() - installed.seeds == BARE_INSTALL
    # Nothing the safefs distribution installed fetches or runs Node packages.
    runners = installed.run("python", "-c", NODE_RUNNER_REPORT)
    assert runners.returncode == 0, runners.stderr
    scan = json.loads(runners.stdout)
    assert scan["scanned"] > 50 and scan["found"] == [], scan
    assert_from_the_install(installed, "safefs")
    check = (
        "import safefs, tempfile; d = tempfile.mkdtemp()\n"
        "with safefs.Root(d) as r:\n"
        "    r.write_text('a/b', 'x', parents=True); print(r.resolver, r.read_text('a/b'))\n"
    )
    done = installed.run("python", "-c", check)
    assert done.returncode == 0, done.stderr
    expected = "openat2" if sys.platform.startswith("linux") and shutil.which("cc") else "walk"
    assert done.stdout.split() == [expected, "x"]
    assert not installed.bin("safefs-bench").exists()
    # The MCP server is installed but needs its extra: a real start says so in one line.
    served = installed.run("safefs-mcp", str(installed.cwd))
    assert served.returncode != 0, (served.stdout, served.stderr)
    assert "Traceback" not in served.stderr and served.stderr.count("\n") == 1, served.stderr
    assert "pip install './[mcp]'" in served.stderr
    assert not installed.bin("safefs-agent").exists()
    # Extraction needs no extra: a real tar unpacks beneath the directory, from the bare install.
    archive = tmp_path / "one.tar"
    with tarfile.open(archive, "w") as tar:
        member = tarfile.TarInfo("sub/hello.txt")
        member.size = 5
        tar.addfile(member, io.BytesIO(b"hello"))
    target = tmp_path / "unpacked"
    target.mkdir()
    extracted = installed.run("safefs-extract", str(archive), str(target))
    assert extracted.returncode == 0, extracted.stderr
    assert (target / "sub" / "hello.txt").read_bytes() == b"hello"


def test_bench_install_brings_the_contest_and_its_command(wheelhouse: Wheelhouse, tmp_path: Path) -> None:
    installed = install(wheelhouse, tmp_path, None, wheelhouse.bench)
    assert installed.our_top_levels() == {"safefs", "safefs_bench"}
    assert_from_the_install(installed, "safefs_bench", "safefs")
    helped = installed.run("safefs-bench", "--help")
    assert helped.returncode == 0 and "usage" in helped.stdout.lower(), helped.stderr
    # The contestants answer from the install: the baselines and safefs run, the ones whose
    # packages were not asked for (the SDK's tools) say why not.
    listed = installed.run(
        "python",
        "-c",
        "from safefs_bench.strategies import availability; import json; print(json.dumps(availability()))",
    )
    assert listed.returncode == 0, listed.stderr
    reasons = json.loads(listed.stdout)
    assert reasons["realpath"] is None and reasons["safefs-walk"] is None, reasons
    assert "anthropic" in (reasons["anthropic-toolset"] or ""), reasons


def test_mcp_install_serves_a_directory_over_stdio(wheelhouse: Wheelhouse, tmp_path: Path) -> None:
    installed = install(wheelhouse, tmp_path, "mcp")
    assert installed.our_top_levels() == {"safefs"}
    assert not installed.bin("safefs-agent").exists()
    helped = installed.run("safefs-mcp", "--help")
    assert helped.returncode == 0 and "usage" in helped.stdout.lower(), helped.stderr
    served = tmp_path / "served"
    served.mkdir()
    (tmp_path / "secret.txt").write_text("kept outside\n")
    with mcp_session([str(installed.bin("safefs-mcp"))], str(served)) as client:
        assert client.text("write_file", {"path": "notes/a.txt", "content": "round trip\n"}) == (
            False,
            "Successfully wrote to notes/a.txt",
        )
        assert client.text("read_text_file", {"path": "notes/a.txt"}) == (False, "round trip\n")
        error, text = client.text("read_text_file", {"path": "../secret.txt"})
        assert error and "kept outside" not in text and str(tmp_path) not in text, text
    assert (served / "notes" / "a.txt").read_text() == "round trip\n"


def test_agent_install_brings_the_agent_and_its_command(wheelhouse: Wheelhouse, tmp_path: Path) -> None:
    installed = install(wheelhouse, tmp_path, "agent")
    assert installed.our_top_levels() == {"safefs", "agent"}
    assert_from_the_install(installed, "agent", "safefs")
    helped = installed.run("safefs-agent", "--help")
    assert helped.returncode == 0 and "usage" in helped.stdout.lower(), helped.stderr
    # The demo runs the whole agent offline: loop, policy, tools, session, sandbox.
    session = str(tmp_path / "demo-session.jsonl")
    demo = installed.run("safefs-agent", "demo", "--race-seconds", "0.3", "--session", session, timeout=300)
    assert demo.returncode == 0, demo.stderr[-2000:]
    assert "Blocked" in demo.stdout


def test_anthropic_install_brings_the_sdk_drop_ins(wheelhouse: Wheelhouse, tmp_path: Path) -> None:
    installed = install(wheelhouse, tmp_path, "anthropic")
    assert installed.our_top_levels() == {"safefs"}
    assert_from_the_install(installed, "safefs")
    check = (
        "import os, tempfile\n"
        "from safefs.anthropic import BetaLocalFilesystemMemoryTool\n"
        "from safefs.anthropic.agent_toolset import AgentToolContext, beta_agent_toolset_20260401\n"
        "base = tempfile.mkdtemp()\n"
        "os.symlink('/etc', os.path.join(base, 'out'))\n"
        "memory = BetaLocalFilesystemMemoryTool(base)\n"
        "print(memory.call({'command': 'create', 'path': '/memories/a.txt', 'file_text': 'hi'}))\n"
        "print(open(os.path.join(base, 'memories', 'a.txt')).read())\n"
        "print(sorted(t.name for t in beta_agent_toolset_20260401(AgentToolContext(workdir=base))))\n"
    )
    done = installed.run("python", "-c", check)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[1] == "hi", done.stdout
    assert lines[2] == "['bash', 'edit', 'glob', 'grep', 'read', 'write']", done.stdout
