"""CPython 3.14's copy and move tests of ``pathlib.Path`` (``Lib/test/test_pathlib/test_pathlib.py``,
``PathTest.test_copy_*`` and ``test_move_*``), run against ``safefs.Path``.

The test bodies are upstream's, expected results unchanged. Upstream builds its tree in
``self.base`` (an absolute directory) and calls ``self.cls(self.base)``; here ``self.base`` is the
absolute host path of the tree's directory inside a Root, so ``self.cls(self.base)`` is an
absolute ``safefs.Path`` that the Root accepts (it lies under the root's anchor). Two things
differ, as a confined path must:

- ``ABSOLUTE_LINK_TARGET``: upstream makes links with ``symlink_to(base / 'fileA')``, an absolute
  target. A Root refuses every absolute link target (``PathEscapeError``): :func:`symlink_to`
  below checks that refusal, then makes the relative link that names the same entry, and the
  test goes on unchanged.
- ``patch_replace``: upstream patches ``os.replace`` to fail with ``EXDEV`` (another device);
  here ``Root.rename`` is patched so, and ``move`` takes its copy-and-delete path for real.

Where upstream hands the path to ``os.chmod`` (a ``safefs.Path`` is not ``os.PathLike``), the test
chmods the host path of the same entry. ``test_copy_error_handling`` patches the same kernel
calls upstream patches (``fcntl.ioctl``,
``os.copy_file_range``, ``os.sendfile``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import unittest
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest

import safefs
from tests.safefs.path_ground import SafefsGround, flavours

needs_symlinks = unittest.skipIf(False, "")  # upstream's decorator: links exist here


def patch_replace(method: Callable[..., Any]) -> Callable[..., Any]:
    """Upstream's patch_replace: the rename of a move fails with EXDEV (another device)."""

    def raiser(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))

    def run(self: Any) -> None:
        with mock.patch.object(safefs.Root, "rename", raiser):
            method(self)

    run.__name__ = method.__name__
    return run


def symlink_to(link: safefs.Path, target: safefs.Path) -> None:
    """ABSOLUTE_LINK_TARGET: ``link.symlink_to(target)`` with upstream's absolute target is
    refused; the relative link to the same entry is made instead."""
    assert target.is_absolute()
    with pytest.raises(safefs.PathEscapeError):
        link.symlink_to(target)
    link.symlink_to(os.path.relpath(str(target), str(link.parent)))


