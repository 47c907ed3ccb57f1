"""``safefs-extract [-C DIR] [-t] [-v] [--strip-components N] [--keep-old-files] ARCHIVE|-``:
extract a tar (compressed or not) or zip archive beneath DIR (default: the current directory),
as ``tar -xf`` does; nothing is created or changed outside DIR.

Like GNU tar, a member that is refused or fails is skipped with one line on stderr
(``safefs-extract: ARCHIVE: MEMBER: reason``) and the run goes on; the exit status is then 2. A
damaged archive or a limit passed ends the run with one line and status 2. Never a traceback.
"""

from __future__ import annotations

import argparse
import lzma
import os
import shutil
import sys
import tarfile
import tempfile
import time
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import IO

from safefs import PathEscapeError, __version__
from safefs.archive import FILTERS, DamagedArchive, LimitExceeded, Limits, extractall, list_members

PROG = "safefs-extract"
FAILED = 2  # GNU tar's status for a fatal error or members that could not be extracted
PROGRESS_AFTER = 1.0  # seconds before a progress line appears on a terminal


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Extract ARCHIVE (tar, tar.gz/bz2/xz, or zip; - for standard input) beneath "
        "DIR, every member created through a safefs.Root: no name, link or planted symlink leads "
        "out of DIR. Refused members are skipped and reported; the exit status is then 2.",
    )
    p.add_argument("archive", metavar="ARCHIVE", help="the archive file, or - for standard input")
    p.add_argument("legacy_directory", metavar="DIR", nargs="?", help=argparse.SUPPRESS)
    p.add_argument("-C", "--directory", metavar="DIR", help="extract beneath DIR (default: .)")
    p.add_argument("-t", "--list", action="store_true", help="list the members, extract nothing")
    p.add_argument("-v", "--verbose", action="store_true", help="name each member as it is made")
    p.add_argument(
        "--strip-components", metavar="N", type=int, default=0, help="drop N leading name components"
    )
    p.add_argument("-k", "--keep-old-files", action="store_true", help="never replace an existing file")
    p.add_argument(
        "--filter",
        choices=sorted(FILTERS),
        default="data",
        help="tarfile's extraction filter (default: data); every choice stays inside DIR",
    )
    defaults = Limits()
    p.add_argument(
        "--max-bytes", type=_limit, default=defaults.max_bytes, help="bytes unpacked in all (0: no limit)"
    )
    p.add_argument("--max-members", type=_limit, default=defaults.max_members, help="members (0: no limit)")
    p.add_argument(
        "--max-ratio",
        type=_limit,
        default=defaults.max_ratio,
        help="bytes unpacked per archive byte (0: no limit)",
    )
    p.add_argument("--version", action="version", version=f"{PROG} (safefs) {__version__}")
    return p


def _limit(text: str) -> int | None:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("a limit is 0 (none) or more")
    return value or None


def describe(exc: BaseException) -> str:
    """One line saying what went wrong, the same words for tar and zip, without host paths."""
    if isinstance(exc, tarfile.LinkOutsideDestinationError | tarfile.AbsoluteLinkError):
        return "refused: the link leads outside the destination"
    if isinstance(exc, tarfile.OutsideDestinationError | tarfile.AbsolutePathError | PathEscapeError):
        return "refused: the path leads outside the destination"
    if isinstance(exc, tarfile.SpecialFileError):
        return "refused: a device or FIFO"
    if isinstance(exc, zlib.error | lzma.LZMAError):
        return f"corrupt compressed data ({exc})"
    if isinstance(exc, EOFError):
        return "unexpected end of data"
    if isinstance(exc, OSError):
        if exc.strerror:
            return exc.strerror
        if exc.args and isinstance(exc.args[0], str):
            return exc.args[0]
        return f"read error ({type(exc).__name__})"
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text or type(exc).__name__


class Reporter:
    """Counts and prints failed members; shows progress on a terminal once a second has gone."""

    def __init__(self, archive: str, verbose: bool, stream: IO[str]) -> None:
        self.archive = archive
        self.verbose = verbose
        self.stream = stream
        self.failures = 0
        self.members = 0
        self.started = time.monotonic()
        self.shown = 0.0
        self.terminal = stream.isatty()
        self.progress_visible = False

    def error(self, member: str, exc: BaseException) -> None:
        self.failures += 1
        self.line(f"{PROG}: {self.archive}: {_printable(member)}: {describe(exc)}")

    def fatal(self, exc: BaseException) -> None:
        if isinstance(exc, DamagedArchive):
            self.line(f"{PROG}: {self.archive}: {_printable(exc.member)}: {exc.reason}")
        elif isinstance(exc, OSError) and not isinstance(exc, PathEscapeError) and exc.filename:
            where = os.fsdecode(exc.filename)  # the archive or DIR, as given on the command line
            self.line(f"{PROG}: {_printable(where)}: {describe(exc)}")
        else:
            self.line(f"{PROG}: {self.archive}: {describe(exc)}")

    def member(self, name: str) -> None:
        self.members += 1
        if self.verbose:
            self.line(_printable(name), sys.stdout)
        elif self.terminal:
            now = time.monotonic()
            if now - self.started > PROGRESS_AFTER and now - self.shown > 0.2:
                self.shown = now
                self.progress_visible = True
                self.stream.write(f"\r{PROG}: {self.archive}: {self.members} members\x1b[K")
                self.stream.flush()

    def line(self, text: str, stream: IO[str] | None = None) -> None:
        self.clear_progress()
        print(text, file=stream or self.stream, flush=True)

    def clear_progress(self) -> None:
        if self.progress_visible:
            self.stream.write("\r\x1b[K")
            self.progress_visible = False


def _printable(name: str) -> str:
    return (
        name.encode("unicode_escape", "backslashreplace").decode("ascii") if not name.isprintable() else name
    )


@contextmanager
def _source(archive: str) -> Iterator[str]:
    """The archive's path: as given, or standard input spooled to a private temporary file (a
    pipe cannot be sought, and zip must be)."""
    if archive != "-":
        yield archive
        return
    with tempfile.TemporaryDirectory(prefix="safefs-extract-") as spool:
        path = os.path.join(spool, "stdin")
        with open(path, "wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
        yield path


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    directory = args.directory or args.legacy_directory or "."
    shown = "-" if args.archive == "-" else args.archive
    report = Reporter(shown, args.verbose, sys.stderr)
    limits = Limits(args.max_bytes, args.max_members, args.max_ratio)
    try:
        with _source(args.archive) as path:
            if os.path.isdir(path):
                raise IsADirectoryError(21, "Is a directory", shown)
            if args.list:
                for name in list_members(path, limits=limits):
                    print(_printable(name))
            else:
                extractall(
                    path,
                    directory,
                    filter=args.filter,
                    limits=limits,
                    on_error=report.error,
                    strip_components=args.strip_components,
                    keep_old_files=args.keep_old_files,
                    on_member=report.member,
                )
    except (
        OSError,
        KeyError,
        tarfile.TarError,
        zipfile.BadZipFile,
        EOFError,
        LimitExceeded,
        ValueError,
    ) as exc:
        report.fatal(exc)
        return FAILED
    except (zlib.error, lzma.LZMAError, NotImplementedError) as exc:
        report.fatal(exc)
        return FAILED
    finally:
        report.clear_progress()
    if report.failures:
        report.line(f"{PROG}: {shown}: {report.failures} member(s) not extracted")
        return FAILED
    return 0


def entry_point() -> None:
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)


__all__: list[str] = ["describe", "entry_point", "main", "parser"]
