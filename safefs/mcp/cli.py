"""``safefs-mcp``: command line of the MCP server.

Start-up time is what a client waits for before it sees the tools, so nothing is imported
before it is needed: stdio mode imports no MCP SDK and no HTTP stack (see
:mod:`safefs.mcp.stdio_server`); ``--http`` imports the SDK. A missing ``mcp`` extra is one line
naming the install command, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from safefs.mcp.roots import RootsPolicy
    from safefs.mcp.tool import McpTool

PROG = "safefs-mcp"
EXTRA_MODULES = {"mcp", "mcp_types", "re2", "anyio", "jsonschema", "uvicorn", "starlette"}
NEEDED_MODULES = ("mcp", "re2", "jsonschema")  # what the extra installs, checked unimported
# safefs is on no package index: the extra comes from the clone or the wheel safefs came from.
MISSING_EXTRA = (
    f"{PROG}: the MCP server needs the mcp extra: in a clone of safefs, pip install './[mcp]'; "
    "beside a wheel in DIR, pip install --find-links DIR 'safefs[mcp]'"
)
ROOTS_HELP = (
    "what the client's roots do: 'narrow' (default) serves the part of the DIRs inside them "
    "and ignores a root outside every DIR; 'replace' serves the roots instead of the DIRs, as "
    "the official server does, so a client can widen what is served. Without a DIR the "
    "client's roots are served."
)


def _version() -> str:
    from safefs import __version__

    return f"{PROG} {__version__}"


def _extra_missing() -> bool:
    for name in NEEDED_MODULES:
        try:
            if importlib.util.find_spec(name) is None:
                return True
        except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules
            return True
    return False


def _directory(text: str) -> str:
    if not text:  # an empty string names no directory, not even the current one
        raise argparse.ArgumentTypeError("an empty DIR names no directory")
    return text


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Serve DIRs to MCP clients as a filesystem server (drop-in for the official "
        "@modelcontextprotocol/server-filesystem), every path resolved beneath the "
        "directory by safefs. Speaks stdio unless --http is given.",
    )
    p.add_argument(
        "dirs",
        nargs="*",
        metavar="DIR",
        type=_directory,
        help="directory to serve; with none, the client's roots are served",
    )
    p.add_argument("--version", action="version", version=_version())
    p.add_argument("--roots", choices=("narrow", "replace"), default="narrow", help=ROOTS_HELP)
    p.add_argument("--read-only", action="store_true", help="list no tool that writes")
    p.add_argument("--allow-delete", action="store_true", help="add the delete_file tool")
    p.add_argument(
        "--allow-git-writes",
        action="store_true",
        help="let the writing tools write into git repositories and what their config names "
        "(hooks, included config), as the official server does",
    )
    p.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio; a bearer "
        "token is required (SAFEFS_MCP_TOKEN, or one printed to stderr)",
    )
    p.add_argument(
        "--allow-remote", action="store_true", help="with --http, allow a HOST that is not a loopback address"
    )
    p.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="with --http, also accept requests carrying this Origin header",
    )
    p.add_argument(
        "--max-connections",
        type=_positive_int,
        default=256,
        metavar="N",
        help="with --http, close connections past N open at once (default 256)",
    )
    p.add_argument(
        "--header-timeout",
        type=_positive_float,
        default=10.0,
        metavar="SECONDS",
        help="with --http, close a connection whose request head takes longer (default 10)",
    )
    return p


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a whole number of at least 1, not {text!r}")
    return int(text)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < 86400:
        raise argparse.ArgumentTypeError(f"a number of seconds above 0, not {text!r}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if _extra_missing():
        print(MISSING_EXTRA, file=sys.stderr)
        return 2
    try:
        if args.http is None:
            return _serve_stdio(args)
        return _serve_http(args)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in EXTRA_MODULES:
            print(MISSING_EXTRA, file=sys.stderr)
            return 2
        raise
    except KeyboardInterrupt:
        return 130


def _policy(args: argparse.Namespace) -> RootsPolicy | None:
    from safefs.mcp.directories import Directories
    from safefs.mcp.roots import RootsPolicy

    try:
        return RootsPolicy(Directories.open(args.dirs), args.roots)
    except OSError as exc:
        print(f"{PROG}: cannot serve {exc.filename!s}: {exc.strerror}", file=sys.stderr)
        return None


def _tools(args: argparse.Namespace) -> list[McpTool]:
    from safefs.mcp.tools import tools_for

    return tools_for(
        read_only=args.read_only, allow_delete=args.allow_delete, git_rule=not args.allow_git_writes
    )


def _serve_stdio(args: argparse.Namespace) -> int:
    from safefs.mcp import stdio_server

    policy = _policy(args)
    if policy is None:
        return 2
    try:
        stdio_server.run(policy, _tools(args))
    finally:
        policy.given.close()
    return 0


def _serve_http(args: argparse.Namespace) -> int:
    from safefs.mcp import http_transport as http
    from safefs.mcp import server

    policy = _policy(args)
    if policy is None:
        return 2
    try:
        app = server.SafefsServer(policy, _tools(args)).build()
        host, port = http.parse_address(args.http)
        http.check_address(host, args.allow_remote)
        token, generated = http.token_from(dict(os.environ))
        if generated:
            print(
                f"{PROG}: bearer token (set {http.TOKEN_VARIABLE} to choose it): {token}",
                file=sys.stderr,
                flush=True,
            )
        http.serve_http(
            app,
            host,
            port,
            token=token,
            extra_origins=args.allow_origin,
            allow_remote=args.allow_remote,
            max_connections=args.max_connections,
            header_timeout=args.header_timeout,
        )
        return 0
    except http.UsageError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    finally:
        policy.given.close()


def entry_point() -> None:
    sys.exit(main())
