"""``safefs-extract ARCHIVE DIR``: extract a tar (compressed or not) or zip archive beneath DIR;
nothing is created or changed outside it. A refused member is one line on stderr and exit
status 1, never a traceback."""

from __future__ import annotations

import argparse
import sys
import tarfile
import zipfile
from collections.abc import Sequence

from safefs.archive import FILTERS, extractall

PROG = "safefs-extract"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Extract ARCHIVE (tar, tar.gz/bz2/xz, or zip) beneath DIR, every member "
        "created through a safefs.Root: no name, link or planted symlink leads out of DIR.",
    )
    p.add_argument("archive", metavar="ARCHIVE", help="the archive file")
    p.add_argument("directory", metavar="DIR", help="where to extract (created when missing)")
    p.add_argument(
        "--filter",
        choices=sorted(FILTERS),
        default="data",
        help="tarfile's extraction filter (default: data); every choice stays inside DIR",
    )
    return p


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or exc}"
    return str(exc) or type(exc).__name__


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        extractall(args.archive, args.directory, filter=args.filter)
    except (OSError, KeyError, tarfile.TarError, zipfile.BadZipFile, EOFError) as exc:
        print(f"{PROG}: {_describe(exc)}", file=sys.stderr)
        return 1
    return 0


def entry_point() -> None:
    sys.exit(main())
