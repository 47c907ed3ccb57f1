"""The physical floor of a confined read (benchmarks/floor.c), built with cffi on first use.

Nothing is committed but the C source: the module is compiled into a directory of the checkout's
git-ignored ``build/`` named by the source's hash, so a fresh clone builds it on its first ``make
bench`` (it needs the C compiler the extension needs) and a later run reuses it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cffi import FFI  # type: ignore[import-untyped]

SOURCE = Path(__file__).with_name("floor.c")
BUILD = Path(__file__).resolve().parents[1] / "build"
CDEF = """
long floor_walk_read(int root_fd, const char *const *dirs, int ndirs, const char *name, char *buf,
                     size_t cap);
long floor_openat2_read(int root_fd, const char *path, char *buf, size_t cap);
"""
_loaded: Any = None


def load() -> Any:
    """The compiled module (``ffi``, ``lib``)."""
    global _loaded
    if _loaded is None:
        text = SOURCE.read_text()
        digest = hashlib.sha256((CDEF + text).encode()).hexdigest()[:16]
        build = BUILD / f"floor-{digest}"  # the checkout's (git-ignored) build directory
        name = "_safefs_floor"
        built = list(build.glob(f"{name}*.so"))
        if not built:
            ffi = FFI()
            ffi.cdef(CDEF)
            ffi.set_source(name, text)
            built = [Path(ffi.compile(tmpdir=str(build)))]
        spec = importlib.util.spec_from_file_location(name, built[0])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _loaded = module
    return _loaded


def walk_reader(root_fd: int, rel: str, cap: int) -> Callable[[], int]:
    """A call that makes the walk's system calls to read ``rel`` beneath ``root_fd``; returns
    the bytes read (its arguments are built once, untimed)."""
    mod = load()
    *dirs, name = rel.split("/")
    keep = [mod.ffi.new("char[]", os.fsencode(d)) for d in dirs]
    names = mod.ffi.new("char *[]", keep)
    file_name = mod.ffi.new("char[]", os.fsencode(name))
    buf = mod.ffi.new("char[]", cap)
    read = mod.lib.floor_walk_read

    def run() -> int:
        n: int = read(root_fd, names, len(dirs), file_name, buf, cap)
        assert keep  # alive while this call is
        return n

    return run


def openat2_reader(root_fd: int, rel: str, cap: int) -> Callable[[], int]:
    """A call that makes the openat2 read's system calls for ``rel``; returns the bytes read."""
    mod = load()
    path = mod.ffi.new("char[]", os.fsencode(rel))
    buf = mod.ffi.new("char[]", cap)
    read = mod.lib.floor_openat2_read
    return lambda: read(root_fd, path, buf, cap)
