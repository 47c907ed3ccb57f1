"""What one extraction may cost: bytes written, members, and bytes written per archive byte.

An archive is untrusted input: a few kilobytes can declare terabytes (a zip whose entries overlap,
CVE-2019-13232, a gzip of zeros) or millions of members. :class:`Limits` bounds an extraction;
:class:`Budget` counts it and raises :class:`LimitExceeded` at the first byte or member past a
limit, so nothing beyond the limit is ever written. Holes of a sparse member are not written and
not counted.
"""

from __future__ import annotations

from dataclasses import dataclass

GiB = 1 << 30
MiB = 1 << 20

# Below this many bytes written the ratio is not judged: a small archive of a few very
# compressible files is not a bomb.
RATIO_FLOOR = 64 * MiB


class LimitExceeded(Exception):
    """An extraction went past one of its :class:`Limits`; what it wrote so far stays."""


@dataclass(frozen=True)
class Limits:
    """Bounds of one extraction; ``None`` switches a bound off.

    ``max_bytes``: file data written in all (default 16 GiB); ``max_members``: members read
    (default 1,000,000); ``max_ratio``: file data written per byte of the archive as stored
    (default 10,000, judged once more than 64 MiB are written: gzip cannot compress beyond about
    1030:1; xz and bzip2 of zeros can, and need a higher ratio or none)."""

    max_bytes: int | None = 16 * GiB
    max_members: int | None = 1_000_000
    max_ratio: float | None = 10_000.0


UNLIMITED = Limits(None, None, None)


class Budget:
    """Counts one extraction against its limits. ``archive_size`` is the archive's size as stored
    (None when unknown: the ratio is then not judged)."""

    __slots__ = ("_ratio_cap", "archive_size", "limits", "members", "written")

    def __init__(self, limits: Limits, archive_size: int | None) -> None:
        self.limits = limits
        self.archive_size = archive_size
        self.members = 0
        self.written = 0
        caps = []
        if limits.max_bytes is not None:
            caps.append(limits.max_bytes)
        if limits.max_ratio is not None and archive_size is not None:
            caps.append(max(RATIO_FLOOR, int(limits.max_ratio * archive_size)))
        self._ratio_cap = min(caps) if caps else None

    def member(self) -> None:
        """One more member read: LimitExceeded past ``max_members``."""
        self.members += 1
        cap = self.limits.max_members
        if cap is not None and self.members > cap:
            raise LimitExceeded(f"more than {cap} members (--max-members)")

    def allow(self, size: int) -> None:
        """``size`` more bytes about to be written: LimitExceeded (before writing them) when
        that would pass ``max_bytes`` or ``max_ratio``."""
        total = self.written + size
        cap = self._ratio_cap
        if cap is not None and total > cap:
            limits = self.limits
            if limits.max_bytes is not None and total > limits.max_bytes:
                raise LimitExceeded(f"more than {limits.max_bytes} bytes unpacked (--max-bytes)")
            raise LimitExceeded(
                f"more than {limits.max_ratio:g} bytes unpacked per archive byte (--max-ratio)"
            )
        self.written = total
