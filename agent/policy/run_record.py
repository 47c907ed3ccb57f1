"""The run's own record, the session and the audit log, kept out of the tools' reach.

With ``--session .agent/run.jsonl`` inside the workspace, the audit log lies beside it, and a
tool that could write there could replace the log the run is being judged by (or read back
the conversation). So when either file lies inside the workspace, its directory is denied to
every tool, reading and writing, and no option lifts that; when the directory is the workspace
root itself, the files are (and the ``.partial`` file a resumed session may set aside).

Where a file lies is safefs's decision: the path, as given on the command line (relative to
the current directory), is spelled absolute and handed to ``Root.relative``/``Root.resolve``,
which accept it under either spelling of the workspace and follow its links.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable

import safefs
from agent.policy.sensitive import RUN_RECORD, PathRule, escape
from agent.policy.targets import canonical_path


def _in_workspace(root: safefs.Root, path: str) -> str | None:
    """The canonical root-relative path of the file ``path`` (relative to the current
    directory) when it lies inside the workspace; None otherwise."""
    given = os.fspath(path)
    absolute = given if os.path.isabs(given) else os.path.join(os.getcwd(), given)
    located = canonical_path(root, absolute)
    return None if located in (None, ".") else located


def run_record_rules(root: safefs.Root, files: Iterable[str]) -> list[PathRule]:
    """Fixed rules denying every access to the run's record files inside the workspace."""
    rules: list[PathRule] = []
    for path in files:
        located = _in_workspace(root, path)
        if located is None:
            continue
        directory = posixpath.dirname(located)
        patterns = [escape(directory)] if directory else [escape(located), escape(located) + ".partial*"]
        rules += [PathRule(pattern, RUN_RECORD, fixed=True) for pattern in patterns]
    return list(dict.fromkeys(rules))  # the session and the audit log often share a directory
