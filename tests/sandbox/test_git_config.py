"""The little of git-config syntax read to find hooks paths and included files: values as git
reads them, and linear time on any line a repository supplies."""

from __future__ import annotations

from safefs.workspace.gitrepos import config_values


def test_a_hooks_path_is_read_from_its_section_only() -> None:
    text = '[core]\n\thooksPath = ".husky/_" ; comment\n[alias]\n\thooksPath = other\n'
    assert config_values(text, "core", "hookspath") == [".husky/_"]


def test_keys_and_sections_are_case_insensitive() -> None:
    assert config_values("[CORE]\nHOOKSPATH=hooks\n", "core", "hookspath") == ["hooks"]


def test_included_paths_from_every_condition_and_not_from_other_sections() -> None:
    text = (
        '[include]\n\tpath = ../.gitconfig\n[includeIf "gitdir:~/work/"]\n\tpath = "w.inc"\n'
        '[includeIf "onbranch:main"] path = m.inc\n[core]\n\tpath = not-an-include\n'
    )
    assert config_values(text, "include", "path") == ["../.gitconfig"]
    assert config_values(text, "includeif", "path", any_subsection=True) == ["w.inc", "m.inc"]


def test_a_line_of_a_million_spaces_is_read_in_one_pass() -> None:
    padding = " " * 1_000_000
    text = f"[core]\n\thooksPath ={padding}hooks{padding}\n{padding}\n"
    assert config_values(text, "core", "hookspath") == ["hooks"]
