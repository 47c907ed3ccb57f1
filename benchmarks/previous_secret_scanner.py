"""The secret scanner as it was before it moved to one RE2 engine (a Python ``re`` regex per
pattern behind substring hints), kept only so ``bench_policy.py`` can measure the two side by
side in one run. Nothing else uses it.

The original description follows.

Finding credentials in text before it reaches the model, and replacing them with
``[REDACTED:<kind>]``.

A documented pattern set, each pattern a published token format (a fixed prefix, a length, an
alphabet), so a match is almost never anything else:

====================  ====================================================================
kind                  format matched
====================  ====================================================================
private-key           a PEM/OpenSSH/PGP ``-----BEGIN ... PRIVATE KEY-----`` block, whole
                      (to its END line, or to the end of its base64 body when cut off)
anthropic-api-key     ``sk-ant-api03-...``, ``sk-ant-admin01-...`` (80+ URL-safe characters)
openai-api-key        ``sk-proj-``/``sk-svcacct-``/``sk-admin-`` keys; legacy ``sk-...T3BlbkFJ...``
aws-access-key-id     ``AKIA``/``ASIA``/``ABIA``/``ACCA`` + 16 upper-case letters or digits
aws-secret-key        40 base64 characters assigned to an ``aws_secret_access_key`` name
github-token          ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` + 36+, ``github_pat_`` + 50+
gitlab-token          ``glpat-`` + 20+
slack-token           ``xoxb-``/``xoxp-``/``xoxa-``/``xoxo-``/``xoxs-``/``xoxr-``, ``xapp-``
slack-webhook         ``https://hooks.slack.com/services/T.../B.../...``
stripe-key            ``sk_live_``/``sk_test_``/``rk_live_``/``rk_test_`` + 16+ (not ``pk_``)
google-api-key        ``AIza`` + 35
google-oauth-secret   ``GOCSPX-`` + 28
npm-token             ``npm_`` + 36
pypi-token            ``pypi-AgEIcHlwaS5vcmc`` + 50+ (a macaroon for pypi.org)
huggingface-token     ``hf_`` + 34+ letters and digits
sendgrid-key          ``SG.`` + 22 + ``.`` + 43
jwt                   three base64url parts, the first two starting ``eyJ`` (a JSON object)
url-password          the password in ``scheme://user:password@host``
secret-assignment     a value assigned to a name containing password, passwd, passphrase,
                      secret, token, api_key, access_key, auth_key, credential or
                      private_key (``=``, ``:``, ``=>``, JSON and YAML alike), when the value
                      is at least 8 characters with Shannon entropy of 3.0 bits or more per
                      character, mixes letters with digits or symbols, and is not a template,
                      a variable, a placeholder or a marker spelled with words such as test,
                      demo, fake, example, secret or token
====================  ====================================================================

Its precision is measured by a test: every planted secret in a corpus is found, and the
project's own source tree yields no finding at all.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

PLACEHOLDER_PATTERN = re.compile(r"\[REDACTED(?::[a-z0-9-]+)?\]")


def placeholder(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text`` taken as a sample of its own characters."""
    if not text:
        return 0.0
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in Counter(text).values())


_PLACEHOLDER_WORDS = re.compile(
    r"(?i)^(?:x+|\*+|\.+|-+|_+|changeme\w*|example\w*|placeholder\w*|redacted\w*|your[\w-]*|"
    r"dummy\w*|fake\w*|test\w*|todo\w*|none|null|true|false|undefined)$"
)
# A word in a value that says it is not a generated secret but a marker or an example
# (``sk-test-...``, ``not-a-real-key``, ``outside-secret-7f3a``).
_NOT_REAL_WORD = re.compile(
    r"(?i)(?:^|[-_.])(?:fake|dummy|example|sample|placeholder|test|demo|changeme|redacted"
    r"|not[-_]?a[-_]?real|notreal|secret|password|passwd|token|credential)(?:$|[-_.0-9])"
)
# Unquoted values that are code, not data: an attribute, a call, an index.
_CODE_LIKE = re.compile(r"^[A-Za-z_][\w]*(?:\.[\w.]*|\(.*|\[.*)$")
_NAME = re.compile(r"^[A-Za-z_]\w*$")