class CopyMoveTestBase:
    ground: SafefsGround

    def setUp(self) -> None:
        self.top = self.ground.setup()
        self.ground.create_hierarchy(self.top)
        host = self.ground.host(self.top)
        os.symlink("../dirB", os.path.join(host, "dirB", "linkD"))
        self.base = os.path.join(self.top.root_object.path, str(self.top))
        root = self.top.root_object
        self.cls = lambda *segments: root.path_of(*segments)

    def tearDown(self) -> None:
        self.ground.teardown(self.top)

    # -- upstream's tests, from test_copy_file_preserve_metadata on ----------------------------

    def test_copy_file_preserve_metadata(self):
        base = self.cls(self.base)
        source = base / "fileA"
        if hasattr(os, "chmod"):
            os.chmod(self.ground.host(self.top / "fileA"), stat.S_IRWXU | stat.S_IRWXO)
        source_st = source.stat()
        target = base / "copyA"
        source.copy(target, preserve_metadata=True)
        self.assertTrue(target.exists())
        self.assertEqual(source.read_text(), target.read_text())
        target_st = target.stat()
        self.assertLessEqual(source_st.st_atime, target_st.st_atime)
        self.assertLessEqual(source_st.st_mtime, target_st.st_mtime)
        self.assertEqual(source_st.st_mode, target_st.st_mode)

    @needs_symlinks
    def test_copy_file_to_existing_symlink(self):
        base = self.cls(self.base)
        source = base / "dirB" / "fileB"
        target = base / "linkA"
        real_target = base / "fileA"
        result = source.copy(target)
        self.assertEqual(result, target)
        self.assertTrue(target.exists())
        self.assertTrue(target.is_symlink())
        self.assertTrue(real_target.exists())
        self.assertFalse(real_target.is_symlink())
        self.assertEqual(source.read_text(), real_target.read_text())

    @needs_symlinks
    def test_copy_file_to_existing_symlink_follow_symlinks_false(self):
        base = self.cls(self.base)
        source = base / "dirB" / "fileB"
        target = base / "linkA"
        real_target = base / "fileA"
        result = source.copy(target, follow_symlinks=False)
        self.assertEqual(result, target)
        self.assertTrue(target.exists())
        self.assertTrue(target.is_symlink())
        self.assertTrue(real_target.exists())
        self.assertFalse(real_target.is_symlink())
        self.assertEqual(source.read_text(), real_target.read_text())

    @needs_symlinks
    def test_copy_symlink_follow_symlinks_true(self):
        base = self.cls(self.base)
        source = base / "linkA"
        target = base / "copyA"
        result = source.copy(target)
        self.assertEqual(result, target)
        self.assertTrue(target.exists())
        self.assertFalse(target.is_symlink())
        self.assertEqual(source.read_text(), target.read_text())

    @needs_symlinks
    def test_copy_symlink_follow_symlinks_false(self):
        base = self.cls(self.base)
        source = base / "linkA"
        target = base / "copyA"
        result = source.copy(target, follow_symlinks=False)
        self.assertEqual(result, target)
        self.assertTrue(target.exists())
        self.assertTrue(target.is_symlink())
        self.assertEqual(source.readlink(), target.readlink())

    @needs_symlinks
    def test_copy_symlink_to_itself(self):
        base = self.cls(self.base)
        source = base / "linkA"
        self.assertRaises(OSError, source.copy, source)

    @needs_symlinks
    def test_copy_symlink_to_existing_symlink(self):
        base = self.cls(self.base)
        source = base / "copySource"
        target = base / "copyTarget"
        symlink_to(source, base / "fileA")
        symlink_to(target, base / "dirC")
        self.assertRaises(OSError, source.copy, target)
        self.assertRaises(OSError, source.copy, target, follow_symlinks=False)

    @needs_symlinks
    def test_copy_symlink_to_existing_directory_symlink(self):
        base = self.cls(self.base)
        source = base / "copySource"
        target = base / "copyTarget"
        symlink_to(source, base / "fileA")
        symlink_to(target, base / "dirC")
        self.assertRaises(OSError, source.copy, target)
        self.assertRaises(OSError, source.copy, target, follow_symlinks=False)

    @needs_symlinks
    def test_copy_directory_symlink_follow_symlinks_false(self):
        base = self.cls(self.base)
        source = base / "linkB"
        target = base / "copyA"
        result = source.copy(target, follow_symlinks=False)
        self.assertEqual(result, target)
        self.assertTrue(target.exists())
        self.assertTrue(target.is_symlink())
        self.assertEqual(source.readlink(), target.readlink())

    @needs_symlinks
    def test_copy_directory_symlink_to_itself(self):
        base = self.cls(self.base)
        source = base / "linkB"
        self.assertRaises(OSError, source.copy, source)
        self.assertRaises(OSError, source.copy, source, follow_symlinks=False)

    @needs_symlinks
    def test_copy_directory_symlink_into_itself(self):
        base = self.cls(self.base)
        source = base / "linkB"
        target = base / "linkB" / "copyB"
        self.assertRaises(OSError, source.copy, target)
        self.assertRaises(OSError, source.copy, target, follow_symlinks=False)
        self.assertFalse(target.exists())

    @needs_symlinks
    def test_copy_directory_symlink_to_existing_symlink(self):
        base = self.cls(self.base)
        source = base / "copySource"
        target = base / "copyTarget"
        symlink_to(source, base / "dirC")
        symlink_to(target, base / "fileA")
        self.assertRaises(FileExistsError, source.copy, target)
        self.assertRaises(FileExistsError, source.copy, target, follow_symlinks=False)

    @needs_symlinks
    def test_copy_directory_symlink_to_existing_directory_symlink(self):
        base = self.cls(self.base)
        source = base / "copySource"
        target = base / "copyTarget"
        symlink_to(source, base / "dirC" / "dirD")
        symlink_to(target, base / "dirC")
        self.assertRaises(FileExistsError, source.copy, target)
        self.assertRaises(FileExistsError, source.copy, target, follow_symlinks=False)

    @needs_symlinks
    def test_copy_dangling_symlink(self):
        base = self.cls(self.base)
        source = base / "source"
        target = base / "target"

        source.mkdir()
        source.joinpath("link").symlink_to("nonexistent")

        self.assertRaises(FileNotFoundError, source.copy, target)

        target2 = base / "target2"
        result = source.copy(target2, follow_symlinks=False)
        self.assertEqual(result, target2)
        self.assertTrue(target2.joinpath("link").is_symlink())
        self.assertEqual(target2.joinpath("link").readlink(), self.cls("nonexistent"))

    @needs_symlinks
    def test_copy_link_preserve_metadata(self):
        base = self.cls(self.base)
        source = base / "linkA"
        source_st = source.lstat()
        target = base / "copyA"
        source.copy(target, follow_symlinks=False, preserve_metadata=True)
        self.assertTrue(target.exists())
        self.assertTrue(target.is_symlink())
        self.assertEqual(source.readlink(), target.readlink())
        target_st = target.lstat()
        self.assertLessEqual(source_st.st_atime, target_st.st_atime)
        self.assertLessEqual(source_st.st_mtime, target_st.st_mtime)
        self.assertEqual(source_st.st_mode, target_st.st_mode)

    def test_copy_error_handling(self):
        def make_raiser(err):
            def raiser(*args, **kwargs):
                raise OSError(err, os.strerror(err))

            return raiser

        base = self.cls(self.base)
        source = base / "fileA"
        target = base / "copyA"

        # Raise non-fatal OSError from all available fast copy functions.
        with contextlib.ExitStack() as ctx:
            ctx.enter_context(mock.patch("fcntl.ioctl", make_raiser(errno.EXDEV)))
            if hasattr(os, "copy_file_range"):
                ctx.enter_context(mock.patch("os.copy_file_range", make_raiser(errno.EXDEV)))
            if hasattr(os, "sendfile"):
                ctx.enter_context(mock.patch("os.sendfile", make_raiser(errno.ENOTSOCK)))

            source.copy(target)
            self.assertTrue(target.exists())
            self.assertEqual(source.read_text(), target.read_text())

        # Raise fatal OSError from first available fast copy function.
        with mock.patch("fcntl.ioctl", make_raiser(errno.ENOENT)):
            self.assertRaises(FileNotFoundError, source.copy, target)

    @unittest.skipIf(os.geteuid() == 0, "root reads any directory")
    def test_copy_dir_no_read_permission(self):
        base = self.cls(self.base)
        os.mkdir(self.ground.host(self.top / "dirE"), 0)
        source = base / "dirE"
        target = base / "copyE"
        self.assertRaises(PermissionError, source.copy, target)
        self.assertFalse(target.exists())

    def test_copy_dir_preserve_metadata(self):
        base = self.cls(self.base)
        source = base / "dirC"
        if hasattr(os, "chmod"):
            os.chmod(self.ground.host(self.top / "dirC" / "dirD"), stat.S_IRWXU | stat.S_IRWXO)
        target = base / "copyA"

        subpaths = [".", "fileC", "dirD", "dirD/fileD"]
        source_sts = [source.joinpath(subpath).stat() for subpath in subpaths]
        source.copy(target, preserve_metadata=True)
        target_sts = [target.joinpath(subpath).stat() for subpath in subpaths]

        for source_st, target_st in zip(source_sts, target_sts, strict=True):
            self.assertLessEqual(source_st.st_atime, target_st.st_atime)
            self.assertLessEqual(source_st.st_mtime, target_st.st_mtime)
            self.assertEqual(source_st.st_mode, target_st.st_mode)

    @needs_symlinks
    def test_move_file_symlink(self):
        base = self.cls(self.base)
        source = base / "linkA"
        source_readlink = source.readlink()
        target = base / "linkA_moved"
        result = source.move(target)
        self.assertEqual(result, target)
        self.assertFalse(source.exists())
        self.assertTrue(target.is_symlink())
        self.assertEqual(source_readlink, target.readlink())

    @needs_symlinks
    def test_move_file_symlink_to_itself(self):
        base = self.cls(self.base)
        source = base / "linkA"
        self.assertRaises(OSError, source.move, source)

    @needs_symlinks
    def test_move_dir_symlink(self):
        base = self.cls(self.base)
        source = base / "linkB"
        source_readlink = source.readlink()
        target = base / "linkB_moved"
        result = source.move(target)
        self.assertEqual(result, target)
        self.assertFalse(source.exists())
        self.assertTrue(target.is_symlink())
        self.assertEqual(source_readlink, target.readlink())

    @needs_symlinks
    def test_move_dir_symlink_to_itself(self):
        base = self.cls(self.base)
        source = base / "linkB"
        self.assertRaises(OSError, source.move, source)

    @needs_symlinks
    def test_move_dangling_symlink(self):
        base = self.cls(self.base)
        source = base / "brokenLink"
        source_readlink = source.readlink()
        target = base / "brokenLink_moved"
        result = source.move(target)
        self.assertEqual(result, target)
        self.assertFalse(source.exists())
        self.assertTrue(target.is_symlink())
        self.assertEqual(source_readlink, target.readlink())

    def test_move_file(self):
        base = self.cls(self.base)
        source = base / "fileA"
        source_text = source.read_text()
        target = base / "fileA_moved"
        result = source.move(target)
        self.assertEqual(result, target)
        self.assertFalse(source.exists())
        self.assertTrue(target.exists())
        self.assertEqual(source_text, target.read_text())

    @patch_replace
    def test_move_file_other_fs(self):
        self.test_move_file()

    def test_move_file_to_file(self):
        base = self.cls(self.base)
        source = base / "fileA"
        source_text = source.read_text()
        target = base / "dirB" / "fileB"
        result = source.move(target)
        self.assertEqual(result, target)
        self.assertFalse(source.exists())
        self.assertTrue(target.exists())
        self.assertEqual(source_text, target.read_text())

    @patch_replace
    def test_move_file_to_file_other_fs(self):
        self.test_move_file_to_file()

    def test_move_file_to_dir(self):
        base = self.cls(self.base)
        source = base / "fileA"
        target = base / "dirB"
        self.assertRaises(OSError, source.move, target)

    @patch_replace
    def test_move_file_to_dir_other_fs(self):
        self.test_move_file_to_dir()

    def test_move_file_to_itself(self):
        base = self.cls(self.base)
        source = base / "fileA"
        self.assertRaises(OSError, source.move, source)

    def test_move_dir(self):
        base = self.cls(self.base)
        source = base / "dirC"
        target = base / "dirC_moved"
        result = source.move(target)
        self.assertEqual(result, target)
        self.assertFalse(source.exists())
        self.assertTrue(target.is_dir())
        self.assertTrue(target.joinpath("dirD").is_dir())
        self.assertTrue(target.joinpath("dirD", "fileD").is_file())
        self.assertEqual(target.joinpath("dirD", "fileD").read_text(), "this is file D\n")
        self.assertTrue(target.joinpath("fileC").is_file())
        self.assertTrue(target.joinpath("fileC").read_text(), "this is file C\n")

    @patch_replace
    def test_move_dir_other_fs(self):
        self.test_move_dir()

    def test_move_dir_to_dir(self):
        base = self.cls(self.base)
        source = base / "dirC"
        target = base / "dirB"
        self.assertRaises(OSError, source.move, target)
        self.assertTrue(source.exists())
        self.assertTrue(target.exists())

    @patch_replace
    def test_move_dir_to_dir_other_fs(self):
        self.test_move_dir_to_dir()

    def test_move_dir_to_itself(self):
        base = self.cls(self.base)
        source = base / "dirC"
        self.assertRaises(OSError, source.move, source)
        self.assertTrue(source.exists())

    def test_move_dir_into_itself(self):
        base = self.cls(self.base)
        source = base / "dirC"
        target = base / "dirC" / "bar"
        self.assertRaises(OSError, source.move, target)
        self.assertTrue(source.exists())
        self.assertFalse(target.exists())

    @patch_replace
    def test_move_dir_into_itself_other_fs(self):
        self.test_move_dir_into_itself()

    @patch_replace
    @needs_symlinks
    def test_move_file_symlink_other_fs(self):
        self.test_move_file_symlink()

    @patch_replace
    @needs_symlinks
    def test_move_file_symlink_to_itself_other_fs(self):
        self.test_move_file_symlink_to_itself()

    @patch_replace
    @needs_symlinks
    def test_move_dir_symlink_other_fs(self):
        self.test_move_dir_symlink()

    @patch_replace
    @needs_symlinks
    def test_move_dir_symlink_to_itself_other_fs(self):
        self.test_move_dir_symlink_to_itself()

    @patch_replace
    @needs_symlinks
    def test_move_dangling_symlink_other_fs(self):
        self.test_move_dangling_symlink()

    def test_move_into(self):
        base = self.cls(self.base)
        source = base / "fileA"
        source_text = source.read_text()
        target_dir = base / "dirA"
        result = source.move_into(target_dir)
        self.assertEqual(result, target_dir / "fileA")
        self.assertFalse(source.exists())
        self.assertTrue(result.exists())
        self.assertEqual(source_text, result.read_text())

    @patch_replace
    def test_move_into_other_os(self):
        self.test_move_into()

    def test_move_into_empty_name(self):
        source = self.cls("")
        target_dir = self.base
        self.assertRaises(ValueError, source.move_into, target_dir)

    @patch_replace
    def test_move_into_empty_name_other_os(self):
        self.test_move_into_empty_name()


for _flavour in flavours():
    _name = f"SafefsCopyMoveTest_{str(_flavour).replace('-', '_')}"
    globals()[_name] = type(_name, (CopyMoveTestBase, unittest.TestCase), {"ground": SafefsGround(_flavour)})
