"""Rules as approval hooks: sensitive paths, and edits built on a redaction placeholder.

Each returns a :data:`agent.approval.Policy`; :func:`agent.approval.compose` puts them in front
of a permission mode, so a denied call is refused before anyone is asked about it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

import safefs
from agent.approval import ALLOW, Decision, Policy, deny
from agent.messages import ToolCall
from agent.policy.sensitive import PathRule, PathRules
from agent.policy.targets import DIRECTORY_TOOLS, WRITING_TOOLS, call_path, canonicaliser
from agent.secret_scanner import PLACEHOLDER_PATTERN


def _denied_message(call: ToolCall, path: str, canonical: str | None, rule: PathRule) -> str:
    verb = "write to" if call.name in WRITING_TOOLS else f"{call.name} of"
    shown = repr(path)
    if canonical is not None and canonical != posixpath.normpath(path).lstrip("/"):
        shown += f" (really {canonical!r})"
    return f"{verb} {shown} denied: {rule.describe()}"


def _default_paths(call: ToolCall) -> list[str]:
    path = call_path(call.name, call.input)
    return [] if path is None else [path]


def path_rules(rules: PathRules, root: safefs.Root | None = None, *,
               paths_of: Callable[[ToolCall], list[str]] = _default_paths) -> Policy:
    """Deny a call whose path, as given or canonicalised through ``root``, a rule denies. A
    path the operation refuses anyway (one escaping the workspace) is left to safefs.
    ``paths_of`` gives a call's paths (by default the built-in tools' ``path`` argument; a
    tool's own ``target_paths`` where the tools are known)."""
    canonical_of = canonicaliser(root)

    def policy(call: ToolCall) -> Decision:
        writing = call.name in WRITING_TOOLS
        directory = call.name in DIRECTORY_TOOLS
        for path in paths_of(call):
            canonical = canonical_of(path)
            if canonical is None:
                continue  # the operation refuses this path itself (an escape, say)
            for candidate in (posixpath.normpath(path).lstrip("/"), canonical):
                rule = rules.denial(candidate, writing=writing, directory=directory)
                if rule is not None:
                    return deny(_denied_message(call, path, canonical, rule),
                                decided_by=f"rule:{rule.pattern}")
        return ALLOW

    return policy


PLACEHOLDER_REFUSAL = (
    "{tool} refused: {field} contains the redaction placeholder {placeholder}. The file holds a "
    "secret there that was not shown to you, so text built on the placeholder would not match "
    "the file or would overwrite the secret with the placeholder. Change only text without a "
    "placeholder (a smaller old_string), or ask the user to make this change."
)

# The fields of a call whose text ends up in a file.
_WRITTEN_FIELDS = {"edit": ("old_string", "new_string"), "write": ("content",)}


def refuse_placeholder_writes(call: ToolCall) -> Decision:
    """An ``edit`` (or ``write``) whose text carries a ``[REDACTED:...]`` placeholder: the model
    saw the file redacted, and acting on the placeholder would corrupt it."""
    for name in _WRITTEN_FIELDS.get(call.name, ()):
        value = call.input.get(name) if isinstance(call.input, dict) else None
        if not isinstance(value, str):
            continue
        found = PLACEHOLDER_PATTERN.search(value)
        if found is not None:
            return deny(PLACEHOLDER_REFUSAL.format(tool=call.name, field=name,
                                                   placeholder=found.group(0)),
                        decided_by="rule:redaction-placeholder")
    return ALLOW