def _random_name(value: str) -> bool:
    """An unquoted bare name is a variable unless it looks generated: long, with a digit,
    high entropy, and upper and lower case mixed throughout (camelCase has a capital per word,
    a random token about one letter in two)."""
    letters = [c for c in value if c.isalpha()]
    upper = sum(c.isupper() for c in letters) / len(letters) if letters else 0.0
    return (
        len(value) >= 16
        and any(c.isdigit() for c in value)
        and 0.25 <= upper <= 0.75
        and shannon_entropy(value) >= 3.5
    )


def _looks_random(value: str, *, quoted: bool) -> bool:
    if len(value) < 8 or _PLACEHOLDER_WORDS.match(value) or _NOT_REAL_WORD.search(value):
        return False
    if any(mark in value for mark in ("${", "{{", "%(", "%s", "<", ">", "://", "(", ")")):
        return False  # a template, a format string, a URL or an expression
    if not quoted and (_CODE_LIKE.match(value) or (_NAME.match(value) and not _random_name(value))):
        return False
    if value.startswith(("$", "{", "[")):
        return False
    has_letter = any(c.isalpha() for c in value)
    has_other = any(c.isdigit() or not c.isalnum() for c in value if c not in "_-")
    mixed_case = any(c.islower() for c in value) and any(c.isupper() for c in value)
    if not has_letter or not (has_other or (mixed_case and len(value) >= 16)):
        return False
    return shannon_entropy(value) >= 3.0


@dataclass(frozen=True)
class SecretPattern:
    """One secret format: ``regex`` finds it; group ``group`` is the value to replace;
    ``accept``, when given, has the last word on a candidate value; ``hints`` are substrings
    (lower case) of which every match holds one, a fast first check."""

    kind: str
    regex: re.Pattern[str]
    group: int | str = 0
    accept: Callable[[re.Match[str]], bool] | None = None
    # Text holding none of these (in lower case) cannot match: the regex is not run on it.
    hints: tuple[str, ...] = ()


def _assignment_accept(match: re.Match[str]) -> bool:
    return _looks_random(match.group("value"), quoted=bool(match.group("quote")))


def _url_password_accept(match: re.Match[str]) -> bool:
    value = match.group("password")
    return not (
        _PLACEHOLDER_WORDS.match(value)
        or value.startswith(("$", "{", "<"))
        or value.lower() in ("pass", "password", "pwd", "secret", "token")
    )


