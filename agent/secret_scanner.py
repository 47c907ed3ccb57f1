"""Finding credentials in text before it reaches the model, and replacing them with
``[REDACTED:<kind>]``.

A documented pattern set, each pattern a published token format (a fixed prefix, a length, an
alphabet) or a value assigned to a name that says it is secret:

=======================  =================================================================
kind                     format matched
=======================  =================================================================
private-key              a PEM/OpenSSH/PGP ``-----BEGIN ... PRIVATE KEY-----`` block, whole
                         (to its END line, or to the end of its body when cut off); a key
                         body without its BEGIN line (three or more full-width base64 lines,
                         as a read from an offset or ``sed 1,3d`` leaves it) and the body
                         lines before an END line without its BEGIN; a base64 key under a k8s ``tls.key:`` (or
                         ``ssh-privatekey:``). Certificates and public keys are left alone
anthropic-api-key        ``sk-ant-api03-...``, ``sk-ant-admin01-...`` (80+ URL-safe characters)
openai-api-key           ``sk-proj-``/``sk-svcacct-``/``sk-admin-`` keys; legacy ``sk-...T3BlbkFJ...``
aws-access-key-id        ``AKIA``/``ASIA``/``ABIA``/``ACCA`` + 16 upper-case letters or digits
aws-secret-key           40 base64 characters assigned to an ``aws_secret_access_key`` name, or
                         the column after an access key id in an ``*_accessKeys.csv`` row
azure-key                the value of ``AccountKey=``/``SharedAccessKey=`` in a connection string
github-token             ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` + 36+, ``github_pat_`` + 50+
gitlab-token             ``glpat-`` + 20+
slack-token              ``xoxb-``/``xoxp-``/``xoxa-``/``xoxo-``/``xoxs-``/``xoxr-``/``xoxe-``,
                         ``xoxe.xoxp-``, ``xapp-``
slack-webhook            ``https://hooks.slack.com/services/T.../B.../...``
stripe-key               ``sk_live_``/``sk_test_``/``rk_live_``/``rk_test_`` + 16+ (not ``pk_``)
stripe-webhook-secret    ``whsec_`` + 24+
google-api-key           ``AIza`` + 35
google-oauth-secret      ``GOCSPX-`` + 28
npm-token                ``npm_`` + 36; the value of an ``.npmrc`` ``_auth=``/``_authToken=``/
                         ``_password=`` line
pypi-token               ``pypi-AgEIcHlwaS5vcmc`` + 50+ (a macaroon for pypi.org)
huggingface-token        ``hf_`` + 34+ letters and digits
sendgrid-key             ``SG.`` + 22 + ``.`` + 43
jwt                      three base64url parts, the first two starting ``eyJ`` (a JSON object)
bearer-token             the token of an ``Authorization: Bearer <token>`` header
url-password             the password in ``scheme://user:password@host`` (the user may be empty)
secret-assignment        a value assigned to a name containing password, passwd, passphrase,
                         secret, token, api_key, access_key, auth_key, credential or
                         private_key (``=``, ``:``, ``=>``, JSON and YAML alike), when the value
                         is at least 8 characters, looks generated (see ``_looks_random``:
                         letters mixed with digits or symbols, 3 bits of entropy per character
                         or more; unquoted, it must not read as code: a dotted name, a call, a
                         CamelCase type such as ``Ed25519PrivateKey``) and is not a template,
                         a variable, a path, a placeholder or a marker spelled with words such
                         as test, demo, fake, example, secret or token. Single-case hex (16+)
                         and base32 (16+) values count, unquoted too
=======================  =================================================================

One engine runs every pattern: google-re2, each pattern an alternative of one regex run once, in
linear time, over the text's UTF-8 bytes. The few candidates then pass the Python checks above;
around each, an RE2 ``Set`` of the same patterns says whether another one starts inside it (a
vendor format inside a generic assignment, a key id beside its secret), and only those are
looked for again there. Text with no candidate costs that one pass.

Its precision is measured by a test: every planted secret in a corpus is found, and neither the
project's own tree nor a generated site-packages-like tree yields a finding.
"""

