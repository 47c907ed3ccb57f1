"""The same calls to Google ADK's ``LocalEnvironment`` and to the drop-in, on twin trees: every
result must be equal (host paths spelled ``<base>``), or the difference must be one of
``DIFFERENCES``: a refusal for safety (the drop-in refused, or its sandboxed command could not
see, what the original reached outside) or a behaviour docs/integrations.md lists."""

from __future__ import annotations

import asyncio
import os
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("google.adk.environment")

from google.adk.environment import LocalEnvironment as Original

from safefs.integrations.google_adk import LocalEnvironment as DropIn
from tests.integrations import twin_tree

DOCS = Path(__file__).parents[2] / "docs" / "integrations.md"
REFUSED = "refused"
SECRET = "secret\n"

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_file", {"path": "a.txt"}),
    ("read_file", {"path": "sub/b.txt"}),
    ("read_file", {"path": "crlf.txt"}),
    ("read_file", {"path": "bin.dat"}),
    ("read_file", {"path": "missing"}),
    ("read_file", {"path": "sub"}),
    ("read_file", {"path": "rel-link"}),
    ("read_file", {"path": "{root}/a.txt"}),
    ("read_file", {"path": "sub/../a.txt"}),
    ("write_file", {"path": "new/deep/c.txt", "content": "new\r\n"}),
    ("read_file", {"path": "new/deep/c.txt"}),
    ("write_file", {"path": "new/deep/c.txt", "content": b"\x00\xff"}),
    ("read_file", {"path": "new/deep/c.txt"}),
    ("write_file", {"path": "{root}/abs.txt", "content": "abs"}),
    ("read_file", {"path": "abs.txt"}),
    ("write_file", {"path": "sub", "content": "x"}),
    ("write_file", {"path": "a.txt/x", "content": "x"}),
    ("execute", {"command": "echo out; echo err >&2; exit 3"}),
    ("execute", {"command": "cat a.txt new/deep/c.txt | wc -c; ls sub"}),
    ("execute", {"command": "pwd"}),
    ("execute", {"command": 'printf %s "$SAFEFS_ADK_VAR"'}),
    ("execute", {"command": "echo made > made.txt"}),
    ("read_file", {"path": "made.txt"}),
    ("execute", {"command": "nonexistent-program-xyz"}),
    # Leading outside: both refuse with the same text (the original judges the resolved path).
    ("read_file", {"path": "../outside/secret"}),
    ("read_file", {"path": "out-link/secret"}),
    ("read_file", {"path": "{base}/outside/secret"}),
    ("write_file", {"path": "out-link/planted", "content": "x"}),
    ("write_file", {"path": "../outside/planted", "content": "x"}),
    # A command reaching outside: the original's reads and writes there; the sandbox's cannot.
    ("execute", {"command": "cat ../outside/secret"}),
    ("execute", {"command": "echo x > ../outside/planted-by-command"}),
    # A timeout: both stop the command; the exit codes differ.
    ("execute", {"command": "sleep 5", "timeout": 0.3}),
    # An absolute symlink that leads inside.
    ("read_file", {"path": "abs-link"}),
]

DIFFERENCES: dict[int, str] = {
    4: "Error texts name the path as the agent gave it",
    5: "Error texts name the path as the agent gave it",
    15: "Error texts name the path as the agent gave it",
    16: "Error texts name the path as the agent gave it",
    23: "A missing program exits 127 as in the original, with the shell's words",
    29: REFUSED,
    30: REFUSED,
    31: "A command stopped by its timeout reports `exit_code=-9`",
}


def _tree(base: Path) -> Path:
    root = twin_tree.build(base)
    os.chmod(root, 0o777)  # a sandboxed command runs as uid 65534 when the tests run as root
    return root


def _hide(value: Any, base: Path) -> Any:
    if isinstance(value, str):
        return value.replace(str(base), "<base>")
    if isinstance(value, bytes):
        return value.replace(os.fsencode(base), b"<base>")
    return value


async def _call(environment: Any, base: Path, name: str, args: dict[str, Any]) -> tuple[Any, ...]:
    filled = {
        k: v.format(root=base / "ws", base=base) if isinstance(v, str) and k == "path" else v
        for k, v in args.items()
    }
    try:
        result = await getattr(environment, name)(**filled)
    except Exception as exc:
        return ("raises", type(exc).__name__, _hide(str(exc), base))
    if name == "execute":
        fields = (result.exit_code, result.stdout, result.stderr, result.timed_out)
        return ("returns", *(_hide(f, base) for f in fields))
    return ("returns", _hide(result, base))


