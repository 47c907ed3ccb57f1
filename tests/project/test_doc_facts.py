"""The numbers and lists the docs state, each against the place it comes from.

How many ways to use safefs the README counts; which extras ``.venv`` holds (the Makefile's
``EXTRAS``) and which it leaves to environments of their own (compat.toml's ``own_env`` tables);
how many times ``make test-long`` multiplies the link invariant's calls and the race window; the
race window ``make check`` sets; the make targets CONTRIBUTING names; the minutes ``make check``
and ``make test`` take; the install commands the docs and the commands' own hints give; the
agent frameworks each list names; the test directories the architecture names; the contest's
totals and ratios the README quotes from docs/benchmarks.md.
"""

from __future__ import annotations

import re
import tomllib
from fractions import Fraction
from pathlib import Path

import pytest

from agent.extras import INSTALL as AGENT_INSTALL
from safefs.mcp.cli import MISSING_EXTRA

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
CONTRIBUTING = REPO / "CONTRIBUTING.md"
MAKEFILE = REPO / "Makefile"
NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
# The longest make check and make test may take on a 2-core machine.
CHECK_BUDGET_MINUTES = 5
TEST_BUDGET_MINUTES = 60


def text(path: Path) -> str:
    return path.read_text()


def section(path: Path, heading: str) -> str:
    """The text under the first heading that starts with ``heading``, up to the next heading."""
    found = re.search(rf"^#+ {re.escape(heading)}.*?$(.*?)(?=^#+ |\Z)", text(path), re.M | re.S)
    assert found, f"{path.name} has no heading {heading!r}"
    return found.group(1)


def makefile_variable(name: str) -> str:
    found = re.search(rf"^{name}\s*:?=\s*(.+)$", text(MAKEFILE), re.M)
    assert found, f"the Makefile sets no {name}"
    return found.group(1).strip()


def recipe(target: str) -> str:
    found = re.search(rf"^{re.escape(target)}:.*?\n((?:\t.*\n)+)", text(MAKEFILE), re.M)
    assert found, f"the Makefile has no recipe for {target}"
    return found.group(1)


