"""The shared corpus of other tools' secret samples (``../shared/secrets-corpus/`` beside the
checkout: gitleaks' rule tests and detect-secrets' plugin tests), read and scored.

A true positive counts as redacted when the scanner's findings cover its secret (the span the
sample marks) but for at most a quarter of its characters: what is left visible of it is not
the secret. A false-positive sample, or a detect-secrets line, counts as flagged when the
scanner finds anything in it. A false-positive sample listed against one gitleaks rule that
another of its rules matches (a Cloudflare origin-CA key listed against the global-key rule) is
a secret by gitleaks' own rules, so it is counted apart; ``generic-api-key`` is not asked, as
its regex matches any assignment and leaves the decision to an entropy threshold and allowlists
the corpus does not carry. Nothing in the project needs the corpus at run time."""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

from agent.secret_scanner import Finding, SecretScanner

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "secrets-corpus"
# The gitleaks rules for kinds the scanner's documentation lists by name.
DOCUMENTED_RULES = frozenset(
    {
        "private-key",
        "anthropic-api-key",
        "anthropic-admin-api-key",
        "openai-api-key",
        "aws-access-token",
        "github-pat",
        "github-fine-grained-pat",
        "github-oauth",
        "github-app-token",
        "github-refresh-token",
        "gitlab-pat",
        "gitlab-pat-routable",
        "slack-bot-token",
        "slack-user-token",
        "slack-app-token",
        "slack-config-access-token",
        "slack-config-refresh-token",
        "slack-legacy-bot-token",
        "slack-legacy-workspace-token",
        "slack-legacy-token",
        "slack-webhook-url",
        "stripe-access-token",
        "gcp-api-key",
        "npm-access-token",
        "pypi-upload-token",
        "huggingface-access-token",
        "sendgrid-api-token",
        "jwt",
    }
)


@dataclass
class Tally:
    """Samples seen and samples hit (redacted, or flagged), and the first few not hit."""

    total: int = 0
    hit: int = 0
    missed: list[str] = field(default_factory=list)

    def add(self, hit: bool, sample: str) -> None:
        self.total += 1
        self.hit += hit
        if not hit and len(self.missed) < 2000:
            self.missed.append(sample)

    @property
    def rate(self) -> float:
        return self.hit / self.total if self.total else 0.0

    def __str__(self) -> str:
        return f"{self.hit} of {self.total} ({100 * self.rate:.1f}%)"


def _covered(findings: Iterable[Finding], start: int, end: int) -> bool:
    inside = sum(max(0, min(f.end, end) - max(f.start, start)) for f in findings)
    return inside * 4 >= (end - start) * 3


def gitleaks() -> dict[str, object]:
    data: dict[str, object] = json.loads((CORPUS / "gitleaks.json").read_text())
    return data


def detect_secrets() -> dict[str, object]:
    data: dict[str, object] = json.loads((CORPUS / "detect_secrets.json").read_text())
    return data


def _other_rules(rules: list[dict[str, object]]) -> dict[str, Any]:
    """Each gitleaks rule's regex (Go's syntax is RE2's), but the generic one's."""
    options = re2.Options()
    options.max_mem = 64 << 20
    return {
        str(rule["id"]): re2.compile(str(rule["regex"]).encode(), options)
        for rule in rules
        if rule["regex"] and rule["id"] != "generic-api-key"
    }


# The path grep shows before each line: digits and dashes in it, as a path may have.
GREP_PATH = "src/app-2/config-3.yaml"
# The lines the bash tool puts before a command's output (its status, sandbox and killed lines).
BASH_HEAD = "exit status 0\nsandbox: landlock, no network, rlimits\nkilled: none (nothing else was running)\n"


def _read_prefix(n: int) -> str:
    return f"{n:6}\t"


def _editor_prefix(n: int) -> str:
    return f"{n}: "


def _grep_prefix(n: int) -> str:
    return f"{GREP_PATH}:{n}:"


def _grep_context_prefix(n: int) -> str:
    """``grep -A``: the first line is the match, the others its context lines."""
    return f"{GREP_PATH}:{n}:" if n == 1 else f"{GREP_PATH}-{n}-"


