"""The mutations of the safety checks: each a one-place bug planted in a copy of the tree, and the
test files that must fail on it (``python -m tests.mutations.run``; ``make test-mutations``).

A mutation replaces ``old``, which must occur exactly once in ``file``, with ``new``: a snippet
that is gone (the code moved on) fails the run and ``tests/mutations/test_table.py``, so the
list cannot rot unnoticed. ``tests`` are pytest arguments (files, node ids, ``-k``), kept to the
few files that judge that check, so a run takes minutes. ``env`` names the pinned framework
environment (``tests/compat_envs.py``) a drop-in's tests need.

The ``area`` says what is mutated: the areas of the core, the layers above it, and one mutation
per guarantee docs/threat-model.md states (``guarantee: ...``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutation:
    name: str
    area: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]
    env: str = ""

    def plant(self, text: str) -> str:
        """``text`` with the mutation planted; ValueError when ``old`` is not there exactly once."""
        found = text.count(self.old)
        if found != 1:
            raise ValueError(f"mutation {self.name}: its snippet occurs {found} times in {self.file}")
        return text.replace(self.old, self.new)


SCENARIOS = "tests/safefs/test_scenarios.py"
HARDENING = "tests/safefs/test_hardening.py"

MUTATIONS: tuple[Mutation, ...] = (
    # -- the link judge (guarantee: links safefs makes stay inside) ---------------------------
    Mutation(
        "links-absolute-target-allowed",
        "link judge",
        "safefs/_resolve/links.py",
        '        if target.startswith(b"/"):\n            raise PathEscapeError()  # followed from the host',
        "        if False:\n            raise PathEscapeError()  # followed from the host",
        ("tests/safefs/test_api.py", "-k", "symlink_refuses"),
    ),
    Mutation(
        "links-moved-links-not-judged",
        "link judge",
        "safefs/_resolve/links.py",
        "        if not is_link and (keeps_source or not stat.S_ISDIR(st.st_mode)):\n            return",
        "        if not is_link:\n            return",
        ("tests/safefs/test_link_guarantee.py",),
    ),
    Mutation(
        "links-unjudged-move-unchecked",
        "guarantee: the moved entry is checked around the call, judged or not",
        "safefs/_resolve/links.py",
        "        if not self.started and self.source is None:\n            make()",
        "        if not self.started:\n            make()",
        ("tests/safefs/test_link_races.py", "-k", "turns_into_a_symlink"),
    ),
    Mutation(
        "links-fail-open",
        "guarantee: the link judge fails closed",
        "safefs/_resolve/links.py",
        "        except _Dangling:\n            return\n        except OSError as exc:\n"
        "            raise _refused(exc) from None",
        "        except _Dangling:\n            return\n        except OSError as exc:\n"
        "            if isinstance(exc, PathEscapeError):\n                raise",
        ("tests/safefs/test_link_guarantee.py",),
    ),
    # -- the walk (guarantee: every operation reaches only inodes beneath the root) -----------
    Mutation(
        "walk-dotdot-above-root-clamped",
        "walk",
        "safefs/_resolve/walk.py",
        '        elif self.mode != "in_root":\n            raise PathEscapeError()\n\n    def link(',
        "        elif False:\n            raise PathEscapeError()\n\n    def link(",
        (SCENARIOS, "-k", "read_bytes or stat"),
    ),
    Mutation(
        "walk-absolute-symlink-followed-from-root",
        "guarantee: an absolute symlink is an escape",
        "safefs/_resolve/walk.py",
        '        if target.startswith(b"/"):\n            if self.mode != "in_root":',
        '        if target.startswith(b"/"):\n            if False:',
        (SCENARIOS, "-k", "read_bytes or stat"),
    ),
    Mutation(
        "walk-link-budget-41",
        "guarantee: at most 40 links per operation",
        "safefs/_resolve/walk.py",
        'if self.mode == "none" or self.links > MAX_SYMLINKS:',
        'if self.mode == "none" or self.links > MAX_SYMLINKS + 1:',
        (HARDENING, SCENARIOS, "-k", "link_budget or read_bytes or stat"),
    ),
    Mutation(
        "walk-magic-links-followed",
        "guarantee: magic links are never followed",
        "safefs/_resolve/walk.py",
        "        if _fastpath.is_magic_link(dirfd, target):\n            raise error(errno.ELOOP)",
        "        if False:\n            raise error(errno.ELOOP)",
        ("tests/safefs/test_api.py", "-k", "magic"),
    ),
    # -- openat2 flags ------------------------------------------------------------------------
    Mutation(
        "openat2-beneath-dropped",
        "openat2 flags",
        "safefs/_resolve/openat2.py",
        '"beneath": _sys.RESOLVE_BENEATH | _sys.RESOLVE_NO_MAGICLINKS,',
        '"beneath": _sys.RESOLVE_NO_MAGICLINKS,',
        (SCENARIOS, "-k", "read_bytes or stat"),
    ),
    Mutation(
        "openat2-magiclinks-in-root",
        "openat2 flags",
        "safefs/_resolve/openat2.py",
        '"in_root": _sys.RESOLVE_IN_ROOT | _sys.RESOLVE_NO_MAGICLINKS,',
        '"in_root": _sys.RESOLVE_IN_ROOT,',
        ("tests/safefs/test_api.py", "-k", "magic"),
    ),
    Mutation(
        "open-follows-final-symlink",
        "guarantee: O_NOFOLLOW unless asked (the flag policy)",
        "safefs/_sys.py",
        "    if not follow:\n        flags |= O_NOFOLLOW",
        "    if False:\n        flags |= O_NOFOLLOW",
        (HARDENING, "-k", "flag_policy"),
    ),
    Mutation(
        "open-without-cloexec",
        "guarantee: every fd is O_CLOEXEC",
        "safefs/_sys.py",
        "    else:\n        flags |= _O_BASE",
        "    else:\n        flags |= O_NOCTTY",
        ("tests/safefs/test_fd_leaks.py", HARDENING, "-k", "close_on_exec or flag_policy"),
    ),
    Mutation(
        "fifo-read-not-refused",
        "guarantee: a FIFO or device is refused at once",
        "safefs/_fastpath.py",
        "    if not stat.S_ISREG(st.st_mode):\n        raise error(errno.EISDIR)",
        "    if stat.S_ISDIR(st.st_mode):\n        raise error(errno.EISDIR)",
        ("tests/safefs/test_api.py", "-k", "fifo"),
    ),
    # -- the atomic write (guarantee: atomic, setuid/setgid dropped, one temp file at most) -----
    Mutation(
        "atomic-temp-without-excl",
        "atomic write",
        "safefs/_atomic.py",
        "    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL",
        "    flags = os.O_WRONLY | os.O_CREAT",
        (
            "tests/safefs/test_api.py",
            "tests/safefs/test_crash.py",
            HARDENING,
            "-k",
            "planted or atomic or write",
        ),
    ),
    Mutation(
        "write-bytes-keeps-setuid",
        "guarantee: a replaced file loses setuid/setgid (>64 KiB path)",
        "safefs/_root.py",
        "    return stat_mod.S_IMODE(st.st_mode) & ~_PRIVILEGE_BITS",
        "    return stat_mod.S_IMODE(st.st_mode)",
        (HARDENING, "-k", "setuid"),
    ),
    Mutation(
        "atomic-mode-not-kept",
        "guarantee: a replaced file keeps its permission bits",
        "safefs/_atomic.py",
        "    if perm is not None:\n        os.fchmod(fd, perm)",
        "    if False:\n        os.fchmod(fd, perm)",
        ("tests/safefs/test_api.py", HARDENING, "-k", "mode or perm or setuid or umask"),
    ),
    # -- path anchoring (guarantee: absolute paths only under a spelling of the held directory)
    Mutation(
        "anchor-string-prefix",
        "path anchoring",
        "safefs/_paths.py",
        "        if got == want:",
        '        if b"/".join(got).startswith(b"/".join(want)):',
        (HARDENING, "tests/safefs/test_api.py", "-k", "absolute or anchor or prefix"),
    ),
    Mutation(
        "anchor-not-checked-against-fd",
        "guarantee: an anchor denotes the directory the fd holds",
        "safefs/_root.py",
        "    return (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino)",
        "    return True",
        (HARDENING, "-k", "absolute_prefix"),
    ),
    # -- remove_all ---------------------------------------------------------------------------
    Mutation(
        "remove-all-removes-dot",
        "remove_all",
        "safefs/_root.py",
        "                if found.name in SPECIAL_NAMES:\n                    raise error(errno.EINVAL,",
        "                if False:\n                    raise error(errno.EINVAL,",
        (SCENARIOS, "tests/safefs/test_api.py", "-k", "remove_all"),
    ),
    Mutation(
        "remove-all-follows-final-link",
        "remove_all",
        "safefs/_root.py",
        "                found = self._lookup(rel, follow=False, lstat=True)",
        "                found = self._lookup(rel, follow=True, lstat=True)",
        (SCENARIOS, "-k", "remove_all"),
    ),
    # -- the fd's life, error messages -------------------------------------------------------
    Mutation(
        "close-does-not-wait-for-operations",
        "guarantee: close() waits for operations in other threads",
        "safefs/_root.py",
        "            if self._users or self._fd < 0:",
        "            if self._fd < 0:",
        ("tests/safefs/test_threads.py", "-k", "close_while"),
    ),
    Mutation(
        "errors-name-internal-paths",
        "guarantee: errors carry the path as the caller gave it",
        "safefs/errors.py",
        "            raise with_filename(exc, self.filename, self.filename2) from None",
        "            raise exc",
        (SCENARIOS, "-k", "read_bytes"),
    ),
    # -- the edit's compare-and-swap ----------------------------------------------------------
    Mutation(
        "edit-cas-displaced-file-trusted",
        "edit CAS",
        "safefs/workspace/edits.py",
        "    if _identity(directory.stat(temp, follow_symlinks=False))[:4] == _identity(read_as)[:4]:",
        "    if True:",
        ("tests/workspace/test_edit_race.py", "-k", "put_back"),
    ),
    Mutation(
        "edit-cas-newer-write-not-put-in-place",
        "edit CAS",
        "safefs/workspace/edits.py",
        "        if _same_file(back, expected):\n            break",
        "        if True:\n            break",
        ("tests/workspace/test_edit_race.py", "-k", "put_back"),
    ),
    Mutation(
        "edit-lock-not-taken",
        "edit CAS",
        "safefs/workspace/edits.py",
        "            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n            return True",
        "            return True",
        ("tests/workspace/test_edits.py", "-k", "simultaneous or concurrent"),
    ),
    # -- gitignore ----------------------------------------------------------------------------
    Mutation(
        "gitignore-negation-ignored",
        "gitignore",
        "safefs/workspace/gitignore.py",
        '    negated = line.startswith(b"!")\n    if negated:\n        line = line[1:]',
        "    negated = False\n    if negated:\n        line = line[1:]",
        ("tests/workspace/test_ignore_like_git.py",),
    ),
    # -- workspace guarantees -----------------------------------------------------------------
    Mutation(
        "workspace-walk-follows-links",
        "guarantee: symlinks met while listing are listed, never followed",
        "safefs/workspace/walk.py",
        '            elif e.is_dir(follow_symlinks=False):\n                kind = "dir"',
        '            elif e.is_dir(follow_symlinks=True):\n                kind = "dir"',
        ("tests/workspace/test_operations.py", "tests/agent/test_list_tool.py"),
    ),
    Mutation(
        "workspace-results-unbounded",
        "guarantee: every result is bounded",
        "safefs/workspace/limits.py",
        "MAX_RESULT_CHARS = 30_000",
        "MAX_RESULT_CHARS = 3_000_000",
        ("tests/workspace/test_caps.py",),
    ),
    # -- the policy, the scanner, the audit log (safefs-agent) --------------------------------
    Mutation(
        "policy-judges-only-the-path-as-given",
        "policy",
        "agent/policy/rules.py",
        "            for candidate in found.candidates():",
        "            for candidate in [path]:",
        ("tests/agent/test_path_rules.py", "tests/agent/test_protected_paths.py"),
    ),
    Mutation(
        "scanner-tokens-need-more-entropy",
        "scanner",
        "agent/secret_scanner.py",
        "        and shannon_entropy(value) >= 3.0\n",
        "        and shannon_entropy(value) >= 9.0\n",
        ("tests/agent/test_secret_scanner.py", "tests/agent/test_secret_corpus.py"),
    ),
    Mutation(
        "audit-hash-not-verified",
        "guarantee: the audit log is a hash chain",
        "agent/audit.py",
        '            if not isinstance(entry, dict) or entry_hash(entry) != entry.get("hash"):',
        "            if not isinstance(entry, dict):",
        ("tests/agent/test_audit.py",),
    ),
    # -- the sandbox: Landlock, seccomp -------------------------------------------------------
    Mutation(
        "landlock-handles-only-reads",
        "Landlock",
        "safefs/sandbox/landlock.py",
        "native.lib.sbx_landlock_create_ruleset(handled_fs(abi), net, scoped, abi)",
        "native.lib.sbx_landlock_create_ruleset(handled_fs(abi) & 0x5, net, scoped, abi)",
        ("tests/sandbox/test_escapes.py",),
    ),
    Mutation(
        "seccomp-unix-sockets-allowed",
        "seccomp",
        "safefs/sandbox/seccomp.py",
        '    Rule("socket", (ArgTest(0, equals=AF_UNIX),), errno.EACCES),\n',
        "",
        ("tests/sandbox/test_escapes.py",),
    ),
    # -- archives and fsspec ------------------------------------------------------------------
    Mutation(
        "archive-filter-skipped",
        "archive filter",
        "safefs/archive/tar.py",
        "        return self.apply(member, self.destination)",
        "        return member",
        ("tests/archive/test_cpython_tar_filters.py", "tests/archive/test_escapes.py"),
    ),
    Mutation(
        "fsspec-xb-replaces-on-commit",
        "fsspec",
        "safefs/fsspec/files.py",
        "self._root.rename(self._temp, self._rel, replace=not self._exclusive)",
        "self._root.rename(self._temp, self._rel, replace=True)",
        (
            "tests/fsspec/test_filesystem.py",
            "tests/fsspec/test_race.py",
            "tests/fsspec/test_local_behaviour.py",
        ),
    ),
    # -- the MCP server -----------------------------------------------------------------------
    Mutation(
        "mcp-root-matched-by-string-prefix",
        "MCP directory match",
        "safefs/mcp/directories.py",
        "        try:\n            outer.relative(anchor)\n        except OSError:\n"
        "            continue\n        return True",
        "        if anchor.startswith(outer.path):\n            return True",
        ("tests/mcp/test_roots_and_cli.py",),
    ),
    Mutation(
        "mcp-read-only-lists-writers",
        "guarantee: --read-only lists no writing tool",
        "safefs/mcp/tools.py",
        "        tools = [t for t in tools if t.read_only]",
        "        tools = list(tools)",
        ("tests/mcp/test_stdio_tools.py", "-k", "read_only"),
    ),
    Mutation(
        "mcp-http-foreign-origin-accepted",
        "guarantee: a foreign Origin is refused",
        "safefs/mcp/http_transport.py",
        "        if origin is not None and origin not in self.origins:",
        "        if False:",
        ("tests/mcp/test_http.py",),
    ),
    Mutation(
        "mcp-http-any-token-accepted",
        "guarantee: every request needs the bearer token",
        "safefs/mcp/http_transport.py",
        "        if not hmac.compare_digest(given, self.expected):",
        "        if not given:",
        ("tests/mcp/test_http.py",),
    ),
    # -- a drop-in ----------------------------------------------------------------------------
    Mutation(
        "langchain-append-falls-back-to-the-original",
        "drop-in (LangChain WriteFileTool)",
        "safefs/integrations/langchain.py",
        '            if append:\n                with root.open(target, "a", encoding="utf-8") as f:\n'
        "                    f.write(text)",
        "            if append:\n"
        "                return _original.WriteFileTool._run(self, file_path, text, append, run_manager)",
        (
            "tests/integrations/test_langchain_race.py",
            "tests/integrations/test_langchain_differential.py",
            "tests/integrations/test_langchain_cases.py",
        ),
        env="langchain",
    ),
)
