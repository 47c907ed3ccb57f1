# mypy: allow-untyped-defs, allow-untyped-calls, allow-incomplete-defs
"""strands-agents-tools' own tests of ``editor`` (``tests/test_editor.py`` of the
strands-agents/tools repository), with the import and the patched ``get_user_input`` switched to
``safefs.integrations.strands`` and every expected result unchanged. The helper functions the tests
import (``find_context_line``, ``format_directory_tree``, ...) are the original's, tested as
they are; ``CONTENT_HISTORY`` is the original's too, so the drop-in's own cache is cleared
beside it.

The drop-in is confined to ``SAFEFS_STRANDS_ROOT``, set to each test's ``tmp_path``: the paths
the tests give under it are inside; the ones they give elsewhere (``/root/...``, ``/tmp/test.txt``)
are refused before anything is touched, which those tests, expecting an error, accept.
"""

import pytest

pytest.importorskip("strands_tools.editor")

import os
import shutil
from unittest.mock import patch

import strands_tools.editor as original_editor
from strands import Agent
from strands_tools.editor import (
    CONTENT_HISTORY,
    find_context_line,
    format_code,
    format_directory_tree,
    format_output,
    get_last_content,
    save_content_history,
    validate_pattern,
)

from safefs.integrations.strands import close, editor

# The deprecation tests hold where the installed original is deprecated (0.8.10, not 0.8.0).
DEPRECATED_HERE = pytest.mark.skipif(
    not hasattr(original_editor.editor, "__deprecated__"), reason="the installed editor is not deprecated"
)


@pytest.fixture(autouse=True)
def _confined_to_tmp_path(tmp_path, monkeypatch):
    monkeypatch.setenv("SAFEFS_STRANDS_ROOT", str(tmp_path))
    yield
    close()


@pytest.fixture
def agent():
    """Create an agent with the editor tool loaded."""
    return Agent(tools=[editor])


@pytest.fixture
def temp_file(tmp_path):
    """Create a temporary file path."""
    file_path = str(tmp_path / "test_file.txt")
    with open(file_path, "w") as f:
        f.write("Line 1\nLine 2\nLine 3\nTest Pattern\nLine 5\n")
    yield file_path
    # Clean up backup files if created
    backup_path = f"{file_path}.bak"
    if os.path.exists(backup_path):
        os.remove(backup_path)


@pytest.fixture
def temp_dir(tmp_path):
    """Create a temporary directory with some files."""
    # Create directory structure
    subdir = tmp_path / "subdir"
    subdir.mkdir()
    (subdir / "file1.txt").write_text("Content 1")
    (tmp_path / "file2.py").write_text("print('Hello World')")
    return str(tmp_path)


@pytest.fixture
def clean_content_history():
    """Clear the content history before and after tests."""
    CONTENT_HISTORY.clear()
    editor.CONTENT_HISTORY.clear()
    yield
    CONTENT_HISTORY.clear()
    editor.CONTENT_HISTORY.clear()


def extract_result_text(result):
    """Extract the result text from the agent response."""
    if isinstance(result, dict) and "content" in result and isinstance(result["content"], list):
        return result["content"][0]["text"]
    return str(result)


