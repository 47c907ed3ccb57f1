"""What the loop needs from a model: the next assistant message for a conversation."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from agent.messages import AssistantMessage, Message

TextSink = Callable[[str], None]


class ModelClient(Protocol):
    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        *,
        cancel: threading.Event | None = None,
        on_text: TextSink | None = None,
    ) -> AssistantMessage:
        """The model's next assistant message given the conversation and the tool definitions.

        ``on_text`` receives the reply's text as it arrives (where the client streams). Setting
        ``cancel`` abandons the request at once with :class:`RequestCancelled`.
        """
        ...


class ModelError(Exception):
    """The model could not be asked (network, HTTP status, malformed reply, script exhausted)."""


class RequestCancelled(ModelError):
    """The request was abandoned because ``cancel`` was set."""
