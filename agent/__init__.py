"""A small coding agent whose file tools are confined to a workspace by safefs.

The loop (``agent.loop``) asks a model for the next step and runs its tool calls through an
approval seam (``agent.approval``); ``read`` and ``write`` go through ``safefs.Root``, ``bash`` is
denied unless a policy allows it; every message is appended to a JSON Lines session.
"""

from agent.approval import Decision, compose, deny_bash_by_default, deny_paths
from agent.loop import AgentError, Cancelled, TurnLimitExceeded, run_agent
from agent.messages import AssistantMessage, Message, ToolCall, ToolResult, UserMessage
from agent.session import Session, SessionError

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
