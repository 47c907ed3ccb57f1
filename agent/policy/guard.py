"""The tool-layer guard: every tool result passes the secret scanner, denied files are kept
out of listings and searches, and every call is audited.

:func:`guard_tools` wraps each tool's ``execute``; :class:`ToolCallAudit` wraps the approval
hook. Together they see each call twice, at its decision and at its outcome, and write an
audit line at each: the decision before the call runs, the outcome after. The loop runs calls
one at a time, hook then tool, so the pending call is matched by identity of its input.

A file or directory a read rule denies is left out of every walk (``list``, ``glob``, ``grep``)
exactly as an ignored one is: not listed, not searched, not counted, so neither a listing nor a
count of matches says anything of its content. Each entry is judged as given and canonically
(so a link to ``.env`` is left out like ``.env``); a call naming a denied path is refused before
it runs.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import safefs
from agent.audit import AuditLog, digest
from agent.messages import ToolCall
from agent.policy.approval import Decision, Policy
from agent.policy.sensitive import PathRule, PathRules
from agent.policy.targets import Target, canonical_path, paths_of, relative, target
from agent.secret_scanner import SecretScanner, redaction_note
from agent.tools.base import Tool, ToolOutput
from safefs.workspace.walk import Entry


@dataclass
class _Pending:
    call: ToolCall
    decision: Decision


class ToolCallAudit:
    """Writes each call's audit lines ahead of what they record: a ``tool_call`` line with its
    canonical target, a digest of its input, the decision and who made it, written *before* the
    call runs; then, once it has, a ``tool_result`` line with its outcome (and a digest and size
    of the result). A run killed mid-call leaves the ``tool_call`` line without its result,
    which ``audit verify`` reports as intact but a reader sees as a call that never finished. A
    refused call has one ``tool_call`` line with its outcome."""

    def __init__(
        self,
        audit: AuditLog,
        root: safefs.Root,
        *,
        sandbox: str | None = None,
        tools: Iterable[Tool] | None = None,
        offered: Iterable[str] | None = None,
    ) -> None:
        """``tools`` declare each call's paths (by default the built-in file tools); ``offered``
        names the tools the loop will run (None: any name may run)."""
        self.audit = audit
        self.root = root
        self.sandbox = sandbox
        self.paths = paths_of(tools)
        self.offered = None if offered is None else frozenset(offered)
        self._pending: _Pending | None = None
        self._lock = threading.Lock()

    def policy(self, inner: Policy) -> Policy:
        """``inner``, with each decision written to the log before the call can run."""

        def audited(call: ToolCall) -> Decision:
            self.flush()
            try:
                decision = inner(call)
            except BaseException:
                self._decided(call, None, outcome="approval failed")
                raise
            if not decision.approved:
                self._decided(call, decision, outcome="denied")
            elif self.offered is not None and call.name not in self.offered:
                self._decided(call, decision, outcome="unknown tool")  # the loop will not run it
            else:
                self._decided(call, decision)  # the write-ahead line: the call may run now
                with self._lock:
                    self._pending = _Pending(call, decision)
            return decision

        return audited

    def refused(self, call: ToolCall, reason: str) -> None:
        """A call the loop answered without asking the hook (a lone-surrogate input, a call in a
        reply cut off by ``max_tokens``, a cancelled run): one line, outcome ``not run``."""
        self.flush()
        self._decided(call, Decision(False, reason, "loop"), outcome="not run")

    def finished(self, args: Any, output: ToolOutput | None, redacted: int) -> None:
        with self._lock:
            pending, self._pending = self._pending, None
        if pending is None or (pending.call.input is not args and pending.call.input != args):
            if pending is not None:
                with self._lock:
                    self._pending = pending
            return  # a tool run outside the audited loop
        if output is None:
            self._result(pending.call, "raised")
            return
        self._result(
            pending.call,
            "error" if output.is_error else "ok",
            result_sha256=digest(output.content),
            result_bytes=len(output.content.encode("utf-8", "surrogatepass")),
            redacted=redacted,
        )

    def flush(self) -> None:
        """An approved call the loop never ran."""
        with self._lock:
            pending, self._pending = self._pending, None
        if pending is not None:
            self._result(pending.call, "not run")

    def _target(self, call: ToolCall) -> str | None:
        if call.name == "bash":
            return "."
        paths = self.paths(call)
        return canonical_path(self.root, paths[0]) if paths else None

    def _decided(self, call: ToolCall, decision: Decision | None, outcome: str | None = None) -> None:
        text = json.dumps(call.input, sort_keys=True, ensure_ascii=False)
        fields: dict[str, Any] = {
            "tool": call.name,
            "call_id": call.id,
            "target": self._target(call),
            "input_sha256": digest(text),
            "input_bytes": len(text.encode("utf-8", "surrogatepass")),
            "decision": None if decision is None else ("allowed" if decision.approved else "denied"),
            "decided_by": None if decision is None else decision.decided_by or "hook",
        }
        if outcome is not None:
            fields["outcome"] = outcome
        if decision is not None and not decision.approved:
            fields["reason"] = decision.reason
        if call.name == "bash" and self.sandbox is not None:
            fields["sandbox"] = self.sandbox
        self.audit.record("tool_call", **fields)

    def _result(self, call: ToolCall, outcome: str, **extra: Any) -> None:
        self.audit.record("tool_result", tool=call.name, call_id=call.id, outcome=outcome, **extra)


class DeniedFiles:
    """Judges the paths a listing or search reports against the read rules."""

    def __init__(self, rules: PathRules, root: safefs.Root) -> None:
        self.rules = rules
        self.root = root

    def rule_for(
        self, path: str, *, directory: bool = False, canonical: str | None = None
    ) -> PathRule | None:
        if canonical is not None:
            found: Target | None = Target(relative(self.root, path) or path, canonical)
        else:
            found = target(self.root, path)
        # A link that leads out of the workspace (or loops) is still judged by its own name.
        for candidate in (found or Target(path, path)).candidates():
            rule = self.rules.denial(candidate, writing=False, directory=directory)
            if rule is not None:
                return rule
        return None

    def hides(self, entry: Entry) -> bool:
        """The walk's hook (:attr:`Tool.hide`): whether a read rule denies ``entry``. The walk
        enters no link, so an entry that is not a link is canonically its ``real`` path; a link
        is judged by where it leads as well as by its name."""
        canonical = None if entry.kind == "link" or not entry.real else entry.real
        return self.rule_for(entry.path, directory=entry.kind == "dir", canonical=canonical) is not None


class GuardedTool(Tool):
    """A tool whose results are scanned for secrets (and whose outcome is audited)."""

    name = ""
    description = ""
    input_schema: ClassVar[dict[str, Any]] = {}

    def __init__(
        self,
        inner: Tool,
        scanner: SecretScanner | None,
        audit: ToolCallAudit | None,
    ) -> None:
        self.inner = inner
        self.scanner = scanner
        self.audit = audit

    def target_paths(self, args: Any) -> list[str]:
        return self.inner.target_paths(args)

    def spec(self) -> dict[str, Any]:
        return self.inner.spec()

    def execute(self, args: Any, cancel: threading.Event | None = None) -> ToolOutput:
        try:
            output = self.inner.execute(args, cancel)
        except BaseException:
            if self.audit is not None:
                self.audit.finished(args, None, 0)
            raise
        redacted = 0
        if self.scanner is not None:
            redaction = self.scanner.redact(output.content)
            if redaction.count:
                redacted = redaction.count
                output = ToolOutput(f"{redaction.text}\n{redaction_note(redaction)}", output.is_error)
        if self.audit is not None:
            self.audit.finished(args, output, redacted)
        return output

    def run(self, args: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        return self.inner.run(args, cancel)


def guard(
    tool: Tool,
    *,
    scanner: SecretScanner | None = None,
    audit: ToolCallAudit | None = None,
    denied: DeniedFiles | None = None,
) -> GuardedTool:
    # A class per wrapped tool: a tool's name, description and schema are class attributes.
    cls = type(
        f"Guarded{type(tool).__name__}",
        (GuardedTool,),
        {
            "name": tool.name,
            "description": tool.description,
            "input_schema": tool.input_schema,
            "path_fields": tool.path_fields,
        },
    )
    if denied is not None:
        tool.hide_entries(denied.hides)
    wrapped: GuardedTool = cls(tool, scanner, audit)
    return wrapped


def guard_tools(
    tools: Iterable[Tool],
    *,
    scanner: SecretScanner | None = None,
    audit: ToolCallAudit | None = None,
    denied: DeniedFiles | None = None,
) -> list[Tool]:
    return [guard(tool, scanner=scanner, audit=audit, denied=denied) for tool in tools]
