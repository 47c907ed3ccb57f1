"""``safefs-agent``: ``run`` the agent on a workspace with the Anthropic API, or the offline ``demo``.

Every failure ends the same way: one line on stderr, with the API key redacted, and exit status
1. No traceback for a user mistake. SIGTERM and SIGHUP end a run with status 128 + the signal
number; Ctrl-C (SIGINT) with 1. In each case the running command is killed, every call left
unanswered gets its marker in the session, and the line says ``cancelled``.

Progress goes to stderr; stdout gets only the final answer, so ``| jq`` and ``> file`` work.
When stdout is a terminal the answer is streamed there as it arrives instead.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import NoReturn, TypeVar

import safefs
from agent.audit import AuditLog
from agent.console import Progress, one_line, write_safely
from agent.display import visible
from agent.loop import DEFAULT_MAX_TURNS, Cancelled, run_agent
from agent.messages import AssistantMessage
from agent.policy import options as policy_options
from agent.redact import Redactor
from agent.session import Session
from agent.tools import default_tools
from agent.tools.anthropic_defined import TOOL_SETS, anthropic_tools
from agent.tools.base import Tool
from safefs.sandbox import DEFAULT_TMP_SIZE, SandboxOptions, harden_agent_process
from safefs.sandbox import MODES as SANDBOX_MODES

PROG = "safefs-agent"
KEY_VARIABLE = "ANTHROPIC_API_KEY"
CANCEL_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
T = TypeVar("T")


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse would print the usage block and exit 2; we keep the one-line, exit-1 rule.
        raise UsageError(f"{message} (see {PROG} --help)")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def add_run_options(run: argparse.ArgumentParser) -> None:
    """The ``run`` options. Options of other parts (policy, sandbox) are added next to these."""
    run.add_argument("--workspace", required=True, help="directory the tools are confined to")
    run.add_argument("--session", help="JSON Lines file to append to, resuming what it holds")
    run.add_argument(
        "--continue",
        dest="continue_",
        action="store_true",
        help="resume the session where it stopped, without a new prompt",
    )
    run.add_argument("--model", help="model name (default: $ANTHROPIC_MODEL, else a current Claude Sonnet)")
    run.add_argument(
        "--max-turns",
        type=int,
        default=DEFAULT_MAX_TURNS,
        help=f"model turns before giving up (default {DEFAULT_MAX_TURNS})",
    )
    run.add_argument(
        "--max-tokens", type=_positive_int, metavar="N", help="most tokens one reply may have (default 8192)"
    )
    run.add_argument(
        "--max-tokens-total",
        type=_positive_int,
        metavar="N",
        help="stop the run once its replies have used more than N tokens in all (input, output and cache)",
    )
    run.add_argument(
        "--no-stream",
        dest="stream",
        action="store_false",
        help="ask for whole replies instead of streaming them",
    )
    run.add_argument(
        "--allow-bash",
        action="store_true",
        help="let the model run shell commands (the same as --mode full; in the sandbox, see --sandbox)",
    )
    run.add_argument(
        "--sandbox",
        choices=SANDBOX_MODES,
        default="auto",
        help="auto (default): each bash command runs in a kernel sandbox, and is "
        "refused where none can be set up; off: unconfined, with your rights",
    )
    run.add_argument(
        "--allow-network", action="store_true", help="let sandboxed bash commands use the network"
    )
    run.add_argument(
        "--allow-old-landlock",
        action="store_true",
        help="run sandboxed bash on a kernel whose Landlock is older than ABI 3 (Linux 6.2), which "
        "does not stop a command from truncating files outside the workspace that its uid may write",
    )
    run.add_argument(
        "--sandbox-tmp-size",
        type=int,
        default=DEFAULT_TMP_SIZE >> 20,
        metavar="MIB",
        help="the size of each sandboxed command's private /tmp, in MiB (default: %(default)s)",
    )
    run.add_argument(
        "--tools",
        choices=TOOL_SETS,
        default="safefs",
        help="safefs (default): the agent's own tools; anthropic: Anthropic's text editor "
        "(text_editor_20250728) and bash (bash_20250124) tools, on safefs and the sandbox",
    )
    policy_options.add_run_options(run)
    run.add_argument(
        "--env-allow",
        action="append",
        default=[],
        metavar="NAME",
        help="pass this environment variable to bash too (repeatable; never ANTHROPIC_API_KEY)",
    )
    run.add_argument(
        "prompt",
        nargs="*",
        metavar="PROMPT",
        help="what to ask the agent: the remaining arguments, or - to read stdin",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="A coding agent whose file tools cannot leave the workspace.")
    parser.add_argument("--version", action="version", version=f"{PROG} {safefs.__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run the agent on a workspace (needs ANTHROPIC_API_KEY)")
    add_run_options(run)

    demo = commands.add_parser("demo", help="offline walkthrough of a prompt-injection attack")
    demo.add_argument("--session", help="where to write the demo's session file")
    demo.add_argument("--race-seconds", type=float, default=2.0, help="how long each race runs (default 2)")
    policy_options.add_audit_command(commands)
    return parser


class _Signals:
    """Which cancelling signal arrived first (None until one did)."""

    def __init__(self) -> None:
        self.received: int | None = None

    def exit_status(self) -> int:
        if self.received is None or self.received == signal.SIGINT:
            return 1
        return 128 + self.received

    def describe(self) -> str:
        return "cancelled" if self.received is None else f"cancelled by {signal.Signals(self.received).name}"


@contextlib.contextmanager
def _cancel_on_signals(cancel: threading.Event, signals: _Signals) -> Iterator[None]:
    """While active, SIGINT, SIGTERM and SIGHUP set ``cancel``: the model request is abandoned,
    a running command killed, and the loop stops at its next step. A second one interrupts at
    once. The previous handlers are restored afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        signals.received = signum
        cancel.set()

    previous = {signum: signal.signal(signum, handler) for signum in CANCEL_SIGNALS}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def _open_workspace(path: str) -> safefs.Root:
    try:
        return safefs.Root(path)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UsageError(f"cannot use workspace {path!r}: {reason}") from None


