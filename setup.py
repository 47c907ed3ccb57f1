"""Builds the optional native extensions; installing never fails without them.

Without ``safefs._native`` safefs runs on the portable walk (``safefs._native_read``, the same C
read as a plain CPython function, only makes read_bytes cheaper); without ``safefs.sandbox._native``
the agent refuses sandboxed ``bash`` (it fails closed) and runs it only with ``--sandbox=off``.
"""

import sys
import warnings

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """Without a compiler the package still installs and runs on the portable walk."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # any build failure means "no extension"
            warnings.warn(f"safefs: native extensions not built ({exc})", stacklevel=1)

    def build_extension(self, ext) -> None:  # type: ignore[no-untyped-def]
        try:
            super().build_extension(ext)
        except Exception as exc:
            warnings.warn(f"safefs: native extension {ext.name} not built ({exc})", stacklevel=1)


def native_extensions() -> list:  # type: ignore[type-arg]
    if sys.platform == "win32":
        return []
    try:
        sys.path.insert(0, ".")
        from build_ext import ffibuilder, sandbox_ffibuilder

        extensions = [ffibuilder.distutils_extension()]
    except Exception as exc:
        warnings.warn(f"safefs: cannot prepare the native extension ({exc})", stacklevel=1)
        return []
    # read_bytes as a plain CPython function over the same safefs/fastpath.c (it #includes it).
    extensions.append(Extension("safefs._native_read", ["safefs/fastread.c"], depends=["safefs/fastpath.c"]))
    if not sys.platform.startswith("linux"):
        return extensions  # the sandbox is Linux's (Landlock); the core's fast paths are POSIX
    try:
        extensions.append(sandbox_ffibuilder.distutils_extension())
    except Exception as exc:  # e.g. a source tree without the launcher: safefs's still builds
        warnings.warn(f"safefs: cannot prepare the sandbox extension ({exc})", stacklevel=1)
    return extensions


setup(ext_modules=native_extensions(), cmdclass={"build_ext": OptionalBuildExt})
