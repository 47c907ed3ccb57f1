"""pathlib-abc's own tests of POSIX joinable paths (test_join_posix.py), run against ``safefs.Path``.

Ported from pathlib-abc 0.5.1 (``tests/test_join_posix.py``), which is CPython 3.14's
``Lib/test/test_pathlib/test_join_posix.py`` synced: the test bodies below are upstream's, expected results
unchanged; only the imports and the concrete classes at the end are ours. Upstream runs them on
``pathlib.Path`` through a "ground" (how to build and inspect the tree); ours,
``tests.safefs.path_ground``, builds the same tree in a temp directory and opens a ``Root`` on it,
for every resolver and the ``beneath`` and ``in_root`` modes (``none`` refuses every symlink by
contract, and these trees hold symlinks). Where a confined path must differ from pathlib, the
test says so by name and checks the confined answer; docs/api.md lists those exceptions.
"""

# ruff: noqa

import unittest

from tests.safefs.path_ground import join_classes


class JoinTestBase:
    def test_join(self):
        P = self.cls
        p = P("//a")
        pp = p.joinpath("b")
        self.assertEqual(pp, P("//a/b"))
        pp = P("/a").joinpath("//c")
        self.assertEqual(pp, P("//c"))
        pp = P("//a").joinpath("/c")
        self.assertEqual(pp, P("/c"))

    def test_div(self):
        # Basically the same as joinpath().
        P = self.cls
        p = P("//a")
        pp = p / "b"
        self.assertEqual(pp, P("//a/b"))
        pp = P("/a") / "//c"
        self.assertEqual(pp, P("//c"))
        pp = P("//a") / "/c"
        self.assertEqual(pp, P("/c"))


globals().update(join_classes(JoinTestBase, "JoinPosix"))
