"""A small coding agent whose file tools are confined to a workspace by safefs.

The loop (``agent.loop``) asks a model for the next step and runs its tool calls through an
approval seam (``agent.policy.approval``); ``read`` and ``write`` go through ``safefs.Root``, ``bash`` is
denied unless a policy allows it; every message is appended to a JSON Lines session.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent.loop import AgentError, Cancelled, TurnLimitExceeded, run_agent
    from agent.messages import AssistantMessage, Message, ToolCall, ToolResult, UserMessage
    from agent.policy.approval import Decision, compose, deny_bash_by_default
    from agent.policy.rules import deny_paths
    from agent.session import Session, SessionError

# Imported on first use, so that a console script can check its extra is installed before any
# module that needs it is imported (``agent.extras``).
_EXPORTS = {
    "Decision": "agent.policy.approval",
    "compose": "agent.policy.approval",
    "deny_bash_by_default": "agent.policy.approval",
    "deny_paths": "agent.policy.rules",
    "AgentError": "agent.loop",
    "Cancelled": "agent.loop",
    "TurnLimitExceeded": "agent.loop",
    "run_agent": "agent.loop",
    "AssistantMessage": "agent.messages",
    "Message": "agent.messages",
    "ToolCall": "agent.messages",
    "ToolResult": "agent.messages",
    "UserMessage": "agent.messages",
    "Session": "agent.session",
    "SessionError": "agent.session",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'agent' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)


__all__ = [
    "AgentError",
    "AssistantMessage",
    "Cancelled",
    "Decision",
    "Message",
    "Session",
    "SessionError",
    "ToolCall",
    "ToolResult",
    "TurnLimitExceeded",
    "UserMessage",
    "compose",
    "deny_bash_by_default",
    "deny_paths",
    "run_agent",
]