# A key block's body: base64, header lines ("Proc-Type: 4,ENCRYPTED"), newlines, and the
# two-character "\n" of a key kept in a JSON or source string.
_KEY_BODY = r"(?:[A-Za-z0-9+/=\s:,.\\]|-(?!----))"  # no "-----": stops at the next header
_KEY_SEP = r"(?:\s|\\n)"
PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern(
        "private-key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            rf"(?:{_KEY_BODY}{{0,65536}}?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            rf"|(?:{_KEY_SEP}*[\w-]+:[^\n]*)*{_KEY_SEP}*[A-Za-z0-9+/=]{{16,}}"
            rf"(?:{_KEY_SEP}+[A-Za-z0-9+/=]+)*)"
        ),
        hints=("private key",),
    ),
    SecretPattern(
        "anthropic-api-key",
        re.compile(r"\bsk-ant-(?:api|admin|oat)\d{2}-[A-Za-z0-9_-]{80,}"),
        hints=("sk-ant-",),
    ),
    SecretPattern(
        "openai-api-key",
        re.compile(
            r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}"
            r"|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b"
        ),
        hints=("sk-",),
    ),
    SecretPattern(
        "aws-access-key-id",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
        hints=("akia", "asia", "abia", "acca"),
    ),
    SecretPattern(
        "aws-secret-key",
        re.compile(
            r"(?i:aws_?secret_?access_?key)[\"']?\s*[:=]\s*[\"']?"
            r"(?P<value>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        group="value",
        hints=("secret",),
    ),
    SecretPattern(
        "github-token",
        re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b|\bgithub_pat_[A-Za-z0-9_]{50,255}\b"),
        hints=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    SecretPattern("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), hints=("glpat-",)),
    SecretPattern(
        "slack-webhook",
        re.compile(r"https://hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]{16,}"),
        hints=("hooks.slack.com",),
    ),
    SecretPattern(
        "slack-token",
        re.compile(r"\bxox[abposr]-[0-9]+-[A-Za-z0-9-]{8,}|\bxapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{32,}"),
        hints=("xox", "xapp-"),
    ),
    SecretPattern(
        "stripe-key", re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}\b"), hints=("k_live_", "k_test_")
    ),
    SecretPattern("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"), hints=("aiza",)),
    SecretPattern(
        "google-oauth-secret", re.compile(r"\bGOCSPX-[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])"), hints=("gocspx-",)
    ),
    SecretPattern("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), hints=("npm_",)),
    SecretPattern("pypi-token", re.compile(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"), hints=("pypi-",)),
    SecretPattern("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{34,}\b"), hints=("hf_",)),
    SecretPattern(
        "sendgrid-key",
        re.compile(r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])"),
        hints=("sg.",),
    ),
    SecretPattern(
        "jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}"), hints=("eyj",)
    ),
    SecretPattern(
        "url-password",
        re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@'\"]+:(?P<password>[^\s/@'\"]{3,})@[\w.-]+"),
        group="password",
        accept=_url_password_accept,
        hints=("://",),
    ),
    SecretPattern(
        "secret-assignment",
        re.compile(
            # From the keyword in the name on, bounded: linear time whatever the text.
            r"(?i:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key"
            r"|credential|private[_-]?key)[\w-]{0,64}"
            r"[\"']?\]?[ \t]*(?::=|=>|[:=])[ \t]*"
            r"(?P<quote>[\"'`]?)(?P<value>[^\s\"'`,;(){}\[\]<>]{8,})(?P=quote)"
        ),
        group="value",
        accept=_assignment_accept,
        hints=("pass", "secret", "token", "key", "credential"),
    ),
)


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class Redaction:
    """A text with its secrets replaced, and what was found."""

    text: str
    findings: tuple[Finding, ...]

    @property
    def count(self) -> int:
        return len(self.findings)

    def kinds(self) -> list[str]:
        return sorted({f.kind for f in self.findings})


class SecretScanner:
    """Finds the secrets ``patterns`` describe (all of :data:`PATTERNS` by default).

    Where matches overlap, the pattern listed first wins, so a private-key block is one
    finding however many tokens its body happens to resemble."""

    def __init__(self, patterns: Iterable[SecretPattern] = PATTERNS) -> None:
        self.patterns = tuple(patterns)

    def find(self, text: str) -> list[Finding]:
        taken: list[Finding] = []
        lowered = text.lower()
        for pattern in self.patterns:
            if pattern.hints and not any(hint in lowered for hint in pattern.hints):
                continue
            for match in pattern.regex.finditer(text):
                if pattern.accept is not None and not pattern.accept(match):
                    continue
                start, end = match.span(pattern.group)
                if start == end or any(start < f.end and f.start < end for f in taken):
                    continue
                taken.append(Finding(pattern.kind, start, end))
        return sorted(taken, key=lambda f: f.start)

    def redact(self, text: str) -> Redaction:
        findings = self.find(text)
        if not findings:
            return Redaction(text, ())
        pieces: list[str] = []
        last = 0
        for finding in findings:
            pieces += [text[last : finding.start], placeholder(finding.kind)]
            last = finding.end
        pieces.append(text[last:])
        return Redaction("".join(pieces), tuple(findings))


def redaction_note(redaction: Redaction) -> str:
    """The line added to a tool result that had secrets replaced."""
    noun = "secret" if redaction.count == 1 else "secrets"
    return f"[{redaction.count} {noun} redacted before reaching the model: {', '.join(redaction.kinds())}]"
