"""The approval seam: a policy sees each tool call before it runs and may deny it.

A policy is any callable ``(ToolCall) -> Decision``. A denial becomes an error result the model
sees (with the policy's reason) and the loop goes on; the call never runs.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import safefs
from agent.messages import ToolCall

DEFAULT_DENIAL_REASON = "tool call rejected"
BASH_DENIAL_REASON = "bash requires an explicit approval policy"


@dataclass(frozen=True)
class Decision:
    approved: bool
    reason: str | None = None


ALLOW = Decision(True)


def deny(reason: str | None = None) -> Decision:
    return Decision(False, reason)


Policy = Callable[[ToolCall], Decision]


def allow_all(call: ToolCall) -> Decision:
    return ALLOW


def deny_bash_by_default(call: ToolCall) -> Decision:
    """``bash`` is not confined by safefs, so it runs only when a policy says so explicitly."""
    if call.name == "bash":
        return deny(BASH_DENIAL_REASON)
    return ALLOW


def compose(*policies: Policy) -> Policy:
    """A policy asking each of ``policies`` in order; the first denial wins."""

    def composed(call: ToolCall) -> Decision:
        for policy in policies:
            decision = policy(call)
            if not decision.approved:
                return decision
        return ALLOW

    return composed


def deny_paths(patterns: Iterable[str], *, root: safefs.Root | None = None,
               tools: Iterable[str] = ("read", "write")) -> Policy:
    """Deny ``read``/``write`` calls whose ``path`` matches one of the glob ``patterns``.

    A pattern is matched against the normalised path and against its final name, so ``"*.pem"``
    and ``".env"`` catch files in any directory. With ``root``, the path is first resolved
    through safefs, so an alias made of symlinks inside the workspace does not slip by.
    This is an example of a policy that reads arguments, not a confinement boundary: safefs is
    the boundary; a policy only narrows what is allowed inside it.
    """
    pattern_list = list(patterns)
    names = frozenset(tools)

    def candidates(path: str) -> list[str]:
        found = [posixpath.normpath(path).lstrip("/")]
        if root is not None:
            try:
                found.append(str(root.resolve(path)))
            except (OSError, ValueError):
                pass  # the tool itself will refuse the path; nothing more to match here
        return found + [posixpath.basename(p) for p in found]

    def policy(call: ToolCall) -> Decision:
        path = call.input.get("path")
        if call.name not in names or not isinstance(path, str):
            return ALLOW
        for candidate in candidates(path):
            for pattern in pattern_list:
                if fnmatch.fnmatchcase(candidate, pattern):
                    return deny(f"path {path!r} is denied by policy ({pattern})")
        return ALLOW

    return policy