def _writable(what: str, path: str, opener: Callable[[str], T]) -> T:
    """``opener(path)``, with an OS error (a missing or read-only directory) as a usage error."""
    try:
        return opener(path)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UsageError(f"cannot write the {what} {path!r}: {reason}") from None


def _api_key() -> str:
    key = os.environ.get(KEY_VARIABLE, "")
    if not key.strip():
        raise UsageError(f"{KEY_VARIABLE} is not set: export your Anthropic API key in it")
    if "\n" in key or "\r" in key:
        raise UsageError(
            f"{KEY_VARIABLE} contains a newline (often from reading a file): "
            f"remove it, e.g. export {KEY_VARIABLE}=\"$(tr -d '\\n' < keyfile)\""
        )
    if any(c.isspace() or not c.isprintable() for c in key) or not key.isascii():
        raise UsageError(f"{KEY_VARIABLE} contains a space, control or non-ASCII character: check the value")
    return key


def _prompt(args: argparse.Namespace) -> str | None:
    words: list[str] = args.prompt
    if args.continue_:
        if words:
            raise UsageError("--continue resumes the session without a new prompt; give one or the other")
        if not args.session:
            raise UsageError("--continue needs --session FILE")
        if not os.path.exists(args.session):
            raise UsageError(f"--continue: no session at {args.session!r} to resume; start one with a prompt")
        return None
    if words == ["-"]:
        text = sys.stdin.read()
    elif not words:
        raise UsageError(
            "no prompt given: say what the agent should do (or - to read it from stdin, or --continue)"
        )
    else:
        text = " ".join(words)
    if not text.strip():
        raise UsageError("the prompt is empty: say what the agent should do")
    return text