# Each form a tool shows a file's text in: the prefix it puts before line N (1-based), or the
# text it puts before the whole.
FORMS: dict[str, Callable[[int], str] | str] = {
    "raw": "",
    "read": _read_prefix,
    "grep -n": _grep_prefix,
    "grep context": _grep_context_prefix,
    "editor view": _editor_prefix,
    "bash output": BASH_HEAD,
}


def shown(text: str, form: str) -> tuple[str, Callable[[int], int]]:
    """``text`` as ``form`` shows it, and where each offset of ``text`` is in what it shows."""
    how = FORMS[form]
    if isinstance(how, str):
        return how + text, lambda offset: offset + len(how)
    lines = text.split("\n")
    shifts: list[int] = []  # the characters added before each line's first
    starts: list[int] = []  # each line's first offset in ``text``
    pieces: list[str] = []
    added = at = 0
    for n, line in enumerate(lines, 1):
        prefix = how(n)
        added += len(prefix)
        shifts.append(added)
        starts.append(at)
        pieces.append(prefix + line)
        at += len(line) + 1

    def where(offset: int) -> int:
        return offset + shifts[bisect.bisect_right(starts, offset) - 1]

    return "\n".join(pieces), where


@dataclass
class Scores:
    documented: Tally = field(default_factory=Tally)
    gitleaks_tps: Tally = field(default_factory=Tally)
    gitleaks_fps: Tally = field(default_factory=Tally)
    gitleaks_fps_of_no_rule: Tally = field(default_factory=Tally)  # no other rule matches them
    detect_secrets_tps: Tally = field(default_factory=Tally)
    detect_secrets_fps: Tally = field(default_factory=Tally)
    by_rule: dict[str, Tally] = field(default_factory=dict)
    # gitleaks' true positives redacted, and its false-positive samples flagged, in each form.
    forms_tps: dict[str, Tally] = field(default_factory=dict)
    forms_fps: dict[str, Tally] = field(default_factory=dict)


def score(scanner: SecretScanner) -> Scores:
    scores = Scores()
    rules = gitleaks()["rules"]
    regexes = _other_rules(rules)  # type: ignore[arg-type]
    for rule in rules:  # type: ignore[attr-defined]
        tally = scores.by_rule.setdefault(rule["id"], Tally())
        for sample in rule["tps"]:
            if not sample["spans"]:
                continue  # a sample with no secret marked in it (an empty PKCS#12 stand-in)
            findings = scanner.find(sample["text"])
            hit = all(_covered(findings, start, end) for start, end in sample["spans"])
            label = f"{rule['id']}: {sample['text']!r}"
            scores.gitleaks_tps.add(hit, label)
            tally.add(hit, label)
            if rule["id"] in DOCUMENTED_RULES:
                scores.documented.add(hit, label)
            for form in FORMS:
                as_shown, where = shown(sample["text"], form)
                found = scanner.find(as_shown) if form != "raw" else findings
                form_hit = all(_covered(found, where(start), where(end)) for start, end in sample["spans"])
                scores.forms_tps.setdefault(form, Tally()).add(form_hit, f"{rule['id']}: {as_shown!r}")
        for text in rule["fps"]:
            found = scanner.find(text)
            label = f"{rule['id']}: {text!r} -> {[f.kind for f in found]}"
            scores.gitleaks_fps.add(bool(found), label)
            others = [k for k, regex in regexes.items() if k != rule["id"] and regex.search(text.encode())]
            if not others:
                scores.gitleaks_fps_of_no_rule.add(bool(found), label)
            for form in FORMS:
                as_shown = shown(text, form)[0]
                flagged = scanner.find(as_shown) if form != "raw" else found
                scores.forms_fps.setdefault(form, Tally()).add(
                    bool(flagged), f"{rule['id']}: {as_shown!r} -> {[f.kind for f in flagged]}"
                )
    for plugin in detect_secrets()["plugins"]:  # type: ignore[attr-defined]
        for text in plugin["tps"]:
            scores.detect_secrets_tps.add(bool(scanner.find(text)), f"{plugin['id']}: {text!r}")
        for text in plugin["fps"]:
            found = scanner.find(text)
            scores.detect_secrets_fps.add(
                bool(found), f"{plugin['id']}: {text!r} -> {[f.kind for f in found]}"
            )
    return scores
