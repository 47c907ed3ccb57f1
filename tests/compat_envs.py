"""Each integration of compat.toml tested at one end of its declared range, in a virtualenv of its own.

    python tests/compat_envs.py oldest            # the lower bound of each range (make test)
    python tests/compat_envs.py newest --report compat-latest.md   # the newest releases (make test-latest)
    python tests/compat_envs.py oldest --only anthropic

For each table of compat.toml, ``.venv-compat/<name>-<end>`` gets the project (editable, with the
table's extra, the distributions beside it and the test tools of the ``dev`` extra) and the
upstream at that end: ``oldest`` installs ``package==<lower bound>`` with every other dependency pinned by
constraints.txt; ``newest`` installs without constraints, so pip takes the newest release of
everything the extra admits. Then the table's tests run there. The report names the version
installed and every failing test with the first line of its failure. An oldest end equal to the
pinned version is not rebuilt: the main suite tests it in .venv. Exit status 1 when a test failed
or an environment could not be built.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

PROJECT = Path(__file__).resolve().parents[1]
COMPAT = PROJECT / "compat.toml"
CONSTRAINTS = PROJECT / "constraints.txt"
ENVS = PROJECT / ".venv-compat"
ENDS = ("oldest", "newest")
# Distributions beside safefs that the tests import (the MCP client helper, the agent).
NEIGHBOURS = ("./safefs_bench", "./agent")
LOWER_BOUND_OPERATORS = (">=", "==", "~=", "===")
# What the tests need of the dev extra: not its linters, whose own requirements can exclude the
# oldest end of a range (mypy needs pathspec>=1.0, the agent admits 0.12).
TEST_TOOLS = frozenset({"pytest", "pytest-benchmark", "hypothesis", "ripgrep"})


def tools_for_tests() -> list[str]:
    """The dev extra's requirements on :data:`TEST_TOOLS`, as pyproject.toml spells them."""
    with open(PROJECT / "pyproject.toml", "rb") as f:
        dev = tomllib.load(f)["project"]["optional-dependencies"]["dev"]
    return [r for r in dev if canonicalize_name(Requirement(r).name) in TEST_TOOLS]


@dataclass(frozen=True)
class Integration:
    name: str
    extra: str
    package: str
    tests: tuple[str, ...]
    project: str = "."

    def requirement(self) -> Requirement:
        """The requirement on ``package`` that declares the supported range."""
        with open(PROJECT / self.project / "pyproject.toml", "rb") as f:
            table = tomllib.load(f)["project"]
        declared = table["optional-dependencies"][self.extra] if self.extra else table["dependencies"]
        found = [Requirement(r) for r in declared if canonicalize_name(Requirement(r).name) == self.key]
        if len(found) != 1:
            raise ValueError(f"[{self.name}]: {self.package} is required {len(found)} times in {self.where}")
        return found[0]

    @property
    def key(self) -> str:
        return canonicalize_name(self.package)

    @property
    def where(self) -> str:
        what = f"extra {self.extra!r}" if self.extra else "dependencies"
        return f"{self.project}/pyproject.toml, {what}"

    def lower_bound(self) -> str:
        return lower_bound(self.requirement(), self.name)


def lower_bound(requirement: Requirement, name: str) -> str:
    bounds = [s.version for s in requirement.specifier if s.operator in LOWER_BOUND_OPERATORS]
    if len(bounds) != 1:
        raise ValueError(f"[{name}]: {requirement} must declare exactly one lower bound (>=, ~= or ==)")
    return bounds[0]


def load(path: Path = COMPAT) -> list[Integration]:
    with open(path, "rb") as f:
        tables = tomllib.load(f)
    found = []
    for name, table in tables.items():
        unknown = set(table) - {"extra", "package", "tests", "project"}
        if unknown:
            raise ValueError(f"[{name}]: unknown keys {sorted(unknown)}")
        found.append(
            Integration(
                name,
                table["extra"],
                table["package"],
                tuple(table["tests"]),
                table.get("project", "."),
            )
        )
    return found


def same_release(pin: str | None, bound: str) -> bool:
    """Whether the pinned version is the lower bound (``2.3.0`` is ``2.3``)."""
    return pin is not None and Version(pin) == Version(bound)


def pinned(constraints: Path = CONSTRAINTS) -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in constraints.read_text().splitlines():
        name, sep, version = line.split("#", 1)[0].strip().partition("==")
        if sep:
            pins[canonicalize_name(name)] = version.strip()
    return pins


@dataclass
class Outcome:
    integration: Integration
    end: str
    version: str = ""
    status: str = ""  # "passed", "failed", "not built", "same as pinned"
    counts: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    log: str = ""

    @property
    def ok(self) -> bool:
        return self.status in ("passed", "same as pinned")