async def _run_all(cls: Any, base: Path) -> list[tuple[Any, ...]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ADK marks LocalEnvironment experimental
        environment = cls(working_dir=_tree(base), env_vars={"SAFEFS_ADK_VAR": "from env_vars"})
    await environment.initialize()
    try:
        return [await _call(environment, base, name, args) for name, args in CALLS]
    finally:
        await environment.close()


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Any, Any]]:
    bases = tmp_path_factory.mktemp("original"), tmp_path_factory.mktemp("safefs")
    results = [asyncio.run(_run_all(cls, base)) for cls, base in zip((Original, DropIn), bases, strict=True)]
    assert sorted(os.listdir(bases[1] / "outside")) == ["secret"], "the drop-in touched nothing outside"
    return list(zip(*results, strict=True))


@pytest.mark.parametrize("index", range(len(CALLS)), ids=[f"{i}-{n}" for i, (n, _) in enumerate(CALLS)])
def test_each_call_agrees_or_differs_as_listed(outcomes: list[tuple[Any, Any]], index: int) -> None:
    original, drop_in = outcomes[index]
    expected = DIFFERENCES.get(index)
    if expected is None:
        assert drop_in == original
    elif expected == REFUSED:
        assert original[0] == "returns" and original[1] == 0, "the original's command reached outside"
        assert drop_in[0] == "returns" and drop_in[1] != 0 and SECRET not in drop_in[2]
    else:
        assert drop_in != original
        assert expected in " ".join(DOCS.read_text().split()), f"docs/integrations.md must list: {expected}"


def test_the_refusal_is_the_original_text(outcomes: list[tuple[Any, Any]]) -> None:
    """Where both refuse, the drop-in says it in the original's own words."""
    assert outcomes[24][1] == ("raises", "ValueError", "Path escapes working directory: ../outside/secret")


def test_a_missing_program_exits_127_under_both(outcomes: list[tuple[Any, Any]]) -> None:
    assert outcomes[23][0][1] == outcomes[23][1][1] == 127


# -- the invariant, over paths built from a tree's names --------------------------------------

COMES_BACK = "**A path that leaves the directory and comes back in is refused**"
LEXICAL_DOTDOT = "**`..` after a name that is no directory is an error**"
COMPONENTS = ["a.txt", "sub", "b.txt", "..", ".", "rel-link", "out-link", "secret", "outside", "ws", ""]


@pytest.fixture(scope="module")
def twin_environments(tmp_path_factory: pytest.TempPathFactory) -> Any:
    bases = tmp_path_factory.mktemp("p-original"), tmp_path_factory.mktemp("p-safefs")
    loop = asyncio.new_event_loop()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        environments = [cls(working_dir=_tree(b)) for cls, b in zip((Original, DropIn), bases, strict=True)]
    for environment in environments:
        loop.run_until_complete(environment.initialize())
    yield loop, environments, bases
    for environment in environments:
        loop.run_until_complete(environment.close())
    loop.close()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.sampled_from(COMPONENTS), min_size=1, max_size=5), absolute=st.booleans())
def test_a_read_never_leaves_the_root_and_agrees_inside(
    twin_environments: Any, parts: list[str], absolute: bool
) -> None:
    """Whatever path is asked, the drop-in returns a file of its working directory or raises;
    it never returns the outside secret, and it reads what the original reads inside, except
    where ``..`` follows a name that is no directory (listed in docs/integrations.md)."""
    loop, (original, drop_in), bases = twin_environments
    rel = "/".join(parts)
    results = []
    for environment, base in zip((original, drop_in), bases, strict=True):
        path = f"{base}/ws/{rel}" if absolute else rel
        try:
            results.append(loop.run_until_complete(environment.read_file(path)))
        except (ValueError, OSError) as exc:
            results.append(type(exc))
    from_original, from_drop_in = results
    assert from_drop_in != SECRET.encode()
    if isinstance(from_original, bytes) and from_original != SECRET.encode():
        if ".." in parts and from_drop_in in (NotADirectoryError, FileNotFoundError):
            assert LEXICAL_DOTDOT in " ".join(DOCS.read_text().split())
        elif ".." in parts and from_drop_in is ValueError:
            assert COMES_BACK in " ".join(DOCS.read_text().split())
        else:
            assert from_drop_in == from_original
    if isinstance(from_drop_in, bytes):
        assert from_original == from_drop_in
