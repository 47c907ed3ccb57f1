"""The audit log: one JSON line per tool call and per model request, hash-chained.

Each line is a JSON object with ``seq`` (0, 1, 2, ... across every run appended to the file),
``time`` (UTC, ISO 8601), ``event``, the event's fields, ``prev`` (the ``hash`` of the line
before; 64 zeros for the first) and ``hash``: the SHA-256 of the line's canonical JSON form
(keys sorted, no spaces, ASCII) without ``hash`` itself. :func:`verify` recomputes the chain
and names the first line that was altered, is missing or is out of order.

It records digests, sizes, names and decisions, never content: not a file's bytes, not a
command's output, not a message, not the API key. A tool call's decision is written before the
call runs and its outcome after it (``agent.policy.guard.ToolCallAudit``). Lines are appended by
path, each after checking the path still names the file the run opened, so a log replaced
under the run stops it instead of losing its lines.

The chain shows that a line inside the file was changed, removed or reordered. It cannot show
that lines were cut off the end, nor stop someone able to rewrite the whole file from
recomputing every hash: only a hash kept outside the file can. A run prints the last ``hash``
at its end; ``safefs-agent audit verify FILE --expect HASH`` checks the log still ends there.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from agent.jsonl import FileReplaced, JsonLinesWriter

GENESIS = "0" * 64


class AuditError(Exception):
    """An audit log that cannot be appended to."""


def canonical_json(entry: dict[str, Any]) -> str:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def entry_hash(entry: dict[str, Any]) -> str:
    body = {k: v for k, v in entry.items() if k != "hash"}
    return hashlib.sha256(canonical_json(body).encode("ascii")).hexdigest()


def digest(data: bytes | str) -> str:
    return hashlib.sha256(
        data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    ).hexdigest()


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")


def _last_line(path: str) -> bytes | None:
    """The last non-empty line of ``path`` (None for an empty or missing file)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            end = f.tell()
            step = 4096
            data = b""
            while end > 0:
                start = max(0, end - step)
                f.seek(start)
                data = f.read(end - start) + data
                end = start
                lines = [line for line in data.split(b"\n") if line.strip()]
                if len(lines) > 1 or (lines and start == 0):
                    return lines[-1]
            return None
    except FileNotFoundError:
        return None


class AuditLog:
    """An append-only, hash-chained audit log. Appending to an existing file continues its
    chain; a file whose last line is not a valid entry is refused (:class:`AuditError`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        try:
            # One writer at a time: two runs appending to one file would fork its chain.
            self._writer = JsonLinesWriter(self.path, exclusive=True)
        except BlockingIOError:
            raise AuditError(f"audit log {self.path} is in use by another run") from None
        try:
            self.seq, self.head = self._resume()
        except BaseException:
            self._writer.close()
            raise

    def _resume(self) -> tuple[int, str]:
        last = _last_line(self.path)
        if last is None:
            return 0, GENESIS
        try:
            entry = json.loads(last)
            if not isinstance(entry, dict) or entry_hash(entry) != entry.get("hash"):
                raise ValueError("hash mismatch")
            return int(entry["seq"]) + 1, str(entry["hash"])
        except (ValueError, KeyError, TypeError):
            raise AuditError(
                f"audit log {self.path}: its last line is not a valid entry; "
                f"check it with 'safefs-agent audit verify {self.path}'"
            ) from None

    def record(self, event: str, **fields: Any) -> dict[str, Any]:
        """Append one event; returns the entry written."""
        with self._lock:
            entry: dict[str, Any] = {
                "seq": self.seq,
                "time": _now(),
                "event": event,
                **fields,
                "prev": self.head,
            }
            entry["hash"] = entry_hash(entry)
            try:
                self._writer.append(canonical_json(entry))
            except FileReplaced as exc:
                raise AuditError(f"audit log {exc}") from None
            self.seq += 1
            self.head = entry["hash"]
            return entry

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


@dataclass(frozen=True)
class Verification:
    """The outcome of :func:`verify`: ``problem`` is None when the chain is intact."""

    events: int
    head: str
    problem: str | None = None
    line: int | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


def _lines(path: str) -> Iterator[tuple[int, bytes]]:
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            yield number, raw.rstrip(b"\n")


def verify(path: str | os.PathLike[str]) -> Verification:
    """Check every line's hash, sequence number and link to the line before."""
    path = os.fspath(path)
    expected_seq, head, count = 0, GENESIS, 0

    def broken(number: int, problem: str) -> Verification:
        return Verification(count, head, f"line {number}: {problem}", number)

    for number, raw in _lines(path):
        try:
            entry = json.loads(raw)
            if not isinstance(entry, dict):
                raise ValueError
            seq, prev, stored = entry["seq"], entry["prev"], entry["hash"]
        except (ValueError, KeyError, UnicodeDecodeError):
            return broken(number, "not an audit entry (altered or cut off)")
        if entry_hash(entry) != stored:
            return broken(number, "altered: its content does not match its hash")
        if seq != expected_seq:
            if isinstance(seq, int) and seq > expected_seq:
                missing = seq - expected_seq
                return broken(
                    number,
                    f"event {seq} where {expected_seq} was expected: "
                    f"{missing} line{'s are' if missing > 1 else ' is'} missing before "
                    "it, or lines were reordered",
                )
            return broken(
                number, f"event {seq} where {expected_seq} was expected: lines were reordered or repeated"
            )
        if prev != head:
            return broken(
                number,
                "does not follow the line before it (its prev hash differs): "
                "that line was altered or a line is missing",
            )
        expected_seq, head, count = seq + 1, stored, count + 1
    return Verification(count, head)