class TestEditorUtilFunctions:
    """Test utility functions in editor module."""

    def test_save_get_content_history(self, clean_content_history):
        """Test saving and retrieving content from history cache."""
        path = "/test/path.txt"
        content = "Test content"

        # Initially should be None
        assert get_last_content(path) is None

        # Save content to history
        save_content_history(path, content)

        # Now should retrieve the content
        assert get_last_content(path) == content

    def test_find_context_line_exact_match(self):
        """Test finding a line by exact match."""
        content = "Line 1\nLine 2\nSpecial Line\nLine 4\n"
        line_num = find_context_line(content, "Special Line")
        assert line_num == 2  # 0-based indexing, "Special Line" is line 3

    def test_find_context_line_fuzzy_match(self):
        """Test finding a line using fuzzy matching."""
        content = "Line 1\nLine 2\nSpecial Test Line\nLine 4\n"
        line_num = find_context_line(content, "Special Line", fuzzy=True)
        assert line_num == 2  # Should match "Special Test Line"

    def test_find_context_line_no_match(self):
        """Test finding a line with no match."""
        content = "Line 1\nLine 2\nLine 3\n"
        line_num = find_context_line(content, "Not Present")
        assert line_num == -1

    def test_validate_pattern(self):
        """Test regex pattern validation."""
        assert validate_pattern(r"test\d+") is True
        assert validate_pattern(r"test[") is False

    def test_format_code(self):
        """Test code formatting with syntax highlighting."""
        code = "def test():\n    return 'hello'\n"
        result = format_code(code, "python")
        assert result is not None
        assert isinstance(result, str) or hasattr(result, "__str__")

    def test_format_output(self):
        """Test output formatting with panel."""
        result = format_output("Test Title", "Test Content", "green")
        assert result is not None
        assert isinstance(result, str) or hasattr(result, "__str__")


