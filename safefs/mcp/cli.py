"""``safefs-mcp``: command line of the MCP server. Imports the SDK only once arguments are parsed,
so a missing ``mcp`` extra is one line naming the install command, never a traceback."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

PROG = "safefs-mcp"
EXTRA_MODULES = {"mcp", "mcp_types", "pathspec", "anyio", "jsonschema", "uvicorn", "starlette"}
MISSING_EXTRA = f"{PROG}: the MCP server needs its extra: pip install 'safefs[mcp]'"


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
    p.add_argument("dirs", nargs="+", metavar="DIR", type=_directory, help="directory to serve")
    p.add_argument("--read-only", action="store_true", help="list no tool that writes")
    p.add_argument("--allow-delete", action="store_true", help="add the delete_file tool")
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
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        from safefs.mcp import http_transport as http
        from safefs.mcp import server, tools
        from safefs.mcp.directories import Directories
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in EXTRA_MODULES:
            print(MISSING_EXTRA, file=sys.stderr)
            return 2
        raise
    try:
        directories = Directories.open(args.dirs)
    except OSError as exc:
        print(f"{PROG}: cannot serve {exc.filename!s}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        app = server.SafefsServer(
            directories, tools.tools_for(read_only=args.read_only, allow_delete=args.allow_delete)
        ).build()
        if args.http is None:
            server.run_stdio(app)
            return 0
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
            app, host, port, token=token, extra_origins=args.allow_origin, allow_remote=args.allow_remote
        )
        return 0
    except http.UsageError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        directories.close()


def entry_point() -> None:
    sys.exit(main())
