"""What the loop needs from a model: the next assistant message for a conversation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from agent.messages import AssistantMessage, Message


class ModelClient(Protocol):
    def complete(self, messages: Sequence[Message],
                 tools: Sequence[dict[str, Any]]) -> AssistantMessage:
        """The model's next assistant message given the conversation and the tool definitions."""
        ...


class ModelError(Exception):
    """The model could not be asked (network, HTTP status, malformed reply, script exhausted)."""
