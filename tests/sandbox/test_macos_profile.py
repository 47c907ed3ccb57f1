"""The macOS profile is static data shipped with the package, denies by default and names every
mach service and sysctl it allows; and bash on macOS is refused until the profile is tested there
(this project has no macOS machine, so the refusal is checked with the platform name set)."""

from __future__ import annotations

import re
import sys
import tempfile

import pytest

import safefs
from safefs.sandbox import Refused, make_sandbox
from safefs.sandbox.macos import UNTESTED, profile, profile_arguments

Form = list["Form | str"]


def parse(text: str) -> Form:
    """The SBPL text as nested lists (comments dropped); ValueError when unbalanced."""
    text = re.sub(r";[^\n]*", "", text)
    tokens = re.findall(r'\(|\)|"(?:[^"\\]|\\.)*"|#"(?:[^"\\]|\\.)*"|[^\s()]+', text)
    stack: list[Form] = [[]]
    for token in tokens:
        if token == "(":
            stack.append([])
        elif token == ")":
            if len(stack) == 1:
                raise ValueError("unbalanced )")
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(token)
    if len(stack) != 1:
        raise ValueError("unbalanced (")
    return stack[0]


def forms(tree: Form, operation: str) -> list[Form]:
    """Every ``(allow <operation> ...)`` form, however deep."""
    found = []
    for item in tree:
        if isinstance(item, list):
            if item[:2] == ["allow", operation]:
                found.append(item)
            found += forms(item, operation)
    return found


def test_the_profile_is_package_data_and_denies_by_default() -> None:
    tree = parse(profile())
    assert tree[0] == ["version", "1"]
    assert tree[1] == ["deny", "default"]


@pytest.mark.parametrize("operation", ["mach-lookup", "sysctl-read"])
def test_every_allowance_is_an_allow_list(operation: str) -> None:
    allowed = forms(parse(profile()), operation)
    assert allowed, f"no {operation} allowed at all"
    for form in allowed:
        filters = form[2:]
        assert filters, f"a blanket (allow {operation})"
        for entry in filters:
            assert isinstance(entry, list)
            assert entry[0] in ("global-name", "sysctl-name", "sysctl-name-prefix"), entry


def test_the_network_is_allowed_only_by_parameter() -> None:
    tree = parse(profile())
    top_level_network = [f for f in tree if isinstance(f, list) and f[:2] == ["allow", "network*"]]
    assert top_level_network == []
    assert profile_arguments("/w", "/t", allow_network=False)[-1] == "NETWORK=0"


def test_bash_is_refused_on_macos_until_tested(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    with tempfile.TemporaryDirectory() as d, safefs.Root(d) as root:
        sandbox = make_sandbox(root)
    assert isinstance(sandbox, Refused)
    assert UNTESTED in sandbox.refusal