class TestEditorDirectCalls:
    """Test direct calls to editor functions."""

    @patch("safefs.integrations.strands.editor.get_user_input")
    def test_view_command_file(self, mock_user_input, temp_file, clean_content_history):
        """Test viewing a file directly."""
        result = editor.editor(command="view", path=temp_file)

        assert result["status"] == "success"
        assert "File content displayed in console" in result["content"][0]["text"]
        assert "Line 1" in result["content"][0]["text"]

    @patch("safefs.integrations.strands.editor.get_user_input")
    def test_view_command_directory(self, mock_user_input, temp_dir, clean_content_history):
        """Test viewing a directory structure."""
        result = editor.editor(command="view", path=temp_dir)

        assert result["status"] == "success"
        assert "Directory structure displayed" in result["content"][0]["text"]

    @patch("safefs.integrations.strands.editor.get_user_input")
    def test_view_with_range(self, mock_user_input, temp_file, clean_content_history):
        """Test viewing a specific line range."""
        result = editor.editor(command="view", path=temp_file, view_range=[1, 3])

        assert result["status"] == "success"
        assert "File content displayed" in result["content"][0]["text"]

    @patch("safefs.integrations.strands.editor.get_user_input")
    def test_create_command(self, mock_user_input, tmp_path, clean_content_history):
        """Test creating a new file."""
        mock_user_input.return_value = "y"  # Confirm file creation

        test_file = str(tmp_path / "new_file.txt")
        result = editor.editor(
            command="create",
            path=test_file,
            file_text="New file content",
        )

        assert result["status"] == "success"
        assert "created successfully" in result["content"][0]["text"]
        assert os.path.exists(test_file)
        with open(test_file) as f:
            assert f.read() == "New file content"

    @patch("safefs.integrations.strands.editor.get_user_input")
    def test_create_command_cancel(self, mock_user_input, tmp_path, clean_content_history):
        """Test canceling file creation."""
        # Mock user cancelling the write
        mock_user_input.side_effect = ["n", "Changed my mind"]  # Cancel with reason

        # Ensure BYPASS_TOOL_CONSENT mode is disabled to force confirmation
        current_dev = os.environ.get("BYPASS_TOOL_CONSENT", None)
        if current_dev:
            os.environ.pop("BYPASS_TOOL_CONSENT")

        test_file = str(tmp_path / "should_not_exist.txt")
        result = editor.editor(
            command="create",
            path=test_file,
            file_text="Should not be written",
        )

        assert result["status"] == "error"
        assert "cancelled" in result["content"][0]["text"]
        assert "Changed my mind" in result["content"][0]["text"]
        assert not os.path.exists(test_file)

    @patch("safefs.integrations.strands.editor.get_user_input")
    def test_str_replace_command(self, mock_user_input, temp_file, clean_content_history):
        """Test string replacement in a file."""
        mock_user_input.return_value = "y"  # Confirm replacement

        result = editor.editor(
            command="str_replace",
            path=temp_file,
            old_str="Line 3",
            new_str="REPLACED LINE",
        )

        assert result["status"] == "success"
        assert "Text replacement complete" in result["content"][0]["text"]

        # Verify file was modified
        with open(temp_file) as f:
            content = f.read()
            assert "REPLACED LINE" in content
            assert "Line 3" not in content

    @patch("safefs.integrations.strands.editor.get_user_input")
    def test_pattern_replace_command(self, mock_user_input, temp_file, clean_content_history):
        """Test pattern-based replacement."""
        mock_user_input.return_value = "y"  # Confirm replacement

        result = editor.editor(
            command="pattern_replace",
            path=temp_file,
            pattern=r"Test\s+Pattern",
            new_str="PATTERN REPLACED",
        )

        assert result["status"] == "success"
        assert "Pattern replacement complete" in result["content"][0]["text"]

        # Verify file was modified
        with open(temp_file) as f:
            content = f.read()
            assert "PATTERN REPLACED" in content
            assert "Test Pattern" not in content

    @patch("safefs.integrations.strands.editor.get_user_input")
    def test_insert_command(self, mock_user_input, temp_file, clean_content_history):
        """Test inserting text at a specific line."""
        mock_user_input.return_value = "y"  # Confirm insertion

        result = editor.editor(
            command="insert",
            path=temp_file,
            insert_line=2,  # Insert after line 3 (0-based)
            new_str="INSERTED LINE",
        )

        assert result["status"] == "success"
        assert "Text insertion complete" in result["content"][0]["text"]

        # Verify file was modified
        with open(temp_file) as f:
            content = f.read()
            # Looking at the output, the editor inserts the line at position 3,
            # changing the original file structure
            assert "Line 2\nINSERTED LINE\nLine 3\n" in content

    @patch("safefs.integrations.strands.editor.get_user_input")
    @patch.dict("os.environ", {"EDITOR_DISABLE_BACKUP": "true"})
    def test_str_replace_no_backup(self, mock_user_input, temp_file, clean_content_history):
        """Test str_replace without creating backup when EDITOR_DISABLE_BACKUP is set."""
        mock_user_input.return_value = "y"

        result = editor.editor(
            command="str_replace", path=temp_file, old_str="Line 2", new_str="Modified Line 2"
        )

        assert result["status"] == "success"

        # Verify backup was NOT created
        backup_path = f"{temp_file}.bak"
        assert not os.path.exists(backup_path)

    @patch("safefs.integrations.strands.editor.get_user_input")
    @patch.dict("os.environ", {"EDITOR_DISABLE_BACKUP": "true"})
    def test_pattern_replace_no_backup(self, mock_user_input, temp_file, clean_content_history):
        """Test pattern_replace without creating backup."""
        mock_user_input.return_value = "y"

        result = editor.editor(
            command="pattern_replace", path=temp_file, pattern="Line.*", new_str="Updated Line"
        )

        assert result["status"] == "success"
        backup_path = f"{temp_file}.bak"
        assert not os.path.exists(backup_path)

    @patch("safefs.integrations.strands.editor.get_user_input")
    @patch.dict("os.environ", {"EDITOR_DISABLE_BACKUP": "true"})
    def test_insert_no_backup(self, mock_user_input, temp_file, clean_content_history):
        """Test insert without creating backup."""
        mock_user_input.return_value = "y"

        result = editor.editor(command="insert", path=temp_file, new_str="New line", insert_line=2)

        assert result["status"] == "success"
        backup_path = f"{temp_file}.bak"
        assert not os.path.exists(backup_path)

    @patch("safefs.integrations.strands.editor.get_user_input")
    def test_backup_created_by_default(self, mock_user_input, temp_file, clean_content_history):
        """Test that backup is still created by default."""
        # Ensure env var is not set
        if "EDITOR_DISABLE_BACKUP" in os.environ:
            del os.environ["EDITOR_DISABLE_BACKUP"]

        mock_user_input.return_value = "y"

        result = editor.editor(
            command="str_replace", path=temp_file, old_str="Line 2", new_str="Modified Line 2"
        )

        assert result["status"] == "success"
        backup_path = f"{temp_file}.bak"
        assert os.path.exists(backup_path)

    @patch("safefs.integrations.strands.editor.get_user_input")
    def test_insert_with_search_text(self, mock_user_input, temp_file, clean_content_history):
        """Test inserting text after a line found by search."""
        mock_user_input.return_value = "y"  # Confirm insertion

        result = editor.editor(
            command="insert",
            path=temp_file,
            insert_line="Line 3",  # Insert after this line
            new_str="INSERTED AFTER SEARCH",
        )

        assert result["status"] == "success"
        assert "Text insertion complete" in result["content"][0]["text"]

        # Verify file was modified - but from the output we see that the editor tool
        # inserts the line at a different position than we expect, so we should adjust our test
        with open(temp_file) as f:
            content = f.read()
            # The editor is inserting the line after finding "Line 3" but before the "Test Pattern" line
            assert "INSERTED AFTER SEARCH" in content  # Just verify it was inserted

    @patch("safefs.integrations.strands.editor.get_user_input")
    def test_find_line_command(self, mock_user_input, temp_file, clean_content_history):
        """Test finding a line by text content."""
        result = editor.editor(
            command="find_line",
            path=temp_file,
            search_text="Test Pattern",
        )

        assert result["status"] == "success"
        assert "Line found in file" in result["content"][0]["text"]
        assert "Line number: 4" in result["content"][0]["text"]  # 1-based line number

    @patch("safefs.integrations.strands.editor.get_user_input")
    def test_find_line_fuzzy(self, mock_user_input, temp_file, clean_content_history):
        """Test finding a line with fuzzy matching."""
        result = editor.editor(
            command="find_line",
            path=temp_file,
            search_text="Test Patt",
            fuzzy=True,
        )

        assert result["status"] == "success"
        assert "Line found in file" in result["content"][0]["text"]
        assert "Line number: 4" in result["content"][0]["text"]  # Should match "Test Pattern"

    @patch("safefs.integrations.strands.editor.get_user_input")
    def test_undo_edit_command(self, mock_user_input, temp_file, clean_content_history):
        """Test undoing changes to a file."""
        mock_user_input.return_value = "y"

        # Create a backup by making a change first
        shutil.copy2(temp_file, f"{temp_file}.bak")

        result = editor.editor(command="undo_edit", path=temp_file)

        assert result["status"] == "success"
        assert "Successfully reverted changes" in result["content"][0]["text"]


