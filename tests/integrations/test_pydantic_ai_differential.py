"""The same calls to pydantic-ai's ``LocalWorkspaceBackend`` and to the drop-in, on twin trees:
every result must be equal (host paths spelled ``<root>``), or the difference must be one of
``DIFFERENCES``: a refusal for safety (the drop-in raised ``PermissionError`` where the original
reached outside the workspace) or a behaviour docs/integrations.md lists."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai.workspaces")

from pydantic_ai.workspaces import FileEntry
from pydantic_ai.workspaces import LocalWorkspaceBackend as Original

from safefs.integrations.pydantic_ai import LocalWorkspaceBackend as DropIn
from tests.integrations.support import REFUSED, assert_as_listed

# (method, arguments); a "{root}" or "{outside}" in an argument is the tree's own path.
CALLS: list[tuple[str, tuple[Any, ...]]] = [
    ("read_bytes", ("{root}/a.txt",)),
    ("read_bytes", ("{root}/sub/b.txt",)),
    ("read_bytes", ("{root}/missing",)),
    ("read_bytes", ("{root}/sub",)),
    ("read_bytes", ("{root}/rel-link",)),
    ("read_bytes", ("{root}/sub/../a.txt",)),
    ("read_bytes", ("relative.txt",)),
    ("write_bytes", ("{root}/new/deep/c.txt", b"new")),
    ("read_bytes", ("{root}/new/deep/c.txt",)),
    ("write_bytes", ("{root}/rel-link", b"through")),
    ("read_bytes", ("{root}/a.txt",)),
    ("write_bytes", ("{root}/sub", b"x")),
    ("write_bytes", ("{root}/a.txt/x", b"x")),
    ("stat", ("{root}/a.txt",)),
    ("stat", ("{root}/sub",)),
    ("stat", ("{root}/missing",)),
    ("list_dir", ("{root}",)),
    ("list_dir", ("{root}/sub",)),
    ("list_dir", ("{root}/a.txt",)),
    ("make_dir", ("{root}/made/x",)),
    ("make_dir", ("{root}/a.txt",)),
    ("exists", ("{root}/a.txt",)),
    ("exists", ("{root}/nothing",)),
    ("realpath", ("{root}/rel-link",)),
    ("realpath", ("{root}/sub/../missing/x",)),
    ("remove", ("{root}/made",)),
    ("remove", ("{root}/rel-link",)),
    ("remove", ("{root}",)),
    ("run", (["sh", "-c", "printf out; printf err >&2; exit 3"],)),
    ("run", (["sh", "-c", "ls; cat a.txt"],)),
    ("run", (["no-such-program-here"],)),
    ("run", ("echo $SAFEFS_DIFF", True, {"SAFEFS_DIFF": "set"})),
    ("run", (["sh", "-c", "env | cut -d= -f1 | grep -v '^PWD$' | sort"],)),
    # Outside the workspace: the original reaches it, the drop-in refuses.
    ("read_bytes", ("{outside}/secret",)),
    ("read_bytes", ("{root}/../outside/secret",)),
    ("read_bytes", ("{root}/out-link/secret",)),
    ("write_bytes", ("{outside}/planted", b"x")),
    ("write_bytes", ("{root}/out-link/planted", b"x")),
    ("stat", ("{outside}/secret",)),
    ("list_dir", ("{outside}",)),
    ("exists", ("{outside}/secret",)),
    ("realpath", ("{root}/out-link",)),
    ("make_dir", ("{outside}/made",)),
    ("remove", ("{outside}/secret",)),
    ("remove", ("{base}",)),
    ("run", (["cat", "{outside}/secret"],)),
    # An absolute symlink that leads inside: followed, as the original follows it.
    ("read_bytes", ("{root}/abs-link",)),
]

DIFFERENCES: dict[int, str] = {
    16: "listed with `is_dir=False` and `size=None`",
    32: "sets `TMPDIR`",
    33: REFUSED,
    34: REFUSED,
    35: REFUSED,
    36: REFUSED,
    37: REFUSED,
    38: REFUSED,
    39: REFUSED,
    40: REFUSED,
    41: REFUSED,
    42: REFUSED,
    43: REFUSED,
    # the kernel sandbox: the outside directory is not readable by the command
    45: "**Commands run in the kernel sandbox**",
}


def _tree(base: Path) -> Path:
    root, outside = base / "ws", base / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "a.txt").write_bytes(b"alpha\n")
    (root / "sub" / "b.txt").write_bytes(b"beta\n")
    (root / "rel-link").symlink_to("a.txt")
    (root / "out-link").symlink_to("../outside")
    (root / "abs-link").symlink_to(root / "a.txt")
    (outside / "secret").write_bytes(b"secret\n")
    return root


def _outcome(backend: Any, base: Path, method: str, args: tuple[Any, ...]) -> Any:
    def fill(a: Any) -> Any:
        if isinstance(a, str):
            return a.format(root=base / "ws", outside=base / "outside", base=base)
        if isinstance(a, list):
            return [fill(x) for x in a]
        return a

    filled = [fill(a) for a in args]
    kwargs: dict[str, Any] = {}
    if method == "run" and len(filled) > 1:
        kwargs = {"shell": filled[1], "env": filled[2]}
        filled = filled[:1]
    try:
        value = asyncio.run(getattr(backend, method)(*filled, **kwargs))
    except Exception as exc:
        return ("raises", "PermissionError" if isinstance(exc, PermissionError) else type(exc).__name__)
    return ("returns", _plain(value, str(base)))


def _plain(value: Any, base: str) -> Any:
    if isinstance(value, FileEntry):
        return (value.name, value.path.replace(base, "<base>"), value.is_dir, value.size)
    if isinstance(value, list | tuple):
        return [_plain(v, base) for v in value]
    if hasattr(value, "exit_code"):
        return (value.exit_code, value.stdout.replace(base, "<base>"), _stderr(value.exit_code, value.stderr))
    if isinstance(value, str):
        return value.replace(base, "<base>")
    return value


def _stderr(exit_code: int, text: str) -> str:
    # 127 is "no such program": the original spawns it itself and says "x: command not found";
    # in the sandbox the shell looks it up and says it in its own words (docs: "the shell's words").
    return "<no such program>" if exit_code == 127 else text


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Any, Any]]:
    base_o, base_s = tmp_path_factory.mktemp("original"), tmp_path_factory.mktemp("safefs")
    original, drop_in = Original(_tree(base_o)), DropIn(_tree(base_s))
    pairs = []
    for method, args in CALLS:
        o = _outcome(original, base_o, method, args)
        s = _outcome(drop_in, base_s, method, args)
        pairs.append((o, s))
    drop_in.close()
    return pairs


def _refused(original: Any, drop_in: Any) -> None:
    assert original[0] == "returns", "the original reached outside"
    assert drop_in == ("raises", "PermissionError")


@pytest.mark.parametrize("index", range(len(CALLS)), ids=[f"{i}-{m}" for i, (m, _) in enumerate(CALLS)])
def test_each_call_agrees_or_differs_as_listed(outcomes: list[tuple[Any, Any]], index: int) -> None:
    assert_as_listed(*outcomes[index], DIFFERENCES.get(index), _refused)


def test_the_outside_tree_is_untouched_by_the_drop_in(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    drop_in = DropIn(root)
    for method, args in CALLS[33:]:
        _outcome(drop_in, tmp_path, method, args)
    drop_in.close()
    assert sorted(os.listdir(tmp_path / "outside")) == ["secret"]
    assert (tmp_path / "outside" / "secret").read_bytes() == b"secret\n"
