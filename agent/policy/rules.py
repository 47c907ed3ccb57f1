"""Rules as approval hooks: path rules (the built-in sensitive lists, ``--allow-path`` and
``--deny-path``, or a library user's own patterns), and edits built on a redaction placeholder.

Each returns a :data:`agent.policy.approval.Policy`; :func:`agent.policy.approval.compose` puts
them in front of a permission mode, so a denied call is refused before anyone is asked about it.
One engine judges every path: :class:`agent.policy.sensitive.PathRules` on the paths a call's tool
declares, each as given and canonically (:mod:`agent.policy.targets`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import safefs
from agent.messages import ToolCall
from agent.policy.approval import ALLOW, Decision, Policy, deny
from agent.policy.sensitive import ASKED_EVERY_TIME, PathRule, PathRules
from agent.policy.targets import DIRECTORY_TOOLS, Target, paths_of, target, writes
from agent.secret_scanner import PLACEHOLDER_PATTERN
from agent.tools.base import Tool

# What the model is told: the call, the path it gave, where that leads, and the rule.
Explain = Callable[[ToolCall, str, Target, PathRule], str]


def _rule_policy(
    rules: PathRules,
    root: safefs.Root | None,
    tools: Iterable[Tool] | None,
    explain: Explain,
    skip: frozenset[str] = frozenset(),
) -> Policy:
    """Deny a call when a rule denies one of its paths, as given or canonically. A path the
    operation refuses anyway (one escaping the workspace) is left to safefs; rules of the kinds
    in ``skip`` are left to whoever decides next."""
    paths = paths_of(tools)

    def policy(call: ToolCall) -> Decision:
        writing = writes(call)
        directory = call.name in DIRECTORY_TOOLS
        for path in paths(call):
            found = target(root, path)
            if found is None:
                continue  # the operation refuses this path itself (an escape, say)
            for candidate in found.candidates():
                rule = rules.denial(candidate, writing=writing, directory=directory, skip=skip)
                if rule is not None:
                    return deny(explain(call, path, found, rule), decided_by=f"rule:{rule.pattern}")
        return ALLOW

    return policy


def _denied_message(call: ToolCall, path: str, found: Target, rule: PathRule) -> str:
    verb = "write to" if writes(call) else f"{call.name} of"
    shown = repr(path)
    if found.canonical != path:
        shown += f" (really {found.canonical!r})"
    return f"{verb} {shown} denied: {rule.describe()}"


def path_rules(
    rules: PathRules,
    root: safefs.Root | None = None,
    *,
    tools: Iterable[Tool] | None = None,
    person_decides_protected: bool = False,
    person_decides: frozenset[str] = frozenset(),
) -> Policy:
    """Deny a call whose path, as given or canonicalised through ``root``, a rule denies, with a
    reason naming the rule. Each call's paths are the ones its tool declares among ``tools``
    (by default the built-in file tools). With ``person_decides_protected`` (``ask`` mode),
    protected-config and git paths are not denied here: the person is asked about each such
    write (:class:`agent.policy.ask.TerminalApprover`); ``person_decides`` names the kinds of
    rule left to the person so in other modes (``full``: protected config)."""
    skip = (ASKED_EVERY_TIME if person_decides_protected else frozenset()) | person_decides
    return _rule_policy(rules, root, tools, _denied_message, skip)


def deny_paths(
    patterns: Iterable[str], *, root: safefs.Root | None = None, tools: Iterable[Tool] | None = None
) -> Policy:
    """Deny calls whose path matches one of ``patterns``, with the reason ``path 'P' is denied
    by policy (PATTERN)``.

    Patterns are ``--deny-path`` patterns, judged by the same engine: ``.gitignore`` syntax
    (:mod:`agent.policy.sensitive`), so a pattern without a slash (``"*.pem"``, ``".env"``)
    catches a name in any directory, ``"secrets/"`` a directory and everything beneath it, and a
    pattern with a slash inside (``"secrets/*"``) is anchored at the workspace root (``**/``
    for any depth); a ``*`` does not cross a ``/``. (Before, they were ``fnmatch`` patterns
    matched against the whole path and its final name, whose ``*`` crossed ``/``.) An empty
    pattern, a comment or one starting with ``!`` is a
    :class:`agent.policy.sensitive.PatternError`.

    Each call's paths are the ones its tool declares among ``tools`` (by default the built-in
    file tools). With ``root``, a path is also judged canonically, as the operation will follow
    it, so an alias made of symlinks inside the workspace does not slip by, not even a dangling
    one whose target's directory does not exist yet, and an absolute path is judged relative to
    the root whichever spelling of it (as opened or its realpath) it starts with. This is a
    policy that reads arguments, not a confinement boundary: safefs is the boundary; a policy
    only narrows what is allowed inside it.
    """
    rules = PathRules(deny=patterns, builtin=False)
    return _rule_policy(
        rules,
        root,
        tools,
        lambda call, path, found, rule: f"path {path!r} is denied by policy ({rule.pattern})",
    )


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
            return deny(
                PLACEHOLDER_REFUSAL.format(tool=call.name, field=name, placeholder=found.group(0)),
                decided_by="rule:redaction-placeholder",
            )
    return ALLOW