class TestEditorErrors:
    """Test error handling in editor module."""

    @patch("safefs.integrations.strands.editor.get_user_input")
    def test_missing_command(self, mock_user_input):
        """Test error when command is missing."""
        # Since command is a required parameter, we need to test with an empty command
        result = editor.editor(command="", path="/tmp/test.txt")

        assert result["status"] == "error"
        assert "Error:" in result["content"][0]["text"]

    @patch.dict(os.environ, {"BYPASS_TOOL_CONSENT": "true"})
    def test_missing_path(self):
        """Test error when path is missing."""
        # Since path is a required parameter, we need to test with an empty path
        result = editor.editor(command="view", path="")

        assert result["status"] == "error"
        assert "Error:" in result["content"][0]["text"]

    @patch("safefs.integrations.strands.editor.get_user_input")
    @patch.dict(os.environ, {"BYPASS_TOOL_CONSENT": "true"})
    def test_create_without_file_text(self, mock_user_input):
        """Test error when file_text is missing for create command."""
        result = editor.editor(command="create", path="/tmp/test.txt")

        assert result["status"] == "error"
        assert "Error:" in result["content"][0]["text"]

    @patch("safefs.integrations.strands.editor.get_user_input")
    @patch.dict(os.environ, {"BYPASS_TOOL_CONSENT": "true"})
    def test_str_replace_without_required_params(self, mock_user_input):
        """Test error when required params are missing for str_replace."""
        result = editor.editor(
            command="str_replace",
            path="/tmp/test.txt",
            new_str="new",
        )

        assert result["status"] == "error"
        assert "Error:" in result["content"][0]["text"]

    @patch("safefs.integrations.strands.editor.get_user_input")
    @patch.dict(os.environ, {"BYPASS_TOOL_CONSENT": "true"})
    def test_pattern_replace_invalid_pattern(self, mock_user_input):
        """Test error with invalid regex pattern."""
        result = editor.editor(
            command="pattern_replace",
            path="/tmp/test.txt",
            pattern="[invalid",
            new_str="new",
        )

        assert result["status"] == "error"
        assert "Error:" in result["content"][0]["text"]

    @patch("safefs.integrations.strands.editor.get_user_input")
    def test_find_line_without_search_text(self, mock_user_input):
        """Test error when search_text is missing for find_line command."""
        result = editor.editor(command="find_line", path="/tmp/test.txt")

        assert result["status"] == "error"
        assert "Error:" in result["content"][0]["text"]


