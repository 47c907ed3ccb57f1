"""compat.toml declares every integration's range and tests, and the runner reads it right.

The runner itself (tests/compat_envs.py) builds virtualenvs and is run by `make test` (oldest,
and pinned for the own_env tables) and `make test-latest` (newest); here its parts that decide
what to install, when an environment is reused and how to report are checked, on the real
compat.toml and pin files and on planted ones.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests import compat_envs
from tests.compat_envs import (
    CONSTRAINTS,
    PROJECT,
    UNPINNED,
    Integration,
    Outcome,
    excluded_pins,
    fingerprint,
    junit_failures,
    load,
    lower_bound,
    pinned,
    read_oldest_pins,
    report,
    same_release,
    selected,
    tools_for_tests,
)


def test_every_table_names_an_upstream_with_a_lower_bound_and_existing_tests() -> None:
    integrations = load()
    assert {"anthropic", "mcp", "re2", "pathspec"} <= {i.name for i in integrations}
    for integration in integrations:
        requirement = integration.requirement()
        assert integration.lower_bound(), integration
        assert requirement.specifier.contains(integration.lower_bound()), (integration, requirement)
        for path in integration.tests:
            assert (PROJECT / path.split("::")[0]).exists(), (integration.name, path)


def test_the_anthropic_range_is_the_extras() -> None:
    (anthropic,) = [i for i in load() if i.name == "anthropic"]
    assert str(anthropic.requirement().specifier) == "<3,>=2.15"
    assert anthropic.lower_bound() == "2.15"


def test_the_newest_end_of_each_range_is_what_constraints_pin() -> None:
    """.venv (or an own_env table's pinned end) is the newest end: each upstream's pin lies in its range."""
    for integration in load():
        pins = pinned(integration.pin_file)
        assert integration.requirement().specifier.contains(pins[integration.key]), integration


def test_the_agent_frameworks_have_environments_and_pins_of_their_own() -> None:
    integrations = {i.name: i for i in load()}
    own = {name for name, i in integrations.items() if i.own_env}
    assert {"pydantic-ai", "langchain"} <= own
    assert {"anthropic", "mcp", "re2", "pathspec", "fsspec"}.isdisjoint(own)
    for name, integration in integrations.items():
        expected = PROJECT / "constraints" / f"{name}.txt" if integration.own_env else CONSTRAINTS
        assert integration.pin_file == expected
    # .venv does not hold them: their pins are not in constraints.txt.
    assert "pydantic-ai-slim" not in pinned() and "langchain-community" not in pinned()


@pytest.mark.parametrize("name", ["pydantic-ai", "langchain"])
def test_an_own_pin_file_pins_exactly_the_tree_of_its_extra(name: str) -> None:
    (integration,) = [i for i in load() if i.name == name]
    lines = [ln for ln in integration.pin_file.read_text().splitlines() if ln and not ln.startswith("#")]
    keys = [canonicalize_name(ln.partition("==")[0]) for ln in lines]
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+==[^=\s]+", ln) for ln in lines), lines
    assert len(keys) == len(set(keys)), "a distribution pinned twice"
    assert UNPINNED.isdisjoint(keys)
    # The extra's every requirement, and the test tools, are pinned.
    with open(PROJECT / "pyproject.toml", "rb") as f:
        extra = tomllib.load(f)["project"]["optional-dependencies"][integration.extra]
    for requirement in (*extra, *tools_for_tests()):
        assert canonicalize_name(Requirement(requirement).name) in keys, requirement


@pytest.mark.parametrize("name", ["pydantic-ai", "langchain"])
def test_the_oldest_pin_file_pins_the_lower_bound_and_names_what_it_left_to_pip(name: str) -> None:
    (integration,) = [i for i in load() if i.name == name]
    assert integration.oldest_pin_file == PROJECT / "constraints" / f"{name}-oldest.txt"
    oldest, left = read_oldest_pins(integration.oldest_pin_file)
    newest = pinned(integration.pin_file)
    assert same_release(oldest[integration.key], integration.lower_bound())
    assert UNPINNED.isdisjoint(oldest)
    # What was left to pip is the pins the lower bound excludes: each now pinned elsewhere.
    for key, why in left.items():
        assert oldest[key] != newest[key] and " requires " in why, (key, why)
    # Every other pin of the pinned end that the oldest end installs stands, but the upstream's own.
    kept = {k for k in newest if k in oldest and k not in left and k != integration.key}
    changed = {k for k in kept if oldest[k] != newest[k]}
    assert not changed, sorted(changed)


def test_the_pin_files_of_the_other_tables_are_constraints_txt() -> None:
    assert all(i.oldest_pin_file is None for i in load() if not i.own_env)


def test_the_pinned_end_and_the_pin_files_are_the_own_env_tables_alone() -> None:
    integrations = load()
    for end in ("pinned", "pins"):
        assert {i.name for i in selected(end, integrations)} == {i.name for i in integrations if i.own_env}
    for end in ("oldest", "newest"):
        assert selected(end, integrations) == integrations


def slim(version: str, *requires: str, extras: tuple[str, ...] = ()) -> dict[str, object]:
    metadata = {"name": "pydantic-ai-slim", "version": version, "requires_dist": list(requires)}
    return {"metadata": metadata, "requested_extras": list(extras)}


def test_a_pin_the_lower_bound_excludes_is_left_to_pip() -> None:
    pins = {"pydantic-graph": "2.68.0", "httpx": "0.28.1", "anthropic": "2.16.0", "pydantic": "2.14.4"}
    resolution = {
        "install": [
            slim(
                "2.52.0",
                "pydantic-graph==2.52.0",
                "httpx>=0.27",
                'anthropic>=9; extra == "anthropic"',
                'pydantic>=99; python_version < "3"',
            )
        ]
    }
    dropped = excluded_pins(resolution, pins)
    assert dropped == {"pydantic-graph": "pydantic-ai-slim 2.52.0 requires pydantic-graph==2.52.0"}
    # The same requirement behind an extra counts only when that extra was asked for.
    resolution["install"] = [slim("2.52.0", 'anthropic>=9; extra == "anthropic"', extras=("anthropic",))]
    assert set(excluded_pins(resolution, pins)) == {"anthropic"}


def test_an_environment_is_rebuilt_when_its_pins_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compat_envs, "OWN_PINS", tmp_path)
    (integration,) = [i for i in load() if i.name == "pydantic-ai"]
    integration.pin_file.write_text("pydantic-graph==2.68.0\n")
    first = {end: fingerprint(integration, end) for end in ("oldest", "pinned", "newest")}
    assert len(set(first.values())) == 3
    assert first["pinned"] == fingerprint(integration, "pinned")
    integration.pin_file.write_text("pydantic-graph==2.69.0\n")
    assert fingerprint(integration, "pinned") != first["pinned"]
    assert fingerprint(integration, "oldest") != first["oldest"]
    assert fingerprint(integration, "newest") == first["newest"]


@pytest.mark.parametrize(
    ("requirement", "bound"),
    [("anthropic>=2.15,<3", "2.15"), ("mcp~=2.3", "2.3"), ("ripgrep==14.1.0", "14.1.0")],
)
def test_lower_bound(requirement: str, bound: str) -> None:
    assert lower_bound(Requirement(requirement), "x") == bound


@pytest.mark.parametrize("requirement", ["anthropic", "anthropic<3", "anthropic>=2,>=2.1"])
def test_a_range_without_one_lower_bound_is_refused(requirement: str) -> None:
    with pytest.raises(ValueError, match="exactly one lower bound"):
        lower_bound(Requirement(requirement), "x")


def test_an_oldest_end_equal_to_the_pin_is_left_to_the_main_environment() -> None:
    assert same_release("2.3.0", "2.3") and same_release("1.1", "1.1.0")
    assert not same_release("2.16.0", "2.15") and not same_release(None, "2.15")


def test_the_environments_get_the_test_tools_not_the_linters() -> None:
    names = {Requirement(r).name for r in tools_for_tests()}
    assert names == {"pytest", "pytest-benchmark", "hypothesis", "ripgrep"}


def test_an_unknown_key_is_refused(tmp_path: Path) -> None:
    planted = tmp_path / "compat.toml"
    planted.write_text('[x]\nextra = "a"\npackage = "b"\ntests = []\nversion = "1"\n')
    with pytest.raises(ValueError, match="unknown keys"):
        load(planted)


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="3">
<testcase classname="tests.anthropic.test_differential" name="test_a" />
<testcase classname="tests.anthropic.test_differential" name="test_b">
<failure message="AssertionError: assert 'x' == 'y'&#10;more">trace</failure></testcase>
<testcase classname="tests.anthropic.test_race" name="test_c"><skipped message="no" /></testcase>
</testsuite></testsuites>
"""


def test_the_report_names_each_failing_test(tmp_path: Path) -> None:
    junit = tmp_path / "r.xml"
    junit.write_text(JUNIT)
    counts, failures = junit_failures(junit)
    assert counts == {"tests": 3, "failures": 1, "errors": 0, "skipped": 1}
    assert failures == ["tests/anthropic/test_differential.py::test_b: AssertionError: assert 'x' == 'y'"]
    (anthropic,) = [i for i in load() if i.name == "anthropic"]
    text = report([Outcome(anthropic, "newest", "9.9.9", "failed", counts, failures)])
    row = f"| anthropic | newest | `anthropic<3,>=2.15` | 9.9.9 | {pinned()['anthropic']} | failed "
    assert row + "(3 tests, 1 failures, 1 skipped) |" in text
    assert "- tests/anthropic/test_differential.py::test_b: AssertionError" in text


def test_a_table_reads_its_range_from_the_project_it_names() -> None:
    (pathspec,) = [i for i in load() if i.name == "pathspec"]
    assert pathspec.project == "agent" and pathspec.extra == ""
    assert pathspec.requirement().name == "pathspec"
    assert Integration("x", "", "pathspec", (), "agent").where == "agent/pyproject.toml, dependencies"


def test_the_report_names_the_pins_left_to_pip() -> None:
    (pydantic_ai,) = [i for i in load() if i.name == "pydantic-ai"]
    why = "pydantic-ai-slim 2.52.0 requires pydantic-graph==2.52.0"
    outcome = Outcome(pydantic_ai, "oldest", "2.52.0", "passed", dropped={"pydantic-graph": why})
    text = report([outcome])
    pin = pinned(pydantic_ai.pin_file)["pydantic-ai-slim"]
    assert f"| pydantic-ai | oldest | `pydantic-ai-slim<3,>=2.52` | 2.52.0 | {pin} | passed |" in text
    assert f"- pydantic-graph: {why}" in text


def test_the_environments_are_installed_by_the_uv_of_the_dev_extra_or_else_by_pip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = tmp_path / "env" / "bin" / "python"
    monkeypatch.delenv("SAFEFS_COMPAT_INSTALLER", raising=False)
    uv = compat_envs.uv_command()
    assert uv is not None and Path(uv).name == "uv", "the dev extra installs uv beside this interpreter"
    assert compat_envs.installer(python) == [uv, "pip", "install", "--quiet", "--python", str(python)]
    monkeypatch.setenv("SAFEFS_COMPAT_INSTALLER", "pip")
    assert compat_envs.uv_command() is None
    assert compat_envs.installer(python) == [str(python), "-m", "pip", "install", "--quiet"]


def test_uv_gets_pips_index_settings_and_a_cache_in_the_ignored_environments_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PIP_FIND_LINKS", "/srv/wheels /srv/more")
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirror.example/simple")
    for name in ("UV_FIND_LINKS", "UV_INDEX_URL", "UV_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    log: list[str] = []
    names = ("UV_FIND_LINKS", "UV_INDEX_URL", "UV_CACHE_DIR")
    code = f"import os; print(*(os.environ[n] for n in {names!r}))"
    done = compat_envs.run([sys.executable, "-c", code], log)
    assert done.stdout.split() == [
        "/srv/wheels,/srv/more",
        "https://mirror.example/simple",
        str(compat_envs.ENVS / ".uv-cache"),
    ]
    assert ".venv-compat/" in (PROJECT / ".gitignore").read_text().splitlines()
    assert re.search(r"\(\d+\.\d s\)", log[0]), log[0]
