"""The approval seam: a policy sees each tool call before it runs and may deny it.

A policy is any callable ``(ToolCall) -> Decision``. A denial becomes an error result the model
sees (with the policy's reason) and the loop goes on; the call never runs. ``decided_by`` says
who decided (a mode, a rule, the person at the terminal, a hook); the audit log records it.
Permission modes and path rules (the rest of ``agent.policy``) are policies like any other, put
together with :func:`compose`; a library user adds their own the same way
(:func:`agent.policy.rules.deny_paths` is one that reads a call's paths).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent.messages import ToolCall

DEFAULT_DENIAL_REASON = "tool call rejected"
BASH_DENIAL_REASON = "bash requires an explicit approval policy; --mode full allows it"


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