class TestEditorViaAgent:
    """Test editor tool via the Agent interface."""

    @patch("safefs.integrations.strands.editor.get_user_input")
    @patch.dict("os.environ", {"BYPASS_TOOL_CONSENT": "true"})
    def test_editor_via_agent_view(self, mock_user_input, agent, temp_file, clean_content_history):
        """Test viewing a file via agent in BYPASS_TOOL_CONSENT mode."""
        result = agent.tool.editor(command="view", path=temp_file)

        result_text = extract_result_text(result)
        assert "File content displayed in console" in result_text

    @patch("safefs.integrations.strands.editor.get_user_input")
    @patch.dict("os.environ", {"BYPASS_TOOL_CONSENT": "true"})
    def test_editor_via_agent_create(self, mock_user_input, agent, tmp_path, clean_content_history):
        """Test creating a file via agent in BYPASS_TOOL_CONSENT mode."""
        test_file = str(tmp_path / "agent_created.txt")

        result = agent.tool.editor(command="create", path=test_file, file_text="Created via agent")

        result_text = extract_result_text(result)
        assert "created successfully" in result_text
        assert os.path.exists(test_file)

        with open(test_file) as f:
            assert f.read() == "Created via agent"


@patch("safefs.integrations.strands.editor.console_util")
def test_format_directory_tree_content(mock_console_util, temp_dir):
    """Test directory tree formatting by accessing its representation."""
    # Instead of trying to check the string representation directly,
    # we'll check the object and verify it has the expected type
    tree = format_directory_tree(temp_dir, max_depth=1)

    # Verify it's a Rich Tree object or something that provides the expected behavior
    assert tree is not None
    assert hasattr(tree, "__str__")  # Should have string representation

    # Since the string representation might vary, just verify the basic object structure
    # The Rich Tree will have format method
    assert hasattr(tree, "label") or hasattr(tree, "render")


@DEPRECATED_HERE
def test_editor_logs_deprecation_warning(caplog, temp_dir):
    """Test that editor logs a deprecation warning naming the SDK replacement."""
    import logging

    test_file = os.path.join(temp_dir, "deprecation.txt")

    with caplog.at_level(logging.WARNING, logger="strands_tools.editor"):
        editor.editor(command="create", path=test_file, file_text="content")

    assert "DEPRECATION WARNING" in caplog.text
    assert "becomes an error log in v0.9.0" in caplog.text
    assert "strands.vended_tools import file_editor" in caplog.text


@DEPRECATED_HERE
def test_editor_is_marked_deprecated_for_static_analysis():
    """The @deprecated marker lets type checkers and IDEs flag callers."""
    assert getattr(editor.editor, "__deprecated__", None) is not None
    assert "strands.vended_tools import file_editor" in editor.editor.__deprecated__