def run(cmd: list[str], log: list[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    done = subprocess.run(cmd, cwd=PROJECT, env=env, capture_output=True, text=True, check=False)
    log.append(f"$ {' '.join(cmd)}\n{done.stdout[-4000:]}{done.stderr[-4000:]}")
    return done


def build(integration: Integration, end: str, log: list[str]) -> Path | None:
    """The environment of ``integration`` at ``end``, made afresh; None when pip failed."""
    env = ENVS / f"{integration.name}-{end}"
    shutil.rmtree(env, ignore_errors=True)
    python = env / "bin" / "python"
    if run([sys.executable, "-m", "venv", str(env)], log).returncode:
        return None
    project = f".[{integration.extra}]" if integration.extra else "."
    wanted = ["-e", project, *(arg for n in NEIGHBOURS for arg in ("-e", n)), *tools_for_tests()]
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    if end == "oldest":
        # Every pin but the upstream's own, which is its lower bound here.
        others = env / "constraints.txt"
        others.write_text(
            "".join(
                line + "\n"
                for line in CONSTRAINTS.read_text().splitlines()
                if canonicalize_name(line.split("==")[0].strip() or "#") != integration.key
            )
        )
        wanted += [f"{integration.package}=={integration.lower_bound()}", "-c", str(others)]
    else:
        wanted += ["--upgrade", "--upgrade-strategy", "eager"]
    return python if run([*pip, *wanted], log).returncode == 0 else None


def installed_version(python: Path, package: str, log: list[str]) -> str:
    code = f"import importlib.metadata as m; print(m.version({package!r}))"
    done = run([str(python), "-c", code], log)
    return done.stdout.strip() if done.returncode == 0 else "?"


def junit_failures(report: Path) -> tuple[dict[str, int], list[str]]:
    """Counts and one line per failing test (its id and the first line of its failure)."""
    root = ET.parse(report).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    counts = {k: int(suite.get(k, "0")) for k in ("tests", "failures", "errors", "skipped")}
    failures = []
    for case in suite.iter("testcase"):
        for problem in (*case.findall("failure"), *case.findall("error")):
            first = (problem.get("message") or problem.text or "").strip().splitlines()
            test_id = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
            failures.append(f"{test_id}: {first[0][:200] if first else problem.tag}")
    return counts, failures


def check(integration: Integration, end: str, pins: dict[str, str]) -> Outcome:
    outcome = Outcome(integration, end)
    log: list[str] = []
    if end == "oldest" and same_release(pins.get(integration.key), integration.lower_bound()):
        outcome.version, outcome.status = integration.lower_bound(), "same as pinned"
        return outcome
    python = build(integration, end, log)
    if python is None:
        outcome.status, outcome.log = "not built", "\n".join(log)
        return outcome
    outcome.version = installed_version(python, integration.package, log)
    junit = ENVS / f"{integration.name}-{end}.xml"
    done = run(
        [
            str(python),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--benchmark-disable",
            f"--junitxml={junit}",
            *integration.tests,
        ],
        log,
    )
    outcome.counts, outcome.failures = junit_failures(junit) if junit.exists() else ({}, [])
    outcome.status = "passed" if done.returncode == 0 else "failed"
    outcome.log = "\n".join(log)
    return outcome


def report(outcomes: list[Outcome], pins: dict[str, str]) -> str:
    lines = ["| integration | end | declared | version | pinned | result |", "|---|---|---|---|---|---|"]
    for o in outcomes:
        i = o.integration
        counts = ", ".join(f"{v} {k}" for k, v in o.counts.items() if v) if o.counts else ""
        lines.append(
            f"| {i.name} | {o.end} | `{i.requirement()}` | {o.version or '?'} | {pins.get(i.key, '-')} "
            f"| {o.status}{f' ({counts})' if counts else ''} |"
        )
    for o in outcomes:
        if o.failures:
            lines += ["", f"{o.integration.name} at {o.integration.package} {o.version} ({o.end}):"]
            lines += [f"- {failure}" for failure in o.failures]
        elif o.status == "not built":
            lines += [
                "",
                f"{o.integration.name} ({o.end}): the environment could not be built:",
                o.log[-3000:],
            ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("end", choices=ENDS)
    parser.add_argument("--only", nargs="*", metavar="NAME", help="only these tables of compat.toml")
    parser.add_argument("--report", type=Path, help="also write the report (Markdown) to this file")
    args = parser.parse_args(argv)
    integrations = load()
    if args.only:
        unknown = set(args.only) - {i.name for i in integrations}
        if unknown:
            parser.error(f"not in compat.toml: {', '.join(sorted(unknown))}")
        integrations = [i for i in integrations if i.name in args.only]
    pins = pinned()
    outcomes = []
    for integration in integrations:
        print(f"{integration.name} ({args.end}) ...", flush=True)
        outcomes.append(check(integration, args.end, pins))
    text = report(outcomes, pins)
    print(text)
    if args.report:
        args.report.write_text(text)
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
