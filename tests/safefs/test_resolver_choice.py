"""How a Root picks its resolver, and that it never silently downgrades."""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path

import pytest

import safefs
import safefs._resolve as resolvers
from safefs import _sys
from tests.fds import fds_left

needs_native = pytest.mark.skipif(not _sys.HAVE_NATIVE, reason="native extension not built")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="openat2 is Linux only")
def test_auto_is_openat2_on_linux_with_the_extension(tmp_path: Path) -> None:
    # The CI machine is Linux with a compiler: the extension must have been built and used.
    assert _sys.HAVE_NATIVE, "the cffi extension was not built by the install"
    with safefs.Root(tmp_path) as root:
        assert root.resolver == "openat2"


def test_walk_can_be_forced(tmp_path: Path) -> None:
    with safefs.Root(tmp_path, resolver="walk") as root:
        assert root.resolver == "walk"


@pytest.mark.parametrize("blocked", [errno.ENOSYS, errno.EPERM])
def test_auto_falls_back_to_the_walk_when_openat2_is_blocked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, blocked: int
) -> None:
    # As if the probe had met an old kernel (ENOSYS) or a seccomp filter (EPERM).
    monkeypatch.setattr(resolvers, "_openat2_status", blocked)
    with safefs.Root(tmp_path) as root:
        assert root.resolver == "walk"
    with pytest.raises(safefs.ResolverUnavailableError) as info:
        safefs.Root(tmp_path, resolver="openat2")
    assert "openat2" in str(info.value)
    assert info.value.errno == blocked


def test_a_blocked_probe_is_remembered(tmp_path: Path) -> None:
    # A fresh process whose probe fails must keep using the walk without probing again.
    code = (
        "import errno, safefs, safefs._resolve as r\n"
        "calls = []\n"
        "def probe(fd):\n"
        "    calls.append(fd)\n"
        "    return errno.EPERM\n"
        "r.probe = probe\n"
        "r._sys.HAVE_NATIVE = True\n"
        f"a = safefs.Root({str(tmp_path)!r})\n"
        f"b = safefs.Root({str(tmp_path)!r})\n"
        "print(a.resolver, b.resolver, len(calls))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["walk", "walk", "1"]


@needs_native
def test_a_probe_that_runs_out_of_fds_decides_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first Root of the process meets EMFILE at the probe (its own fd took the last one): that
    # says nothing about the kernel, so it is an error now and openat2 all the same later.
    monkeypatch.setattr(resolvers, "_openat2_status", None)
    with fds_left(1), pytest.raises(OSError) as info:
        safefs.Root(tmp_path)
    assert info.value.errno == errno.EMFILE
    assert resolvers._openat2_status is None
    with safefs.Root(tmp_path) as root:
        assert root.resolver == "openat2"
    with safefs.Root(tmp_path, resolver="openat2") as root:
        assert root.resolver == "openat2"


@needs_native
def test_openat2_failures_are_errors_not_downgrades(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    (tmp_path / "out").symlink_to("/etc")
    with safefs.Root(tmp_path, resolver="openat2") as root:
        for _ in range(3):
            with pytest.raises(safefs.PathEscapeError):
                root.read_bytes("out/passwd")
            with pytest.raises(FileNotFoundError):
                root.read_bytes("missing")
        assert root.resolver == "openat2"
        assert root.read_bytes("f") == b"x"


def test_unknown_names_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="resolver must be one of"):
        safefs.Root(tmp_path, resolver="fast")  # type: ignore[arg-type]  # (the point)
    with pytest.raises(ValueError, match="symlinks must be one of"):
        safefs.Root(tmp_path, symlinks="follow")  # type: ignore[arg-type]  # (the point)