def _print_answer(text: str) -> None:
    """The final answer on stdout. A reader that went away (``| head -1``) is not a failure:
    the run completed, so stdout is pointed at /dev/null to keep the exit flush quiet."""
    text = visible(text)
    try:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def command_run(args: argparse.Namespace, redact_holder: list[Redactor]) -> int:
    api_key = _api_key()
    redact = Redactor([api_key])
    redact_holder[0] = redact
    if args.max_turns < 1:
        raise UsageError("--max-turns must be at least 1")
    prompt = _prompt(args)
    refused = [name for name in args.env_allow if name.upper() == KEY_VARIABLE]
    if refused:
        raise UsageError(
            f"--env-allow {refused[0]}: the API key is never passed to bash (the model could "
            "read it back from any command's environment)"
        )
    # Imported here: the SDK takes a second or two to import, which the demo does not need.
    from agent.models.anthropic_client import (
        DEFAULT_MAX_TOKENS,
        DEFAULT_MODEL,
        DEFAULT_SYSTEM,
        AnthropicModelClient,
    )

    model = args.model or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL
    base_url = os.environ.get("ANTHROPIC_BASE_URL") or None
    policy_options.chosen_mode(args)  # a contradiction is a usage error before anything runs
    cancel = threading.Event()
    signals = _Signals()
    stdout_is_terminal = sys.stdout.isatty()
    progress = Progress(sys.stderr, sys.stdout if stdout_is_terminal else sys.stderr, redact)
    harden_agent_process()  # /proc/<agent>/environ holds the key: not readable by our commands
    with (
        _open_workspace(args.workspace) as root,
        contextlib.closing(progress),
        contextlib.ExitStack() as stack,
    ):
        audit_file = policy_options.audit_path(args)
        audit = stack.enter_context(_writable("audit log", audit_file, AuditLog)) if audit_file else None
        tools = (anthropic_tools if args.tools == "anthropic" else default_tools)(
            root,
            secret_values=[api_key],
            env_allow=args.env_allow,
            sandbox=args.sandbox,
            allow_network=args.allow_network,
            sandbox_options=SandboxOptions(
                allow_network=args.allow_network,
                allow_old_landlock=args.allow_old_landlock,
                tmp_size=args.sandbox_tmp_size << 20,
                hidden=tuple(policy_options.run_record_files(args)),
            ),
        )
        # Closed before the workspace is: the bash sandbox removes the placeholders it made there.
        stack.callback(close_tools, tools)
        permissions = policy_options.permissions(args, root, tools, audit)
        system = DEFAULT_SYSTEM if permissions.notice is None else f"{DEFAULT_SYSTEM}\n\n{permissions.notice}"
        http_client = None
        if audit is not None:
            from agent.audit_http import audited_http_client

            http_client = audited_http_client(audit)
        client = AnthropicModelClient(
            api_key=api_key,
            model=model,
            base_url=base_url,
            max_tokens=args.max_tokens or DEFAULT_MAX_TOKENS,
            stream=args.stream,
            system=system,
            http_client=http_client,
        )
        session = Session.open(args.session, secrets=[api_key]) if args.session else None
        try:
            if session is not None and session.truncated is not None:
                write_safely(sys.stderr, f"{PROG}: warning: {session.truncated.describe(session.path)}\n")
            with _cancel_on_signals(cancel, signals):
                try:
                    history = run_agent(
                        client,
                        permissions.tools,
                        session.messages if session is not None else (),
                        prompt=prompt,
                        before_tool_call=permissions.policy,
                        session=session,
                        max_turns=args.max_turns,
                        cancel=cancel,
                        observer=progress,
                        max_tokens_total=args.max_tokens_total,
                        on_refused=permissions.on_refused,
                    )
                except Cancelled:
                    raise _CancelledBy(signals) from None
        finally:
            if session is not None:
                session.close()
            if audit is not None:
                progress.close()
                write_safely(sys.stderr, policy_options.describe_head(audit) + "\n")
    final = history[-1]
    if not stdout_is_terminal and isinstance(final, AssistantMessage) and final.text:
        _print_answer(final.text)
    return 0


def close_tools(tools: Sequence[Tool]) -> None:
    for tool in tools:
        close = getattr(tool, "close", None)
        if callable(close):
            close()


class _CancelledBy(Exception):
    def __init__(self, signals: _Signals) -> None:
        super().__init__(signals.describe())
        self.status = signals.exit_status()


def main(argv: Sequence[str] | None = None) -> int:
    # Filled in as soon as the key is known, so even an early error is redacted.
    redact_holder = [Redactor([os.environ.get(KEY_VARIABLE, "")])]
    status = 1
    try:
        args = build_parser().parse_args(argv)
        if args.command == "demo":
            from agent.demo import run_demo

            return run_demo(session_path=args.session, race_seconds=args.race_seconds)
        if args.command == "audit":
            return policy_options.command_audit_verify(args, sys.stdout)
        return command_run(args, redact_holder)
    except SystemExit as exc:  # --help and --version exit normally
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        message = "cancelled"
    except _CancelledBy as exc:
        message, status = str(exc), exc.status
    except Exception as exc:
        message = str(exc) or type(exc).__name__
    write_safely(sys.stderr, f"{PROG}: error: {one_line(redact_holder[0](message))}\n")
    return status
