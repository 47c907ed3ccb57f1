"""The cancel event of the tool call running in this thread.

The server sets a call's :class:`threading.Event` when the client sends
``notifications/cancelled`` for it; the tool table reads it here and hands it to the workspace
operations (``cancel=``), which stop at their next check. A context variable, so the tool
functions keep their one signature and each worker thread sees only its own call's event.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_current: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("cancel", default=None)


def cancel_event() -> threading.Event | None:
    """The event of the call running in this thread, or None outside a call."""
    return _current.get()


@contextmanager
def cancellable(event: threading.Event | None) -> Iterator[None]:
    token = _current.set(event)
    try:
        yield
    finally:
        _current.reset(token)
