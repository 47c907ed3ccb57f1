"""Each integration of compat.toml tested at one end of its declared range, in a virtualenv of its own.

    python tests/compat_envs.py oldest            # the lower bound of each range (make test)
    python tests/compat_envs.py pinned            # the own_env tables at their pins (make test)
    python tests/compat_envs.py newest --report compat-latest.md   # the newest releases (make test-latest)
    python tests/compat_envs.py oldest --only anthropic
    python tests/compat_envs.py pins              # rewrite constraints/<name>[-oldest].txt (make constraints)
    python tests/compat_envs.py pinned --list     # the names of the tables that end selects
    python tests/compat_envs.py pinned --only agno --build-only   # build (or reuse), print its path

For each table of compat.toml, ``.venv-compat/<name>-<end>`` gets the project (editable, with the
table's extra, the distributions beside it and the test tools of the ``dev`` extra) and the
upstream at that end:

- ``oldest`` installs ``package==<lower bound>`` with every other dependency pinned by the table's
  pin file: constraints.txt, or ``constraints/<name>.txt`` for an ``own_env`` table (one whose
  extra .venv does not hold). Where the lower bound's own requirements exclude a pin (a framework
  that requires its sibling distributions at its exact version), that pin alone is left to pip: a
  dry run resolves the lower bound without pins and each pin that a requirement of what it
  installed excludes is dropped (should the rest still not resolve, each pin that dry run resolved
  differently is dropped too); the report names the pins dropped. For an own_env table
  ``make constraints`` does this once and writes the whole resolution, every version pinned, to
  ``constraints/<name>-oldest.txt``, which the oldest end installs as it is.
- ``pinned`` (own_env tables only; .venv is the pinned end of the others) installs with every
  dependency at its pin in ``constraints/<name>.txt``.
- ``newest`` installs without constraints, so pip takes the newest release of everything the
  extra admits.

Then the table's tests run there. The report names the version installed and every failing test
with the first line of its failure. An oldest end equal to the pinned version is not built: the
main suite (or the pinned end, for an own_env table) tests it. An oldest or pinned environment is
kept and reused while the hash of what it was built from (the pins, the requirement, the
pyproject.toml files) is the one recorded in it; newest is built afresh each time. Exit status 1
when a test failed or an environment could not be built.

What an environment installs, uv installs (``uv pip install --python``, uv from the dev extra,
beside this interpreter or on PATH, its cache in ``.venv-compat/.uv-cache``); without uv, or with
``SAFEFS_COMPAT_INSTALLER=pip``, the environment's own pip does. Each environment is still made by
``python -m venv``, so pip is there for the oldest end's dry runs (``pip install --report``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

PROJECT = Path(__file__).resolve().parents[1]
COMPAT = PROJECT / "compat.toml"
CONSTRAINTS = PROJECT / "constraints.txt"
# The pins of each own_env table: constraints/<name>.txt, constraints/<name>-oldest.txt.
OWN_PINS = PROJECT / "constraints"
ENVS = PROJECT / ".venv-compat"
ENDS = ("oldest", "pinned", "newest")
# Left out of every pin file: our own distributions and the packaging tools venv brings.
UNPINNED = frozenset({"safefs", "safefs-agent", "safefs-bench", "setuptools", "wheel"})
# In an oldest pin file, a comment naming a pin of the pinned end the lower bound excludes.
LEFT_TO_PIP = "# left to pip: "
# Recorded in an environment: the hash of what it was built from.
STAMP = "safefs-compat.sha256"
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
    own_env: bool = False
    test_requires: tuple[str, ...] = ()

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

    @property
    def pin_file(self) -> Path:
        """Where this table's dependencies are pinned: its own file when .venv lacks its extra."""
        return OWN_PINS / f"{self.name}.txt" if self.own_env else CONSTRAINTS

    @property
    def oldest_pin_file(self) -> Path | None:
        """Every dependency of an own_env table's oldest end, pinned (None for the others)."""
        return OWN_PINS / f"{self.name}-oldest.txt" if self.own_env else None

    def wanted(self) -> list[str]:
        """What its environment installs, as pip arguments (before any constraints)."""
        project = f".[{self.extra}]" if self.extra else "."
        neighbours = (arg for n in NEIGHBOURS for arg in ("-e", n))
        return ["-e", project, *neighbours, *tools_for_tests(), *self.test_requires]


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
        unknown = set(table) - {"extra", "package", "tests", "project", "own_env", "test_requires"}
        if unknown:
            raise ValueError(f"[{name}]: unknown keys {sorted(unknown)}")
        found.append(
            Integration(
                name,
                table["extra"],
                table["package"],
                tuple(table["tests"]),
                table.get("project", "."),
                bool(table.get("own_env", False)),
                tuple(table.get("test_requires", ())),
            )
        )
    return found


