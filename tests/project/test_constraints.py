"""constraints.txt pins the whole dependency tree the development environment installs.

The tree is read from the installed metadata: the requirements of ``safefs`` with the extras the
Makefile installs and of the distributions beside it, followed transitively, each marker evaluated
for this interpreter. Every distribution reached must be pinned with ``==``, and (since ``.venv`` is
installed with ``-c constraints.txt``) installed at exactly that version.
"""

from __future__ import annotations

import importlib.metadata as md
import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PROJECT = Path(__file__).resolve().parents[2]
CONSTRAINTS = PROJECT / "constraints.txt"
OURS = {"safefs", "safefs-agent", "safefs-bench"}


def makefile_variable(name: str) -> str:
    text = (PROJECT / "Makefile").read_text()
    found = re.search(rf"^{name}\s*:=\s*(.+)$", text, re.MULTILINE)
    assert found, name
    return found.group(1).strip()


def pins() -> dict[str, str]:
    pinned: dict[str, str] = {}
    for line in CONSTRAINTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        assert sep and version.strip(), f"not an exact pin: {line!r}"
        key = canonicalize_name(name)
        assert key not in pinned, f"pinned twice: {name}"
        pinned[key] = version.strip()
    return pinned


def dependency_tree(roots: dict[str, set[str]]) -> set[str]:
    """Every distribution the requirements of ``roots`` (name: extras) reach, transitively."""
    seen: set[str] = set()
    todo: list[tuple[str, frozenset[str]]] = [(name, frozenset(extras)) for name, extras in roots.items()]
    visited: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, extras = todo.pop()
        if (name, extras) in visited:
            continue
        visited.add((name, extras))
        seen.add(name)
        for text in md.requires(name) or ():
            req = Requirement(text)
            environments = [{"extra": e} for e in extras] or [{"extra": ""}]
            if req.marker is not None and not any(req.marker.evaluate(env) for env in environments):
                continue
            todo.append((canonicalize_name(req.name), frozenset(req.extras)))
    return seen


def installed_tree() -> set[str]:
    extras = set(makefile_variable("EXTRAS").split(","))
    try:
        return dependency_tree({"safefs": extras, "safefs-agent": set(), "safefs-bench": {"plot"}})
    except md.PackageNotFoundError as exc:
        pytest.skip(f"not the development environment: {exc} is not installed")


def test_every_line_is_an_exact_pin_of_a_distinct_distribution() -> None:
    assert pins()


def test_the_makefile_installs_with_the_constraints() -> None:
    text = (PROJECT / "Makefile").read_text()
    assert re.search(r"pip install .*-c \$\(CONSTRAINTS\) \$\(LOCAL_PROJECTS\)", text)
    assert makefile_variable("CONSTRAINTS") == "constraints.txt"


def test_every_dependency_is_pinned_and_installed_at_its_pin() -> None:
    pinned = pins()
    tree = installed_tree() - OURS
    assert tree, "the dependency tree is empty"
    missing = sorted(tree - set(pinned))
    assert not missing, f"not pinned in constraints.txt (run `make constraints`): {missing}"
    drifted = {name: (md.version(name), pinned[name]) for name in tree if md.version(name) != pinned[name]}
    assert not drifted, f"installed (left) differs from the pin (right): {drifted}"


def test_our_own_distributions_are_not_pinned() -> None:
    assert not OURS & set(pins())
