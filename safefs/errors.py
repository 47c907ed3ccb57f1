"""The exceptions safefs raises. Messages carry the caller's path, never the root's host path."""

from __future__ import annotations

import errno
import os
from types import TracebackType
from typing import Any

ESCAPE_MESSAGE = "path escapes workspace"


class PathEscapeError(PermissionError):
    """The path, or a symlink along it, leads outside the root.

    A ``PermissionError`` with ``errno.EXDEV``; ``filename`` is the path as the caller gave it.
    """

    def __init__(self, filename: Any = None, filename2: Any = None) -> None:
        if filename2 is not None:
            super().__init__(errno.EXDEV, ESCAPE_MESSAGE, filename, None, filename2)
        elif filename is not None:
            super().__init__(errno.EXDEV, ESCAPE_MESSAGE, filename)
        else:
            super().__init__(errno.EXDEV, ESCAPE_MESSAGE)

    def __str__(self) -> str:
        if self.filename is None:
            return ESCAPE_MESSAGE
        return f"{ESCAPE_MESSAGE}: {self.filename!r}"


class ResolverUnavailableError(OSError):
    """The requested resolver cannot run here (for example openat2 on an old kernel)."""


class NotRegularFileError(OSError):
    """Reading or writing something that is not a regular file (FIFO, socket, device)."""

    def __init__(self, filename: Any = None) -> None:
        super().__init__(errno.EINVAL, "not a regular file", filename)


def with_filename(exc: OSError, filename: Any, filename2: Any = None) -> OSError:
    """The same kind of error, naming the caller's path(s) instead of any internal name."""
    if isinstance(exc, PathEscapeError):
        return PathEscapeError(filename, filename2)
    if isinstance(exc, NotRegularFileError):
        return NotRegularFileError(filename)
    code = exc.errno
    if code is None:
        return exc
    message = exc.strerror or os.strerror(code)
    if filename2 is not None:
        return OSError(code, message, filename, None, filename2)
    return OSError(code, message, filename)


def error(code: int, message: str | None = None) -> OSError:
    """The OSError subclass Python maps ``code`` to (FileNotFoundError for ENOENT ...), built the
    way the kernel's own errors are; the caller's path is added later by :func:`reporting`."""
    return OSError(code, message or os.strerror(code))


class reporting:  # lower case: it reads as a function, ``with reporting(path):``
    """Any OSError raised inside names the caller's path(s), never an internal one."""

    __slots__ = ("filename", "filename2")

    def __init__(self, filename: Any, filename2: Any = None) -> None:
        self.filename = filename
        self.filename2 = filename2

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(exc, OSError):
            raise with_filename(exc, self.filename, self.filename2) from None
