"""What the agent toolset drop-in mirrors, read from the installed SDK at run time.

The SDK exposes most of it: the tool definitions (names, descriptions, input schemas) are taken
from the SDK's own ``beta_agent_toolset_20260401`` tools; the caps and limits are its public
constants; the wording of the outside-path refusal is the SDK's own ``resolve_path`` message,
asked once of a path that cannot exist. What the SDK keeps inside its functions is in
:data:`BEHAVIOURS`, one row per release that changed it, and :func:`behaviour` picks the row of
the installed version.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import anthropic
from anthropic.lib.tools import agent_toolset as upstream

# The SDK's public caps and limits, as the installed release sets them.
BASH_OUTPUT_LIMIT: int = upstream.BASH_OUTPUT_LIMIT
BASH_DEFAULT_TIMEOUT: float = upstream.BASH_DEFAULT_TIMEOUT
DEFAULT_MAX_FILE_BYTES: int = upstream.DEFAULT_MAX_FILE_BYTES
DEFAULT_MAX_IMAGE_BASE64_BYTES: int = upstream.DEFAULT_MAX_IMAGE_BASE64_BYTES
DEFAULT_MAX_PDF_BYTES: int = upstream.DEFAULT_MAX_PDF_BYTES
GREP_OUTPUT_LIMIT: int = upstream.GREP_OUTPUT_LIMIT
GLOB_RESULT_LIMIT: int = upstream.GLOB_RESULT_LIMIT
WALK_MAX_ENTRIES: int = upstream.WALK_MAX_ENTRIES


def parse_version(text: str) -> tuple[int, int, int]:
    """``"2.16.0"`` (or ``"2.16.0rc1"``) as ``(2, 16, 0)``."""
    numbers = [int(n) for n in re.findall(r"\d+", text)[:3]]
    numbers += [0] * (3 - len(numbers))
    return numbers[0], numbers[1], numbers[2]


SDK_VERSION = parse_version(anthropic.__version__)


@dataclass(frozen=True)
class Behaviour:
    """What a range of SDK releases does that the SDK does not expose as a value."""

    since: tuple[int, int, int]
    # The read tool's default cap on a text file; None: the SDK's DEFAULT_MAX_FILE_BYTES.
    read_cap: int | None
    # ``restart: true`` with a ``command`` runs the command in the fresh shell.
    restart_runs_command: bool
    # A bash output over BASH_OUTPUT_LIMIT: its last BASH_OUTPUT_LIMIT bytes after a
    # "[output truncated]" line ("tail"), or its first BASH_OUTPUT_LIMIT characters and the path
    # of a file that holds all of it ("head-and-file").
    long_output: Literal["tail", "head-and-file"]
    # ``timeout_ms`` is capped at BASH_DEFAULT_TIMEOUT (a zero or negative one is the default
    # in every release we mirror: a timeout in the past is never what was asked).
    timeout_capped: bool
    # The directories grep's built-in walk never enters.
    grep_skipped_dirs: frozenset[str]
    # The error text of a failed command that printed nothing.
    empty_failure_text: str


BEHAVIOURS: tuple[Behaviour, ...] = (
    Behaviour(
        since=(2, 15, 0),
        read_cap=None,
        restart_runs_command=False,
        long_output="tail",
        timeout_capped=False,
        grep_skipped_dirs=frozenset({".git", "node_modules"}),
        empty_failure_text="",
    ),
    Behaviour(
        since=(2, 16, 0),
        read_cap=110_000,
        restart_runs_command=True,
        long_output="head-and-file",
        timeout_capped=True,
        grep_skipped_dirs=frozenset({".git", "node_modules"}),
        # The API refuses an error result with no content.
        empty_failure_text="(no output)",
    ),
)


def behaviour(version: tuple[int, int, int] = SDK_VERSION) -> Behaviour:
    """The row of :data:`BEHAVIOURS` for ``version``: the newest one it is not older than."""
    rows = [row for row in BEHAVIOURS if row.since <= version]
    return rows[-1] if rows else BEHAVIOURS[0]


def read_cap() -> int:
    """The read tool's default cap on a text file, for the installed SDK."""
    cap = behaviour().read_cap
    return DEFAULT_MAX_FILE_BYTES if cap is None else cap


@cache
def tool_definitions() -> dict[str, tuple[str, dict[str, Any]]]:
    """Each agent-toolset tool's name: (description, input schema), from the SDK's own tools.

    Building the SDK's tools runs nothing: its bash shell starts on the first call."""
    context = upstream.AgentToolContext(workdir=f"/nonexistent-{uuid.uuid4().hex}")
    return {
        tool.name: (tool.description, dict(tool.input_schema))
        for tool in upstream.beta_agent_toolset_20260401(context)
    }


@dataclass(frozen=True)
class _Wording:
    before: str
    after: str
    quote: Literal["repr", "literal"]
    opening: str
    closing: str

    def format(self, path: str) -> str:
        shown = repr(path) if self.quote == "repr" else f"{self.opening}{path}{self.closing}"
        return f"{self.before}{shown}{self.after}"


def _outside_wording(others: bool) -> _Wording:
    """The SDK's refusal of a path outside the permitted directories, split around the path.

    The SDK's ``resolve_path`` is asked about an absolute path that does not exist, from a
    workdir that does not exist: it only spells paths, and touches nothing."""
    probe = f"/nonexistent-{uuid.uuid4().hex}"
    context = upstream.AgentToolContext(
        workdir=f"/nonexistent-{uuid.uuid4().hex}",
        allowed_roots=[Path(f"/nonexistent-{uuid.uuid4().hex}")] if others else [],
    )
    try:
        upstream.resolve_path(context, probe)
    except ValueError as exc:
        message = str(exc)
    else:  # pragma: no cover - the SDK accepted a path outside every root
        raise RuntimeError("the SDK's resolve_path accepted a path outside its roots")
    if repr(probe) in message:
        before, _, after = message.partition(repr(probe))
        return _Wording(before, after, "repr", "", "")
    before, _, after = message.partition(probe)
    opening, closing = before[-1:], after[:1]
    if opening not in "\"'`" or closing != opening:
        opening = closing = ""
    return _Wording(before[: len(before) - len(opening)], after[len(closing) :], "literal", opening, closing)


@cache
def _wordings() -> dict[bool, _Wording]:
    return {others: _outside_wording(others) for others in (False, True)}


def outside_message(path: str, others: bool) -> str:
    """The SDK's words for ``path`` lying outside the working directory (and, with ``others``,
    outside the other permitted directories too), without the ``op:`` prefix."""
    return _wordings()[others].format(path)