from __future__ import annotations

import bisect
import math
import re
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

PLACEHOLDER_PATTERN = re.compile(r"\[REDACTED(?::[a-z0-9-]+)?\]")
# RE2 memory for the Set's DFA: enough that adversarial text cannot make it give up.
DFA_MEMORY = 64 << 20


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
# Words that, anywhere in a value, make it a name or a label rather than a generated secret
# (``challengePassword``, ``/v1/oauth/token``, ``resetTokenExpiry``).
_NAMING_WORDS = ("password", "passwd", "secret", "token", "credential", "example", "placeholder")
# Unquoted values that are code, not data: an attribute, a call, an index.
_CODE_LIKE = re.compile(r"^[A-Za-z_][\w]*(?:\.[\w.]*|\(.*|\[.*)$")
_NAME = re.compile(r"^[A-Za-z_]\w*$")
_HEX = re.compile(r"^(?:[0-9a-f]{16,}|[0-9A-F]{16,})$")
_BASE32 = re.compile(r"^(?:[A-Z2-7]{16,}|[a-z2-7]{16,})=*$")
_CAMEL_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_VOWELS = frozenset("aeiouy")


def _word_like(value: str) -> bool:
    """A CamelCase or snake_case name built of words (``Ed25519PrivateKey``), not a token:
    most of its letter runs are three letters or more with a vowel."""
    parts = [p for p in _CAMEL_PART.findall(value) if p.isalpha()]
    if len(parts) < 2:
        return False
    words = sum(len(p) >= 3 and bool(_VOWELS & set(p.lower())) for p in parts)
    return words * 3 >= len(parts) * 2


def _single_case_key(value: str) -> bool:
    """Hex or base32 in one case (a Datadog or Twilio key, a TOTP seed): generated, although
    it reads as a bare name."""
    if _HEX.match(value):
        return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    if _BASE32.match(value):
        digits = sum(c.isdigit() for c in value)
        return digits >= 2 and shannon_entropy(value) >= 3.5
    return False