def same_release(pin: str | None, bound: str) -> bool:
    """Whether the pinned version is the lower bound (``2.3.0`` is ``2.3``)."""
    return pin is not None and Version(pin) == Version(bound)


def pinned(constraints: Path = CONSTRAINTS) -> dict[str, str]:
    pins: dict[str, str] = {}
    if not constraints.exists():
        return pins
    for line in constraints.read_text().splitlines():
        name, sep, version = line.split("#", 1)[0].strip().partition("==")
        if sep:
            pins[canonicalize_name(name)] = version.strip()
    return pins


def excluded_pins(install_report: dict[str, Any], pins: dict[str, str]) -> dict[str, str]:
    """The pins a requirement of some distribution in a pip ``--report`` excludes, with that requirement.

    The report is a resolution made without the pins; a pin none of its distributions' (marker-
    evaluated) requirements excludes is kept, the others are left to pip.
    """
    found: dict[str, str] = {}
    for item in install_report.get("install", []):
        metadata = item.get("metadata", {})
        extras = ["", *(item.get("requested_extras") or [])]
        for text in metadata.get("requires_dist") or []:
            req = Requirement(text)
            key = canonicalize_name(req.name)
            if key not in pins or key in found:
                continue
            if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in extras):
                continue
            if not req.specifier.contains(pins[key], prereleases=True):
                found[key] = f"{metadata.get('name')} {metadata.get('version')} requires {req}"
    return found


def fingerprint(integration: Integration, end: str) -> str:
    """The hash of what the environment of ``integration`` at ``end`` is built from."""
    digest = hashlib.sha256()
    parts = [integration.name, end, sys.version, *integration.wanted(), str(integration.requirement())]
    if end != "newest":
        parts.append(integration.pin_file.read_text())
    oldest = integration.oldest_pin_file
    if end == "oldest" and oldest is not None and oldest.exists():
        parts.append(oldest.read_text())
    for pyproject in ("pyproject.toml", *(f"{n}/pyproject.toml" for n in NEIGHBOURS)):
        parts.append((PROJECT / pyproject).read_text())
    for part in parts:
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


@dataclass
class Outcome:
    integration: Integration
    end: str
    version: str = ""
    status: str = ""  # "passed", "failed", "not built", "same as pinned"
    counts: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    log: str = ""
    dropped: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)  # "build", "tests": wall time

    @property
    def ok(self) -> bool:
        return self.status in ("passed", "same as pinned")


# pip's settings from the environment that uv reads under names of its own.
PIP_TO_UV = {"PIP_INDEX_URL": "UV_INDEX_URL", "PIP_EXTRA_INDEX_URL": "UV_EXTRA_INDEX_URL"}
PIP_TO_UV_LISTS = {"PIP_FIND_LINKS": "UV_FIND_LINKS"}  # pip: space-separated; uv: comma-separated
UV_CACHE = ENVS / ".uv-cache"


def uv_command() -> str | None:
    """uv beside this interpreter (the dev extra installs it) or on PATH; None means pip."""
    if os.environ.get("SAFEFS_COMPAT_INSTALLER", "uv") == "pip":
        return None
    beside = Path(sys.executable).with_name("uv")
    return str(beside) if beside.exists() else shutil.which("uv")


def installer(python: Path) -> list[str]:
    """The command that installs into the environment of ``python``, up to its arguments."""
    uv = uv_command()
    if uv is None:
        return [str(python), "-m", "pip", "install", "--quiet"]
    return [uv, "pip", "install", "--quiet", "--python", str(python)]


