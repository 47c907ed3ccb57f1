"""Permission modes (``--mode``): which tools run, which are asked about, which are unavailable.

==========  ===============================================================================
mode        what the agent may do
==========  ===============================================================================
read-only   ``read``, ``list``, ``glob``, ``grep``; nothing else is offered to the model, and
            it is told so at the start
edit        the read tools plus ``write`` and ``edit`` (the default); ``bash`` is not offered,
            and a call to it is refused with a reason naming ``--mode full``
ask         the read tools freely; every ``write``, ``edit`` and ``bash`` call is shown to the
            person at the terminal, who answers yes, no, or yes for the rest of the run
full        every tool, ``bash`` included (it runs in the sandbox the bash tool provides)
==========  ===============================================================================

Anthropic's text editor tool (``--tools anthropic``) is judged by its command: a ``view`` is a
read, every other command a write, in each mode and by every path rule.

A mode is an approval hook like any other (:data:`agent.policy.approval.Policy`); the path rules of
``agent.policy.rules`` are composed in front of it, so a denied path is never even asked about.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent.messages import ToolCall
from agent.policy.approval import BASH_DENIAL_REASON, Decision, Policy, deny
from agent.policy.targets import TEXT_EDITOR_TOOL, writes

MODES = ("read-only", "edit", "ask", "full")
DEFAULT_MODE = "edit"

READ_TOOLS = frozenset({"read", "list", "glob", "grep"})
EDIT_TOOLS = frozenset({"write", "edit"})


def _allowed_outright(mode: str) -> frozenset[str] | None:
    """Tools a mode runs without asking; None when it runs every tool."""
    return {"read-only": READ_TOOLS, "edit": READ_TOOLS | EDIT_TOOLS, "ask": READ_TOOLS, "full": None}[mode]


def unavailable_tools(mode: str, names: Iterable[str]) -> list[str]:
    """Of the tool ``names``, those ``mode`` takes away (in the given order): they are not
    offered to the model at all. ``read-only`` keeps only the read tools, ``edit`` the read
    tools with ``write`` and ``edit`` (so no ``bash``); a call to one anyway is refused with a
    reason that says how to allow it."""
    check_mode(mode)
    allowed = {"read-only": READ_TOOLS, "edit": READ_TOOLS | EDIT_TOOLS | {TEXT_EDITOR_TOOL}}.get(mode)
    if allowed is None:
        return []
    return [name for name in names if name not in allowed]


def mode_notice(mode: str, names: Iterable[str]) -> str | None:
    """What the model is told at the start about tools this mode makes unavailable."""
    names = list(names)
    missing = unavailable_tools(mode, names)
    if not missing:
        return None
    usable = [name for name in names if name not in missing]
    many = len(missing) > 1
    return (
        f"This run is in {mode} mode: the {_and(missing)} tool{'s are' if many else ' is'} "
        f"not available, so do not try {'them' if many else 'it'}. Use "
        f"{_and(usable) if usable else 'no tools'}."
    )


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} (choose from {', '.join(MODES)})")


def mode_policy(mode: str, *, approver: Policy | None = None) -> Policy:
    """The hook for ``mode``. ``ask`` needs ``approver``: the person's answer for each call it
    would otherwise have to refuse (see ``agent.policy.ask``)."""
    check_mode(mode)
    if mode == "ask" and approver is None:
        raise ValueError("mode 'ask' needs an approver")
    by = f"mode:{mode}"
    allowed = _allowed_outright(mode)

    def policy(call: ToolCall) -> Decision:
        if allowed is None or call.name in allowed:
            return Decision(True, decided_by=by)
        if call.name == TEXT_EDITOR_TOOL and (mode == "edit" or not writes(call)):
            return Decision(True, decided_by=by)  # a view is a read; its writes are edits
        if mode == "ask":
            assert approver is not None
            return approver(call)
        if call.name == "bash" and mode == "edit":
            return deny(BASH_DENIAL_REASON, decided_by=by)
        return deny(
            f"{mode} mode: the {call.name} tool is not available (available: {', '.join(sorted(allowed))})",
            decided_by=by,
        )

    return policy