def _random_name(value: str) -> bool:
    """An unquoted bare name is a variable unless it looks generated: long, with a digit,
    high entropy, and either upper and lower case mixed throughout (camelCase has a capital per
    word, a random token about one letter in two) or, in one case, digits spread through it
    and no ``_`` (a lower-case session secret)."""
    if _single_case_key(value):
        return True
    letters = [c for c in value if c.isalpha()]
    upper = sum(c.isupper() for c in letters) / len(letters) if letters else 0.0
    digits = sum(c.isdigit() for c in value)
    if len(value) < 16 or not digits or shannon_entropy(value) < 3.5 or _word_like(value):
        return False
    if 0.25 <= upper <= 0.75:
        return True
    return "_" not in value and digits >= max(3, len(value) // 8)


def _looks_random(value: str, *, quoted: bool) -> bool:
    if len(value) < 8 or _PLACEHOLDER_WORDS.match(value) or _NOT_REAL_WORD.search(value):
        return False
    lowered = value.lower()
    if any(word in lowered for word in _NAMING_WORDS):
        return False
    if any(mark in value for mark in ("${", "{{", "%(", "%s", "<", ">", "://", "(", ")")):
        return False  # a template, a format string, a URL or an expression
    if value.startswith(("$", "{", "[", "/", "./", "../", "~/")):
        return False  # a variable, a structure, a path
    if _single_case_key(value):
        return True
    if not quoted and (_CODE_LIKE.match(value) or (_NAME.match(value) and not _random_name(value))):
        return False
    if _NAME.match(value) and _word_like(value):
        return False  # a type or a field name, quoted or not
    has_letter = any(c.isalpha() for c in value)
    has_other = any(c.isdigit() or not c.isalnum() for c in value if c not in "_-")
    mixed_case = any(c.islower() for c in value) and any(c.isupper() for c in value)
    if not has_letter or not (has_other or (mixed_case and len(value) >= 16)):
        return False
    return shannon_entropy(value) >= 3.0


Groups = Callable[[str], str | None]  # a group's text by name, None when it did not take part


@dataclass(frozen=True)
class SecretPattern:
    """One secret format: ``regex`` (RE2 syntax, run on UTF-8 bytes) finds it; the first of
    ``groups`` that took part is the value to replace (the whole match when empty);
    ``accept``, when given, has the last word on a candidate (it gets the group texts).
    A ``benign`` pattern's matches are never reported but claim their span, so a certificate's
    body is not taken for a key body without its BEGIN line."""

    kind: str
    regex: str
    groups: tuple[str, ...] = ()
    accept: Callable[[Groups], bool] | None = None
    benign: bool = False
    generic: bool = False  # a shape, not a vendor's format: candidates are common
    compiled: Any = field(init=False, repr=False, compare=False)
    group_index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        compiled = re2.compile(self.regex.encode("ascii"), _options())
        object.__setattr__(self, "compiled", compiled)
        object.__setattr__(
            self,
            "group_index",
            {k.decode() if isinstance(k, bytes) else k: v for k, v in compiled.groupindex.items()},
        )


def _options() -> Any:
    options = re2.Options()
    options.max_mem = DFA_MEMORY
    return options


def _assignment_accept(group: Groups) -> bool:
    bare = group("bare")
    value = bare if bare is not None else (group("dq") or group("sq") or group("bq") or "")
    return _looks_random(value, quoted=bare is None)


_URL_PLACEHOLDERS = frozenset(
    {"pass", "password", "passwd", "pwd", "secret", "token", "user", "username", "test", "example", "xxx"}
)


def _url_password_accept(group: Groups) -> bool:
    value = group("password") or ""
    words = [w for w in re.split(r"[^a-z0-9]+", urllib.parse.unquote(value).lower()) if w]
    return not (
        _PLACEHOLDER_WORDS.match(value)
        or value.startswith(("$", "{", "<", "%s"))
        or (words and all(w in _URL_PLACEHOLDERS for w in words))
    )


def _token_accept(group: Groups) -> bool:
    value = group("value") or ""
    return (
        not _PLACEHOLDER_WORDS.match(value)
        and not _NOT_REAL_WORD.search(value)
        and shannon_entropy(value) >= 3.0
    )


def _not_a_private_block(group: Groups) -> bool:
    return "PRIVATE" not in (group("label") or "")


def _key_body_accept(group: Groups) -> bool:
    """Full-width base64 lines: random (a key) unless they are all hex or repetitive."""
    body = "".join((group("body") or "").split())
    return (
        shannon_entropy(body) >= 5.0
        and any(c.islower() for c in body)
        and any(c.isupper() for c in body)
        and any(c.isdigit() for c in body)
    )


_LABEL = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?"
# A key block's body: base64, header lines ("Proc-Type: 4,ENCRYPTED"), newlines, and the
# two-character "\n" of a key kept in a JSON or source string; never "-----".
_KEY_BODY = r"(?:[A-Za-z0-9+/=\s:,.\\]|-[^-]|--[^-]|---[^-]|----[^-])"
_KEY_SEP = r"(?:\s|\\n)"
# A full PEM body line is 64 characters, an OpenSSH one 70 (MIME's 76 is not a key's).
_B64_LINE = r"(?:[A-Za-z0-9+/]{64}|[A-Za-z0-9+/]{70})\r?\n"
_END = r"(?:[^A-Za-z0-9_-]|\z)"  # what may follow a token: RE2 has no lookahead
_VALUE = r"[^\s\"'`,;(){}\[\]<>]{8,}"

PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern(
        "private-key",
        rf"-----BEGIN {_LABEL}-----"
        rf"(?:{_KEY_BODY}*?-----END {_LABEL}-----"
        rf"|(?:{_KEY_SEP}*[\w-]+:[^\n]*)*{_KEY_SEP}*[A-Za-z0-9+/=]{{16,}}"
        rf"(?:{_KEY_SEP}+[A-Za-z0-9+/=]+)*)",
    ),
    SecretPattern(
        "certificate",
        r"-----BEGIN (?P<label>[A-Z0-9 ]{1,64})-----[A-Za-z0-9+/=\s:,.]*-----END [A-Z0-9 ]{1,64}-----",
        accept=_not_a_private_block,
        benign=True,
    ),
    SecretPattern(
        "private-key",
        rf"(?m)(?P<body>(?:^{_B64_LINE}){{3,}}(?:^[A-Za-z0-9+/]{{0,76}}={{0,2}}(?:\r?\n|\z))?)"
        rf"(?:-----END {_LABEL}-----)?",
        groups=(),
        accept=_key_body_accept,
    ),
    # The last lines of a key, up to its END line: what a read of the file's tail shows.
    SecretPattern("private-key", rf"(?m)(?:^[A-Za-z0-9+/=]{{1,76}}\r?\n)+-----END {_LABEL}-----"),
    SecretPattern(
        "private-key",
        r"(?m)^[ \t]*(?:tls\.key|ssh-privatekey|ca\.key)[ \t]*:[ \t]*[\"']?"
        r"(?P<value>[A-Za-z0-9+/]{40,}={0,2})",
        groups=("value",),
    ),
    SecretPattern("anthropic-api-key", r"\bsk-ant-(?:api|admin|oat)\d{2}-[A-Za-z0-9_-]{80,}"),
    SecretPattern(
        "openai-api-key",
        r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b",
    ),
    SecretPattern("aws-access-key-id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    SecretPattern(
        "aws-secret-key",
        r"(?i:aws_?secret_?access_?key)[\"']?\s*[:=]\s*[\"']?"
        r"(?P<value>[A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|\z)",
        groups=("value",),
    ),
    SecretPattern(
        "aws-secret-key",
        r"\b(?:AKIA|ASIA)[A-Z0-9]{16}[ \t]*,[ \t]*(?P<value>[A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|\z)",
        groups=("value",),
    ),
    SecretPattern(
        "azure-key",
        r"(?i:AccountKey|SharedAccessKey)[ \t]*=[ \t]*(?P<value>[A-Za-z0-9+/]{40,}={0,2})",
        groups=("value",),
    ),
    SecretPattern(
        "github-token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b|\bgithub_pat_[A-Za-z0-9_]{50,255}\b"
    ),
    SecretPattern("gitlab-token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    SecretPattern(
        "slack-webhook", r"https://hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]{16,}"
    ),
    SecretPattern(
        "slack-token",
        r"\bxox[abposre]-[0-9]+-[A-Za-z0-9-]{8,}|\bxoxe\.xox[bp]-[0-9]+-[A-Za-z0-9-]{8,}"
        r"|\bxapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{32,}",
    ),
    SecretPattern("stripe-key", r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}\b"),
    SecretPattern("stripe-webhook-secret", r"\bwhsec_[A-Za-z0-9+/=]{24,}"),
    SecretPattern("google-api-key", rf"\b(?P<value>AIza[0-9A-Za-z_-]{{35}}){_END}", groups=("value",)),
    SecretPattern(
        "google-oauth-secret", rf"\b(?P<value>GOCSPX-[A-Za-z0-9_-]{{28}}){_END}", groups=("value",)
    ),
    SecretPattern("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    SecretPattern(
        "npm-token",
        r"(?m)(?:^|:)[ \t]*_(?:auth|authToken|password)[ \t]*=[ \t]*[\"']?(?P<value>[^\s\"'$]{8,})",
        groups=("value",),
        accept=_token_accept,
    ),
    SecretPattern("pypi-token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
    SecretPattern("huggingface-token", r"\bhf_[A-Za-z0-9]{34,}\b"),
    SecretPattern(
        "sendgrid-key", rf"\b(?P<value>SG\.[A-Za-z0-9_-]{{22}}\.[A-Za-z0-9_-]{{43}}){_END}", groups=("value",)
    ),
    SecretPattern("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}"),
    SecretPattern(
        "bearer-token",
        r"(?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?i:bearer)[ \t]+(?P<value>[A-Za-z0-9._~+/-]{16,}=*)",
        groups=("value",),
        accept=_token_accept,
    ),
    SecretPattern(
        "url-password",
        r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@'\"]*:(?P<password>[^\s/@'\"]{3,})@[\w.-]+",
        groups=("password",),
        accept=_url_password_accept,
        generic=True,
    ),
    SecretPattern(
        "secret-assignment",
        # From the keyword in the name on, bounded: linear time whatever the text.
        r"(?i:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key"
        r"|credential|private[_-]?key)[\w-]{0,64}"
        r"[\"']?\]?[ \t]*(?::=|=>|[:=])[ \t]*"
        rf"(?:\"(?P<dq>{_VALUE})\"|'(?P<sq>{_VALUE})'|`(?P<bq>{_VALUE})`|(?P<bare>{_VALUE}))",
        groups=("dq", "sq", "bq", "bare"),
        accept=_assignment_accept,
        generic=True,
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


def _group_reader(match: Any, data: bytes, index: dict[str, int]) -> Groups:
    def group(name: str) -> str | None:
        start, end = match.span(index[name])
        return None if start < 0 else data[start:end].decode("utf-8", "surrogatepass")

    return group


def _prefixed(regex: str, number: int) -> str:
    """``regex`` with its group names made unique within the combined pattern."""
    return re.sub(r"\(\?P<(\w+)>", lambda m: f"(?P<p{number}_{m.group(1)}>", regex)


class Taken:
    """Byte spans claimed so far, kept sorted and disjoint, each with its kind (None: benign)."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.spans: list[tuple[int, int, str | None]] = []

    def claim(self, start: int, end: int, kind: str | None) -> None:
        """Claim ``[start, end)`` unless it overlaps a span already claimed."""
        at = bisect.bisect_right(self.starts, start)
        if (at > 0 and self.spans[at - 1][1] > start) or (at < len(self.spans) and self.starts[at] < end):
            return
        self.starts.insert(at, start)
        self.spans.insert(at, (start, end, kind))


# How far past a candidate a pattern starting inside it may end and still be found: a line or
# two, or, where the candidate holds a PEM marker, a whole key block (4096-bit RSA: 3.3 KB).
RESCAN_TAIL = 512
RESCAN_TAIL_PEM = 8192


class SecretScanner:
    """Finds the secrets ``patterns`` describe (all of :data:`PATTERNS` by default).

    Every pattern is an alternative of one RE2 regex, run once over the text; where matches
    overlap, the one starting first wins, and at one start the pattern listed first, so a
    private-key block is one finding however many tokens its body happens to resemble. A
    candidate the checks reject may hide another pattern's match starting inside it: its span
    (and :data:`RESCAN_TAIL` bytes after) is asked of an RE2 ``Set`` of all the patterns, and
    each one present is looked for again from there."""

    def __init__(self, patterns: Iterable[SecretPattern] = PATTERNS) -> None:
        self.patterns: Sequence[SecretPattern] = tuple(patterns)
        combined = "|".join(f"(?P<p{i}_>{_prefixed(p.regex, i)})" for i, p in enumerate(self.patterns))
        self._combined = re2.compile(combined.encode("ascii"), _options())
        index = {k.decode() if isinstance(k, bytes) else k: v for k, v in self._combined.groupindex.items()}
        self._whole = [index[f"p{i}_"] for i in range(len(self.patterns))]
        # Which alternative matched: exactly one took part; the generic ones, matched most
        # often, are asked first.
        self._probe_order = sorted(enumerate(self._whole), key=lambda item: -self.patterns[item[0]].generic)
        # Each pattern's group names in the combined regex; "" is the whole alternative.
        self._names = [
            {"": index[f"p{i}_"], **{name: index[f"p{i}_{name}"] for name in p.group_index}}
            for i, p in enumerate(self.patterns)
        ]
        self._set = re2.Set.SearchSet(_options())
        for pattern in self.patterns:
            self._set.Add(pattern.regex.encode("ascii"))
        self._set.Compile()

    def find(self, text: str) -> list[Finding]:
        data = text.encode("utf-8", "surrogatepass")
        taken = Taken()
        for match in self._combined.finditer(data):
            number = next(i for i, group in self._probe_order if match.span(group)[0] >= 0)
            names = self._names[number]
            if self._accepted(number, match, names, data):
                self._resolve(data, match, number, taken)
            else:
                self._rescan(data, match.start(), match.end(), number, taken)
        found = [(s, e, k) for s, e, k in taken.spans if k is not None]
        if text.isascii():
            return [Finding(kind, start, end) for start, end, kind in found]
        return [Finding(kind, _chars(data, start), _chars(data, end)) for start, end, kind in found]

    def _accepted(self, number: int, match: Any, names: dict[str, int], data: bytes) -> bool:
        accept = self.patterns[number].accept
        return accept is None or accept(_group_reader(match, data, names))

    def _record(self, number: int, match: Any, names: dict[str, int], taken: Taken) -> None:
        pattern = self.patterns[number]
        start, end = match.span(names[""]) if "" in names else match.span()
        for name in pattern.groups:
            if match.span(names[name])[0] >= 0:
                start, end = match.span(names[name])
                break
        if start < end:
            taken.claim(start, end, None if pattern.benign else pattern.kind)

    def _others(self, data: bytes, start: int, end: int) -> tuple[list[int], int]:
        """The patterns that may match starting inside ``data[start:end]`` (a superset), and
        where such a match must have ended to be found."""
        tail = RESCAN_TAIL_PEM if b"-----" in data[start:end] else RESCAN_TAIL
        limit = min(len(data), end + tail)
        return sorted(self._set.Match(data[start:limit]) or ()), limit

    def _search(self, data: bytes, number: int, start: int, end: int, limit: int, taken: Taken) -> None:
        pattern = self.patterns[number]
        match = pattern.compiled.search(data, start, limit)
        if (
            match is not None
            and match.start() < end
            and self._accepted(number, match, pattern.group_index, data)
        ):
            self._record(number, match, pattern.group_index, taken)

    def _resolve(self, data: bytes, match: Any, found: int, taken: Taken) -> None:
        """Record the accepted ``match`` of pattern ``found`` and whatever else starts inside
        it, in pattern order: a vendor format inside a generic assignment wins, and the key id
        of an ``accessKeys.csv`` row is found beside its secret."""
        start, end = match.span()
        others, limit = self._others(data, start, end)
        for number in sorted({*others, found}):
            if number == found:
                self._record(found, match, self._names[found], taken)
            else:
                self._search(data, number, start, end, limit, taken)

    def _rescan(self, data: bytes, start: int, end: int, rejected: int, taken: Taken) -> None:
        """Around a rejected candidate of pattern ``rejected``, look for any pattern starting
        inside it (the rejected one only after its start)."""
        others, limit = self._others(data, start, end)
        for number in others:
            self._search(data, number, start + 1 if number == rejected else start, end, limit, taken)

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


def _chars(data: bytes, offset: int) -> int:
    """The character offset of byte ``offset`` (a match boundary, so never inside a
    character)."""
    return len(data[:offset].decode("utf-8", "surrogatepass"))


def redaction_note(redaction: Redaction) -> str:
    """The line added to a tool result that had secrets replaced."""
    noun = "secret" if redaction.count == 1 else "secrets"
    return f"[{redaction.count} {noun} redacted before reaching the model: {', '.join(redaction.kinds())}]"
