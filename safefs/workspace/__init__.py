"""Workspace operations shared by the agent's tools and the ``safefs-mcp`` server.

Each operation is written once here, on the public :class:`safefs.Root` API only: every path a
caller gives is resolved beneath the root's directory fd, and no path string ever reaches
``open()``, ``os.walk``, ``glob``, a subprocess or another library. The front ends
(``agent.tools`` and ``safefs.mcp``) only parse arguments and format results.

Guarantees every operation keeps:

- a result is bounded (``limits.MAX_RESULT_CHARS``); a cut says what was cut and how to get the
  rest;
- a FIFO, socket or device never blocks a call (safefs opens with ``O_NONBLOCK`` and refuses
  anything but a regular file), and a walk never opens one;
- files are streamed: memory stays bounded whatever the file size;
- symlinks met during a walk are listed, never followed;
- failures are :class:`WorkspaceError` whose message names only the path as the caller gave it.
"""

from safefs.workspace.errors import WorkspaceError, check_path, describe_os_error
from safefs.workspace.limits import MAX_RESULT_CHARS

__all__ = ["MAX_RESULT_CHARS", "WorkspaceError", "check_path", "describe_os_error"]
