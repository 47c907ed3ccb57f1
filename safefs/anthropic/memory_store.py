"""The ``memory_20250818`` commands on a :class:`safefs.Root` held on the ``memories`` directory.

The result strings and the errors are those of the SDK's ``BetaLocalFilesystemMemoryTool``. The
SDK checks each ``/memories`` path with ``resolve()`` and then opens the resolved path string, so a
directory renamed to a symlink in between leads it outside; here every operation resolves its
path beneath the root's directory fd, and nothing a rename does can lead it out.
"""

from __future__ import annotations

import os
import posixpath
import stat
from pathlib import Path

from anthropic.lib.tools import ToolError

import safefs

MAX_LINES = 999999
LINE_NUMBER_WIDTH = len(str(MAX_LINES))
FILE_MODE = 0o600
DIR_MODE = 0o700
PREFIX = "/memories"


def make_private_dirs(path: Path) -> None:
    """Create ``path`` and its missing parents, each 0700 whatever the umask (the SDK's rule for
    the memory directory, which the program, not the model, names)."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(directory, DIR_MODE)  # mkdir is subject to the umask; chmod is not


def format_size(size: int) -> str:
    if size == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    i = min((size.bit_length() - 1) // 10, len(units) - 1)
    value = size / (1024**i)
    return f"{int(value)}{units[i]}" if value == int(value) else f"{value:.1f}{units[i]}"


def _lines_keeping_cr(content: str) -> list[str]:
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


class MemoryStore:
    """The memory directory ``base_path/memories`` and the commands on it."""

    def __init__(self, memory_root: Path) -> None:
        make_private_dirs(memory_root)
        # Links the SDK follows with realpath: an absolute one into the directory included.
        self.root = safefs.Root(memory_root, absolute_links="anchored")

    def close(self) -> None:
        self.root.close()

    # -- paths ---------------------------------------------------------------------------------

    def rel(self, path: str) -> str:
        if not path.startswith(PREFIX):
            raise ToolError(f"Path must start with {PREFIX}, got: {path}")
        rel = path[len(PREFIX) :].lstrip("/") or "."
        if posixpath.normpath(rel).split("/")[0] == "..":
            raise ToolError(f"Path {path} would escape {PREFIX} directory")
        return rel

    def canonical(self, path: str) -> str:
        """The root-relative path ``path`` designates, links followed (the SDK works on it)."""
        try:
            return str(self.root.resolve(self.rel(path)))
        except safefs.PathEscapeError:
            raise ToolError(f"Path {path} would escape {PREFIX} directory") from None
        except OSError:
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.") from None

    def host_path(self, path: str) -> Path:
        """The SDK's ``_validate_path``: where the memory path ``path`` leads, links followed, as
        a host path under the memory directory (a missing tail kept as spelled); a ToolError
        when it is not a ``/memories`` path or leads out of the directory."""
        rel = self.rel(path)
        try:
            resolved = self.root.resolve(rel)
        except safefs.PathEscapeError:
            raise ToolError(f"Path {path} would escape {PREFIX} directory") from None
        except OSError:
            raise ToolError(f"Path would escape {PREFIX} directory via symlink") from None
        top = Path(self.root.anchors[-1])
        return top if resolved == "." else top / resolved

    def _escape(self, exc: OSError) -> None:
        if isinstance(exc, safefs.PathEscapeError):
            raise ToolError(f"Path would escape {PREFIX} directory via symlink") from None

    def _read(self, rel: str, path: str) -> str:
        try:
            with self.root.open(rel, "rb") as f:
                data: bytes = f.read()
        except safefs.NotRegularFileError:
            raise ToolError(f"path {path!r} is not a regular file") from None
        except FileNotFoundError:
            raise ToolError(
                f"The file {path} no longer exists (may have been deleted or renamed concurrently)."
            ) from None
        except OSError as exc:
            self._escape(exc)
            raise
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"path {path!r} is not valid utf-8") from None

    def _mkdirs(self, rel_dir: str) -> None:
        """Missing directories of ``rel_dir`` created 0700 whatever the umask."""
        if rel_dir in ("", "."):
            return
        done = ""
        for part in rel_dir.split("/"):
            done = f"{done}/{part}" if done else part
            try:
                self.root.mkdir(done, DIR_MODE)
            except FileExistsError:
                continue
            self.root.chmod(done, DIR_MODE)

    def _existing_file(self, path: str) -> str:
        rel = self.canonical(path)
        try:
            st = self.root.stat(rel)
        except FileNotFoundError:
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.") from None
        if not stat.S_ISREG(st.st_mode):
            raise ToolError(f"The path {path} is not a file.")
        return rel

    # -- commands ------------------------------------------------------------------------------

    def view(self, path: str, view_range: list[int] | None) -> str:
        rel = self.canonical(path)
        try:
            st = self.root.stat(rel)
        except (FileNotFoundError, NotADirectoryError):
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.") from None
        if stat.S_ISDIR(st.st_mode):
            items: list[tuple[str, str]] = []
            self._collect(rel, "", 1, items)
            header = (
                f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"
            )
            lines = [f"{format_size(st.st_size)}\t{path}"]
            lines += [f"{size}\t{path}/{item}" for size, item in items]
            return f"{header}\n" + "\n".join(lines)
        if stat.S_ISREG(st.st_mode):
            lines = self._read(rel, path).split("\n")
            if len(lines) > MAX_LINES:
                raise ToolError(f"File {path} exceeds maximum line limit of 999,999 lines.")
            shown, first = lines, 1
            if view_range and len(view_range) == 2:
                start = max(1, view_range[0]) - 1
                end = len(lines) if view_range[1] == -1 else view_range[1]
                shown, first = lines[start:end], start + 1
            numbered = [f"{str(i + first).rjust(LINE_NUMBER_WIDTH)}\t{line}" for i, line in enumerate(shown)]
            return f"Here's the content of {path} with line numbers:\n" + "\n".join(numbered)
        raise ToolError(f"Unsupported file type for {path}")

    def _collect(self, rel: str, shown: str, depth: int, items: list[tuple[str, str]]) -> None:
        if depth > 2:
            return
        try:
            names = sorted(self.root.listdir(rel))
        except OSError:
            return
        for name in names:
            if name.startswith("."):
                continue
            child = name if rel == "." else f"{rel}/{name}"
            child_shown = f"{shown}/{name}" if shown else name
            try:
                st = self.root.stat(child)  # a link is listed as what it leads to, if that is inside
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                items.append((format_size(st.st_size), f"{child_shown}/"))
                if depth < 2:
                    self._collect(child, child_shown, depth + 1, items)
            elif stat.S_ISREG(st.st_mode):
                items.append((format_size(st.st_size), child_shown))

    def create(self, path: str, file_text: str) -> str:
        rel = self.canonical(path)
        try:
            self._mkdirs(posixpath.dirname(rel))
            with self.root.open(rel, "xb") as f:
                # Owner-only before a byte is written, whatever the umask.
                os.fchmod(f.fileno(), FILE_MODE)
                f.write(file_text.encode("utf-8"))
                f.flush()
                os.fsync(f.fileno())
        except FileExistsError:
            raise ToolError(f"File {path} already exists") from None
        except OSError as exc:
            self._escape(exc)
            raise
        return f"File created successfully at: {path}"

    def _replace_content(self, rel: str, content: str) -> None:
        try:
            self.root.write_bytes(rel, content.encode("utf-8"), durable=True)
        except OSError as exc:
            self._escape(exc)
            raise

    def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        rel = self._existing_file(path)
        content = self._read(rel, path)
        count = content.count(old_str)
        if count == 0:
            raise ToolError(
                f"No replacement was performed, old_str `{old_str}` did not appear verbatim in {path}."
            )
        if count > 1:
            lines: list[int] = []
            at = content.find(old_str)
            while at != -1:
                lines.append(content[:at].count("\n") + 1)
                at = content.find(old_str, at + 1)
            raise ToolError(
                f"No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines: "
                f"{', '.join(map(str, lines))}. Please ensure it is unique"
            )
        changed = content[: content.find(old_str)].count("\n")
        new_content = content.replace(old_str, new_str)
        self._replace_content(rel, new_content)
        new_lines = new_content.split("\n")
        start, end = max(0, changed - 2), min(len(new_lines), changed + 3)
        snippet = [
            f"{str(n).rjust(LINE_NUMBER_WIDTH)}\t{new_lines[n - 1]}" for n in range(start + 1, end + 1)
        ]
        return (
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
            + "\n".join(snippet)
        )

    def insert(self, path: str, insert_line: int, insert_text: str) -> str:
        rel = self._existing_file(path)
        lines = _lines_keeping_cr(self._read(rel, path))
        if insert_line < 0 or insert_line > len(lines):
            raise ToolError(
                f"Invalid `insert_line` parameter: {insert_line}. "
                f"It should be within the range [0, {len(lines)}]."
            )
        lines.insert(insert_line, insert_text.rstrip("\n"))
        new_content = "\n".join(lines)
        if not new_content.endswith("\n"):
            new_content += "\n"
        self._replace_content(rel, new_content)
        return f"The file {path} has been edited."

    def delete(self, path: str) -> str:
        rel = self.canonical(path)
        if rel == ".":
            raise ToolError(f"Cannot delete the {PREFIX} directory itself")
        try:
            if self.root.is_file(rel):
                self.root.remove(rel)
            elif self.root.is_dir(rel):
                self.root.rmtree(rel)
            else:
                raise ToolError(f"The path {path} does not exist")
        except FileNotFoundError:
            raise ToolError(f"The path {path} does not exist") from None
        return f"Successfully deleted {path}"

    def rename(self, old_path: str, new_path: str) -> str:
        old = self.canonical(old_path)
        new = self.canonical(new_path)
        if old == ".":
            raise ToolError(f"Cannot rename the {PREFIX} directory itself")
        if self.root.exists(new):
            raise ToolError(f"The destination {new_path} already exists")
        try:
            self._mkdirs(posixpath.dirname(new))
            self.root.rename(old, new, replace=False)
        except FileExistsError:
            raise ToolError(f"The destination {new_path} already exists") from None
        except FileNotFoundError:
            raise ToolError(f"The path {old_path} does not exist") from None
        except OSError as exc:
            self._escape(exc)
            raise
        return f"Successfully renamed {old_path} to {new_path}"

    def clear_all_memory(self) -> str:
        # The directory itself stays (the root's fd holds it); everything in it goes.
        for name in self.root.listdir("."):
            if self.root.is_dir(name) and not self.root.is_symlink(name):
                self.root.rmtree(name)
            else:
                self.root.remove(name)
        self.root.chmod(".", DIR_MODE)
        return "All memory cleared"