def pyproject() -> dict[str, object]:
    with open(REPO / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def optional_dependencies() -> dict[str, list[str]]:
    project = pyproject()["project"]
    assert isinstance(project, dict)
    extras: dict[str, list[str]] = project["optional-dependencies"]
    return extras


def own_env_extras() -> set[str]:
    with open(REPO / "compat.toml", "rb") as f:
        tables = tomllib.load(f)
    return {table["extra"] for table in tables.values() if table.get("own_env")}


def venv_extras() -> set[str]:
    return set(makefile_variable("EXTRAS").split(","))


def backticked(fragment: str) -> set[str]:
    return set(re.findall(r"`([^`]+)`", fragment))


def squashed(name: str) -> str:
    """A framework's name as a comparison key: "Google ADK", "google-adk" -> "googleadk"."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


# -- counts --------------------------------------------------------------------------------------


def test_the_readme_counts_its_ways_to_use_safefs() -> None:
    heading = re.search(r"^## (\w+) ways to use it$", text(README), re.M)
    assert heading, "README has no '## N ways to use it' heading"
    items = re.findall(r"^\d+\. \*\*", section(README, f"{heading.group(1)} ways to use it"), re.M)
    assert NUMBERS[heading.group(1).lower()] == len(items), (heading.group(1), len(items))


# -- extras --------------------------------------------------------------------------------------


def test_every_extra_is_in_dot_venv_or_in_an_environment_of_its_own() -> None:
    declared = set(optional_dependencies())
    venv, own = venv_extras(), own_env_extras()
    assert venv & own == set()
    # agent: safefs-agent comes from ./agent, installed beside safefs in .venv (LOCAL_PROJECTS).
    assert declared - venv - own == {"agent"}, sorted(declared - venv - own)
    assert "./agent" in makefile_variable("LOCAL_PROJECTS")


def test_the_readme_and_contributing_name_the_extras_of_dot_venv() -> None:
    quick_start = section(README, "Quick start")
    stated = re.search(r"with the extras\s+(.*?), beside it", quick_start, re.S)
    assert stated, "the README's quick start names no extras"
    assert backticked(stated.group(1)) == venv_extras()
    setting_up = section(CONTRIBUTING, "Setting up")
    stated = re.search(r"safefs with the\s+(.*?) extras", setting_up, re.S)
    assert stated, "CONTRIBUTING names no extras of .venv"
    assert backticked(stated.group(1)) == venv_extras()
    frameworks = re.search(r"agent frameworks' extras \((.*?)\)", setting_up, re.S)
    assert frameworks, "CONTRIBUTING names no framework extras"
    assert backticked(frameworks.group(1)) == own_env_extras()


def test_no_doc_claims_dot_venv_holds_every_extra() -> None:
    for path in (README, CONTRIBUTING, MAKEFILE, *sorted((REPO / "docs").glob("*.md"))):
        found = re.findall(r"(?:all its|every) extras?\b", text(path))
        assert found == [], f"{path.relative_to(REPO)}: {found}"


# -- multipliers and windows ---------------------------------------------------------------------


def default_of(module: Path, variable: str) -> str:
    found = re.search(rf"os\.environ\.get\(\"{variable}\", \"([^\"]+)\"\)", text(module))
    assert found, f"{module.name} reads no {variable}"
    return found.group(1)


def makefile_setting(target: str, variable: str) -> str:
    found: list[str] = re.findall(rf"\b{variable}=(\S+)", recipe(target))
    assert found, f"make {target} sets no {variable}"
    return found[0]


def test_make_test_long_multiplies_as_the_docs_say() -> None:
    invariant = REPO / "tests" / "safefs" / "test_link_invariant.py"
    calls = Fraction(
        int(makefile_setting("test-long", "SAFEFS_LINK_EXAMPLES"))
        * int(makefile_setting("test-long", "SAFEFS_LINK_STEPS")),
        int(default_of(invariant, "SAFEFS_LINK_EXAMPLES")) * int(default_of(invariant, "SAFEFS_LINK_STEPS")),
    )
    race_seconds = makefile_setting("test-long", "SAFEFS_RACE_SECONDS")
    window = Fraction(race_seconds) / Fraction(
        default_of(REPO / "tests" / "race_window.py", "SAFEFS_RACE_SECONDS")
    )
    row = re.search(r"^\| `make test-long` \|(.*)$", text(README), re.M)
    assert row, "the README describes no make test-long"
    assert re.findall(r"(\d+) times", row.group(1)) == [str(calls), str(window)], row.group(1)
    assert f"SAFEFS_RACE_SECONDS={race_seconds}`" in row.group(1)
    row = re.search(r"^\| `make test-long` \|(.*)$", text(CONTRIBUTING), re.M)
    assert row, "CONTRIBUTING describes no make test-long"
    assert re.findall(r"(\d+) times", row.group(1)) == [str(calls), str(window)], row.group(1)
    comment = comment_above("test-long")
    assert f"with {calls} times the calls" in comment and f"{window} times the default" in comment, comment


def test_every_race_test_takes_its_window_from_race_window() -> None:
    # make test-long lengthens the modules that import tests/race_window.py: no race test may
    # keep a window of its own.
    own = {
        str(path.relative_to(REPO))
        for path in (REPO / "tests").rglob("test_*race*.py")
        if "from tests.race_window import" not in text(path)
    }
    # The contest's race harness tested on its own (its arguments, 0.1 s runs): no attack to lengthen.
    assert own == {"tests/contest/test_race.py"}


def test_make_check_shortens_the_race_window_as_the_docs_say() -> None:
    seconds = makefile_variable("CHECK_RACE_SECONDS")
    assert "SAFEFS_RACE_SECONDS=$(CHECK_RACE_SECONDS)" in recipe("check")
    assert '-m "not slow"' in recipe("check")
    for path in (README, CONTRIBUTING):
        row = re.search(r"^\| `make check` \|(.*)$", text(path), re.M)
        assert row, f"{path.name} describes no make check"
        assert f"`SAFEFS_RACE_SECONDS={seconds}`" in row.group(1), row.group(1)


def test_a_bare_pytest_leaves_the_benchmarks_to_make_bench_and_make_test() -> None:
    options = pyproject()["tool"]
    assert isinstance(options, dict)
    assert options["pytest"]["ini_options"]["testpaths"] == ["tests"]
    assert "pytest benchmarks" in recipe("bench")
    assert "pytest --benchmark-disable tests benchmarks" in recipe("test")


# -- targets -------------------------------------------------------------------------------------


def phony_targets() -> set[str]:
    phony = re.search(r"^\.PHONY:(.*)$", text(MAKEFILE), re.M)
    assert phony is not None
    return set(phony.group(1).split())


def test_every_target_contributing_names_exists() -> None:
    named = set(re.findall(r"^\| `make ([\w-]+)` \|", text(CONTRIBUTING), re.M))
    assert {"check", "test", "lint"} <= named
    assert named <= phony_targets(), sorted(named - phony_targets())


def test_make_lint_does_what_contributing_says() -> None:
    row = re.search(r"^\| `make lint` \|(.*)$", text(CONTRIBUTING), re.M)
    assert row
    commands = [line.strip().removeprefix("$(PY) -m ") for line in recipe("lint").splitlines()]
    assert commands == ["ruff check .", "ruff format --check .", "mypy"]
    for said in ("`ruff check .`", "`ruff format --check .`", "`mypy --strict`"):
        assert said in row.group(1)
    options = pyproject()["tool"]
    assert isinstance(options, dict) and options["mypy"]["strict"] is True


def test_make_test_is_what_ci_runs() -> None:
    run = text(REPO / ".ci" / "run")
    assert [line for line in run.splitlines() if line and not line.startswith("#")][-1] == "make test"


# -- durations -----------------------------------------------------------------------------------


def comment_above(target: str) -> str:
    """The comment block above ``target:`` in the Makefile (variable lines between skipped)."""
    lines = text(MAKEFILE).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    block: list[str] = []
    for line in reversed(lines[:at]):
        if line.startswith("#"):
            block.insert(0, line.removeprefix("#").strip())
        elif re.match(r"^[A-Z_]+ *:?=", line) and not block:
            continue
        else:
            break
    return " ".join(block)


def minutes_stated(path: Path, target: str) -> set[int]:
    if path == MAKEFILE:
        source = comment_above(target)
    else:
        row = re.search(rf"^\| `make {target}` \|(.*)$", text(path), re.M)
        assert row, f"{path.name} describes no make {target}"
        source = row.group(1)
    return {int(m) for m in re.findall(r"(\d+) minutes", source)}


@pytest.mark.parametrize(
    ("target", "budget"), [("check", CHECK_BUDGET_MINUTES), ("test", TEST_BUDGET_MINUTES)]
)
def test_the_docs_state_one_duration_per_target_within_its_budget(target: str, budget: int) -> None:
    stated = [minutes_stated(path, target) for path in (README, CONTRIBUTING, MAKEFILE)]
    assert all(len(s) == 1 for s in stated), stated
    assert stated[0] == stated[1] == stated[2], stated
    assert next(iter(stated[0])) <= budget


# -- install hints -------------------------------------------------------------------------------

INSTALL = re.compile(r"pip install(?: --\S+(?: \S+)?)* ((?:'[^']+'|\S+)(?: (?:'[^']+'|\./\S+|\.))*)")


def install_commands(source: str) -> list[list[str]]:
    return [[a.strip("'`)") for a in m.group(1).split()] for m in INSTALL.finditer(source)]


def docs_and_hints() -> dict[str, str]:
    sources = {str(p.relative_to(REPO)): text(p) for p in (README, *sorted((REPO / "docs").glob("*.md")))}
    sources["safefs-mcp's hint"] = MISSING_EXTRA
    sources.update({f"safefs-agent's hint ({extra})": hint for extra, hint in AGENT_INSTALL.items()})
    return sources


def test_every_install_command_names_what_exists() -> None:
    extras = optional_dependencies()
    bench_extras = tomllib.loads(text(REPO / "safefs_bench" / "pyproject.toml"))["project"]
    checked = 0
    for where, source in docs_and_hints().items():
        for words in install_commands(source):
            for word in words:
                target, _, named = word.partition("[")
                if target in ("pandas", "pyarrow") or target.startswith("-"):
                    continue
                assert target in ("safefs", ".", "./", "./agent", "./safefs_bench"), (where, word)
                assert (REPO / target).exists() or target == "safefs", (where, word)
                wanted = set(named.rstrip("]").split(",")) - {""}
                known = (
                    set(bench_extras["optional-dependencies"]) if target == "./safefs_bench" else set(extras)
                )
                assert wanted <= known, (where, word, sorted(wanted - known))
                checked += 1
    assert checked > 20


def test_no_command_tells_users_to_install_from_an_index() -> None:
    # safefs is on no package index: a hint names a clone or a wheel (--find-links), never a bare
    # `pip install 'safefs[...]'`.
    for where, source in {"safefs-mcp": MISSING_EXTRA, **AGENT_INSTALL}.items():
        for match in re.finditer(r"pip install ([^;]*)", source):
            assert "safefs[" not in match.group(1) or "--find-links" in match.group(1), (where, source)


def readme_command_rows() -> dict[str, str]:
    rows = re.findall(r"^\| `(safefs-[\w-]+)[^`]*` \| `(pip install [^`]+)` \|", text(README), re.M)
    return dict(rows)


def test_the_readme_command_table_installs_each_command_with_what_it_needs() -> None:
    extras = optional_dependencies()
    rows = readme_command_rows()
    assert {"safefs-mcp", "safefs-agent", "safefs-extract", "safefs-bench"} <= set(rows)
    for command, install in rows.items():
        for word in install_commands(install)[0]:
            named = word.partition("[")[2].rstrip("]")
            # An extra named as what brings a command must bring something: an empty one is noise.
            assert not named or extras.get(named), (command, install)
    assert rows["safefs-mcp"] in MISSING_EXTRA
    assert rows["safefs-agent"].removeprefix("pip install ") in AGENT_INSTALL["agent"]


# -- lists ---------------------------------------------------------------------------------------


def test_every_list_of_agent_frameworks_names_each_one() -> None:
    own = {squashed(extra) for extra in own_env_extras()}
    ways = section(README, "Five ways to use it") if "Five ways" in text(README) else ""
    fifth = re.search(r"^5\. (.*?)(?=^\S|\Z)", ways, re.M | re.S)
    assert fifth, "the README's fifth way is missing"
    assert {squashed(e) for e in re.findall(r"`(?:pip install '\./)?\[([\w-]+)\]", fifth.group(1))} == own
    lists = {
        "README's documentation list": re.search(r"docs/integrations\.md\): [^(]*\(([^)]*)\)", text(README)),
        "CONTRIBUTING's tests/integrations row": re.search(
            r"^\| `tests/integrations` \| the agent-framework drop-ins \(([^)]*)\)", text(CONTRIBUTING), re.M
        ),
    }
    for where, found in lists.items():
        assert found, f"{where}: no list of frameworks"
        names = {squashed(n) for n in re.split(r",\s*(?:and\s+)?|\s+and\s+", found.group(1))}
        assert names == own, (where, sorted(names ^ own))


def test_the_architecture_names_every_test_directory() -> None:
    row = re.search(
        r"^\| `tests/` \| one directory per package: ([^;]*);", text(REPO / "docs" / "architecture.md"), re.M
    )
    assert row, "the architecture table has no tests/ row"
    present = {p.parent.name for p in (REPO / "tests").glob("*/__init__.py")}
    named = backticked(re.sub(r"\([^)]*\)", "", row.group(1)))  # "(for `safefs_bench`)" names no directory
    assert named == present, sorted(backticked(row.group(1)) ^ present)


def _contest_rows(heading: str) -> dict[str, list[str]]:
    """The cells of a generated table of docs/benchmarks.md, by strategy."""
    table = section(REPO / "docs" / "benchmarks.md", heading)
    rows = re.findall(r"^\| (\S+) \| (.+) \|$", table, re.M)
    return {name: [cell.strip() for cell in cells.split("|")] for name, cells in rows if name != "strategy"}


def test_the_readme_quotes_the_contest_as_measured() -> None:
    escapes = {
        name: tuple(int(n.replace(",", "")) for n in cells[0].split(" / "))
        for name, cells in _contest_rows("Escapes under a swapping attacker").items()
    }
    ours = {name: counts for name, counts in escapes.items() if name.startswith("safefs-")}
    originals = {
        name: counts
        for name, counts in escapes.items()
        if not name.startswith("safefs-") and name not in ("unconfined", "landlock")
    }
    depth = _contest_rows("Reading a 4 KiB file: µs against path depth")["safefs-openat2"]
    ratios = [re.search(r"\(([\d.]+)x\)", cell).group(1) for cell in (depth[0], depth[-1])]  # type: ignore[union-attr]
    readme = " ".join(text(README).split())

    def total(rows: dict[str, tuple[int, ...]], column: int) -> str:
        return f"{sum(counts[column] for counts in rows.values()):,}"

    assert (
        f"the {len(ours)} safefs strategies let out {total(ours, 0)} of {total(ours, 1)} raced reads "
        f"and writes, and realpath-then-open with the {len(originals) - 1} original tools they "
        f"replace let out {total(originals, 0)} of {total(originals, 1)}"
    ) in readme
    quoted = f"{ratios[0]} times an unconfined `open()` at depth 1 and {ratios[1]} times at depth 64"
    assert quoted in readme
