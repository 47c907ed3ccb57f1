"""compat.toml declares every integration's range and tests, and the runner reads it right.

The runner itself (tests/compat_envs.py) builds virtualenvs and is run by `make test` (oldest)
and `make test-latest` (newest); here its parts that decide what to install and how to report
are checked, on the real compat.toml and on planted ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.compat_envs import (
    PROJECT,
    Integration,
    Outcome,
    junit_failures,
    load,
    lower_bound,
    pinned,
    report,
    same_release,
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
    """.venv is the newest end: each upstream's pin lies in its declared range."""
    pins = pinned()
    for integration in load():
        assert integration.requirement().specifier.contains(pins[integration.key]), integration


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
    text = report(
        [Outcome(anthropic, "newest", "9.9.9", "failed", counts, failures)], {"anthropic": "2.16.0"}
    )
    row = "| anthropic | newest | `anthropic<3,>=2.15` | 9.9.9 | 2.16.0 | failed "
    assert row + "(3 tests, 1 failures, 1 skipped) |" in text
    assert "- tests/anthropic/test_differential.py::test_b: AssertionError" in text


def test_a_table_reads_its_range_from_the_project_it_names() -> None:
    (pathspec,) = [i for i in load() if i.name == "pathspec"]
    assert pathspec.project == "agent" and pathspec.extra == ""
    assert pathspec.requirement().name == "pathspec"
    assert Integration("x", "", "pathspec", (), "agent").where == "agent/pyproject.toml, dependencies"
