"""The command-line side of the permission layer: ``--mode``, ``--allow-path``, ``--deny-path``,
``--audit``, ``--ask-timeout``, and the ``audit verify`` command."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Sequence
from typing import Any, TextIO

import safefs
from agent.audit import AuditLog, verify
from agent.policy.ask import DEFAULT_ASK_TIMEOUT, UNCONFINED_BASH, TerminalApprover
from agent.policy.gitdirs import git_rules
from agent.policy.modes import DEFAULT_MODE, MODES
from agent.policy.run_record import run_record_rules
from agent.policy.sensitive import PathRules
from agent.policy.setup import Permissions, prepare
from agent.secret_scanner import SecretScanner
from agent.tools.base import Tool
from agent.tools.bash import BashTool


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
        help="let tools touch paths the built-in lists deny (.gitignore syntax; repeatable); it "
        "must cover the denied name itself (.ssh/, not fixtures/ for .ssh/fixtures/id_rsa), and "
        "never lets a write into .git/ through",
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
    run.add_argument(
        "--ask-timeout",
        type=_seconds,
        default=DEFAULT_ASK_TIMEOUT,
        metavar="SECONDS",
        help="in --mode ask, a question unanswered this long is answered no "
        f"(default {DEFAULT_ASK_TIMEOUT:g})",
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}")
    return value


def add_audit_command(commands: Any) -> None:
    """Adds ``audit verify FILE`` to the ``commands`` of an ``add_subparsers()`` call."""
    audit = commands.add_parser("audit", help="check an audit log")
    actions = audit.add_subparsers(dest="audit_command", required=True, metavar="ACTION")
    check = actions.add_parser(
        "verify", help="verify the hash chain; report the first altered or missing line"
    )
    check.add_argument("file", metavar="FILE")
    check.add_argument(
        "--expect",
        metavar="HASH",
        help="the last hash as a run printed it (kept elsewhere): the log must end with it",
    )


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


def run_record_files(args: argparse.Namespace) -> list[str]:
    """The files the run keeps its record in: the session and the audit log."""
    return [path for path in (args.session, audit_path(args)) if path]


def permissions(
    args: argparse.Namespace, root: safefs.Root, tools: Sequence[Tool], audit: AuditLog | None
) -> Permissions:
    """The run's permission layer from its options (PatternError for a bad pattern)."""
    mode = chosen_mode(args)
    # What the workspace's repositories name matters to writes only (a walk of the whole tree).
    named = git_rules(root) if mode != "read-only" else []
    extra = named + run_record_rules(root, run_record_files(args))
    rules = PathRules(allow=args.allow_path, deny=args.deny_path, extra=extra)
    sandbox = describe_sandbox(tools)
    approver = (
        TerminalApprover(root, sandbox=sandbox, tools=tools, rules=rules, timeout=args.ask_timeout, mode=mode)
        if mode in ("ask", "full")
        else None
    )
    if mode == "full" and approver is not None:
        for tool in tools:
            if isinstance(tool, BashTool):  # a starter file a command makes: kept if the person says so
                tool.keep_starter = approver.keep_starter
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
    expected = args.expect.strip().lower() if args.expect else None
    if expected is not None and not re.fullmatch(r"[0-9a-f]{64}", expected):
        raise ValueError(f"--expect takes the 64 hex digits of a hash, not {args.expect!r}")
    result = verify(path)
    if not result.ok:
        print(f"{path}: {result.problem}; the {result.events} events before it are intact", file=out)
        return 1
    if expected is not None and result.head != expected:
        print(
            f"{path}: the chain is intact but ends with {result.head}, not the expected {expected}: "
            "lines were cut off its end, or the whole log was rewritten",
            file=out,
        )
        return 1
    anchored = " and ends with the expected hash" if expected is not None else ""
    print(f"{path}: {result.events} events, chain intact{anchored} (last hash {result.head})", file=out)
    return 0


def describe_head(audit: AuditLog) -> str:
    """The line a run ends with: the last hash, to keep elsewhere and check later."""
    return (
        f"audit log {audit.path}: {audit.seq} events, last hash {audit.head} "
        f"(check with: safefs-agent audit verify {audit.path} --expect {audit.head})"
    )
