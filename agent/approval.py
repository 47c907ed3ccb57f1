"""The approval seam: a policy sees each tool call before it runs and may deny it.

A policy is any callable ``(ToolCall) -> Decision``. A denial becomes an error result the model
sees (with the policy's reason) and the loop goes on; the call never runs. ``decided_by`` says
who decided (a mode, a rule, the person at the terminal, a hook); the audit log records it.
Permission modes and path rules (``agent.policy``) are policies like any other, put together
with :func:`compose`; a library user adds their own the same way.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import safefs
from agent.messages import ToolCall
from agent.policy.targets import PATH_ARGUMENTS, call_path, canonical_path

DEFAULT_DENIAL_REASON = "tool call rejected"
BASH_DENIAL_REASON = "bash requires an explicit approval policy"


@dataclass(frozen=True)
class Decision:
    approved: bool
    reason: str | None = None
    decided_by: str | None = None


ALLOW = Decision(True)


def deny(reason: str | None = None, *, decided_by: str | None = None) -> Decision:
    return Decision(False, reason, decided_by)


Policy = Callable[[ToolCall], Decision]


def allow_all(call: ToolCall) -> Decision:
    return ALLOW


def deny_bash_by_default(call: ToolCall) -> Decision:
    """``bash`` is not confined by safefs, so it runs only when a policy says so explicitly."""
    if call.name == "bash":
        return deny(BASH_DENIAL_REASON, decided_by="deny_bash_by_default")
    return ALLOW


def compose(*policies: Policy) -> Policy:
    """A policy asking each of ``policies`` in order; the first denial wins (later policies are
    not asked). When all approve, the result is the last approval that names who decided."""

    def composed(call: ToolCall) -> Decision:
        approval = ALLOW
        for policy in policies:
            decision = policy(call)
            if not decision.approved:
                return decision
            if decision.decided_by is not None:
                approval = decision
        return approval

    return composed


def deny_paths(patterns: Iterable[str], *, root: safefs.Root | None = None,
               tools: Iterable[str] = tuple(PATH_ARGUMENTS)) -> Policy:
    """Deny calls of ``tools`` whose path matches one of the ``fnmatch`` ``patterns``.

    A pattern is matched against the normalised path and against its final name, so ``"*.pem"``
    and ``".env"`` catch files in any directory. With ``root``, the path is also canonicalised
    as the operation would follow it (``agent.policy.targets.canonical_path``), so an alias made
    of symlinks inside the workspace does not slip by, not even a dangling one whose target's
    directory does not exist yet. This is an example of a policy that reads arguments, not a
    confinement boundary: safefs is the boundary; a policy only narrows what is allowed inside
    it. ``agent.policy.rules`` has the built-in sensitive-path rules.
    """
    pattern_list = list(patterns)
    names = frozenset(tools)

    def candidates(path: str) -> list[str]:
        found = [posixpath.normpath(path).lstrip("/")]
        if root is not None:
            canonical = canonical_path(root, path)
            if canonical is not None:  # None: the tool itself will refuse the path
                found.append(canonical)
        return found + [posixpath.basename(p) for p in found]

    def policy(call: ToolCall) -> Decision:
        path = call_path(call.name, call.input)
        if call.name not in names or path is None:
            return ALLOW
        for candidate in candidates(path):
            for pattern in pattern_list:
                if fnmatch.fnmatchcase(candidate, pattern):
                    return deny(f"path {path!r} is denied by policy ({pattern})",
                                decided_by=f"rule:{pattern}")
        return ALLOW

    return policy
