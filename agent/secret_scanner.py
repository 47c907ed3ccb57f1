"""Finding credentials in text before it reaches the model, and replacing them with
``[REDACTED:<kind>]``.

A documented pattern set, each pattern a published token format (a fixed prefix, a length, an
alphabet) or a value assigned to a name that says it is secret. Line-anchored patterns match a
line as the tools show it too: after the read tool's number (``     7\t``), the text editor's
(``7: ``), grep's (``N:``, ``path:N:`` for a match, ``path-N-`` for a context line), and
indentation; a key's lines may be kept in string literals (``"MII...\n" +``), ``echo`` lines or
Markdown's ``> `` quote.

=======================  =================================================================
kind                     format matched
=======================  =================================================================
private-key              a PEM/OpenSSH/PGP ``-----BEGIN ... PRIVATE KEY-----`` block, whole
                         (to its END line, or to the end of its body when cut off); a key
                         body without its BEGIN line (three or more full-width base64 lines,
                         as a read from an offset or ``sed 1,3d`` leaves it, numbered or
                         indented) and the body lines before an END line without its BEGIN;
                         a base64 key under a k8s ``tls.key:`` (or ``ssh-privatekey:``).
                         Certificates and public keys (a PGP key with ``Version:`` and
                         ``Comment:`` headers too) are left alone
anthropic-api-key        ``sk-ant-api03-...``, ``sk-ant-admin01-...`` (80+ URL-safe characters)
openai-api-key           ``sk-proj-``/``sk-svcacct-``/``sk-admin-`` keys; legacy ``sk-...T3BlbkFJ...``
aws-access-key-id        ``AKIA``/``ASIA``/``ABIA``/``ACCA``/``A3T.`` + 16 upper-case letters or digits
aws-secret-key           40 base64 characters assigned to an ``aws_secret_access_key`` name, or
                         the column after an access key id in an ``*_accessKeys.csv`` row
azure-key                the value of ``AccountKey=``/``SharedAccessKey=`` in a connection string
github-token             ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` + 36+, ``github_pat_`` + 50+
gitlab-token             ``glpat-``, ``gldt-``, ``glft-``, ``glsoat-``, ``glrt-``, ``glcbt-``,
                         ``glffct-``, ``glimt-``, ``glagent-``, ``gloas-``, ``glptt-`` + 20+;
                         ``GR1348941`` (runner registration); ``_gitlab_session=`` cookies
slack-token              bot (``xoxb-``), user (``xoxp-``, ``xoxe-``), workspace (``xoxa-``,
                         ``xoxr-``), legacy (``xoxo-``, ``xoxs-``), configuration
                         (``xoxe.xoxp-``) and app-level (``xapp-``) tokens, each in its format
slack-webhook            ``hooks.slack.com/services|workflows|triggers/...``
stripe-key               ``sk_``/``rk_`` + ``live_``/``test_``/``prod_`` + 10+ (not ``pk_``)
stripe-webhook-secret    ``whsec_`` + 24+
google-api-key           ``AIza`` + 35
google-oauth-secret      ``GOCSPX-`` + 28
npm-token                ``npm_`` + 36; the value of an ``.npmrc`` ``_auth=``/``_authToken=``/
                         ``_password=`` line
pypi-token               ``pypi-AgE...`` + 50+ (a macaroon for pypi.org or test.pypi.org)
huggingface-token        ``hf_`` + 34+ letters and digits; ``api_org_`` + 34
sendgrid-key             ``SG.`` + 22 + ``.`` + 43
jwt                      three base64url parts, the first two starting ``ey`` (a JSON object),
                         the signature possibly empty
(services)               the other formats gitleaks' rules know, one line each in
                         :mod:`agent.secret_formats` (1Password, Adobe, age, Airtable,
                         Alibaba, Artifactory, Authress, AWS Bedrock, Azure AD client secrets,
                         ClickHouse, Clojars, Cloudflare origin CA, Databricks, DigitalOcean,
                         Discord bot tokens, Doppler, Dropbox, Duffel, Dynatrace, EasyPost,
                         Facebook, Flutterwave, Fly.io, Frame.io, Grafana, Harness, HashiCorp
                         Terraform and Vault, Heroku, Infracost, 42, Linear, Lob, Mailchimp,
                         Mailgun, MaxMind, New Relic, Notion, Octopus Deploy, OpenShift,
                         Perplexity, PlanetScale, Postman, Prefect, Pulumi, ReadMe, RubyGems,
                         Scalingo, Sendinblue, Sentry, SettleMint, Shippo, Shopify,
                         Sourcegraph, Square, Telegram bots, Twilio, Typeform, Yandex, Teams
                         webhooks), each reported under its own kind; one whose random part
                         is a stand-in (``xxxx``, ``abcdef``, ``123123...``, ``EXAMPLE``) is not
(published keys)         a key published on purpose (a public SDK's test keys, a documentation
                         sample) is not reported in any kind: each is listed, with where it was
                         published, in :mod:`agent.published_keys` (the values gitleaks' own
                         rules allowlist by value)
bearer-token             the token of an ``Authorization: Bearer <token>`` header
authorization-header     the credentials of another ``Authorization:`` header (``Basic``,
                         ``Token``, ``Api-Token`` or none)
basic-auth               the ``user:password`` of ``curl -u``/``--user``
url-password             the password in ``scheme://user:password@host`` (the user may be empty)
secret-assignment        a value assigned to a name one of whose words is a secret's
                         (password, passwd, pass, pwd, secret, token, credential(s), creds,
                         or key after a qualifier: ``api_key``, ``signingKey``, not
                         ``primaryKey``), unless its last word names a property of the secret
                         (``TOKEN_URL``, ``credentialsId``, ``SECRET_NAME``) or a word says it
                         is public (``publicToken``, ``csrf_token``). The assignment may be
                         ``=``, ``:``, ``:=``, ``::=``, ``:::=``, ``?=``, ``.=``, ``=>``, ``<-``,
                         a comparison, JSON and YAML, a declared type (``api_key: str =``,
                         ``DB_PASSWORD: Final =``, ``const t: string =``, ``val s: String =``,
                         ``let k: &str =``, ``var t string =``), a pair or a call
                         (``System.setProperty("API_TOKEN", "...")``), a name and a quoted
                         value (``password "..."``), an XML element (``<apiToken>...</apiToken>``)
                         or a .NET ``<add key="...Password" value="..."/>``. The value counts
                         when it is at least 8 characters, looks generated (see
                         ``_looks_random``: letters mixed with digits or symbols, 3 bits of
                         entropy per character or more; single-case letters and digits only
                         from 18 characters; unquoted, it must not read as code: a dotted
                         name, a call, a CamelCase type such as ``Ed25519PrivateKey``) and is
                         not a template, a variable, a path, a host, a version, prose, a
                         placeholder or a marker spelled with words such as test, demo, fake,
                         example, secret or token. Single-case hex (16+), base32 (16+) and long
                         numbers (16+ digits) count, unquoted too
=======================  =================================================================

Two RE2 passes run every pattern (google-re2, in linear time, over the text's UTF-8 bytes): one
regex for the assignments, whose candidates are everywhere in code, and one for the rest. The
candidates then pass the Python checks above; around each, an RE2 ``Set`` of its pass says
whether another pattern starts inside it (a key id beside its secret), and only those are looked
for again there; inside a rejected assignment (an assignment in a rejected quoted string), a
Python regex of where one can start (:data:`ASSIGNMENT_STARTS`) says first whether to look. Text
with no candidate costs the two passes and its UTF-8 copy.

Its precision is measured by tests: every planted secret in a corpus is found, neither the
project's own tree nor a generated site-packages-like tree yields a finding, and over the shared
corpus of gitleaks' and detect-secrets' own samples (``tests/agent/test_secret_corpus.py``) the
rates found and flagged are printed and held to targets.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import re
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

from agent.published_keys import PUBLISHED_KEYS
from agent.secret_formats import TOKEN_FORMATS

PLACEHOLDER_PATTERN = re.compile(r"\[REDACTED(?::[a-z0-9-]+)?\]")
_PUBLISHED = frozenset(key.encode("ascii") for key in PUBLISHED_KEYS)
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
    r"|not[-_]?a[-_]?real|notreal|secret|password|passwd|token|credential|key)(?:$|[-_.0-9])"
)
# Words that, anywhere in a value, make it a name or a label rather than a generated secret
# (``challengePassword``, ``/v1/oauth/token``, ``resetTokenExpiry``).
_NAMING_WORDS = ("password", "passwd", "secret", "token", "credential", "example", "placeholder")
# Unquoted values that are code, not data: an attribute, a call, an index.
_CODE_LIKE = re.compile(r"^[$@]?[A-Za-z_]\w*(?:(?:(?:\.|->|::)\w+)+(?:[(\[].*)?|[(\[].*)$")
_NAME = re.compile(r"^[A-Za-z_]\w*$")
_HEX = re.compile(r"^(?:[0-9a-f]{16,}|[0-9A-F]{16,})$")
_BASE32 = re.compile(r"^(?:[A-Z2-7]{16,}|[a-z2-7]{16,})=*$")
_CAMEL_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_VOWELS = frozenset("aeiouy")
# A template, a variable or a placeholder standing for the value: ``${DB_PASSWORD}``,
# ``{{ vault_token }}``, ``%(password)s``, ``$TOKEN``, ``<your-token>``, ``%NUGET_KEY%``.
_TEMPLATE = re.compile(
    r"\$\{[A-Za-z_]\w*(?:[:=?+-][^}]*)?\}|\{\{\s*[\w.|'\" ()-]+\s*\}\}|%\(\w+\)[sd]|%s"
    r"|^\$[A-Za-z_]\w*$|^<[\w .-]+>$|^%\w+%$|^\{\w+\}$|^#\{\w+\}$"
)
_BOT_TOKEN_SHAPE = re.compile(r"^\d+:")
# A software version (``jjwt-jackson-0.11.2``): a package, not a secret.
_VERSION = re.compile(r"(?:^|[-_@/v])\d+\.\d+(?:\.\d+)+(?:$|[-+])|[-_@]\d+\.\d+$")
# A placeholder run: xxxxxx, ######, ******, one character twelve times.
_FILLER = re.compile(r"x{6}|X{6}|#{4}|\*{4}")
_RUN = re.compile(r"(.)\1{11,}")
_SEGMENT_SEPARATORS = re.compile(r"[-_.:/]")
# One component of a relative path written with words: ``..``, ``data``, ``notes.txt``,
# ``out-link``, ``test_data``, or a template's field standing for one (``{base}``).
_PATH_SEGMENT = re.compile(r"^(?:\.{1,2}|\{\w{1,20}\}|[a-z]{1,20}(?:[-_][a-z]{1,20}){0,3}(?:\.[a-z]{1,5})?)$")


def _repeated_segment(value: str) -> bool:
    """Whether one piece of ``value`` between separators comes back three times or more
    (``4821-4821-4821-9f3e...``): typed as a stand-in, where generated pieces differ."""
    pieces = Counter(piece for piece in _SEGMENT_SEPARATORS.split(value) if len(piece) >= 3)
    return any(n >= 3 for n in pieces.values())


def _sequence_run(value: str, length: int = 6) -> bool:
    """Whether ``value`` holds ``length`` consecutive letters or digits in order (``abcdef``,
    ``123456``): typed by a person as a stand-in, not generated."""
    run = 1
    for a, b in itertools.pairwise(value):
        run = run + 1 if ord(b) == ord(a) + 1 and a.isalnum() and b.isalnum() else 1
        if run >= length:
            return True
    return False


def _repetitive(value: str) -> bool:
    """A value built of a few short pieces over and over (``GR13489411231231231``): most of its
    three-character pieces occur more than once, where in a random token nearly all are new."""
    pieces = [value[i : i + 3] for i in range(len(value) - 2)]
    return len(pieces) >= 12 and len(set(pieces)) * 5 < len(pieces) * 3


def placeholder_token(value: str) -> bool:
    """A token-shaped value that stands in for one: filler (``ghp_xxxx...``), a typed sequence
    (``abcdef``, ``123456``), the word example (AWS's documentation keys end in it), or too few distinct
    characters to be random."""
    lowered = value.lower()
    return (
        bool(_FILLER.search(value))
        or any(len(run.group(0)) * 5 >= len(value) * 2 for run in _RUN.finditer(value))
        or _sequence_run(value)
        or _repeated_segment(value)
        or "example" in lowered
        or "redacted" in lowered
        or "..." in value  # elided in the text it was copied from
        or shannon_entropy(value) < 2.0
    )


def _word_like(value: str) -> bool:
    """A CamelCase or snake_case name built of words (``Ed25519PrivateKey``), not a token:
    most of its letter runs are three letters or more with a vowel. A value with neither capitals
    nor underscores shows no word boundaries, so it is not judged here."""
    if "_" not in value and not any(c.isupper() for c in value):
        return False
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
    if len(value) < 8:
        return False
    # Unquoted code first (most candidates in code are ``x = self.token``): the checks below
    # would reject it too, and cost more. No such value is digits or single-case hex or base32.
    if not quoted and (_CODE_LIKE.match(value) or (_NAME.match(value) and not _random_name(value))):
        return False
    if _PLACEHOLDER_WORDS.match(value) or _NOT_REAL_WORD.search(value):
        return False
    lowered = value.lower()
    if any(word in lowered for word in _NAMING_WORDS):
        return False
    if any(c.isspace() for c in value) or value.count(":") > 1 or _BOT_TOKEN_SHAPE.match(value):
        return False  # prose, a URL, a time; a bot token is judged by its own format alone
    if ":" in value and any(_NAME.match(part) and _word_like(part) for part in value.split(":")):
        return False  # a label (``key:ContentType``)
    if _TEMPLATE.search(value) or _VERSION.search(value) or placeholder_token(value):
        return False
    if value.startswith(("/", "./", "../", "~/")) or value.endswith((".com", ".org", ".io", ".net")):
        return False  # a path or a host
    if "/" in value and all(_PATH_SEGMENT.match(part) for part in value.split("/")):
        return False  # a relative path of words (``data/../outside/new``)
    if value.isdigit():
        return len(value) >= 16  # a long number (an account key, a card): short ones are counts
    if _single_case_key(value):
        return True
    if not quoted and (_CODE_LIKE.match(value) or (_NAME.match(value) and not _random_name(value))):
        return False
    if value.startswith(("{", "[")) and not quoted:
        return False  # a structure
    if _NAME.match(value) and _word_like(value):
        return False  # a type or a field name, quoted or not
    has_letter = any(c.isalpha() for c in value)
    has_other = any(c.isdigit() or not c.isalnum() for c in value if c not in "_-")
    mixed_case = any(c.islower() for c in value) and any(c.isupper() for c in value)
    if not has_letter or not (has_other or (mixed_case and len(value) >= 16)):
        return False
    if not mixed_case and all(c.isalnum() or c in "_-" for c in value) and len(value) < 18:
        return False  # short and single-case: an identifier or a label as often as a key
    return shannon_entropy(value) >= 3.0


# -- names that say a value is secret ------------------------------------------------------------

_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# A name word that says its value is secret, whole or at its end (``dbpass``, ``apikey``).
_SECRET_WORD_ENDS = (
    "pass",
    "passwd",
    "password",
    "passwords",
    "passphrase",
    "pwd",
    "pw",
    "secret",
    "secrets",
    "secrete",
    "token",
    "tokens",
    "credential",
    "credentials",
    "creds",
    "key",
)
_SECRET_WORD_STARTS = ("password", "passwd", "secret", "token", "credential", "apikey")
# A last word that names something about a secret, not the secret: ``TOKEN_URL``,
# ``credentialsId``, ``password_hash``, ``SECRET_NAME``, ``TokenFile``.
_NOT_THE_SECRET = frozenset(
    {
        "id",
        "ids",
        "name",
        "names",
        "file",
        "files",
        "path",
        "paths",
        "dir",
        "url",
        "uri",
        "urls",
        "endpoint",
        "type",
        "types",
        "kind",
        "len",
        "length",
        "size",
        "count",
        "expiry",
        "expires",
        "expiration",
        "ttl",
        "timeout",
        "field",
        "fields",
        "header",
        "prefix",
        "suffix",
        "format",
        "label",
        "hint",
        "hash",
        "digest",
        "env",
        "var",
        "ref",
        "policy",
        "version",
        "mode",
        "store",
        "location",
        "provider",
        "manager",
        "service",
        "client",
        "class",
        "regex",
        "pattern",
    }
)
# A word anywhere in the name that says the value is not secret, or not a credential.
_PUBLIC_WORDS = frozenset(
    {"public", "pub", "publishable", "csrf", "xsrf", "authenticity", "nonce", "sample", "example"}
)
# Words before ``key`` that make it a key of a table, a map or a keyboard, not a credential.
_NOT_A_CREDENTIAL_KEY = frozenset(
    {
        "primary",
        "foreign",
        "sort",
        "cache",
        "map",
        "dict",
        "lookup",
        "partition",
        "row",
        "index",
        "unique",
        "composite",
        "idempotency",
        "object",
        "translation",
        "message",
        "hot",
        "short",
        "field",
        "group",
        "next",
        "prev",
        "default",
        "routing",
        "shard",
        "sharding",
        "dedup",
        "dedupe",
        "metric",
        "label",
        "entry",
        "item",
    }
)


_PREPOSITIONS = frozenset({"to", "for", "of", "from"})


def _secret_name(name: str) -> bool:
    """Whether ``name`` says that its value is a secret (:func:`_judge_name`). Code names the same
    few variables again and again, so a short name's answer is kept (a bounded cache of short
    names: what text supplies cannot make it grow)."""
    return _judge_short_name(name) if len(name) <= _CACHED_NAME_LENGTH else _judge_name(name)


_CACHED_NAME_LENGTH = 64


def _judge_name(name: str) -> bool:
    """Whether ``name`` (an identifier, a key, a header) says that its value is a secret: one
    of its words is a secret's word, its last word is not a property of one (an id, a URL, a
    length), and no word says the value is public."""
    words = [w.lower() for w in _NAME_WORD.findall(name) if not w.isdigit()]
    # The name's head comes before a preposition: ``keyVaultToStoreSecrets`` names a vault,
    # ``pathToSecret`` a path, ``passwordForAdmin`` a password.
    cut = next((i for i, w in enumerate(words) if i and w in _PREPOSITIONS), len(words))
    words = words[:cut]
    if not words or words[-1] in _NOT_THE_SECRET or _PUBLIC_WORDS.intersection(words):
        return False
    secret = [w for w in words if w.endswith(_SECRET_WORD_ENDS) or w.startswith(_SECRET_WORD_STARTS)]
    if secret and all(w in ("key", "keys") for w in secret):
        # ``key`` alone names a credential only as the name's last word, after a qualifier
        # (``api_key``, ``signingKey``), not a table's or a map's key (``primaryKey``).
        return len(words) >= 2 and words[-1] in ("key", "keys") and words[-2] not in _NOT_A_CREDENTIAL_KEY
    return bool(secret)


_judge_short_name = functools.lru_cache(maxsize=4096)(_judge_name)


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
    generic: bool = False  # a shape, not a vendor's format: it loses to a format at the same place
    frequent: bool = False  # candidates are everywhere in code: runs in a pass of its own
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


def _unclosed(value: str) -> str:
    """``value`` without the brackets at its end that close an expression around it
    (``{"key": API_KEY}``), keeping those it opened itself (``${TOKEN:=$2}``)."""
    while value and value[-1] in _CLOSERS and value.count(value[-1]) > value.count(_CLOSERS[value[-1]]):
        value = value[:-1]
    return value


_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}


def _assignment_accept(group: Groups) -> bool:
    name = group("name") or ""
    if group("name_start") == "":  # the name starts at the match: its first words come before it
        name = (group(BEFORE) or "") + name
    if not _secret_name(name):  # the cheaper check first: a third of the candidates stop here
        return False
    bare = group("bare")
    if bare is not None:
        bare = _unclosed(bare)
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
        or shannon_entropy(value) < 1.5  # yyy
        or value.startswith(("$", "{", "<", "%s"))
        or (words and all(w in _URL_PLACEHOLDERS for w in words))
    )


def _token_accept(group: Groups) -> bool:
    value = group("value") or ""
    return (
        not _PLACEHOLDER_WORDS.match(value)
        and not _NOT_REAL_WORD.search(value)
        and not _TEMPLATE.search(value)
        and shannon_entropy(value) >= 3.0
    )


def _header_accept(group: Groups) -> bool:
    """A header's credentials, not a variable holding them (``{"Authorization": authorization}``)."""
    value = group("value") or ""
    return _token_accept(group) and not (_NAME.match(value) and not _random_name(value))


