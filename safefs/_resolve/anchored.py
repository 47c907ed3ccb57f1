"""The resolver of ``Root(absolute_links="anchored")``: the root's own backend, and, for a
lookup that backend refuses as an escape, the walk again with absolute link targets under the
root's anchors followed from the root (:mod:`.anchors`).

Threat model: docs/threat-model.md.

Each lookup runs on the backend first (openat2 refuses every absolute link with EXDEV, the C walk
knows no anchors); only a :class:`~safefs.errors.PathEscapeError` sends it to the Python walk
(:mod:`.walk`) with the anchors, which resolves from scratch beneath the same root fd, with the
same rules, budget and invariants, and refuses what still leads out. So the answer is the walk's
whenever a link with an absolute target was met, the backend's otherwise, and never a place
outside the root. Only ``symlinks="beneath"`` has absolute links to anchor: ``in_root`` already
starts them from the root and ``none`` follows no link.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Literal, TypeVar, get_args

from safefs._resolve.base import BackendName, Resolver, SymlinkMode
from safefs._resolve.resolved import Resolved
from safefs._resolve.walk import WalkResolver
from safefs.errors import PathEscapeError

AbsoluteLinks = Literal["refused", "anchored"]
"""``Root(absolute_links=...)``: an absolute symlink target is an escape (``"refused"``), or,
when it lies under the root's own absolute path, is followed from the root (``"anchored"``)."""

ABSOLUTE_LINKS: tuple[AbsoluteLinks, ...] = get_args(AbsoluteLinks)

_T = TypeVar("_T")


class AnchoredResolver:
    """``inner``, with the anchored walk as the second opinion on an escape."""

    def __init__(self, inner: Resolver, anchors: tuple[bytes, ...], *, use_o_path: bool) -> None:
        if inner.mode != "beneath":
            raise ValueError('absolute_links="anchored" needs symlinks="beneath"')
        self._inner = inner
        self._use_o_path = use_o_path
        self._walk = WalkResolver(inner.mode, use_o_path=use_o_path, native=False)
        self._walk.anchors = anchors

    def rebound(self, anchors: tuple[bytes, ...]) -> AnchoredResolver:
        """The same backend for a root whose anchors are ``anchors`` (``Root.sub``)."""
        if anchors == self._walk.anchors:
            return self
        return AnchoredResolver(self._inner, anchors, use_o_path=self._use_o_path)

    @property
    def name(self) -> BackendName:
        return self._inner.name

    @property
    def mode(self) -> SymlinkMode:
        return self._inner.mode

    @property
    def dir_flags(self) -> int:
        return self._inner.dir_flags

    @staticmethod
    def _either(first: Callable[[], _T], second: Callable[[], _T]) -> _T:
        try:
            return first()
        except PathEscapeError:
            return second()

    def open(self, root_fd: int, rel: bytes, flags: int, mode: int = 0o666, *, follow: bool) -> int:
        return self._either(
            lambda: self._inner.open(root_fd, rel, flags, mode, follow=follow),
            lambda: self._walk.open(root_fd, rel, flags, mode, follow=follow),
        )

    def open_read(self, root_fd: int, rel: bytes) -> int:
        return self._either(
            lambda: self._inner.open_read(root_fd, rel), lambda: self._walk.open_read(root_fd, rel)
        )

    def read_bytes(self, root_fd: int, rel: bytes) -> bytes:
        return self._either(
            lambda: self._inner.read_bytes(root_fd, rel), lambda: self._walk.read_bytes(root_fd, rel)
        )

    def read_head(self, root_fd: int, rel: bytes, size: int) -> bytes:
        return self._either(
            lambda: self._inner.read_head(root_fd, rel, size),
            lambda: self._walk.read_head(root_fd, rel, size),
        )

    def read_heads(self, root_fd: int, rels: list[bytes], size: int) -> list[bytes | OSError]:
        got = self._inner.read_heads(root_fd, rels, size)
        for i, one in enumerate(got):
            if isinstance(one, PathEscapeError):
                try:
                    got[i] = self._walk.read_head(root_fd, rels[i], size)
                except OSError as exc:
                    exc.filename = None
                    got[i] = exc
        return got

    def lookup(
        self, root_fd: int, rel: bytes, *, follow: bool, parents: bool = False, lstat: bool = False
    ) -> Resolved:
        return self._either(
            lambda: self._inner.lookup(root_fd, rel, follow=follow, parents=parents, lstat=lstat),
            lambda: self._walk.lookup(root_fd, rel, follow=follow, parents=parents, lstat=lstat),
        )

    def canonical(self, root_fd: int, rel: bytes, *, strict: bool) -> bytes:
        return self._either(
            lambda: self._inner.canonical(root_fd, rel, strict=strict),
            lambda: self._walk.canonical(root_fd, rel, strict=strict),
        )

    def stat(self, root_fd: int, rel: bytes, *, follow: bool) -> os.stat_result:
        return self._either(
            lambda: self._inner.stat(root_fd, rel, follow=follow),
            lambda: self._walk.stat(root_fd, rel, follow=follow),
        )

    def chmod(self, root_fd: int, rel: bytes, mode: int, *, follow: bool) -> None:
        self._either(
            lambda: self._inner.chmod(root_fd, rel, mode, follow=follow),
            lambda: self._walk.chmod(root_fd, rel, mode, follow=follow),
        )
