"""What a session serves, given the DIRs on the command line and the client's roots.

``--roots narrow`` (the default, with DIRs): a root inside a DIR narrows the session to it, a
root outside every DIR is ignored; when no usable root is left (an empty list, every root
outside, no answer, an answer that is not a roots list) the DIRs stay, and
``list_allowed_directories`` says why. ``--roots replace``: the roots replace the DIRs, as the
official server does, so a client can widen what is served. No DIR at all: the client's roots
are served (the official server's roots-only mode).

A root that could not be opened for a reason that is not about the root (the process is at its
fd limit) fails closed: nothing is served until the roots change, and the reason is given on
stderr and by every call, never the wider DIRs in the narrower roots' place.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from safefs.mcp.directories import Directories, Directory, RootsUnopenable

NARROW = "narrow"
REPLACE = "replace"
MODES = (NARROW, REPLACE)
KEPT = "the directories given on the command line are served"


@dataclass(frozen=True)
class RootsPolicy:
    given: Directories  # the DIRs (none in roots-only mode)
    mode: str = NARROW

    @property
    def roots_only(self) -> bool:
        return not self.given.directories

    def without_roots(self) -> Directories:
        """A client that does not offer roots: the DIRs, or nothing in roots-only mode."""
        if self.roots_only:
            return Directories([], "started without a DIR, and the client offers no roots")
        return self.given

    def unavailable(self, why: str) -> Directories:
        """The client offers roots but its answer could not be used (``why``)."""
        if self.roots_only:
            return Directories([], f"started without a DIR, and {why}")
        shared = [Directory(d.root, owned=False) for d in self.given.directories]
        return Directories(shared, f"{why}; {KEPT}")

    def for_roots(self, uris: Sequence[str]) -> Directories:
        """The directories a session with these roots serves. The caller closes the result when
        it is not :attr:`given` (closing leaves the DIRs it shares open)."""
        if not uris:
            return self.unavailable("the client's roots list is empty")
        try:
            return self._for_roots(uris)
        except RootsUnopenable as exc:
            why = (
                f"the client's roots could not be opened ({exc.strerror}); "
                "nothing is served until they change"
            )
            print(f"safefs-mcp: {why}", file=sys.stderr)
            return Directories([], why)

    def _for_roots(self, uris: Sequence[str]) -> Directories:
        if self.roots_only or self.mode == REPLACE:
            opened = Directories.open_roots(uris)
            if opened.directories:
                return opened
            return self.unavailable("none of the client's roots is a directory that can be opened")
        narrowed = self.given.narrowed(uris)
        if narrowed.directories:
            return narrowed
        return self.unavailable("none of the client's roots lies inside a served directory")
