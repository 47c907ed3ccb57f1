"""``--http HOST:PORT``: the SDK's streamable HTTP transport behind a bearer token and an
Origin check.

Every request is checked before the MCP app sees it: an ``Origin`` header that is not allowed
gets 403 (the DNS-rebinding protection the MCP spec asks for: a web page cannot drive the
server from a browser), and a request without the right ``Authorization: Bearer`` token gets
401, with a text that says whether the token was missing or wrong. Neither touches a file. The
token is compared in constant time. OAuth discovery paths (``/.well-known/oauth-*``) get 404:
there is no OAuth here, and a 401 there sends some clients into an OAuth flow. Connections are
capped and timed out (:mod:`safefs.mcp.http_connections`).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import socket
import sys
from collections.abc import Iterable
from typing import Any

import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from safefs.mcp.http_connections import HEADER_TIMEOUT, MAX_CONNECTIONS, uvicorn_options

TOKEN_VARIABLE = "SAFEFS_MCP_TOKEN"
LOOPBACK_NAMES = ("localhost",)


class UsageError(Exception):
    pass


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--http needs HOST:PORT, got {text!r}")
    return host.strip("[]"), int(port)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def loopback_origins(port: int) -> list[str]:
    return [f"http://{h}:{port}" for h in ("127.0.0.1", "localhost", "[::1]")]


def token_from(environ: dict[str, str]) -> tuple[str, bool]:
    """The bearer token (from the environment, or a new one) and whether it was generated."""
    given = environ.get(TOKEN_VARIABLE, "")
    if given:
        return given, False
    return secrets.token_urlsafe(32), True


class Guard:
    """ASGI middleware: Origin check, then bearer token, then the app."""

    def __init__(self, app: ASGIApp, token: str, origins: Iterable[str]) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.origins = frozenset(origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # lifespan events
            return
        if str(scope.get("path", "")).startswith("/.well-known/oauth-"):
            await PlainTextResponse("Not Found: this server uses a bearer token, not OAuth", status_code=404)(
                scope, receive, send
            )
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            await PlainTextResponse("Origin not allowed", status_code=403)(scope, receive, send)
            return
        given = headers.get("authorization", "").encode()
        if not hmac.compare_digest(given, self.expected):
            response = PlainTextResponse(
                "Unauthorized: the bearer token is wrong"
                if given
                else "Unauthorized: a bearer token is required",
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="safefs-mcp"'},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def check_address(host: str, allow_remote: bool) -> None:
    if not allow_remote and not is_loopback(host):
        raise UsageError(
            f"refusing to listen on {host!r}, which is not a loopback address; "
            "pass --allow-remote to serve other machines"
        )


def serve_http(
    server: Server[Any],
    host: str,
    port: int,
    *,
    token: str,
    extra_origins: Iterable[str] = (),
    allow_remote: bool = False,
    max_connections: int = MAX_CONNECTIONS,
    header_timeout: float = HEADER_TIMEOUT,
) -> None:
    check_address(host, allow_remote)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)  # connections wait in the backlog until the app has started
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    port = sock.getsockname()[1]
    origins = [*loopback_origins(port), *extra_origins]
    if is_loopback(host):
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=origins,
        )
    else:
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = server.streamable_http_app(host=host, transport_security=security)
    shown = f"[{host}]" if ":" in host else host
    print(f"safefs-mcp: listening on http://{shown}:{port}/mcp", file=sys.stderr, flush=True)
    config = uvicorn.Config(
        Guard(app, token, origins),
        log_level="warning",
        lifespan="on",
        **uvicorn_options(max_connections, header_timeout),
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
