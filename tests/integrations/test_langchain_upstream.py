"""langchain-community's own tests of the file management tools
(``tests/unit_tests/tools/file_management/test_*.py``), with the import of each tool and of the
toolkit switched to ``safefs.integrations.langchain`` and every expected result unchanged.

The originals' tests that build a tool without ``root_dir`` and pass absolute paths in a temporary
directory reach outside the current directory: the drop-in confines a tool without ``root_dir``
to the current directory, so those are expected to fail (docs/integrations.md);
``test_without_root_dir_the_current_directory_is_the_root`` runs them from inside it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest

pytest.importorskip("langchain_community.tools.file_management")

from langchain_community.tools.file_management.utils import INVALID_PATH_TEMPLATE
from langchain_core.tools import BaseTool

from safefs.integrations.langchain import (
    CopyFileTool,
    FileManagementToolkit,
    FileSearchTool,
    ListDirectoryTool,
    MoveFileTool,
    ReadFileTool,
    WriteFileTool,
)

NO_ROOT_DIR = (
    "without root_dir the drop-in confines the tool to the current directory, and the test's "
    "temporary directory lies outside it"
)


# -- test_read.py ---------------------------------------------------------------------------------


def test_read_file_with_root_dir() -> None:
    """Test the ReadFile tool."""
    with TemporaryDirectory() as temp_dir:
        with (Path(temp_dir) / "file.txt").open("w") as f:
            f.write("Hello, world!")
        tool = ReadFileTool(root_dir=temp_dir)
        result = tool.run("file.txt")
        assert result == "Hello, world!"
        # Check absolute files can still be passed if they lie within the root dir.
        result = tool.run(str(Path(temp_dir) / "file.txt"))
        assert result == "Hello, world!"


@pytest.mark.xfail(reason=NO_ROOT_DIR, strict=True)
def test_read_file() -> None:
    """Test the ReadFile tool."""
    with TemporaryDirectory() as temp_dir:
        with (Path(temp_dir) / "file.txt").open("w") as f:
            f.write("Hello, world!")
        tool = ReadFileTool()
        result = tool.run(str(Path(temp_dir) / "file.txt"))
        assert result == "Hello, world!"


# -- test_write.py --------------------------------------------------------------------------------


def test_write_file_with_root_dir() -> None:
    """Test the WriteFile tool when a root dir is specified."""
    with TemporaryDirectory() as temp_dir:
        tool = WriteFileTool(root_dir=temp_dir)
        tool.run({"file_path": "file.txt", "text": "Hello, world!"})
        assert (Path(temp_dir) / "file.txt").exists()
        assert (Path(temp_dir) / "file.txt").read_text() == "Hello, world!"


def test_write_file_errs_outside_root_dir() -> None:
    """Test the WriteFile tool when a root dir is specified."""
    with TemporaryDirectory() as temp_dir:
        tool = WriteFileTool(root_dir=temp_dir)
        result = tool.run({"file_path": "../file.txt", "text": "Hello, world!"})
        assert result == INVALID_PATH_TEMPLATE.format(arg_name="file_path", value="../file.txt")


@pytest.mark.xfail(reason=NO_ROOT_DIR, strict=True)
def test_write_file() -> None:
    """Test the WriteFile tool."""
    with TemporaryDirectory() as temp_dir:
        file_path = str(Path(temp_dir) / "file.txt")
        tool = WriteFileTool()
        tool.run({"file_path": file_path, "text": "Hello, world!"})
        assert (Path(temp_dir) / "file.txt").exists()
        assert (Path(temp_dir) / "file.txt").read_text() == "Hello, world!"


# -- test_copy.py ---------------------------------------------------------------------------------


def test_copy_file_with_root_dir() -> None:
    """Test the FileCopy tool when a root dir is specified."""
    with TemporaryDirectory() as temp_dir:
        tool = CopyFileTool(root_dir=temp_dir)
        source_file = Path(temp_dir) / "source.txt"
        destination_file = Path(temp_dir) / "destination.txt"
        source_file.write_text("Hello, world!")
        tool.run({"source_path": "source.txt", "destination_path": "destination.txt"})
        assert source_file.exists()
        assert destination_file.exists()
        assert source_file.read_text() == "Hello, world!"
        assert destination_file.read_text() == "Hello, world!"


def test_copy_file_errs_outside_root_dir() -> None:
    """Test the FileCopy tool when a root dir is specified."""
    with TemporaryDirectory() as temp_dir:
        tool = CopyFileTool(root_dir=temp_dir)
        result = tool.run(
            {
                "source_path": "../source.txt",
                "destination_path": "../destination.txt",
            }
        )
        assert result == INVALID_PATH_TEMPLATE.format(arg_name="source_path", value="../source.txt")


@pytest.mark.xfail(reason=NO_ROOT_DIR, strict=True)
def test_copy_file() -> None:
    """Test the FileCopy tool."""
    with TemporaryDirectory() as temp_dir:
        tool = CopyFileTool()
        source_file = Path(temp_dir) / "source.txt"
        destination_file = Path(temp_dir) / "destination.txt"
        source_file.write_text("Hello, world!")
        tool.run(
            {
                "source_path": str(source_file),
                "destination_path": str(destination_file),
            }
        )
        assert source_file.exists()
        assert destination_file.exists()
        assert source_file.read_text() == "Hello, world!"
        assert destination_file.read_text() == "Hello, world!"


# -- test_move.py ---------------------------------------------------------------------------------


def test_move_file_with_root_dir() -> None:
    """Test the FileMove tool when a root dir is specified."""
    with TemporaryDirectory() as temp_dir:
        tool = MoveFileTool(root_dir=temp_dir)
        source_file = Path(temp_dir) / "source.txt"
        destination_file = Path(temp_dir) / "destination.txt"
        source_file.write_text("Hello, world!")
        tool.run({"source_path": "source.txt", "destination_path": "destination.txt"})
        assert not source_file.exists()
        assert destination_file.exists()
        assert destination_file.read_text() == "Hello, world!"


def test_move_file_errs_outside_root_dir() -> None:
    """Test the FileMove tool when a root dir is specified."""
    with TemporaryDirectory() as temp_dir:
        tool = MoveFileTool(root_dir=temp_dir)
        result = tool.run(
            {
                "source_path": "../source.txt",
                "destination_path": "../destination.txt",
            }
        )
        assert result == INVALID_PATH_TEMPLATE.format(arg_name="source_path", value="../source.txt")


@pytest.mark.xfail(reason=NO_ROOT_DIR, strict=True)
def test_move_file() -> None:
    """Test the FileMove tool."""
    with TemporaryDirectory() as temp_dir:
        tool = MoveFileTool()
        source_file = Path(temp_dir) / "source.txt"
        destination_file = Path(temp_dir) / "destination.txt"
        source_file.write_text("Hello, world!")
        tool.run(
            {
                "source_path": str(source_file),
                "destination_path": str(destination_file),
            }
        )
        assert not source_file.exists()
        assert destination_file.exists()
        assert destination_file.read_text() == "Hello, world!"


# -- test_list_dir.py -----------------------------------------------------------------------------


def test_list_directory_with_root_dir() -> None:
    """Test the DirectoryListing tool when a root dir is specified."""
    with TemporaryDirectory() as temp_dir:
        tool = ListDirectoryTool(root_dir=temp_dir)
        file_1 = Path(temp_dir) / "file1.txt"
        file_2 = Path(temp_dir) / "file2.txt"
        file_1.write_text("File 1 content")
        file_2.write_text("File 2 content")
        entries = tool.run({"dir_path": "."}).split("\n")
        assert set(entries) == {"file1.txt", "file2.txt"}


def test_list_directory_errs_outside_root_dir() -> None:
    """Test the DirectoryListing tool when a root dir is specified."""
    with TemporaryDirectory() as temp_dir:
        tool = ListDirectoryTool(root_dir=temp_dir)
        result = tool.run({"dir_path": ".."})
        assert result == INVALID_PATH_TEMPLATE.format(arg_name="dir_path", value="..")


@pytest.mark.xfail(reason=NO_ROOT_DIR, strict=True)
def test_list_directory() -> None:
    """Test the DirectoryListing tool."""
    with TemporaryDirectory() as temp_dir:
        tool = ListDirectoryTool()
        file_1 = Path(temp_dir) / "file1.txt"
        file_2 = Path(temp_dir) / "file2.txt"
        file_1.write_text("File 1 content")
        file_2.write_text("File 2 content")
        entries = tool.run({"dir_path": temp_dir}).split("\n")
        assert set(entries) == {"file1.txt", "file2.txt"}


# -- test_file_search.py --------------------------------------------------------------------------


def test_file_search_with_root_dir() -> None:
    """Test the FileSearch tool when a root dir is specified."""
    with TemporaryDirectory() as temp_dir:
        tool = FileSearchTool(root_dir=temp_dir)
        file_1 = Path(temp_dir) / "file1.txt"
        file_2 = Path(temp_dir) / "file2.log"
        file_1.write_text("File 1 content")
        file_2.write_text("File 2 content")
        matches = tool.run({"dir_path": ".", "pattern": "*.txt"}).split("\n")
        assert len(matches) == 1
        assert Path(matches[0]).name == "file1.txt"


def test_file_search_errs_outside_root_dir() -> None:
    """Test the FileSearch tool when a root dir is specified."""
    with TemporaryDirectory() as temp_dir:
        tool = FileSearchTool(root_dir=temp_dir)
        result = tool.run({"dir_path": "..", "pattern": "*.txt"})
        assert result == INVALID_PATH_TEMPLATE.format(arg_name="dir_path", value="..")


@pytest.mark.xfail(reason=NO_ROOT_DIR, strict=True)
def test_file_search() -> None:
    """Test the FileSearch tool."""
    with TemporaryDirectory() as temp_dir:
        tool = FileSearchTool()
        file_1 = Path(temp_dir) / "file1.txt"
        file_2 = Path(temp_dir) / "file2.log"
        file_1.write_text("File 1 content")
        file_2.write_text("File 2 content")
        matches = tool.run({"dir_path": temp_dir, "pattern": "*.txt"}).split("\n")
        assert len(matches) == 1
        assert Path(matches[0]).name == "file1.txt"


# -- test_toolkit.py ------------------------------------------------------------------------------


def test_file_toolkit_get_tools() -> None:
    """Test the get_tools method of FileManagementToolkit."""
    with TemporaryDirectory() as temp_dir:
        toolkit = FileManagementToolkit(root_dir=temp_dir)
        tools = toolkit.get_tools()
        assert len(tools) > 0
        assert all(isinstance(tool, BaseTool) for tool in tools)


def test_file_toolkit_get_tools_with_selection() -> None:
    """Test the get_tools method of FileManagementToolkit with selected_tools."""
    with TemporaryDirectory() as temp_dir:
        toolkit = FileManagementToolkit(root_dir=temp_dir, selected_tools=["read_file", "write_file"])
        tools = toolkit.get_tools()
        assert len(tools) == 2
        tool_names = [tool.name for tool in tools]
        assert "read_file" in tool_names
        assert "write_file" in tool_names


def test_file_toolkit_invalid_tool() -> None:
    """Test the FileManagementToolkit with an invalid tool."""
    with TemporaryDirectory() as temp_dir:
        with pytest.raises(ValueError):
            FileManagementToolkit(root_dir=temp_dir, selected_tools=["invalid_tool"])


def test_file_toolkit_root_dir() -> None:
    """Test the FileManagementToolkit root_dir handling."""
    with TemporaryDirectory() as temp_dir:
        toolkit = FileManagementToolkit(root_dir=temp_dir)
        tools = toolkit.get_tools()
        root_dirs = [tool.root_dir for tool in tools if hasattr(tool, "root_dir")]
        assert all(root_dir == temp_dir for root_dir in root_dirs)


@pytest.mark.parametrize(
    "test",
    [test_copy_file, test_file_search, test_list_directory, test_move_file, test_read_file, test_write_file],
    ids=lambda test: test.__name__,
)
def test_without_root_dir_the_current_directory_is_the_root(
    test: Callable[[], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The xfailed tests, unchanged, pass once their temporary directories lie under the current
    directory (their own TemporaryDirectory is made inside it)."""
    with TemporaryDirectory() as cwd:
        monkeypatch.chdir(cwd)
        monkeypatch.setattr(tempfile, "tempdir", cwd)
        test()