def _format_accept(group: Groups) -> bool:
    """A service's token, unless it is a stand-in for one or a name built of words that happens
    to start with a token's prefix (``hf_requiredCharacteristicTypes...``)."""
    value = group("value") or ""
    camel_case = any(c.islower() for c in value) and any(c.isupper() for c in value)
    name_like = camel_case and not any(c.isdigit() for c in value) and _word_like(value)
    return not placeholder_token(value) and not name_like and not _repetitive(value)


def _not_a_private_block(group: Groups) -> bool:
    return "PRIVATE" not in (group("label") or "")


# What a tool puts before a line, and the line's indentation: a line-anchored pattern matches the
# line as shown too. The read tool's number (``     7\t``), the text editor's (``7: ``), and grep's
# (GNU grep's and the grep tool's): ``N:``/``N-`` for one file, ``path:N:`` for a match and
# ``path-N-`` for a context line. The line without a prefix is tried first: text can look like
# one (``06926d2c-ea36-76b5-5805-84a7``).
_SHOWN_LINE = r"(?m:^)(?:[ \t]*\d{1,9}(?:\t|: )|(?:[^\n]*?[:-])?\d{1,9}[:-])??[ \t]*"
# (Python's engine, over a candidate's lines: at most ten steps a place after a line's start.)
_SHOWN_PREFIX = re.compile(r"(?m)^(?:[ \t]*\d{1,9}(?:\t|: )|(?:[^\n]*?[:-])?\d{1,9}[:-])")
# How a line of a key is kept in code or a document: in a string literal (``"MII...\n" +``,
# ``+ "MII..."``, ``key = ("-----BEGIN ...\n"``), after ``echo`` (``echo 'MII...' >> key.pem``)
# or Markdown's quote (``> MII...``). gitleaks' private-key rule takes anything between BEGIN and END; these
# take the lines of such forms only, so code between two markers is not taken for a key.
_KEY_OPEN = r"(?:(?:>[ \t]?)+|echo[ \t]+(?:-[A-Za-z]{1,3}[ \t]+)*[\"']?|\+?[ \t]*[\"'`])?"
_KEY_CLOSE = r"(?:\\r)?(?:\\n)?[\"'`]?(?:[ \t]*(?:[+,;)]|>>?[ \t]*[^\s]*))*[ \t]*\\?"
# A line of a key as shown and as kept: its content is base64 or a header (``Proc-Type: ...``).
_KEY_LINE = rf"\r?\n{_SHOWN_LINE}{_KEY_OPEN}(?:[A-Za-z0-9+/=]+|[\w-]+:[^\n]*)?{_KEY_CLOSE}"
_KEY_DATA_LINE = rf"\r?\n{_SHOWN_LINE}{_KEY_OPEN}[A-Za-z0-9+/=]+{_KEY_CLOSE}"
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]+")


