"""The little of git-config syntax the sandbox reads to find a hooks path and submodules: values
as git reads them, and linear time on any line a repository supplies."""

from __future__ import annotations

from safefs.sandbox.git import config_values, config_values_any_subsection


def test_a_hooks_path_is_read_from_its_section_only() -> None:
    text = '[core]\n\thooksPath = ".husky/_" ; comment\n[alias]\n\thooksPath = other\n'
    assert config_values(text, "core", "hookspath") == [".husky/_"]


def test_keys_and_sections_are_case_insensitive() -> None:
    assert config_values("[CORE]\nHOOKSPATH=hooks\n", "core", "hookspath") == ["hooks"]


def test_submodule_paths_from_every_subsection() -> None:
    text = '[submodule "a"]\n\tpath = libs/a\n[submodule "b"]\n\tpath = "b"\n\turl = x\n'
    assert config_values_any_subsection(text, "submodule", "path") == ["libs/a", "b"]


def test_a_line_of_a_million_spaces_is_read_in_one_pass() -> None:
    padding = " " * 1_000_000
    text = f"[core]\n\thooksPath ={padding}hooks{padding}\n{padding}\n"
    assert config_values(text, "core", "hookspath") == ["hooks"]
