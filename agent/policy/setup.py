"""The permission layer put together: rules in front of a mode, tools guarded, the model told."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import safefs
from agent.approval import Policy, compose
from agent.audit import AuditLog
from agent.messages import ToolCall
from agent.policy.guard import DeniedFiles, ToolCallAudit, guard_tools
from agent.policy.modes import mode_notice, mode_policy, unavailable_tools
from agent.policy.rules import path_rules, refuse_placeholder_writes
from agent.policy.sensitive import PathRules
from agent.policy.targets import call_path
from agent.secret_scanner import SecretScanner
from agent.tools.base import Tool


def permission_policy(mode: str, root: safefs.Root, *, rules: PathRules | None = None,
                      approver: Policy | None = None, tools: Sequence[Tool] = ()) -> Policy:
    """Path rules, then the placeholder refusal, then ``mode``: the first denial wins. With
    ``tools``, each call's paths are the ones its tool declares (``Tool.target_paths``)."""
    by_name = {tool.name: tool for tool in tools}

    def paths_of(call: ToolCall) -> list[str]:
        tool = by_name.get(call.name)
        if tool is not None:
            return tool.target_paths(call.input)
        path = call_path(call.name, call.input)
        return [] if path is None else [path]

    return compose(path_rules(rules if rules is not None else PathRules(), root,
                              paths_of=paths_of),
                   refuse_placeholder_writes, mode_policy(mode, approver=approver))


@dataclass(frozen=True)
class Permissions:
    """What a run needs: the hook, the tools to offer the model, and what to tell it."""

    policy: Policy
    tools: list[Tool]
    notice: str | None


def prepare(tools: Sequence[Tool], root: safefs.Root, *, mode: str,
            rules: PathRules | None = None, approver: Policy | None = None,
            scanner: SecretScanner | None = None, audit: AuditLog | None = None,
            sandbox: str | None = None) -> Permissions:
    """Guard ``tools`` (secret scanner, audit) and build the hook for ``mode``. Tools the mode
    makes unavailable are not offered, and ``notice`` says so to the model at the start."""
    names = [tool.name for tool in tools]
    missing = set(unavailable_tools(mode, names))
    rules = rules if rules is not None else PathRules()
    policy = permission_policy(mode, root, rules=rules, approver=approver, tools=tools)
    offered = [tool for tool in tools if tool.name not in missing]
    call_audit = None if audit is None else ToolCallAudit(
        audit, root, sandbox=sandbox, tools=[tool.name for tool in offered])
    if call_audit is not None:
        policy = call_audit.policy(policy)
    return Permissions(policy, guard_tools(offered, scanner=scanner, audit=call_audit,
                                           denied=DeniedFiles(rules, root)),
                       mode_notice(mode, names))
