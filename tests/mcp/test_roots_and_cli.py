"""Client roots: by default a root inside a DIR narrows to it, and when no usable root is left
the DIRs stay and list_allowed_directories says why; ``--roots replace`` is the official
behaviour; without a DIR the roots are served. Roots are asked once per session and again when
the client says they changed. The command line fails cleanly, naming the extra to install when
the MCP SDK is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from safefs import __version__
from tests.mcp.client import mcp_client, roots_client, server_command
from tests.mcp.conftest import SECRET, Arena

KEPT = "the directories given on the command line are served"


def allowed(*dirs: Path, note: str = "") -> tuple[bool, str]:
    listed = "Allowed directories:\n" + "\n".join(str(d) for d in dirs)
    return False, f"{listed}\n\nNote: {note}" if note else listed


def test_a_root_inside_narrows(arena: Arena) -> None:
    with mcp_client(str(arena.ws), roots=[(arena.ws / "sub").as_uri()]) as client:
        assert client.text("list_allowed_directories", {}) == (
            False,
            f"Allowed directories:\n{arena.ws / 'sub'}",
        )
        assert client.text("read_text_file", {"path": "lines.txt", "head": 1}) == (False, "line 1")
        error, text = client.text("read_text_file", {"path": str(arena.ws / "hello.txt")})
        assert error and text == f"path escapes workspace: '{arena.ws / 'hello.txt'}'"
        assert client.text("read_text_file", {"path": "../hello.txt"})[0]


def test_roots_outside_never_widen(arena: Arena) -> None:
    roots = [arena.outside.as_uri(), arena.sibling.as_uri(), (arena.ws / "link_out").as_uri(), "file:///"]
    with mcp_client(str(arena.ws), roots=roots) as client:
        # "/" contains the served directory: the intersection is the directory itself.
        assert client.text("list_allowed_directories", {}) == (False, f"Allowed directories:\n{arena.ws}")
        for path in [
            str(arena.outside / "secret.txt"),
            str(arena.sibling / "secret.txt"),
            "link_out/secret.txt",
        ]:
            error, text = client.text("read_text_file", {"path": path})
            assert error and SECRET not in text
    # A root outside every DIR is ignored: the DIR stays, and the listing says why.
    with mcp_client(str(arena.ws), roots=[arena.outside.as_uri()]) as client:
        assert client.text("list_allowed_directories", {}) == allowed(
            arena.ws, note=f"none of the client's roots lies inside a served directory; {KEPT}"
        )
        error, text = client.text("read_text_file", {"path": str(arena.outside / "secret.txt")})
        assert error and text == f"path escapes workspace: '{arena.outside / 'secret.txt'}'"
        assert client.text("read_text_file", {"path": "hello.txt"}) == (False, "hello from inside\n")


def test_a_root_spelled_as_a_prefix_of_a_dir_does_not_hold_it(arena: Arena) -> None:
    # ".../ws" is a string prefix of ".../ws_evil", not a directory above it: whole components.
    with mcp_client(str(arena.sibling), roots=[arena.ws.as_uri()]) as client:
        assert client.text("list_allowed_directories", {}) == allowed(
            arena.sibling, note=f"none of the client's roots lies inside a served directory; {KEPT}"
        )


def test_an_empty_roots_list_keeps_the_dirs(arena: Arena) -> None:
    with mcp_client(str(arena.ws), roots=[]) as client:
        assert client.text("list_allowed_directories", {}) == allowed(
            arena.ws, note=f"the client's roots list is empty; {KEPT}"
        )
        assert client.text("read_text_file", {"path": "hello.txt"}) == (False, "hello from inside\n")


def test_a_symlinked_root_is_opened_through_safefs(arena: Arena) -> None:
    # The root names a link inside the served directory that leads out: refused, not followed,
    # so no usable root is left and the DIR stays.
    with mcp_client(str(arena.ws), roots=[(arena.ws / "link_out").as_uri()]) as client:
        assert client.text("list_allowed_directories", {})[1].startswith(
            f"Allowed directories:\n{arena.ws}\n"
        )
        assert client.text("read_text_file", {"path": "secret.txt"})[0]
        assert client.text("read_text_file", {"path": "link_out/secret.txt"})[0]


def test_without_a_dir_the_client_roots_are_served(arena: Arena, tmp_path: Path) -> None:
    with mcp_client(roots=[arena.ws.as_uri(), (arena.base / "nowhere").as_uri()]) as client:
        assert client.text("list_allowed_directories", {}) == allowed(arena.ws)
        assert client.text("read_text_file", {"path": str(arena.ws / "hello.txt")}) == (
            False,
            "hello from inside\n",
        )
        assert client.text("read_text_file", {"path": "link_out/secret.txt"})[0]  # still safefs
    with mcp_client() as client:  # no DIR, no roots: nothing served, and said so
        note = "started without a DIR, and the client offers no roots"
        assert client.text("list_allowed_directories", {}) == allowed(note=note)
        assert client.text("read_text_file", {"path": "hello.txt"}) == (
            True,
            f"no allowed directories: {note}",
        )


def test_roots_replace_is_the_official_behaviour(arena: Arena) -> None:
    # It can widen: the outside directory is served because the client named it.
    with mcp_client("--roots", "replace", str(arena.ws), roots=[arena.outside.as_uri()]) as client:
        assert client.text("list_allowed_directories", {}) == allowed(arena.outside)
        assert client.text("read_text_file", {"path": str(arena.outside / "secret.txt")}) == (False, SECRET)
        assert client.text("read_text_file", {"path": str(arena.ws / "hello.txt")})[0]
    with mcp_client("--roots", "replace", str(arena.ws), roots=[]) as client:
        assert client.text("list_allowed_directories", {}) == allowed(
            arena.ws, note=f"the client's roots list is empty; {KEPT}"
        )


def test_roots_are_asked_once_per_session_and_again_when_changed(arena: Arena, tmp_path: Path) -> None:
    errlog = tmp_path / "stderr.txt"
    with roots_client(str(arena.ws), roots=[(arena.ws / "sub").as_uri()], errlog_path=errlog) as client:
        for _ in range(10):
            assert client.text("read_text_file", {"path": "lines.txt", "head": 1}) == (False, "line 1")
        assert client.asked == 1
        client.change_roots([arena.ws.as_uri()])
        assert client.text("list_allowed_directories", {}) == allowed(arena.ws)
        assert client.text("read_text_file", {"path": "hello.txt"}) == (False, "hello from inside\n")
        assert client.asked == 2
    assert errlog.read_text() == ""  # no deprecation warning, nothing at all


def test_version() -> None:
    script = Path(sys.executable).with_name("safefs-mcp")
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, f"safefs-mcp {__version__}\n")


def linked_parent(base: Path) -> tuple[str, Path, Path]:
    """``base/lnk/../ROOT`` with ``lnk -> real/x``: the kernel follows lnk to real/x, so ".."
    leads to real and the directory is real/ROOT. Collapsed lexically, the string would name
    base/ROOT, a decoy here. Returns (the spelling, the directory it reaches, the decoy)."""
    (base / "real" / "x").mkdir(parents=True)
    (base / "real" / "ROOT" / "sub").mkdir(parents=True)
    (base / "ROOT").mkdir()
    os.symlink("real/x", base / "lnk")
    served, decoy = base / "real" / "ROOT", base / "ROOT"
    (served / "where.txt").write_text("served\n")
    (served / "sub" / "where.txt").write_text("served sub\n")
    (decoy / "where.txt").write_text("decoy\n")
    return f"{base}/lnk/../ROOT", served, decoy


def test_the_directory_served_is_the_one_the_dir_argument_reaches(tmp_path: Path) -> None:
    spelled, served, decoy = linked_parent(tmp_path)
    with mcp_client(spelled) as client:
        assert client.text("list_allowed_directories", {}) == (False, f"Allowed directories:\n{served}")
        assert client.text("read_text_file", {"path": "where.txt"}) == (False, "served\n")
        assert client.text("read_text_file", {"path": str(served / "where.txt")}) == (False, "served\n")
        assert not client.text("write_file", {"path": "new.txt", "content": "a"})[0]
        assert not client.text("write_file", {"path": str(served / "abs.txt"), "content": "b"})[0]
        assert not client.text("create_directory", {"path": "made"})[0]
        error, text = client.text("read_text_file", {"path": str(decoy / "where.txt")})
        assert error and text == f"path escapes workspace: '{decoy / 'where.txt'}'"
        assert client.text("write_file", {"path": str(decoy / "planted.txt"), "content": "c"})[0]
    assert (served / "new.txt").read_text() == "a"
    assert (served / "abs.txt").read_text() == "b"
    assert (served / "made").is_dir()
    assert sorted(p.name for p in decoy.iterdir()) == ["where.txt"]


def test_client_roots_are_judged_against_the_directory_served(tmp_path: Path) -> None:
    spelled, served, decoy = linked_parent(tmp_path)
    # The decoy is what the DIR argument spells lexically, not a directory that is served.
    with mcp_client(spelled, roots=[decoy.as_uri()]) as client:
        assert client.text("list_allowed_directories", {}) == allowed(
            served, note=f"none of the client's roots lies inside a served directory; {KEPT}"
        )
        assert client.text("read_text_file", {"path": "where.txt"}) == (False, "served\n")
    # A root inside the directory served narrows to it; one holding it keeps it whole.
    with mcp_client(spelled, roots=[(served / "sub").as_uri()]) as client:
        assert client.text("list_allowed_directories", {}) == (
            False,
            f"Allowed directories:\n{served / 'sub'}",
        )
        assert client.text("read_text_file", {"path": "where.txt"}) == (False, "served sub\n")
    with mcp_client(spelled, roots=[(tmp_path / "real").as_uri()]) as client:
        assert client.text("list_allowed_directories", {}) == (False, f"Allowed directories:\n{served}")


def test_missing_directory_is_one_line(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("safefs-mcp")
    done = subprocess.run(
        [str(script), str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr == f"safefs-mcp: cannot serve {tmp_path / 'nope'}: No such file or directory\n"


def test_an_empty_directory_argument_is_refused(tmp_path: Path) -> None:
    # os.path.abspath("") is the current directory, which the operator did not name.
    script = Path(sys.executable).with_name("safefs-mcp")
    done = subprocess.run(
        [str(script), str(tmp_path), ""],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.endswith("safefs-mcp: error: argument DIR: an empty DIR names no directory\n")


def test_missing_mcp_extra_names_the_install_command(tmp_path: Path) -> None:
    # The SDK made unimportable, as in an environment installed without the extra.
    code = (
        "import sys; sys.modules['mcp'] = None; from safefs.mcp.cli import main; "
        f"sys.exit(main([{str(tmp_path)!r}]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr == (
        "safefs-mcp: the MCP server needs the mcp extra: in a clone of safefs, pip install './[mcp]'; "
        "beside a wheel in DIR, pip install --find-links DIR 'safefs[mcp]'\n"
    )


def _raw_roots_session(ws: Path, answer: dict[str, object]) -> str:
    """A client that offers roots and answers roots/list with ``answer`` (a result or an error
    the SDK's client would never send); the text of list_allowed_directories afterwards."""
    proc = subprocess.Popen(
        [*server_command(), str(ws)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, object]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    try:
        params = {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}}, "clientInfo": {"name": "t"}}
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        assert json.loads(proc.stdout.readline())["id"] == 1
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        asked = json.loads(proc.stdout.readline())
        assert asked["method"] == "roots/list"
        send({"jsonrpc": "2.0", "id": asked["id"], **answer})
        call = {"name": "list_allowed_directories", "arguments": {}}
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
        text: str = json.loads(proc.stdout.readline())["result"]["content"][0]["text"]
        return text
    finally:
        proc.stdin.close()
        proc.wait(30)


def test_a_roots_answer_that_is_not_roots_keeps_the_dirs(arena: Arena) -> None:
    cases: dict[str, dict[str, object]] = {
        "the client's roots/list answer is not a list of roots": {"result": {"roots": "nope"}},
        "the client answered roots/list with an error": {"error": {"code": -1, "message": "no"}},
    }
    for why, answer in cases.items():
        assert _raw_roots_session(arena.ws, answer) == allowed(arena.ws, note=f"{why}; {KEPT}")[1]
