"""Random twin trees for the differential property tests of the drop-ins.

A :class:`Spec` (drawn by :func:`specs`) is laid out twice, under two temporary bases, one for the
original and one for the drop-in::

    <base>/ws/        the directory the tools are given (or not made: a missing root)
    <base>/via        a symlink to ws/ (the root given through a symlink)
    <base>/ws2/       a second directory (a root reassigned between calls)
    <base>/outside/   a sibling directory with a secret: every link leading out points here

so an original, whatever it follows, only ever touches paths inside its own base. The tree holds
files, directories, relative and absolute links that stay inside, links leading out, dangling
links and a name that is not UTF-8. :func:`snapshot` describes a base (host paths spelled
``<base>``) for comparing the trees the two sides leave.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

SECRET = b"secret: never to be read or changed\n"
NON_UTF8 = os.fsdecode(b"caf\xe9")  # a name that is not UTF-8 (a surrogate escape in str)
NAMES = ("a", "b.txt", "d", "e", NON_UTF8)
KINDS = ("file", "dir", "rel_in", "abs_in", "out", "abs_out", "dangling")


@dataclass(frozen=True)
class Entry:
    parts: tuple[str, ...]
    kind: str
    target: str  # a name in ws for the links that stay inside
    content: bytes


@dataclass(frozen=True)
class Spec:
    entries: tuple[Entry, ...]
    root: str  # "ws", "via" (through a symlink) or "missing"

    def __str__(self) -> str:
        return f"root={self.root} " + ", ".join(f"{'/'.join(e.parts)}:{e.kind}" for e in self.entries)


CONTENTS = st.sampled_from([b"alpha\n", b"beta\r\ngamma\n", b"", b"\xff\xfe bin", b"line 1\nline 2\n"])
ENTRY = st.builds(
    Entry,
    st.lists(st.sampled_from(NAMES), min_size=1, max_size=2).map(tuple),
    st.sampled_from(KINDS),
    st.sampled_from((*NAMES[:4], "d/a", "d/b.txt")),
    CONTENTS,
)


def specs(*, missing: bool = True, via: bool = True) -> st.SearchStrategy[Spec]:
    roots = ["ws"] * 3 + (["via"] if via else []) + (["missing"] if missing else [])
    return st.builds(Spec, st.lists(ENTRY, max_size=8).map(tuple), st.sampled_from(roots))


def lay(base: Path, spec: Spec) -> Path:
    """The tree of ``spec`` under ``base``; returns the directory the tools are given."""
    ws, outside = base / "ws", base / "outside"
    outside.mkdir(parents=True)
    (outside / "secret").write_bytes(SECRET)
    (base / "ws2").mkdir()
    (base / "ws2" / "a").write_bytes(b"in ws2\n")
    os.symlink("ws", base / "via")
    if spec.root == "missing":
        return ws
    ws.mkdir()
    for e in spec.entries:
        path = ws.joinpath(*e.parts)
        if os.path.lexists(path) or any(
            os.path.islink(p) or (os.path.lexists(p) and not p.is_dir())
            for p in path.parents
            if p != ws and ws in p.parents
        ):
            continue  # a name taken already, or a parent that is a file or a link (never followed)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if e.kind == "file":
                path.write_bytes(e.content)
            elif e.kind == "dir":
                path.mkdir()
            elif e.kind == "rel_in":
                os.symlink(os.path.relpath(ws / e.target, path.parent), path)
            elif e.kind == "abs_in":
                os.symlink(ws / e.target, path)
            elif e.kind == "out":
                os.symlink(os.path.relpath(outside, path.parent), path)
            elif e.kind == "abs_out":
                os.symlink(outside / "secret", path)
            else:
                os.symlink("no-such-entry", path)
        except OSError:
            continue
    return base / "via" if spec.root == "via" else ws


def snapshot(base: Path) -> dict[str, tuple[str, str | bytes]]:
    """Every entry under ``base``: a file's bytes, a link's target (``<base>`` for ``base``), a
    directory; never following a link."""
    out: dict[str, tuple[str, str | bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, base)
            if os.path.islink(path):
                out[rel] = ("link", os.readlink(path).replace(str(base), "<base>"))
            elif os.path.isdir(path):
                out[rel] = ("dir", "")
            else:
                with open(path, "rb") as f:
                    out[rel] = ("file", f.read())
    return out


def outside_untouched(base: Path) -> bool:
    return (
        sorted(os.listdir(base / "outside")) == ["secret"]
        and (base / "outside" / "secret").read_bytes() == SECRET
    )


# Paths a model might give, relative to the root: names in the tree, missing ones, ones leading
# out by spelling; "{root}" is the directory the tool was given, "{base}" the base, both absolute.
PATHS = st.sampled_from(
    [
        "a",
        "b.txt",
        "d",
        "d/a",
        "d/b.txt",
        "e",
        "e/a",
        "a/a",
        NON_UTF8,
        "missing",
        "d/new.txt",
        "new/deep/x.txt",
        ".",
        "../outside/secret",
        "{root}/a",
        "{root}/d/b.txt",
        "{base}/outside/secret",
        "{base}/ws2/a",
    ]
)


def fill(value: str, root: Path, base: Path) -> str:
    return value.replace("{root}", str(root)).replace("{base}", str(base))
