"""The tree a differential test builds twice, once for the original and once for the drop-in:
``ws/`` (the directory the tools work in) beside ``outside/`` with a secret, and the symlinks
that matter: one inside (relative), one leading out, one absolute that leads inside."""

from __future__ import annotations

from pathlib import Path

SECRET = b"secret\n"


def build(base: Path) -> Path:
    """Lay the tree under ``base``; returns ``base / "ws"``."""
    root, outside = base / "ws", base / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "a.txt").write_bytes(b"alpha\n")
    (root / "sub" / "b.txt").write_bytes(b"beta\n")
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\rthree\n")
    (root / "bin.dat").write_bytes(b"\xff\xfe\x00binary")
    (root / "rel-link").symlink_to("a.txt")
    (root / "out-link").symlink_to("../outside")
    (root / "abs-link").symlink_to(root / "a.txt")
    (outside / "secret").write_bytes(SECRET)
    return root