def _key_text(body: str) -> str:
    """The base64 of a key's lines as shown: without the tools' line prefixes, then every run of
    base64 characters joined (the quotes, ``\\n``, ``+`` and ``>`` around them dropped)."""
    return "".join(_BASE64_RUN.findall(_SHOWN_PREFIX.sub("", body)))


def _key_body_accept(group: Groups) -> bool:
    """Full-width base64 lines: random (a key) unless they are all hex or repetitive."""
    body = _key_text(group("body") or "")
    return (
        shannon_entropy(body) >= 5.0
        and any(c.islower() for c in body)
        and any(c.isupper() for c in body)
        and any(c.isdigit() for c in body)
    )


def _key_tail_accept(group: Groups) -> bool:
    """The last lines of a key: base64 that mixes letters and digits, not a word."""
    body = _key_text(group("body") or "")
    return len(body) >= 16 and any(c.isdigit() for c in body) and any(c.isalpha() for c in body)


def _key_block_accept(group: Groups) -> bool:
    """A block written line by line in code or a document: its lines hold 40 base64 characters or
    more that mix letters and digits (code that only names the markers holds none)."""
    lines = group("lines")
    if lines is None:
        return True  # the raw forms: their body is base64 and headers only
    body = _key_text(lines)
    return len(body) >= 40 and shannon_entropy(body) >= 4.0 and any(c.isdigit() for c in body)


