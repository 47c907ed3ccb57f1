"""The walk's ignore decisions equal git's: ``git ls-files -co --exclude-standard`` on trees built
here, fixed cases for each rule of gitignore(5) and random trees (hypothesis)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import safefs
from safefs.workspace.gitignore import NameFilter, name_bytes
from safefs.workspace.walk import Walk, is_ignored

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture(autouse=True)
def own_git_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of the test's own, so neither git nor the walk reads the user's excludes file."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return home


def build(base: Path, files: dict[str, str]) -> None:
    subprocess.run(["git", "init", "-q", str(base)], check=True)
    for name, text in files.items():
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def git_lists(base: Path) -> set[str]:
    out = subprocess.run(
        ["git", "-C", str(base), "ls-files", "-co", "--exclude-standard", "-z"],
        check=True,
        capture_output=True,
    ).stdout
    return {name.decode() for name in out.split(b"\0") if name}


def walk_lists(base: Path) -> set[str]:
    with safefs.Root(str(base)) as root:
        return {e.rel for e in Walk(root) if e.kind != "dir"}


def files_of(*names: str) -> dict[str, str]:
    return {name: "x\n" for name in names}


CASES: dict[str, dict[str, str]] = {
    "whitelist idiom keeps nested sources": {
        ".gitignore": "*\n!*/\n!*.py\n",
        **files_of("src/c.py", "src/d.txt", "top.py", "a/b/e.py", "a/b/f.md"),
    },
    "an excluded directory cannot be re-included": {
        ".gitignore": "node_modules\n!packages/foo\n",
        **files_of("packages/foo/node_modules/x.js", "packages/foo/index.js", "node_modules/y.js"),
    },
    "dir-only pattern spares a file of that name": {
        ".gitignore": "build/\n",
        **files_of("build/out.o", "src/build", "src/build2/x"),
    },
    "nested gitignore and negation": {
        ".gitignore": "*.log\n",
        "sub/.gitignore": "!keep.log\n/local.txt\n",
        **files_of("a.log", "sub/keep.log", "sub/other.log", "sub/local.txt", "sub/deep/local.txt"),
    },
    "anchored and double-star patterns": {
        ".gitignore": "/root.txt\na/**/z\n**/gen/\ndoc/*.html\n",
        **files_of("root.txt", "x/root.txt", "a/z", "a/b/c/z", "q/gen/f", "doc/i.html", "doc/s/i.html"),
    },
    "escapes, classes and trailing spaces": {
        ".gitignore": "\\#hash\n\\!bang\nsp\\ \ntrail   \n[ab].c\n?.d\n",
        **files_of("#hash", "!bang", "sp ", "trail", "a.c", "c.c", "x.d", "xy.d"),
    },
    "rules by name alone, with non-ASCII names": {
        ".gitignore": "*.bäk\ncafé/\nnoté\n",
        "sub/.gitignore": "!keep.bäk\n",
        **files_of("x.bäk", "sub/keep.bäk", "sub/y.bäk", "café/f", "sub/café", "a/noté", "noté.txt"),
    },
    "a negation deeper wins over a shallower rule": {
        ".gitignore": "*.tmp\n",
        "k/.gitignore": "!*.tmp\n",
        **files_of("a.tmp", "k/b.tmp", "k/m/c.tmp"),
    },
}


@pytest.mark.parametrize("case", list(CASES))
def test_fixed_cases_agree_with_git_ls_files(tmp_path: Path, case: str) -> None:
    build(tmp_path, CASES[case])
    assert walk_lists(tmp_path) == git_lists(tmp_path)


def test_info_exclude_and_core_excludes_file(tmp_path: Path, own_git_config: Path) -> None:
    repo = tmp_path / "repo"
    build(repo, files_of("a.secret", "b.bak", "c.txt", "d/e.bak"))
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("*.secret\n")
    (own_git_config / "global-ignore").write_text("*.bak\n!d/e.bak\n")
    (own_git_config / ".gitconfig").write_text(
        f"[core]\n\texcludesFile = {own_git_config / 'global-ignore'}\n"
    )
    assert git_lists(repo) == {"c.txt", "d/e.bak"}
    assert walk_lists(repo) == git_lists(repo)


def test_git_directory_is_skipped_and_a_named_ignored_start_is_walked(tmp_path: Path) -> None:
    build(tmp_path, {".gitignore": "node_modules/\n", **files_of("node_modules/lodash/a.js", "src/m.py")})
    with safefs.Root(str(tmp_path)) as root:
        assert not any(e.rel.split("/")[0] == ".git" for e in Walk(root))
        assert [e.rel for e in Walk(root, "node_modules/lodash")] == ["a.js"]
        assert is_ignored(root, "node_modules/lodash/a.js", False)
        assert not is_ignored(root, "src/m.py", False)


def test_rules_of_the_start_directorys_ancestors_apply(tmp_path: Path) -> None:
    build(tmp_path, {".gitignore": "*.pyc\n", **files_of("pkg/sub/a.py", "pkg/sub/a.pyc")})
    with safefs.Root(str(tmp_path)) as root:
        assert [e.rel for e in Walk(root, "pkg/sub")] == ["a.py"]
        assert [e.rel for e in Walk(root, str(tmp_path / "pkg" / "sub"))] == ["a.py"]  # absolute start


def test_a_hostile_ignore_line_does_not_backtrack(tmp_path: Path) -> None:
    build(tmp_path, {".gitignore": "*a" * 9 + "Z\n", "a" * 80: "x\n", "b.txt": "x\n"})
    assert walk_lists(tmp_path) == git_lists(tmp_path) == {".gitignore", "a" * 80, "b.txt"}


PATTERNS = [
    "*", "!*/", "!*.py", "a", "/a", "a/", "!a", "b/", "!b", "**/c.py", "a/**", "*.txt", "!d.txt",
    "a/b", "[ab]", "?.py", "**/b/", "a/**/c.py", "!/a/c.py", "c*", "!**/d.txt", "b/*.py",
]  # fmt: skip
NAMES = ["a", "b", "c.py", "d.txt"]

paths = st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map("/".join), max_size=12)
rules = st.lists(st.sampled_from(PATTERNS), max_size=5).map(lambda lines: "".join(f"{x}\n" for x in lines))


def _consistent(names: list[str]) -> Iterator[str]:
    """The names that can all exist at once (a path cannot be a file and a directory)."""
    taken: set[str] = set()
    for name in sorted(set(names), key=len):
        parts = name.split("/")
        if any("/".join(parts[:i]) in taken for i in range(1, len(parts))):
            continue
        if any(t.startswith(name + "/") for t in taken):
            continue
        taken.add(name)
        yield name


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=paths, top=rules, nested=rules, where=st.sampled_from(["a", "b", "a/b"]), exclude=rules)
def test_random_trees_agree_with_git(
    names: list[str], top: str, nested: str, where: str, exclude: str
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        tree = files_of(*_consistent(names))
        tree[".gitignore"] = top
        if not any(n == where or where.startswith(n + "/") for n in tree):
            tree[f"{where}/.gitignore"] = nested
        build(base, tree)
        (base / ".git" / "info").mkdir(exist_ok=True)
        (base / ".git" / "info" / "exclude").write_text(exclude)
        assert walk_lists(base) == git_lists(base), (tree, exclude)


@settings(max_examples=300, deadline=None)
@given(
    keys=st.lists(st.text(alphabet="ab.é\ufffd\udcff", max_size=3), max_size=3),
    endings=st.lists(st.text(alphabet="ab.é\ufffd\udcff", max_size=2), max_size=2),
    names=st.lists(st.text(alphabet="ab.é\ufffd\udcff", min_size=1, max_size=4), max_size=5),
)
def test_the_name_filter_compares_text_as_the_rules_compare_bytes(
    keys: list[str], endings: list[str], names: list[str]
) -> None:
    # As a .gitignore is parsed: each pattern's name or ending as the bytes its paths are matched as.
    quick = NameFilter(frozenset(name_bytes(k) for k in keys), tuple(name_bytes(e) for e in endings))
    assert quick.may_match_any(names) == any(quick.may_match(name_bytes(n)) for n in names)


def build_bytes(base: Path, files: dict[bytes, bytes]) -> None:
    subprocess.run(["git", "init", "-q", str(base)], check=True)
    for name, data in files.items():
        path = base / os.fsdecode(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def git_lists_bytes(base: Path) -> set[bytes]:
    out = subprocess.run(
        ["git", "-c", "core.quotePath=false", "-C", str(base), "ls-files", "-co", "--exclude-standard", "-z"],
        check=True,
        capture_output=True,
    ).stdout
    return {name for name in out.split(b"\0") if name}


def walk_lists_bytes(base: Path) -> set[bytes]:
    with safefs.Root(str(base)) as root:
        return {os.fsencode(e.rel) for e in Walk(root) if e.kind != "dir"}


# The six kinds of line that disagreed with git, each with names it should and should not match.
CONSTRUCTS: dict[str, tuple[bytes, list[bytes]]] = {
    "a byte order mark before the first rule": (b"\xef\xbb\xbf*.log\n", [b"a.log", b"b.txt"]),
    "two trailing slashes": (b"foo//\n", [b"foo/x", b"bar/foo/y", b"z"]),
    "an escaped dash in a class": (b"[a\\-c]\n", [b"a", b"b", b"c", b"-", b"d"]),
    "a reversed range, negated": (b"[!z-a]\n", [b"a", b"\xc3\xa9", b"ab"]),
    "? and a class against a multi-byte name": (
        b"?\n[\xc3\xa9]x\n",
        [b"\xc3\xa9", b"\xc3\xa9x", b"e", b"ex", b"\xe6\x97\xa5"],
    ),
    "non-UTF-8 bytes in a pattern": (
        b"caf\xe9\n*\xff\n[\xe0]?\n",
        [b"caf\xe9", b"caf\xe8", b"caf\xc3\xa9", b"a\xff", b"a\xfe", b"a\xc3\xbf", b"\xe1b"],
    ),
}


@pytest.mark.parametrize("case", list(CONSTRUCTS))
def test_each_construct_that_disagreed_agrees_with_git(tmp_path: Path, case: str) -> None:
    rules, names = CONSTRUCTS[case]
    build_bytes(tmp_path, {b".gitignore": rules, **{name: b"x\n" for name in names}})
    assert walk_lists_bytes(tmp_path) == git_lists_bytes(tmp_path)


BYTE_NAMES = [
    b"a", b"b", b"c", b"e", b"ab", b"-", b"\xc3\xa9", b"\xc3\xa9x", b"\xe6\x97\xa5", b"caf\xe9",
    b"x.log", b"x.log ", b"foo", b"[", b"\\",
]  # fmt: skip
BYTE_LINES = [
    b"?", b"??", b"???", b"[a\\-c]", b"[!z-a]", b"[z-a]", b"[\xc3\xa9]", b"[!\xc3\xa9]x", b"?x", b"caf\xe9",
    b"*\xe9", b"foo//", b"foo/", b"!foo", b"*.log", b"!x.log", b"[[:alpha:]]", b"[a-]", b"[]a]", b"[\\]]",
    b"\xe6?\xa5", b"caf\xe8", b"*", b"!*/", b"a/", b"!a", b"**/b", b"[[:a]b:]]", b"\\?",
    b"[\\a-c]", b"[a-\\c]", b"[!a-c-e]", b"[[:digit:]-z]", b"x.log\\ ", b"x.log  ", b"[[:foo:]]", b"[", b"\\",
]  # fmt: skip
byte_paths = st.lists(
    st.lists(st.sampled_from(BYTE_NAMES), min_size=1, max_size=3).map(b"/".join), max_size=10
)
byte_rules = st.tuples(st.booleans(), st.lists(st.sampled_from(BYTE_LINES), max_size=5)).map(
    lambda t: (b"\xef\xbb\xbf" if t[0] else b"") + b"".join(line + b"\n" for line in t[1])
)


def _consistent_bytes(names: list[bytes]) -> list[bytes]:
    return [os.fsencode(n) for n in _consistent([os.fsdecode(n) for n in names])]


@pytest.mark.slow  # a long property run beside git
@settings(max_examples=150, deadline=None)
@given(names=byte_paths, top=byte_rules, nested=byte_rules)
def test_random_trees_with_multibyte_names_and_byte_patterns_agree_with_git(
    names: list[bytes], top: bytes, nested: bytes
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        tree = {name: b"x\n" for name in _consistent_bytes(names)}
        tree[b".gitignore"] = top
        if not any(n == b"a" or n.startswith(b"a/") for n in tree):
            tree[b"a/.gitignore"] = nested
        build_bytes(base, tree)
        assert walk_lists_bytes(base) == git_lists_bytes(base), tree