def run(cmd: list[str], log: list[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.setdefault("UV_CACHE_DIR", str(UV_CACHE))
    for pip_name, uv_name in PIP_TO_UV.items():
        if pip_name in os.environ:
            env.setdefault(uv_name, os.environ[pip_name])
    for pip_name, uv_name in PIP_TO_UV_LISTS.items():
        if pip_name in os.environ:
            env.setdefault(uv_name, ",".join(os.environ[pip_name].split()))
    started = time.monotonic()
    done = subprocess.run(cmd, cwd=PROJECT, env=env, capture_output=True, text=True, check=False)
    took = time.monotonic() - started
    log.append(f"$ {' '.join(cmd)}  ({took:.1f} s)\n{done.stdout[-4000:]}{done.stderr[-4000:]}")
    return done


def installed_by(install_report: dict[str, Any]) -> dict[str, str]:
    """What a pip ``--report`` installs: name: version."""
    return {
        str(canonicalize_name(item["metadata"]["name"])): item["metadata"]["version"]
        for item in install_report.get("install", [])
    }


def resolve_oldest(
    integration: Integration, python: Path, log: list[str], dropped: dict[str, str]
) -> dict[str, str] | None:
    """Every distribution the oldest end installs, pinned: the lower bound with the table's pins.

    A dry run of ``python``'s pip resolves the lower bound without pins; the pins a requirement of
    what it installs excludes go into ``dropped`` (name: why) and are left to pip. When the rest
    still cannot be resolved, every pin the unpinned dry run resolved differently is left to pip
    too. None when pip cannot resolve it at all.
    """
    pins = pinned(integration.pin_file)
    pins.pop(integration.key, None)
    wanted = [*integration.wanted(), f"{integration.package}=={integration.lower_bound()}"]
    work = python.parent.parent
    dry = [str(python), "-m", "pip", "install", "--quiet", "--dry-run", "--ignore-installed", "--report"]

    def resolution(*constraints: str) -> dict[str, Any] | None:
        """pip's install report of ``wanted`` under ``constraints``."""
        report_file = work / "resolution.json"
        if run([*dry, str(report_file), *wanted, *constraints], log).returncode:
            return None
        found: dict[str, Any] = json.loads(report_file.read_text())
        return found

    unconstrained = resolution()
    if unconstrained is None:
        return None
    dropped.update(excluded_pins(unconstrained, pins))
    free = installed_by(unconstrained)
    constraints = work / "oldest-constraints.txt"
    for attempt in ("excluded", "resolved differently"):
        if attempt == "resolved differently":
            for key, version in pins.items():
                if key in free and key not in dropped and free[key] != version:
                    dropped[key] = f"the lower bound resolves {free[key]} without pins"
        constraints.write_text("".join(f"{k}=={v}\n" for k, v in sorted(pins.items()) if k not in dropped))
        resolved = resolution("-c", str(constraints))
        if resolved is not None:
            return {k: v for k, v in installed_by(resolved).items() if k not in UNPINNED}
    return None


def read_oldest_pins(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The pins of an oldest pin file and the pins it left to pip (name: why)."""
    dropped = {}
    for line in path.read_text().splitlines():
        if line.startswith(LEFT_TO_PIP):
            name, _, why = line.removeprefix(LEFT_TO_PIP).partition(": ")
            dropped[name] = why
    return pinned(path), dropped


def build(integration: Integration, end: str, log: list[str], dropped: dict[str, str]) -> Path | None:
    """The environment of ``integration`` at ``end``; None when pip failed.

    An oldest or pinned environment whose recorded fingerprint matches is reused as it is. The pins
    the oldest end leaves to pip go into ``dropped`` (name: the requirement that excludes it).
    """
    env = ENVS / f"{integration.name}-{end}"
    python = env / "bin" / "python"
    stamp = env / STAMP
    wanted_hash = fingerprint(integration, end)
    if end != "newest" and python.exists() and stamp.exists():
        recorded = stamp.read_text().split("\n", 1)
        if recorded[0] == wanted_hash:
            dropped.update(json.loads(recorded[1]) if len(recorded) > 1 and recorded[1] else {})
            log.append(f"reusing {env.relative_to(PROJECT)} (built from the same pins)")
            return python
    shutil.rmtree(env, ignore_errors=True)
    if run([sys.executable, "-m", "venv", str(env)], log).returncode:
        return None
    wanted = integration.wanted()
    install = installer(python)
    if end == "newest":  # a fresh environment: uv takes the newest release of everything anyway
        wanted += ["--upgrade"] if uv_command() else ["--upgrade", "--upgrade-strategy", "eager"]
    else:
        pins: dict[str, str] | None = pinned(integration.pin_file)
        if end == "oldest":
            wanted.append(f"{integration.package}=={integration.lower_bound()}")
            oldest = integration.oldest_pin_file
            if oldest is not None and oldest.exists():
                pins, left = read_oldest_pins(oldest)
                dropped.update(left)
            else:
                pins = resolve_oldest(integration, python, log, dropped)
        if pins is None:
            return None
        constraints = env / "constraints.txt"
        constraints.write_text("".join(f"{k}=={v}\n" for k, v in sorted(pins.items())))
        wanted += ["-c", str(constraints)]
    if run([*install, *wanted], log).returncode:
        return None
    stamp.write_text(wanted_hash + "\n" + json.dumps(dropped))
    return python


def write_pins(integration: Integration, log: list[str]) -> Path | None:
    """Resolve the extra of an own_env table afresh in a throwaway venv and write its pin files.

    ``constraints/<name>.txt`` pins what the extra installs at the newest releases it admits;
    ``constraints/<name>-oldest.txt`` what it installs with the upstream at its lower bound and
    those pins (the pins the lower bound excludes, left to pip, named in its comments).
    """
    scratch = ENVS / f"{integration.name}-resolve"
    shutil.rmtree(scratch, ignore_errors=True)
    python = scratch / "bin" / "python"
    header = f"# Every dependency of {' '.join(integration.wanted())}"
    try:
        if run([sys.executable, "-m", "venv", str(scratch)], log).returncode:
            return None
        pip = [str(python), "-m", "pip"]
        if run([*pip, "install", "--quiet", "--upgrade", "pip"], log).returncode:
            return None
        if run([*pip, "install", "--quiet", *integration.wanted()], log).returncode:
            return None
        frozen = run([*pip, "freeze", "--exclude-editable", "--all"], log)
        if frozen.returncode:
            return None
        lines = [
            line
            for line in frozen.stdout.splitlines()
            if "==" in line and canonicalize_name(line.split("==")[0]) not in UNPINNED
        ]
        OWN_PINS.mkdir(exist_ok=True)
        integration.pin_file.write_text(
            f"{header}, pinned; regenerate with: make constraints\n"
            + "".join(f"{line}\n" for line in sorted(lines, key=str.lower))
        )
        dropped: dict[str, str] = {}
        oldest = resolve_oldest(integration, python, log, dropped)
        if oldest is None or integration.oldest_pin_file is None:
            return None
        integration.oldest_pin_file.write_text(
            f"{header} with {integration.package}=={integration.lower_bound()}, pinned; "
            "regenerate with: make constraints\n"
            + "".join(f"{LEFT_TO_PIP}{k}: {why}\n" for k, why in sorted(dropped.items()))
            + "".join(f"{k}=={v}\n" for k, v in sorted(oldest.items()))
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return integration.pin_file


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


def check(integration: Integration, end: str) -> Outcome:
    outcome = Outcome(integration, end)
    log: list[str] = []
    pins = pinned(integration.pin_file)
    if end == "oldest" and same_release(pins.get(integration.key), integration.lower_bound()):
        outcome.version, outcome.status = integration.lower_bound(), "same as pinned"
        return outcome
    started = time.monotonic()
    python = build(integration, end, log, outcome.dropped)
    outcome.seconds["build"] = time.monotonic() - started
    if python is None:
        outcome.status, outcome.log = "not built", "\n".join(log)
        return outcome
    outcome.version = installed_version(python, integration.package, log)
    junit = ENVS / f"{integration.name}-{end}.xml"
    started = time.monotonic()
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
    outcome.seconds["tests"] = time.monotonic() - started
    outcome.counts, outcome.failures = junit_failures(junit) if junit.exists() else ({}, [])
    outcome.status = "passed" if done.returncode == 0 else "failed"
    outcome.log = "\n".join(log)
    return outcome


def report(outcomes: list[Outcome]) -> str:
    lines = ["| integration | end | declared | version | pinned | result |", "|---|---|---|---|---|---|"]
    for o in outcomes:
        i = o.integration
        counts = ", ".join(f"{v} {k}" for k, v in o.counts.items() if v) if o.counts else ""
        pin = pinned(i.pin_file).get(i.key, "-")
        lines.append(
            f"| {i.name} | {o.end} | `{i.requirement()}` | {o.version or '?'} | {pin} "
            f"| {o.status}{f' ({counts})' if counts else ''} |"
        )
    for o in outcomes:
        if o.dropped:
            lines += ["", f"{o.integration.name} ({o.end}): pins left to pip, the lower bound excludes them:"]
            lines += [f"- {name}: {why}" for name, why in sorted(o.dropped.items())]
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


def selected(end: str, integrations: list[Integration]) -> list[Integration]:
    """The tables ``end`` runs: the pinned end and the pin files are the own_env tables' alone."""
    return [i for i in integrations if i.own_env] if end in ("pinned", "pins") else integrations


def write_all_pins(integrations: list[Integration]) -> int:
    failed = 0
    for integration in integrations:
        log: list[str] = []
        written = write_pins(integration, log)
        if written is None:
            print(f"{integration.name}: could not be resolved:\n" + "\n".join(log)[-3000:], file=sys.stderr)
            failed = 1
        else:
            for path in (written, integration.oldest_pin_file):
                assert path is not None
                print(f"wrote {path.relative_to(PROJECT)}: {len(pinned(path))} pins")
    return failed


def build_only(integrations: list[Integration], end: str) -> int:
    """Build (or reuse) each environment and print its directory; the pip log on failure."""
    for integration in integrations:
        log: list[str] = []
        print(f"{integration.name} ({end}): building ...", file=sys.stderr, flush=True)
        python = build(integration, end, log, {})
        if python is None:
            print(f"{integration.name} ({end}): not built:\n" + "\n".join(log)[-3000:], file=sys.stderr)
            return 1
        print(python.parent.parent, flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "end", choices=(*ENDS, "pins"), help="an end of the ranges, or pins: rewrite constraints/"
    )
    parser.add_argument("--only", nargs="*", metavar="NAME", help="only these tables of compat.toml")
    parser.add_argument("--report", type=Path, help="also write the report (Markdown) to this file")
    parser.add_argument(
        "--list", action="store_true", help="print the names of the tables selected; run nothing"
    )
    parser.add_argument(
        "--build-only",
        action="store_true",
        help="build (or reuse) each selected environment and print its path; run no tests",
    )
    args = parser.parse_args(argv)
    integrations = load()
    if args.only:
        unknown = set(args.only) - {i.name for i in integrations}
        if unknown:
            parser.error(f"not in compat.toml: {', '.join(sorted(unknown))}")
        integrations = [i for i in integrations if i.name in args.only]
    integrations = selected(args.end, integrations)
    if args.list:
        print("\n".join(i.name for i in integrations))
        return 0
    if args.build_only and args.end != "pins":
        return build_only(integrations, args.end)
    if args.end == "pins":
        return write_all_pins(integrations)
    outcomes = []
    for integration in integrations:
        print(f"{integration.name} ({args.end}) ...", flush=True)
        outcome = check(integration, args.end)
        outcomes.append(outcome)
        took = ", ".join(f"{k} {v:.0f} s" for k, v in outcome.seconds.items())
        print(f"{integration.name} ({args.end}): {outcome.status}{f' ({took})' if took else ''}", flush=True)
    text = report(outcomes)
    print(text)
    if args.report:
        args.report.write_text(text)
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