_LABEL = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?"
# A key block's body: base64, header lines ("Proc-Type: 4,ENCRYPTED"), newlines, and the
# two-character "\n" of a key kept in a JSON or source string; never "-----".
_KEY_BODY = r"(?:[A-Za-z0-9+/=\s:,.\\]|-[^-]|--[^-]|---[^-]|----[^-])"
_KEY_SEP = r"(?:\s|\\n)"
_KEY_LINE_END = rf"\r?\n{_SHOWN_LINE}{_KEY_OPEN}-----END {_LABEL}-----"
# Anything but "-----": the body of an armored block, headers ("Version: GnuPG v2 (GNU/Linux)")
# included.
_ARMOR_BODY = r"(?:[^-]|-[^-]|--[^-]|---[^-]|----[^-])"
# A full PEM body line is 64 characters, an OpenSSH one 70 (MIME's 76 is not a key's).
_B64_LINE = rf"{_KEY_OPEN}(?:[A-Za-z0-9+/]{{64}}|[A-Za-z0-9+/]{{70}}){_KEY_CLOSE}\r?\n"
_END = r"(?:[^A-Za-z0-9_-]|\z)"  # what may follow a token: RE2 has no lookahead

# White space, a line break included as a tool shows it (after a line number or a grep prefix).
_SPACE_SHOWN = rf"(?:[ \t\r\f\v]|\n{_SHOWN_LINE})"

