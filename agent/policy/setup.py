"""The permission layer put together: rules in front of a mode, tools guarded, the model told."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import safefs
from agent.audit import AuditLog
from agent.messages import ToolCall
from agent.policy.approval import Policy, compose
from agent.policy.ask import TerminalApprover, protected_writes_asked
from agent.policy.gitdirs import refuse_repository_writes
from agent.policy.guard import DeniedFiles, ToolCallAudit, guard_tools
from agent.policy.modes import mode_notice, mode_policy, unavailable_tools
from agent.policy.rules import path_rules, refuse_placeholder_writes
from agent.policy.sensitive import PROTECTED_CONFIG, PathRules
from agent.secret_scanner import SecretScanner
from agent.tools.base import Tool


def permission_policy(
    mode: str,
    root: safefs.Root,
    *,
    rules: PathRules | None = None,
    approver: Policy | None = None,
    tools: Sequence[Tool] = (),
) -> Policy:
    """Path rules, then the refusal of writes that make or change a git repository, then the
    placeholder refusal, then ``mode``: the first denial wins. Each call's paths are the ones
    its tool declares among ``tools`` (``Tool.target_paths``; without tools, the built-in file
    tools'). In ``ask`` mode a write to a protected-config or git path is not refused by the
    rules but asked about, every time, by ``approver``; in ``full`` mode with a
    :class:`~agent.policy.ask.TerminalApprover`, so is a write to a protected-config path (the
    starter files; git's paths stay refused). A write making a repository is refused in every
    mode."""
    full_asks = mode == "full" and isinstance(approver, TerminalApprover)
    return compose(
        path_rules(
            rules if rules is not None else PathRules(),
            root,
            tools=tools or None,
            person_decides_protected=mode == "ask",
            person_decides=frozenset({PROTECTED_CONFIG}) if full_asks else frozenset(),
        ),
        refuse_repository_writes(root, tools=tools or None),
        refuse_placeholder_writes,
        mode_policy(mode, approver=approver),
        # last, so that the person's answer is the one on record
        *([protected_writes_asked(approver)] if isinstance(approver, TerminalApprover) and full_asks else []),
    )


@dataclass(frozen=True)
class Permissions:
    """What a run needs: the hook, the tools to offer the model, what to tell it, and where to
    report a call the loop refuses without asking the hook (``run_agent(on_refused=...)``)."""

    policy: Policy
    tools: list[Tool]
    notice: str | None
    on_refused: Callable[[ToolCall, str], None] | None = None


def prepare(
    tools: Sequence[Tool],
    root: safefs.Root,
    *,
    mode: str,
    rules: PathRules | None = None,
    approver: Policy | None = None,
    scanner: SecretScanner | None = None,
    audit: AuditLog | None = None,
    sandbox: str | None = None,
) -> Permissions:
    """Guard ``tools`` (secret scanner, audit) and build the hook for ``mode``. Tools the mode
    makes unavailable are not offered, and ``notice`` says so to the model at the start."""
    names = [tool.name for tool in tools]
    missing = set(unavailable_tools(mode, names))
    rules = rules if rules is not None else PathRules()
    policy = permission_policy(mode, root, rules=rules, approver=approver, tools=tools)
    offered = [tool for tool in tools if tool.name not in missing]
    call_audit = (
        None
        if audit is None
        else ToolCallAudit(audit, root, sandbox=sandbox, tools=tools, offered=[tool.name for tool in offered])
    )
    if call_audit is not None:
        policy = call_audit.policy(policy)
    return Permissions(
        policy,
        guard_tools(offered, scanner=scanner, audit=call_audit, denied=DeniedFiles(rules, root)),
        mode_notice(mode, names),
        None if call_audit is None else call_audit.refused,
    )
