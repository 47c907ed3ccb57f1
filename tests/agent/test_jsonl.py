"""The JSON Lines writer under the session and the audit log: whole flushed lines, a lost newline
given back, one exclusive writer, and refusals of what would not be one ASCII line."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.audit import AuditLog, verify
from agent.jsonl import JsonLinesWriter


def test_each_line_is_flushed_as_appended_and_parents_are_made(tmp_path: Path) -> None:
    path = tmp_path / "new" / "dirs" / "f.jsonl"
    writer = JsonLinesWriter(str(path))
    writer.append('{"a":1}')
    assert path.read_text() == '{"a":1}\n'  # before close
    writer.append('{"b":2}')
    writer.close()
    assert path.read_text() == '{"a":1}\n{"b":2}\n'


def test_a_last_line_without_its_newline_gets_it_back_only_when_a_line_is_appended(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_text('{"a":1}')
    JsonLinesWriter(str(path)).close()
    assert path.read_text() == '{"a":1}'  # opening alone changes nothing
    writer = JsonLinesWriter(str(path))
    writer.append('{"b":2}')
    writer.append('{"c":3}')
    writer.close()
    assert path.read_text() == '{"a":1}\n{"b":2}\n{"c":3}\n'


def test_an_audit_entry_that_lost_its_newline_is_continued_not_glued_to(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    with AuditLog(log) as audit:
        audit.record("tool_call", tool="read")
    log.write_bytes(log.read_bytes().rstrip(b"\n"))
    with AuditLog(log) as audit:
        audit.record("tool_call", tool="write")
    result = verify(log)
    assert (result.ok, result.events) == (True, 2), result


def test_exclusive_means_one_writer_at_a_time(tmp_path: Path) -> None:
    path = str(tmp_path / "f.jsonl")
    first = JsonLinesWriter(path, exclusive=True)
    with pytest.raises(BlockingIOError):
        JsonLinesWriter(path, exclusive=True)
    JsonLinesWriter(path).close()  # a writer that does not ask for the lock is not stopped
    first.close()
    JsonLinesWriter(path, exclusive=True).close()


@pytest.mark.parametrize("line", ['{"a":\n1}', '{"a":"\u00e9"}'])
def test_what_is_not_one_ascii_line_is_refused_and_nothing_written(tmp_path: Path, line: str) -> None:
    path = tmp_path / "f.jsonl"
    writer = JsonLinesWriter(str(path))
    with pytest.raises(ValueError):
        writer.append(line)
    writer.close()
    assert path.read_bytes() == b""