# The generic assignment: a name holding a secret's word, an operator, a value.
_SECRET_KEYWORD = r"(?i:pass|pwd|pw|secret|token|credential|creds|key)"
_ASSIGNED_NAME = rf"(?P<name>{_SECRET_KEYWORD}[\w.-]*)"
# After the name: its closing quote or bracket (``"key":``, ``['key'] =>``), a C array's size.
_NAME_CLOSE = r"[\"'`]?\]?(?:\[\d{0,6}\])?"
# A declared type between the name and ``=``: ``: str``, ``: Final[str]``, ``: &'static str``
# (Python, TypeScript, Kotlin, Rust), `` string`` (Go).
_DECLARED_TYPE = (
    r"(?:[ \t]*:[ \t]*|[ \t]+)&?(?:'[a-z]+[ \t]+)?(?:mut[ \t]+)?[A-Za-z_][\w.]*"
    r"(?:[\[<][\w., |\[\]<>'&]*[\]>])?\??[ \t]*:?="
)
# ``=``, ``:``, ``:=`` (Go), ``::=``, ``:::=``, ``?=`` (make), ``.=`` (PHP), ``=>``, ``<-`` (R),
# comparisons.
_OPERATOR = r"(?:::?:?=|\?=|\.=|=>|[!=]==?|<-|[:=])"
_QUOTED_VALUE = r"\"(?P<dq>[^\"\r\n]{8,})\"|'(?P<sq>[^'\r\n]{8,})'|`(?P<bq>[^`\r\n]{8,})`"
_ANY_VALUE = rf"@?(?:{_QUOTED_VALUE}|(?P<bare>[^\s\"'`,;\\]{{8,}}))"
_ASSIGNMENT = rf"{_ASSIGNED_NAME}{_NAME_CLOSE}(?:{_DECLARED_TYPE}|[ \t]*{_OPERATOR})[ \t]*{_ANY_VALUE}"


# Where an assignment pattern's match can start, and what must follow there, for Python's ``re``
# over a rejected candidate's few bytes: a secret's word, a name (a name of 64 characters or more
# is left to the RE2 search), then the first characters of what follows a name in the patterns
# above (a quote or bracket closing it, an operator, a declared type, a call's quoted argument,
# a quoted value after space); or an XML tag. A necessary condition: where it fails, no pattern
# of the pass starts. The name is taken possessively, so each place costs at most 64 steps; the
# lookahead of the words' first letters lets ``re`` skip to the places worth trying.
ASSIGNMENT_STARTS = (
    rf"(?=[pPsStTcCkK<])(?:{_SECRET_KEYWORD}(?:[\w.-]{{64}}|[\w.-]{{0,63}}+[\"'`]?\]?(?:\[\d{{0,6}}\])?"
    r"(?:[ \t]*(?:[:=]|\?=|\.=|!=|<-|[(,][ \t]*@?[\"'`])|[ \t]+[&'A-Za-z_\"`]))|<)"
)


def _format(kind: str, regex: str) -> SecretPattern:
    """A service's token format: ``regex`` has a ``value`` group, the token."""
    return SecretPattern(kind, regex, groups=("value",), accept=_format_accept)


def _assignment(regex: str) -> SecretPattern:
    return SecretPattern(
        "secret-assignment",
        regex,
        groups=("dq", "sq", "bq", "bare"),
        accept=_assignment_accept,
        generic=True,
        frequent=True,
    )


PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern(
        "private-key",
        rf"-----BEGIN {_LABEL}-----"
        rf"(?:{_KEY_BODY}{{64,}}?-----END {_LABEL}-----"
        rf"|(?:{_KEY_SEP}*[\w-]+:[^\n]*)*{_KEY_SEP}*[A-Za-z0-9+/=]{{16,}}"
        rf"(?:{_KEY_SEP}+[A-Za-z0-9+/=]+)*"
        # Line by line as a tool shows it or as code keeps it, to its END line or as far as
        # its lines go.
        rf"|{_KEY_CLOSE}(?P<lines>(?:{_KEY_LINE})+?{_KEY_LINE_END}"
        rf"|(?:{_KEY_LINE})*?{_KEY_DATA_LINE}(?:{_KEY_DATA_LINE})*))",
        accept=_key_block_accept,
    ),
    SecretPattern(
        "certificate",
        # (A dash before the END line: grep's context prefix, ``path-28------END ...``.)
        rf"-----BEGIN (?P<label>[A-Z0-9 ]{{1,64}})-----{_ARMOR_BODY}*-?-----END [A-Z0-9 ]{{1,64}}-----",
        accept=_not_a_private_block,
        benign=True,
    ),
    SecretPattern(
        "private-key",
        rf"{_SHOWN_LINE}(?P<value>(?P<body>{_B64_LINE}(?:{_SHOWN_LINE}{_B64_LINE}){{2,}}"
        rf"(?:{_SHOWN_LINE}{_KEY_OPEN}[A-Za-z0-9+/]{{0,76}}={{0,2}}{_KEY_CLOSE}(?:\r?\n|\z))?)"
        rf"(?:{_SHOWN_LINE}{_KEY_OPEN}-----END {_LABEL}-----)?)",
        groups=("value",),
        accept=_key_body_accept,
    ),
    # The last lines of a key, up to its END line: what a read of the file's tail shows.
    SecretPattern(
        "private-key",
        rf"{_SHOWN_LINE}(?P<value>(?P<body>{_KEY_OPEN}[A-Za-z0-9+/=]{{1,76}}{_KEY_CLOSE}\r?\n"
        rf"(?:{_SHOWN_LINE}{_KEY_OPEN}[A-Za-z0-9+/=]{{1,76}}{_KEY_CLOSE}\r?\n)*)"
        rf"{_SHOWN_LINE}{_KEY_OPEN}-----END {_LABEL}-----)",
        groups=("value",),
        accept=_key_tail_accept,
    ),
    SecretPattern(
        "private-key",
        rf"{_SHOWN_LINE}(?:tls\.key|ssh-privatekey|ca\.key)[ \t]*:[ \t]*[\"']?"
        r"(?P<value>[A-Za-z0-9+/]{40,}={0,2})",
        groups=("value",),
    ),
    _format(
        "anthropic-api-key",
        rf"\b(?P<value>sk-ant-(?:api|admin|oat)\d{{2}}-[A-Za-z0-9_-]{{80,}}){_END}",
    ),
    _format(
        "openai-api-key",
        r"\b(?P<value>sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})",
    ),
    _format(
        "aws-access-key-id",
        r"\b(?P<value>(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b",
    ),
    _format(
        "aws-secret-key",
        r"(?i:aws_?secret_?access_?key)[\"']?\s*[:=]\s*[\"']?"
        r"(?P<value>[A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|\z)",
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
    _format(
        "github-token",
        r"\b(?P<value>(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})\b",
    ),
    SecretPattern(
        "slack-webhook",
        r"(?P<value>(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/"
        r"(?:T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]{16,}|[A-Za-z0-9+/]{43,56}))",
        groups=("value",),
    ),
    _format(
        "slack-token",
        # Bot, user, legacy bot, workspace and legacy tokens, configuration and refresh tokens,
        # app-level tokens.
        r"\b(?P<value>xoxb-[0-9]{10,13}-[0-9]{10,13}[A-Za-z0-9-]*|xox[pe](?:-[0-9]{10,13}){3}-[A-Za-z0-9-]{28,34}"
        r"|xoxb-[0-9]{8,14}-[A-Za-z0-9]{18,26}|xox[ar]-(?:\d-)?[A-Za-z0-9]{8,48}|xox[os]-\d+-\d+-\d+-[A-Fa-f0-9]+"
        r"|xoxe\.xox[bp]-\d-[A-Za-z0-9]{100,}|xoxe-\d-[A-Za-z0-9]{100,}|xapp-\d-[A-Z0-9]+-\d+-[A-Za-z0-9]{32,})",
    ),
    _format(
        "stripe-key",
        r"\b(?P<value>[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,99})\b",
    ),
    SecretPattern("stripe-webhook-secret", r"\bwhsec_[A-Za-z0-9+/=]{24,}"),
    _format(
        "google-api-key",
        rf"\b(?P<value>AIza[0-9A-Za-z_-]{{35}}){_END}",
    ),
    SecretPattern(
        "google-oauth-secret", rf"\b(?P<value>GOCSPX-[A-Za-z0-9_-]{{28}}){_END}", groups=("value",)
    ),
    _format("npm-token", r"\b(?P<value>npm_[A-Za-z0-9]{36})\b"),
    SecretPattern(
        "npm-token",
        rf"(?:{_SHOWN_LINE}|:)[ \t]*_(?:auth|authToken|password)[ \t]*=[ \t]*[\"']?"
        r"(?P<value>[^\s\"'$]{8,})",
        groups=("value",),
        accept=_token_accept,
    ),
    SecretPattern("pypi-token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
    _format("huggingface-token", r"\b(?P<value>hf_[A-Za-z0-9]{34,})\b"),
    SecretPattern(
        "sendgrid-key", rf"\b(?P<value>SG\.[A-Za-z0-9_-]{{22}}\.[A-Za-z0-9_-]{{43}}){_END}", groups=("value",)
    ),
    _format(
        "jwt",
        r"\b(?P<value>ey[A-Za-z0-9_-]{15,}\.ey[A-Za-z0-9_/\\-]{15,}\.(?:[A-Za-z0-9_/\\-]{10,}={0,2})?)",
    ),
    *(SecretPattern(kind, regex, groups=("value",), accept=_format_accept) for kind, regex in TOKEN_FORMATS),
    SecretPattern(
        "bearer-token",
        r"(?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?i:bearer)[ \t]+(?P<value>[A-Za-z0-9._~+/-]{16,}=*)",
        groups=("value",),
        accept=_token_accept,
    ),
    # Other credentials of an Authorization header: Basic, Token, Api-Token or none.
    SecretPattern(
        "authorization-header",
        r"(?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?i:basic|token|api-token|digest)[ \t]+)?"
        r"(?P<value>[A-Za-z0-9._~+/-]{8,}=*)",
        groups=("value",),
        accept=_header_accept,
        generic=True,
    ),
    # ``curl -u user:password``: the whole pair, as the user may be the key.
    SecretPattern(
        "basic-auth",
        r"(?:^|\s)(?:-u|--user)(?:=|[ \t]{1,5})[\"']?(?P<value>[^\s:\"']{0,80}:(?P<password>[^\s\"']{3,80}))",
        groups=("value",),
        accept=_url_password_accept,
        generic=True,
    ),
    SecretPattern(
        "url-password",
        r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@'\"]*:(?P<password>[^\s/@'\"]{3,})@[\w.-]+",
        groups=("password",),
        accept=_url_password_accept,
        generic=True,
    ),
    _assignment(_ASSIGNMENT),
    # ``setProperty("API_TOKEN", "value")``, ``password("value")``: a quoted value as the second
    # of a pair, or as a call's argument.
    _assignment(rf"{_ASSIGNED_NAME}[\"'`]?[ \t]*[(,][ \t]*@?(?:{_QUOTED_VALUE})"),
    # ``password "value"``: a name and a quoted value with nothing but space between.
    _assignment(rf"{_ASSIGNED_NAME}[ \t]+(?:{_QUOTED_VALUE})"),
    # ``<apiToken>value</apiToken>``: an XML element named for a secret.
    _assignment(
        rf"<(?P<name>[\w.:-]*?{_SECRET_KEYWORD}[\w.:-]*)(?:[ \t][^>\n]*)?>{_SPACE_SHOWN}*"
        rf"(?P<bare>[^\s<>]{{8,}}){_SPACE_SHOWN}*</"
    ),
    # ``<add key="ClearTextPassword" value="..." />``: .NET and NuGet configuration.
    _assignment(
        rf"(?i:key)=\"(?P<name>[^\"\n]*?{_SECRET_KEYWORD}[^\"\n]*)\"[ \t]+(?i:value)="
        r"(?:\"(?P<dq>[^\"\r\n]{8,})\"|'(?P<sq>[^'\r\n]{8,})')"
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


# The name of a pseudo-group: the identifier characters just before the match (at most 64), so
# that a pattern can start at a keyword and still judge the whole name (``publicToken``).
BEFORE = "(before)"
_IDENTIFIER_BYTES = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$-"


def _before(data: bytes, start: int) -> str:
    window = data[max(0, start - 64) : start]
    return window[len(window.rstrip(_IDENTIFIER_BYTES)) :].decode("ascii")


def _group_reader(match: Any, data: bytes, index: dict[str, int]) -> Groups:
    match_start = match.start()
    spans: dict[str, tuple[int, int]] = {}  # each span read once: the wrapper's reads are slow

    def span(name: str) -> tuple[int, int]:
        if name not in spans:
            spans[name] = match.span(index[name]) if name in index else (-1, -1)
        return spans[name]

    def group(name: str) -> str | None:
        if name == BEFORE:
            return _before(data, match_start)
        if name == "name_start":  # "" when the name group starts where the match starts
            return "" if span("name")[0] == match_start else None
        start, end = span(name)
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

# A claim: its byte span, its kind (None: benign), and its rank among claims starting at the same
# byte (a vendor's format before a generic shape, then the pattern listed first).
Claim = tuple[int, int, str | None, int]


class _Pass:
    """One RE2 regex over some of the patterns (numbered as in the scanner), run once over the
    text, and an RE2 ``Set`` of the same patterns for what starts inside a candidate. The ``frequent``
    patterns get a pass of their own: one automaton with the formats scans no faster (a pass costs
    about the same per byte whatever its patterns), builds its states more slowly, and a rejected
    assignment would consume the formats inside it."""

    def __init__(self, patterns: Sequence[SecretPattern], numbers: Sequence[int], starts: str | None) -> None:
        self.patterns = patterns
        self.numbers = list(numbers)
        # Where a match of this pass can start, when that is narrower than anywhere: a rejected
        # candidate with no such place after its first byte hides nothing.
        # Words and a bounded, possessive name (no backtracking: at most 64 steps a place),
        # asked of a few bytes at a time: Python's own engine is cheaper to call there than
        # RE2's wrapper.
        self.starts = None if starts is None else re.compile(starts.encode("ascii"))
        combined = "|".join(f"(?P<p{i}_>{_prefixed(patterns[i].regex, i)})" for i in self.numbers)
        self.combined = re2.compile(combined.encode("ascii"), _options())
        index = {k.decode() if isinstance(k, bytes) else k: v for k, v in self.combined.groupindex.items()}
        # Which pattern matched, by the last group closed: the alternative's own group, which
        # encloses every other group of it.
        self.alternative = {index[f"p{i}_"]: i for i in self.numbers}
        # Each pattern's group names in the combined regex; "" is the whole alternative.
        self.names = {
            i: {"": index[f"p{i}_"], **{name: index[f"p{i}_{name}"] for name in patterns[i].group_index}}
            for i in self.numbers
        }
        self.set = re2.Set.SearchSet(_options())
        for i in self.numbers:
            self.set.Add(patterns[i].regex.encode("ascii"))
        self.set.Compile()

    def claims(self, data: bytes) -> list[Claim]:
        found: list[Claim] = []
        for match in self.combined.finditer(data):
            number = self.alternative[match.lastindex]
            names = self.names[number]
            if self._accepted(number, match, names, data):
                self._resolve(data, match, number, found)
            else:
                self._rescan(data, match.start(), match.end(), number, found)
        return found

    def _accepted(self, number: int, match: Any, names: dict[str, int], data: bytes) -> bool:
        accept = self.patterns[number].accept
        return accept is None or accept(_group_reader(match, data, names))

    def _record(
        self, number: int, match: Any, names: dict[str, int], data: bytes, found: list[Claim]
    ) -> None:
        pattern = self.patterns[number]
        start, end = match.span(names[""]) if "" in names else match.span()
        for name in pattern.groups:
            if name in names and match.span(names[name])[0] >= 0:
                start, end = match.span(names[name])
                break
        if start < end:
            # A published key claims its span, as a benign match does, and is not reported.
            reported = not pattern.benign and data[start:end] not in _PUBLISHED
            found.append((start, end, pattern.kind if reported else None, number + pattern.generic * 1000))

    def _others(self, data: bytes, start: int, end: int) -> tuple[list[int], int]:
        """The patterns of this pass that may match starting inside ``data[start:end]`` (a
        superset), and where such a match must have ended to be found."""
        limit = self._limit(data, start, end)
        return sorted(self.numbers[k] for k in self.set.Match(data[start:limit]) or ()), limit

    def _limit(self, data: bytes, start: int, end: int) -> int:
        """Where a match starting inside ``data[start:end]`` must have ended to be found."""
        tail = RESCAN_TAIL_PEM if b"-----" in data[start:end] else RESCAN_TAIL
        limit = min(len(data), end + tail)
        if self.starts is not None:  # the assignments: one ends on its line
            newline = data.find(b"\n", end, limit)
            limit = limit if newline < 0 else newline + 1
        return limit

    def _search(self, data: bytes, number: int, start: int, end: int, limit: int, found: list[Claim]) -> None:
        pattern = self.patterns[number]
        match = pattern.compiled.search(data, start, limit)
        if (
            match is not None
            and match.start() < end
            and self._accepted(number, match, pattern.group_index, data)
        ):
            self._record(number, match, pattern.group_index, data, found)

    def _resolve(self, data: bytes, match: Any, number: int, found: list[Claim]) -> None:
        """Record the accepted ``match`` of pattern ``number`` and whatever else of this pass
        starts inside it: the key id of an ``accessKeys.csv`` row is found beside its secret."""
        self._record(number, match, self.names[number], data, found)
        start, end = match.span()
        others, limit = self._others(data, start, end)
        for other in others:
            if other != number:
                self._search(data, other, start, end, limit, found)

    def _rescan(self, data: bytes, start: int, end: int, rejected: int, found: list[Claim]) -> None:
        """Around a rejected candidate of pattern ``rejected``, look for any pattern of this
        pass starting inside it (the rejected one only after its start)."""
        if self.starts is not None:
            # The assignments: the first of them starting after the candidate's first byte, if
            # it starts inside it, in one search of the pass's own regex up to the line's end,
            # and only where the cheap necessary condition holds.
            limit = self._limit(data, start, end)
            # (Up to the same limit: spaces before an operator have no bound.)
            first = self.starts.search(data, start + 1, limit)
            if first is None or first.start() >= end:
                return
            match = self.combined.search(data, first.start(), limit)
            if match is not None and match.start() < end:
                number = self.alternative[match.lastindex]
                if self._accepted(number, match, self.names[number], data):
                    self._record(number, match, self.names[number], data, found)
            return
        others, limit = self._others(data, start, end)
        for number in others:
            self._search(data, number, start + 1 if number == rejected else start, end, limit, found)


class SecretScanner:
    """Finds the secrets ``patterns`` describe (all of :data:`PATTERNS` by default).

    The patterns run in two passes (:class:`_Pass`): the assignments of a value to a secret's
    name, whose candidates are everywhere in code, and the rest (the services' formats, key
    blocks, headers, URLs), each pass one RE2 regex run once over the text. Where claims
    overlap, the one starting first wins; at one start a vendor's format wins over a generic
    shape, then the pattern listed first, so a private-key block is one
    finding however many tokens its body happens to resemble, and a GitHub token assigned to
    ``token`` is reported as a GitHub token. A candidate the checks reject may hide another
    match of its pass starting inside it: its span (and :data:`RESCAN_TAIL` bytes after) is
    asked of the pass's RE2 ``Set``, and each pattern present is looked for again from there."""

    def __init__(self, patterns: Iterable[SecretPattern] = PATTERNS) -> None:
        self.patterns: Sequence[SecretPattern] = tuple(patterns)
        numbered = list(enumerate(self.patterns))
        frequent = [i for i, p in numbered if p.frequent]
        others = [i for i, p in numbered if not p.frequent]
        self._passes = [
            *([_Pass(self.patterns, frequent, ASSIGNMENT_STARTS)] if frequent else []),
            *([_Pass(self.patterns, others, None)] if others else []),
        ]

    def find(self, text: str) -> list[Finding]:
        data = utf8(text)
        claims = [claim for each in self._passes for claim in each.claims(data)]
        claims.sort(key=lambda claim: (claim[0], claim[3]))
        taken = Taken()
        for start, end, kind, _rank in claims:
            taken.claim(start, end, kind)
        found = [(s, e, k) for s, e, k in taken.spans if k is not None]
        if text.isascii():
            return [Finding(kind, start, end) for start, end, kind in found]
        offsets = _char_offsets(
            data, sorted({offset for start, end, _kind in found for offset in (start, end)})
        )
        return [Finding(kind, offsets[start], offsets[end]) for start, end, kind in found]

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


# Characters per slice when a text with a non-ASCII character is encoded (see utf8).
ENCODE_SLICE = 1 << 14


def utf8(text: str, slice_length: int = ENCODE_SLICE) -> bytes:
    """``text`` in UTF-8, lone surrogates kept (``surrogatepass``). A text with any non-ASCII
    character is stored two or four bytes a character, and CPython encodes it one character at
    a time; a slice of it that is all ASCII is stored a byte a character, and encodes as a copy.
    Source with a few non-ASCII characters encodes in about half the time in slices of 16K."""
    if text.isascii() or len(text) <= slice_length:
        return text.encode("utf-8", "surrogatepass")
    return b"".join(
        text[at : at + slice_length].encode("utf-8", "surrogatepass")
        for at in range(0, len(text), slice_length)
    )


def _char_offsets(data: bytes, offsets: list[int]) -> dict[int, int]:
    """The character offset of each byte offset in ``offsets`` (sorted match boundaries, so never
    inside a character), decoding each stretch of ``data`` once."""
    found: dict[int, int] = {}
    chars = last = 0
    for offset in offsets:
        chars += len(data[last:offset].decode("utf-8", "surrogatepass"))
        found[offset] = chars
        last = offset
    return found


def redaction_note(redaction: Redaction) -> str:
    """The line added to a tool result that had secrets replaced."""
    noun = "secret" if redaction.count == 1 else "secrets"
    return f"[{redaction.count} {noun} redacted before reaching the model: {', '.join(redaction.kinds())}]"
