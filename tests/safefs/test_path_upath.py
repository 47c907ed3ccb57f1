"""``UPath("safefs://...")`` with the installed universal-pathlib: dispatched to
``safefs.upath.SafeUPath`` by the entry point, every call through a ``safefs.Path`` (the fsspec
filesystem is never built: ``fs`` raises here), no warning, and the Root's refusals kept."""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest

upath = pytest.importorskip("upath")

import safefs  # noqa: E402
from safefs.upath import SafeUPath  # noqa: E402


def _no_fsspec(self: object) -> None:
    raise AssertionError("the fsspec filesystem was built")


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("outside\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with mock.patch.object(SafeUPath, "fs", property(_no_fsspec)):
            yield root


def test_round_trip_read_write_glob_copy(ws: Path) -> None:
    p = upath.UPath("safefs://data/x.csv", root=str(ws))
    assert type(p) is SafeUPath
    p.parent.mkdir()
    assert p.write_text("a,b\n1,2\n") == 8
    assert p.read_text() == "a,b\n1,2\n" == (ws / "data" / "x.csv").read_text()
    p.with_name("y.bin").write_bytes(b"\x00\x01")
    assert (ws / "data" / "y.bin").read_bytes() == b"\x00\x01"
    top = upath.UPath("safefs://", root=str(ws))
    assert sorted(q.name for q in top.glob("data/*.csv")) == ["x.csv"]
    assert sorted(q.path for q in top.rglob("*")) == ["/data", "/data/x.csv", "/data/y.bin"]
    copied = p.copy(upath.UPath("safefs://data/copy.csv", root=str(ws)))
    assert isinstance(copied, SafeUPath) and copied.read_bytes() == p.read_bytes()
    assert (ws / "data" / "copy.csv").read_text() == "a,b\n1,2\n"
    moved = copied.move("data/moved.csv")
    assert moved.read_text() == "a,b\n1,2\n" and not copied.exists()
    assert sorted(c.name for c in p.parent.iterdir()) == ["moved.csv", "x.csv", "y.bin"]
    assert p.is_file() and p.parent.is_dir() and p.stat().st_size == 8
    assert p.info.is_file() and not p.info.is_dir()


def test_mkdir_takes_parent_mode_and_says_it_is_ignored(ws: Path) -> None:
    p = upath.UPath("safefs://a/b/c", root=str(ws))
    with pytest.warns(UserWarning, match="parent_mode is ignored"):
        p.mkdir(parents=True, parent_mode=0o700)
    assert (ws / "a" / "b" / "c").is_dir()


def test_a_root_object_is_shared_not_owned(ws: Path) -> None:
    with safefs.Root(ws) as root:
        p = upath.UPath("safefs://f", root=root)
        p.write_bytes(b"x")
        assert p.confined().root_object is root
        assert (root / "f").read_bytes() == b"x"
    assert root.closed


def test_escapes_are_refused(ws: Path) -> None:
    (ws / "out").symlink_to("../outside")
    for spelled in ("safefs://../outside/secret", "safefs://out/secret"):
        p = upath.UPath(spelled, root=str(ws))
        with pytest.raises(safefs.PathEscapeError):
            p.read_bytes()
        with pytest.raises(safefs.PathEscapeError):
            p.write_bytes(b"planted")
    with pytest.raises(safefs.PathEscapeError):
        upath.UPath("safefs://link", root=str(ws)).symlink_to("../outside/secret")
    assert (ws.parent / "outside" / "secret").read_text() == "outside\n"


def test_dispatch_by_entry_point_alone(ws: Path) -> None:
    """A fresh interpreter that never imports safefs.upath gets SafeUPath for safefs://."""
    code = (
        "import warnings, sys; warnings.simplefilter('error'); from upath import UPath;"
        f"p = UPath('safefs://a.txt', root={str(ws)!r}); p.write_text('hi');"
        "print(type(p).__module__, type(p).__name__, p.read_text())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["safefs.upath", "SafeUPath", "hi"]
