"""stdio mode imports no MCP SDK, no pydantic and no HTTP stack: what the process imports while
it answers ``initialize`` and ``tools/list`` is read from ``python -X importtime``. (How long
start-up takes beside the official server is measured in benchmarks/bench_mcp.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FORBIDDEN = {
    "mcp",
    "mcp_types",
    "pydantic",
    "anyio",
    "starlette",
    "uvicorn",
    "httpx",
    "httpx2",
    "sse_starlette",
}
HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "list_directory", "arguments": {"path": "."}},
    },
]


def test_stdio_imports_no_sdk_and_no_http_stack(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "safefs.mcp", str(tmp_path)],
        input="".join(json.dumps(m) + "\n" for m in HANDSHAKE),
        capture_output=True,
        text=True,
        timeout=60,
    )
    answers = {a["id"]: a["result"] for a in map(json.loads, done.stdout.splitlines())}
    assert len(answers[2]["tools"]) >= 14
    assert answers[3]["content"][0]["text"] == "[FILE] a.txt"
    imported = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert len(imported) > 20  # the listing was read
    assert imported & FORBIDDEN == set()
