"""``--mode ask``: the person at the terminal approves each write, edit and shell command.

What is shown is what will really happen: the canonical root-relative path the call will touch
(symlinks followed, as the operation follows them), a coloured unified diff of the change, or
the exact command and the sandbox it will run in. Text from the model is shown with control
characters made visible, so it cannot move the cursor, recolour or rewrite the prompt, and with
every character that could be read as shell syntax or as nothing escaped
(:func:`agent.display.literal`); a file name's newline cannot start a line of the diff.

The terminal is ``/dev/tty``, as ``ssh`` and ``sudo`` use it: the conversation's output can be
redirected and the question still reaches the person. Without a controlling terminal every
such call is denied with the reason ``approval needs a terminal``.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import select
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

import safefs
from agent.display import literal, visible
from agent.messages import ToolCall
from agent.policy.approval import Decision, deny
from agent.policy.sensitive import PathRule, PathRules
from agent.policy.targets import (
    TEXT_EDITOR_TOOL,
    WRITING_TOOLS,
    PathsOf,
    canonical_path,
    paths_of,
    target,
    writes,
)
from agent.tools.base import Tool
from safefs.workspace.edits import Edit, apply_edits
from safefs.workspace.errors import WorkspaceError

NO_TERMINAL = "approval needs a terminal"
NO_ANSWER = "nobody answered at the terminal within {seconds:g} s (--ask-timeout): declined"
DEFAULT_ASK_TIMEOUT = 300.0
DENIED_BY_PERSON = "the person at the terminal declined this call"
MAX_DIFF_LINES = 400
MAX_DIFF_BYTES = 1 << 20  # no diff is computed for larger content (difflib is superlinear)
TEXT_EDITOR_CHANGES = frozenset({"create", "str_replace", "insert"})
UNCONFINED_BASH = "none: the command runs with your rights (its environment is scrubbed)"

_RED, _GREEN, _CYAN, _BOLD, _RESET = "\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[1m", "\x1b[0m"


def _current_text(root: safefs.Root, path: str) -> str | None:
    """The file's text now, None when it does not exist; raises ValueError when unreadable."""
    try:
        size = root.stat(path).st_size
        if size > MAX_DIFF_BYTES:
            raise ValueError(f"the current file is too large to show a diff ({size} bytes)")
        data = root.read_bytes(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ValueError(f"cannot read the current file ({reason})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the current file is not UTF-8 text") from None


def _new_text(call: ToolCall, current: str | None, path: str) -> str:
    """What the file will hold if the call succeeds; ValueError when the call will fail. An
    edit is worked out by the edit tool's own function (``safefs.workspace.edits``), CRLF
    retry and all, and a text editor call by the text editor's (``safefs.anthropic``), so the
    preview and the change cannot disagree."""
    if call.name == TEXT_EDITOR_TOOL:
        return _text_editor_result(call, current)
    if call.name == "write":
        content = str(call.input.get("content", ""))
        if len(content) > MAX_DIFF_BYTES:
            raise ValueError(f"the new content is too large to show a diff ({len(content)} characters)")
        return content
    if current is None:
        raise ValueError("the file does not exist: the edit will fail")
    edit = Edit(
        str(call.input.get("old_string", "")),
        str(call.input.get("new_string", "")),
        bool(call.input.get("replace_all", False)),
    )
    try:
        return apply_edits(current, [edit], path)[0]
    except WorkspaceError as exc:
        raise ValueError(f"the edit will fail: {exc}") from None


def _text_editor_result(call: ToolCall, current: str | None) -> str:
    from anthropic.lib.tools import ToolError  # the text editor tool is offered only with the SDK

    from safefs.anthropic.text_editor import changed_text

    try:
        after = changed_text(current, call.input)
    except ToolError as exc:
        raise ValueError(f"the call will fail: {exc}") from None
    if len(after) > MAX_DIFF_BYTES:
        raise ValueError(f"the new content is too large to show a diff ({len(after)} characters)")
    return after


def _lines(text: str) -> list[str]:
    """``text`` cut into lines where bash, make and git cut it: at ``\n`` alone. A carriage
    return, a form feed or a Unicode line separator stays inside its line, shown escaped."""
    return text.split("\n")


def _keep_ends(text: str) -> list[str]:
    lines = [line + "\n" for line in _lines(text)]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def coloured_diff(before: str | None, after: str, name: str, *, colour: bool = True) -> list[str]:
    """A unified diff from ``before`` (None: a new file) to ``after``, capped in length."""
    lines = list(
        difflib.unified_diff(
            [] if before is None else _keep_ends(before),
            _keep_ends(after),
            # A name is one line of the header: a newline in it cannot start a "+" line.
            fromfile="/dev/null" if before is None else f"a/{literal(name, one_line=True)}",
            tofile=f"b/{literal(name, one_line=True)}",
            n=3,
        )
    )
    shown: list[str] = []
    for line in lines[:MAX_DIFF_LINES]:
        text = literal(line.rstrip("\n"))
        if not line.endswith("\n"):
            text += "  (no newline at end)"
        if colour and line.startswith("+") and not line.startswith("+++"):
            text = f"{_GREEN}{text}{_RESET}"
        elif colour and line.startswith("-") and not line.startswith("---"):
            text = f"{_RED}{text}{_RESET}"
        elif colour and line.startswith("@@"):
            text = f"{_CYAN}{text}{_RESET}"
        shown.append(text)
    if len(lines) > MAX_DIFF_LINES:
        shown.append(
            f"[diff cut: {len(lines) - MAX_DIFF_LINES} more lines not shown; answer no "
            "to look at the change another way first]"
        )
    if not lines:
        shown.append("(no change to the file's content)")
    return shown


def describe_call(
    call: ToolCall,
    root: safefs.Root,
    *,
    sandbox: str = UNCONFINED_BASH,
    colour: bool = True,
    paths: PathsOf | None = None,
) -> list[str]:
    """The lines shown to the person for ``call``; ``paths`` gives its paths (by default as the
    built-in file tools declare them)."""
    bold = (lambda s: f"{_BOLD}{s}{_RESET}") if colour else (lambda s: s)
    if call.name == "bash":
        command = str(call.input.get("command", ""))
        return [
            bold("The agent wants to run a shell command:"),
            *(f"  $ {literal(line)}" for line in _lines(command)),
            f"  in:      the workspace ({literal(root.path, one_line=True)})",
            f"  sandbox: {visible(sandbox)}",
        ]
    given = (paths or paths_of())(call)
    if not given:
        return [bold(f"The agent wants to call {visible(call.name)} with:"), f"  {literal(repr(call.input))}"]
    action = visible(call.name)
    if call.name == TEXT_EDITOR_TOOL:
        action = f"{visible(str(call.input.get('command')))} ({action})"
    lines = [bold(f"The agent wants to {action} a file:")]
    for path in given:
        really = canonical_path(root, path)
        lines += [
            f"  path as given: {literal(path)!r}",
            "  really:        "
            + (
                f"{literal(really)!r} (in the workspace)"
                if really
                else "outside the workspace or invalid: the call will fail"
            ),
        ]
    canonical = canonical_path(root, given[0])  # a writing call names one path: the file changed
    if canonical is None or not _changes_text(call):
        return lines
    try:
        current = _current_text(root, canonical)
        after = _new_text(call, current, canonical)
    except ValueError as exc:
        return [*lines, f"  note: {exc}"]
    return [*lines, *("  " + line for line in coloured_diff(current, after, canonical, colour=colour))]


def _changes_text(call: ToolCall) -> bool:
    """A call whose result is a file's new text, shown as a diff."""
    if call.name == TEXT_EDITOR_TOOL:
        return call.input.get("command") in TEXT_EDITOR_CHANGES
    return call.name in WRITING_TOOLS


Answer = str  # "yes", "no", "always", or "timeout"
_ANSWERS = {"y": "yes", "yes": "yes", "n": "no", "no": "no", "a": "always", "always": "always"}


class Terminal(Protocol):
    def write(self, text: str, /) -> object: ...
    def flush(self) -> None: ...
    def readline(self, timeout: float | None = None, /) -> str | None:
        """A line ("" at end of input); None when ``timeout`` seconds passed first."""

    def close(self) -> None: ...


class FdTerminal:
    """A terminal file descriptor read a line at a time (a tty cannot be opened "r+")."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, text: str) -> int:
        data = text.encode("utf-8", "replace")
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
        return len(text)

    def flush(self) -> None:
        pass

    def readline(self, timeout: float | None = None) -> str | None:
        line = bytearray()
        deadline = None if timeout is None else time.monotonic() + timeout
        while not line.endswith(b"\n"):
            if deadline is not None:
                remaining = deadline - time.monotonic()
                ready = remaining > 0 and select.select([self._fd], [], [], remaining)[0]
                if not ready:
                    return None
            try:
                byte = os.read(self._fd, 1)
            except OSError:  # EIO: the terminal went away; as good as end of input
                byte = b""
            if not byte:
                break
            line += byte
        return line.decode("utf-8", "replace")

    def close(self) -> None:
        os.close(self._fd)


def open_terminal() -> Terminal | None:
    """The controlling terminal for reading and writing, or None when there is none."""
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None
    if not os.isatty(fd):
        os.close(fd)
        return None
    return FdTerminal(fd)


class TerminalApprover:
    """Asks at the terminal about each call given to it; remembers "always" per tool.

    ``terminal`` is a factory for the terminal stream (``/dev/tty`` by default); it returning
    None means there is no terminal, and every call is denied with :data:`NO_TERMINAL`.
    ``tools`` declare each call's paths (by default the built-in file tools). A write to a path
    ``rules`` protect (``PathRules.protected``) is asked about every time, and "always" is not
    offered for it. A question unanswered for ``timeout`` seconds is answered no."""

    def __init__(
        self,
        root: safefs.Root,
        *,
        sandbox: str = UNCONFINED_BASH,
        terminal: Callable[[], Terminal | None] = open_terminal,
        colour: bool | None = None,
        tools: Iterable[Tool] | None = None,
        rules: PathRules | None = None,
        timeout: float | None = DEFAULT_ASK_TIMEOUT,
        mode: str = "ask",
    ) -> None:
        self.root = root
        self.decided_by = f"mode:{mode}"  # who decided when nobody at the terminal did
        self.rules = rules  # protected paths are asked about every time, "always" or not
        self.timeout = timeout
        self.sandbox = sandbox
        self.paths = paths_of(tools)  # each call's paths, as its tool declares them
        self._terminal = terminal
        self._colour = colour
        self._always: set[str] = set()
        self._lock = threading.Lock()  # one question on the terminal at a time

    def __call__(self, call: ToolCall) -> Decision:
        protected = self._protected(call)
        with self._lock:
            if call.name in self._always and protected is None:
                return Decision(True, decided_by="person:always")
            with self._session() as tty:
                if tty is None:
                    return deny(NO_TERMINAL, decided_by=self.decided_by)
                try:
                    answer = self._ask(tty, call, protected)
                except OSError:  # the terminal went away while asking
                    return deny(NO_TERMINAL, decided_by=self.decided_by)
        if answer == "always":
            self._always.add(call.name)
        if answer == "no":
            return deny(DENIED_BY_PERSON, decided_by="person")
        if answer == "timeout":
            return deny(NO_ANSWER.format(seconds=self.timeout), decided_by=self.decided_by)
        return Decision(True, decided_by="person")

    @contextlib.contextmanager
    def _session(self) -> Iterator[Terminal | None]:
        tty = self._terminal()
        try:
            yield tty
        finally:
            if tty is not None:
                tty.close()

    def protected(self, call: ToolCall) -> PathRule | None:
        """The protected-config or git rule one of a writing call's paths falls under."""
        return self._protected(call)

    def keep_starter(self, path: str, aside: str) -> bool:
        """``--mode full``: a starter file a command made was set aside to ``aside``; the person
        is shown what it holds and asked whether to put it back (every time; no answer, end
        of input or no terminal: no)."""
        colour = self._colour if self._colour is not None else os.environ.get("NO_COLOR") is None
        bold = (lambda s: f"{_BOLD}{s}{_RESET}") if colour else (lambda s: s)
        lines = [
            bold("A command made a file that an editor, a shell or a tool runs when the folder is opened:"),
            f"  path:       {literal(path)!r}",
            f"  set aside:  {literal(aside)!r}",
        ]
        if self.root.is_file(aside) and not self.root.is_symlink(aside):
            try:
                content = _current_text(self.root, aside)
            except ValueError as exc:
                lines.append(f"  note: {exc}")
            else:
                lines += ["  " + line for line in coloured_diff(None, content or "", path, colour=colour)]
        else:
            lines.append("  (a directory or a link: look at it before you keep it)")
        with self._lock, self._session() as tty:
            if tty is None:
                return False
            try:
                tty.write("\n" + "\n".join(lines) + "\n")
                for _ in range(3):
                    tty.write("Keep it? [y]es / [n]o (asked every time): ")
                    tty.flush()
                    line = tty.readline(self.timeout)
                    if not line:  # no answer in time, or end of input
                        tty.write("\n")
                        return False
                    answer = _ANSWERS.get(line.strip().lower())
                    if answer in ("yes", "no"):
                        return answer == "yes"
                    tty.write("Please answer y or n.\n")
            except OSError:
                return False
        return False

    def _protected(self, call: ToolCall) -> PathRule | None:
        if self.rules is None or not writes(call):
            return None
        for path in self.paths(call):
            found = target(self.root, path)
            for candidate in found.candidates() if found is not None else ():
                rule = self.rules.protected(candidate)
                if rule is not None:
                    return rule
        return None

    def _ask(self, tty: Terminal, call: ToolCall, protected: PathRule | None) -> Answer:
        colour = self._colour if self._colour is not None else os.environ.get("NO_COLOR") is None
        lines = describe_call(call, self.root, sandbox=self.sandbox, colour=colour, paths=self.paths)
        if protected is not None:
            lines.append(
                f"  protected: {protected.kind} {visible(protected.pattern)!r}: something else "
                "(git, an editor, a shell) acts on this file later; asked every time"
            )
        tty.write("\n" + "\n".join(lines) + "\n")
        name = visible(call.name)
        question = (
            "Allow? [y]es / [n]o (asked every time for this path): "
            if protected is not None
            else f"Allow? [y]es / [n]o / [a]lways allow {name} for this run: "
        )
        for _ in range(3):
            tty.write(question)
            tty.flush()
            line = tty.readline(self.timeout)
            if line is None:  # nobody answered in time: as good as no
                tty.write(f"\n(no answer in {self.timeout:g} s: no)\n")
                return "timeout"
            if not line:  # end of input: nobody is there to say yes
                tty.write("\n")
                return "no"
            answer = _ANSWERS.get(line.strip().lower())
            if answer == "always" and protected is not None:
                answer = None
            if answer is not None:
                return answer
            tty.write("Please answer y or n.\n" if protected is not None else "Please answer y, n or a.\n")
        return "no"


def protected_writes_asked(approver: TerminalApprover) -> Callable[[ToolCall], Decision]:
    """``--mode full``: a write to a path a rule protects (a starter file, a hooks path) is asked
    at the terminal, every time, with no "always"; every other call is the next hook's."""

    def policy(call: ToolCall) -> Decision:
        if approver.protected(call) is None:
            return Decision(True)
        return approver(call)

    return policy
