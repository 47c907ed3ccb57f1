"""The command-line side of the permission layer: ``--mode``, ``--allow-path``, ``--deny-path``,
``--audit``, and the ``audit verify`` command."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any, TextIO

import safefs
from agent.audit import AuditLog, verify
from agent.policy.ask import UNCONFINED_BASH, TerminalApprover
from agent.policy.modes import DEFAULT_MODE, MODES
from agent.policy.sensitive import PathRules
from agent.policy.setup import Permissions, prepare
from agent.secret_scanner import SecretScanner
from agent.tools.base import Tool


def add_run_options(run: argparse.ArgumentParser) -> None:
    run.add_argument(
        "--mode",
        choices=MODES,
        default=None,
        help=f"what the agent may do without asking (default {DEFAULT_MODE}): "
        "read-only (read/list/glob/grep), edit (also write/edit), ask (the read "
        "tools freely, every write, edit and bash asked at the terminal), full "
        "(bash too)",
    )
    run.add_argument(
        "--allow-path",
        action="append",
        default=[],
        metavar="GLOB",
        help="let tools touch paths the built-in sensitive list denies (.gitignore syntax; repeatable)",
    )
    run.add_argument(
        "--deny-path",
        action="append",
        default=[],
        metavar="GLOB",
        help="deny tools these paths too (.gitignore syntax; repeatable)",
    )
    run.add_argument(
        "--audit",
        metavar="FILE",
        help="hash-chained audit log to append to (default: SESSION.audit.jsonl next to --session)",
    )


def add_audit_command(commands: Any) -> None:
    """Adds ``audit verify FILE`` to the ``commands`` of an ``add_subparsers()`` call."""
    audit = commands.add_parser("audit", help="check an audit log")
    actions = audit.add_subparsers(dest="audit_command", required=True, metavar="ACTION")
    check = actions.add_parser(
        "verify", help="verify the hash chain; report the first altered or missing line"
    )
    check.add_argument("file", metavar="FILE")


def chosen_mode(args: argparse.Namespace) -> str:
    """``--mode``, with ``--allow-bash`` read as ``--mode full``; ValueError when they clash."""
    if getattr(args, "allow_bash", False):
        if args.mode not in (None, "full"):
            raise ValueError(f"--allow-bash contradicts --mode {args.mode}")
        return "full"
    return str(args.mode or DEFAULT_MODE)


def audit_path(args: argparse.Namespace) -> str | None:
    if args.audit:
        return str(args.audit)
    if args.session:
        base = str(args.session)
        return (base.removesuffix(".jsonl") or base) + ".audit.jsonl"
    return None


def describe_sandbox(tools: Sequence[Tool]) -> str:
    """What confines ``bash``, as the bash tool describes it."""
    for tool in tools:
        if tool.name != "bash":
            continue
        for attribute in ("sandbox_layers", "sandbox_description"):
            described = getattr(tool, attribute, None)
            text = described() if callable(described) else described
            if isinstance(text, str) and text:
                return text.removeprefix("sandbox: ")
    return UNCONFINED_BASH


def permissions(
    args: argparse.Namespace, root: safefs.Root, tools: Sequence[Tool], audit: AuditLog | None
) -> Permissions:
    """The run's permission layer from its options (PatternError for a bad pattern)."""
    mode = chosen_mode(args)
    rules = PathRules(allow=args.allow_path, deny=args.deny_path)
    sandbox = describe_sandbox(tools)
    approver = TerminalApprover(root, sandbox=sandbox, tools=tools) if mode == "ask" else None
    if audit is not None:
        audit.record(
            "run_start",
            mode=mode,
            allow_path=list(args.allow_path),
            deny_path=list(args.deny_path),
            sandbox=sandbox,
        )
    return prepare(
        tools,
        root,
        mode=mode,
        rules=rules,
        approver=approver,
        scanner=SecretScanner(),
        audit=audit,
        sandbox=sandbox,
    )


def command_audit_verify(args: argparse.Namespace, out: TextIO) -> int:
    path = str(args.file)
    if not os.path.isfile(path):
        raise ValueError(f"no audit log at {path!r}")
    result = verify(path)
    if result.ok:
        print(f"{path}: {result.events} events, chain intact (last hash {result.head})", file=out)
        return 0
    print(f"{path}: {result.problem}; the {result.events} events before it are intact", file=out)
    return 1
