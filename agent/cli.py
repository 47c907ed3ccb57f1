"""``safefs-agent``: ``run`` the agent on a workspace with the Anthropic API, or the offline ``demo``.

Every failure ends the same way: one line on stderr, with the API key's exact value replaced,
and exit status 1. No traceback for a user mistake.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import NoReturn

import safefs
from agent.approval import deny_bash_by_default
from agent.console import Printer, one_line
from agent.loop import DEFAULT_MAX_TURNS, run_agent
from agent.redact import Redactor
from agent.sandbox import MODES as SANDBOX_MODES
from agent.sandbox import harden_agent_process
from agent.session import Session
from agent.tools import default_tools

PROG = "safefs-agent"
KEY_VARIABLE = "ANTHROPIC_API_KEY"


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse would print the usage block and exit 2; we keep the one-line, exit-1 rule.
        raise UsageError(f"{message} (see {PROG} --help)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="A coding agent whose file tools cannot leave the "
                     "workspace.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run the agent on a workspace (needs ANTHROPIC_API_KEY)")
    run.add_argument("--workspace", required=True, help="directory the tools are confined to")
    run.add_argument("--session", help="JSON Lines file to append to, resuming what it holds")
    run.add_argument("--model", help="model name (default: $ANTHROPIC_MODEL, else a current Claude "
                     "Sonnet)")
    run.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS,
                     help=f"model turns before giving up (default {DEFAULT_MAX_TURNS})")
    run.add_argument("--allow-bash", action="store_true",
                     help="let the model run shell commands (in the sandbox, see --sandbox)")
    run.add_argument("--sandbox", choices=SANDBOX_MODES, default="auto",
                     help="auto (default): each bash command runs in a kernel sandbox, and is "
                     "refused where none can be set up; off: unconfined, with your rights")
    run.add_argument("--allow-network", action="store_true",
                     help="let sandboxed bash commands use the network")
    run.add_argument("--env-allow", action="append", default=[], metavar="NAME",
                     help="pass this environment variable to bash too (repeatable; never "
                     "ANTHROPIC_API_KEY)")
    run.add_argument("prompt", metavar="PROMPT", help="what to ask the agent")

    demo = commands.add_parser("demo", help="offline walkthrough of a prompt-injection attack")
    demo.add_argument("--session", help="where to write the demo's session file")
    demo.add_argument("--race-seconds", type=float, default=2.0,
                      help="how long each race runs (default 2)")
    return parser


@contextlib.contextmanager
def _cancel_on_interrupt(cancel: threading.Event) -> Iterator[None]:
    """While active, the first Ctrl-C asks the loop to stop at its next step (killing a running
    command); a second one interrupts at once. The previous handler is restored afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        cancel.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _open_workspace(path: str) -> safefs.Root:
    try:
        return safefs.Root(path)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UsageError(f"cannot use workspace {path!r}: {reason}") from None


def command_run(args: argparse.Namespace, redact_holder: list[Redactor]) -> int:
    api_key = os.environ.get(KEY_VARIABLE, "")
    if not api_key.strip():
        raise UsageError(f"{KEY_VARIABLE} is not set: export your Anthropic API key in it")
    redact = Redactor([api_key])
    redact_holder[0] = redact
    if args.max_turns < 1:
        raise UsageError("--max-turns must be at least 1")
    # Imported here: the SDK takes a second or two to import, which the demo does not need.
    from agent.models.anthropic_client import DEFAULT_MODEL, AnthropicModelClient

    model = args.model or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL
    base_url = os.environ.get("ANTHROPIC_BASE_URL") or None
    client = AnthropicModelClient(api_key=api_key, model=model, base_url=base_url)
    cancel = threading.Event()
    harden_agent_process()  # /proc/<agent>/environ holds the key: not readable by our commands
    with _open_workspace(args.workspace) as root:
        session = Session.open(args.session, secrets=[api_key]) if args.session else None
        try:
            if session is not None and session.truncated is not None:
                print(f"{PROG}: warning: {session.truncated.describe(session.path)}", file=sys.stderr)
            with _cancel_on_interrupt(cancel):
                run_agent(
                    client,
                    default_tools(root, secret_values=[api_key], env_allow=args.env_allow,
                                  sandbox=args.sandbox, allow_network=args.allow_network),
                    session.messages if session is not None else (),
                    prompt=args.prompt,
                    before_tool_call=None if args.allow_bash else deny_bash_by_default,
                    session=session,
                    max_turns=args.max_turns,
                    cancel=cancel,
                    on_message=Printer(sys.stdout, redact),
                    secrets=[api_key],
                )
        finally:
            if session is not None:
                session.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    # Filled in as soon as the key is known, so even an early error is redacted.
    redact_holder = [Redactor([os.environ.get(KEY_VARIABLE, "")])]
    try:
        args = build_parser().parse_args(argv)
        if args.command == "demo":
            from agent.demo import run_demo

            return run_demo(session_path=args.session, race_seconds=args.race_seconds)
        return command_run(args, redact_holder)
    except SystemExit as exc:  # --help and --version exit normally
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        message = "interrupted"
    except Exception as exc:
        message = str(exc) or type(exc).__name__
    print(f"{PROG}: error: {one_line(redact_holder[0](message))}", file=sys.stderr)
    return 1
