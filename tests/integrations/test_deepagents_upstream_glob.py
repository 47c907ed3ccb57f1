"""deepagents' own cross-backend matrix of ``glob()`` pattern semantics
(``libs/deepagents/tests/unit_tests/backends/test_glob_semantics.py``, deepagents 0.7.8): its
shared tree and expectations, and the ``FilesystemBackend`` row, with the import switched to
``safefs.integrations.deepagents`` and every expected result unchanged (the State, Store and
sandbox rows test other backends, not ported). Upstream's description follows.

Cross-backend matrix for shared `glob()` pattern semantics.

Locks the contract from #4978 so FS / State / Store / sandbox script cannot
drift:

- Patterns without `/` match the basename at any depth under the search root
  (including under leading-dot directories).
- Patterns containing `/` match the search-root-relative path (with `**`).
  Without DOTMATCH, `**` does not traverse leading-dot path segments; reach
  those paths with an explicit leading-dot segment (e.g. `.github/**`).
- A leading `/` anchors to the search root (narrows, does not widen).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("deepagents.backends.filesystem")

from safefs.integrations.deepagents import FilesystemBackend

if TYPE_CHECKING:
    from pathlib import Path

_TREE_FILES = {
    "/a.py": "a",
    "/sub/b.py": "b",
    "/sub/nested/c.py": "c",
    "/readme.md": "docs",
    # Leading-dot entries live in the shared tree so every backend's matrix
    # exercises the dot rules, which are the substance of #4978.
    "/.hidden.py": "h",
    "/.hidden/x.py": "x",
    "/.github/workflows/ci.yml": "name: ci",
}


def _file_data(content: str) -> dict[str, Any]:
    return {
        "content": content,
        "created_at": "2024-01-01T00:00:00",
        "modified_at": "2024-01-01T00:00:00",
    }


def _matrix_expectations() -> list[tuple[str, str, set[str]]]:
    """(pattern, path, expected absolute virtual paths)."""
    # Bare patterns are basename-scoped, so they reach under `.hidden/` but
    # never match the leading-dot basename `.hidden.py` itself.
    bare_py = {"/a.py", "/sub/b.py", "/sub/nested/c.py", "/.hidden/x.py"}
    # `**` is path-relative and will not traverse a leading-dot segment.
    walked_py = {"/a.py", "/sub/b.py", "/sub/nested/c.py"}
    return [
        ("*.py", "/", bare_py),
        ("**/*.py", "/", walked_py),
        ("*.md", "/", {"/readme.md"}),
        ("sub/*.py", "/", {"/sub/b.py"}),
        ("sub/**/*.py", "/", {"/sub/b.py", "/sub/nested/c.py"}),
        ("/*.py", "/", {"/a.py"}),
        ("a.py/**", "/", set()),
        ("*.py", "/sub", {"/sub/b.py", "/sub/nested/c.py"}),
        # Dot handling: bare `*.yml` reaches into `.github/`, `**/` does not,
        # and an explicit dot segment is the escape hatch.
        ("*.yml", "/", {"/.github/workflows/ci.yml"}),
        ("**/*.yml", "/", set()),
        (".github/**/*.yml", "/", {"/.github/workflows/ci.yml"}),
        (".hidden.py", "/", {"/.hidden.py"}),
        (".*.py", "/", {"/.hidden.py"}),
        (
            "*",
            "/",
            {
                "/a.py",
                "/sub/b.py",
                "/sub/nested/c.py",
                "/readme.md",
                "/.hidden/x.py",
                "/.github/workflows/ci.yml",
            },
        ),
        # Brace, single-char and character-class syntax the contract advertises.
        ("*.{py,md}", "/", bare_py | {"/readme.md"}),
        ("*.{yml,yaml}", "/", {"/.github/workflows/ci.yml"}),
        ("?.py", "/", bare_py),
        ("[ab].py", "/", {"/a.py", "/sub/b.py"}),
        ("[!a].py", "/", {"/sub/b.py", "/sub/nested/c.py", "/.hidden/x.py"}),
        # `[^...]` must negate like bash/ripgrep, not match a literal '^'.
        ("[^a].py", "/", {"/sub/b.py", "/sub/nested/c.py", "/.hidden/x.py"}),
    ]


def _relative_expectations(path: str, expected: set[str]) -> set[str]:
    """Re-express absolute matrix expectations relative to the search root.

    Lets the sandbox script matrix reuse `_matrix_expectations` instead of
    keeping a parallel hardcoded table that could silently drift from it.
    """
    if path == "/":
        return {p.lstrip("/") for p in expected}
    prefix = path.rstrip("/") + "/"
    return {p[len(prefix) :] for p in expected}


def _write_tree_on_disk(root: Path) -> None:
    (root / "a.py").write_text("a")
    (root / "sub" / "nested").mkdir(parents=True)
    (root / "sub" / "b.py").write_text("b")
    (root / "sub" / "nested" / "c.py").write_text("c")
    (root / "readme.md").write_text("docs")
    (root / ".hidden.py").write_text("h")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "x.py").write_text("x")
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "ci.yml").write_text("name: ci")


def _write_hidden_tree_on_disk(root: Path) -> None:
    """Base tree plus a nested file *inside* a leading-dot directory.

    The base tree already carries the top-level dot entries; this adds the extra
    depth needed to tell `.hidden/*.py` from `.hidden/**/*.py`.
    """
    _write_tree_on_disk(root)
    (root / ".hidden" / "nested").mkdir(parents=True, exist_ok=True)
    (root / ".hidden" / "nested" / "y.py").write_text("y")


def _paths_from_infos(infos: list[dict[str, Any]] | None) -> set[str]:
    if not infos:
        return set()
    return {i["path"] for i in infos}


class TestFilesystemBackendGlobMatrix:
    @pytest.mark.parametrize(("pattern", "path", "expected"), _matrix_expectations())
    def test_matrix(self, tmp_path: Path, pattern: str, path: str, expected: set[str]) -> None:
        _write_tree_on_disk(tmp_path)
        be = FilesystemBackend(root_dir=str(tmp_path), virtual_mode=True)
        assert _paths_from_infos(be.glob(pattern, path=path).matches) == expected
