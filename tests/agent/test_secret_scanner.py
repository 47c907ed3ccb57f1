"""The secret scanner's precision, measured: every planted secret in a corpus is caught, and the
project's own source tree yields no finding. Then: redaction at the tool layer, before the
result enters the messages, and the refusal of edits built on a placeholder."""

from __future__ import annotations

import base64
import json
import os
import random
import re
import string
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent import secret_scanner
from agent.loop import run_agent
from agent.messages import AssistantMessage, ToolCall, ToolResult
from agent.models.scripted import ScriptedModelClient
from agent.policy.guard import guard_tools
from agent.policy.rules import PLACEHOLDER_REFUSAL, refuse_placeholder_writes
from agent.policy.setup import prepare
from agent.published_keys import PUBLISHED_KEYS
from agent.secret_scanner import ASSIGNMENT_STARTS, SecretScanner, shannon_entropy, utf8
from agent.tools import ReadTool, WriteTool, file_tools
from tests.agent.conftest import AgentWorkspace

REPO = Path(__file__).resolve().parents[2]
# Planted values are generated here, not written out: this file is part of the tree that must
# scan clean.
_rng = random.Random(20261201)
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
BASE32 = string.ascii_uppercase + "234567"


def rand(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def b64url(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def pem(label: str, lines: int = 8) -> str:
    body = "\n".join(rand(B64, 64) for _ in range(lines)) + "\n" + rand(B64, 20) + "=="
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


SK = "sk"  # split so no vendor prefix appears whole in this source
PYPI = "pypi-" + "AgEIcHlwaS5vcmc"
PRIV = "PRIVATE KEY"


def corpus() -> list[tuple[str, str, str]]:
    """(kind, secret value, text it is planted in)."""
    rsa, openssh, ec = pem(f"RSA {PRIV}"), pem(f"OPENSSH {PRIV}"), pem(f"EC {PRIV}")
    pgp = pem(f"PGP {PRIV} BLOCK")
    pkcs8 = pem(PRIV)
    cut = pkcs8.split("-----END")[0].rstrip()  # a read that stopped inside the block
    jwt = ".".join(
        [
            b64url({"alg": "HS256", "typ": "JWT"}),
            b64url({"sub": "1234567890", "name": "Ada", "iat": 1516239022}),
            rand(URLSAFE, 43),
        ]
    )
    cases: list[tuple[str, str, str]] = []

    def plant(kind: str, value: str, template: str) -> None:
        cases.append((kind, value, template.format(v=value)))

    plant("anthropic-api-key", f"{SK}-ant-api03-{rand(URLSAFE, 93)}AA", "ANTHROPIC_API_KEY={v}\n")
    plant(
        "anthropic-api-key", f"{SK}-ant-admin01-{rand(URLSAFE, 93)}AA", 'client = Anthropic(api_key="{v}")\n'
    )
    plant("openai-api-key", f"{SK}-proj-{rand(URLSAFE, 120)}", "export OPENAI_API_KEY='{v}'\n")
    plant("openai-api-key", f"{SK}-{rand(ALNUM, 20)}T3BlbkFJ{rand(ALNUM, 20)}", "key: {v}\n")
    plant(
        "aws-access-key-id",
        "AKIA" + rand(string.ascii_uppercase + string.digits, 16),
        "[default]\naws_access_key_id = {v}\n",
    )
    plant("aws-secret-key", rand(B64, 40), "aws_secret_access_key = {v}\n")
    plant("github-token", "ghp_" + rand(ALNUM, 36), "git clone https://{v}@github.com/o/r\n")
    plant("github-token", "github_pat_" + rand(ALNUM + "_", 82), '{{"token": "{v}"}}\n')
    plant("gitlab-token", "glpat-" + rand(URLSAFE, 20), "GITLAB={v}\n")
    plant(
        "slack-token",
        f"xoxb-{rand(string.digits, 12)}-{rand(string.digits, 13)}-{rand(ALNUM, 24)}",
        "slack: {v}\n",
    )
    plant(
        "slack-webhook",
        f"https://hooks.slack.com/services/T{rand(string.ascii_uppercase, 8)}"
        f"/B{rand(string.ascii_uppercase, 10)}/{rand(ALNUM, 24)}",
        "url = {v}\n",
    )
    plant("stripe-key", f"{SK}_live_{rand(ALNUM, 24)}", "Stripe.api_key = '{v}'\n")
    plant("stripe-key", f"rk_test_{rand(ALNUM, 24)}", "STRIPE={v}\n")
    plant("google-api-key", "AIza" + rand(URLSAFE, 35), '<meta name="maps" content="{v}">\n')
    plant("google-oauth-secret", "GOCSPX-" + rand(URLSAFE, 28), "secret: {v}\n")
    plant("npm-token", "npm_" + rand(ALNUM, 36), "//registry.npmjs.org/:_authToken={v}\n")
    plant("pypi-token", PYPI + rand(URLSAFE, 70), "password = {v}\n")
    plant("huggingface-token", "hf_" + rand(ALNUM, 34), "HF_TOKEN={v}\n")
    plant("sendgrid-key", f"SG.{rand(URLSAFE, 22)}.{rand(URLSAFE, 43)}", "SENDGRID={v}\n")
    plant("jwt", jwt, "Authorization: Bearer {v}\n")
    for block in (rsa, openssh, ec, pgp, pkcs8):
        plant("private-key", block, "some text before\n{v}\nand after\n")
    # A key kept in JSON, its newlines written as the two characters \n.
    cases.append(
        (
            "private-key",
            pkcs8.replace("\n", "\\n"),
            json.dumps({"type": "service_account", "private_key": pkcs8}),
        )
    )
    plant("private-key", cut, "{v}")
    plant("url-password", rand(ALNUM, 18), "DATABASE_URL=postgres://app:{v}@db.internal:5432/app\n")
    plant("secret-assignment", rand(ALNUM, 12) + "#" + rand(ALNUM, 6), 'DB_PASSWORD = "{v}"\n')
    plant("secret-assignment", rand(ALNUM, 24), "database:\n  password: {v}\n")
    plant("secret-assignment", rand(ALNUM, 32), '{{"client_secret": "{v}", "id": 7}}\n')
    plant("secret-assignment", rand(URLSAFE, 28), "export DEPLOY_TOKEN={v}\n")
    plant("secret-assignment", rand(ALNUM, 20), "$config['api_key'] => '{v}';\n")
    # A key read without its BEGIN line: from an offset, with sed 1,3d, or its last lines only.
    lines = pem(f"RSA {PRIV}", lines=26).splitlines()
    plant("private-key", "\n".join(lines[3:]), "{v}\n")
    plant("private-key", "\n".join(lines[5:12]), "   5\t{v}\n")
    plant("private-key", "\n".join(lines[-3:]), "{v}\n")
    # Single-case hex and base32 values, unquoted, as the services issue them.
    for name in ("DD_API_KEY", "TWILIO_AUTH_TOKEN", "ALGOLIA_API_KEY", "CLOUDFLARE_API_TOKEN"):
        plant("secret-assignment", "ab" + rand(HEX, 30), name + "={v}\n")
    plant("secret-assignment", "e" + rand(HEX.upper(), 39), "WEBHOOK_SECRET: {v}\n")
    plant("secret-assignment", rand(BASE32, 32), "TOTP_SECRET={v}\n")
    plant("secret-assignment", rand(string.ascii_lowercase + string.digits, 40), "SESSION_SECRET={v}\n")
    plant("url-password", rand(ALNUM, 20), "REDIS_URL=redis://:{v}@cache.internal:6379/0\n")
    account_key = base64.b64encode(_rng.randbytes(64)).decode()
    plant(
        "azure-key",
        account_key,
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={v};EndpointSuffix=core.windows.net\n",
    )
    plant(
        "aws-secret-key",
        rand(B64, 40),
        "User name,Access key ID,Secret access key\nci,AKIA" + rand(string.ascii_uppercase, 16) + ",{v}\n",
    )
    plant("bearer-token", rand(URLSAFE, 40), 'curl -H "Authorization: Bearer {v}" https://api.example.com\n')
    tls_key = base64.b64encode(pem(f"RSA {PRIV}").encode()).decode()
    plant("private-key", tls_key, "data:\n  tls.crt: LS0tLS1CRUdJTg==\n  tls.key: {v}\n")
    plant("npm-token", base64.b64encode(_rng.randbytes(24)).decode(), "_auth={v}\nemail=a@b.c\n")
    plant("slack-token", "xoxe-1-" + rand(ALNUM, 120), "refresh: {v}\n")
    plant("stripe-webhook-secret", "whsec_" + rand(ALNUM, 32), "STRIPE_WEBHOOK={v}\n")
    plant("secret-assignment", rand(ALNUM, 24), 'passwordForAdmin = "{v}"\n')
    return cases


CORPUS = corpus()


@pytest.mark.parametrize(("kind", "value", "text"), CORPUS, ids=[f"{i}-{c[0]}" for i, c in enumerate(CORPUS)])
def test_every_planted_secret_is_caught(kind: str, value: str, text: str) -> None:
    redaction = SecretScanner().redact(text)
    assert value not in redaction.text, redaction.text
    assert f"[REDACTED:{kind}]" in redaction.text, redaction.text
    # An accessKeys.csv row holds the key id beside the secret: two findings.
    expected = 2 if kind == "aws-secret-key" and "AKIA" in text else 1
    assert redaction.count == expected, redaction.findings


def test_corpus_recall_is_counted() -> None:
    scanner = SecretScanner()
    caught = sum(value not in scanner.redact(text).text for _kind, value, text in CORPUS)
    print(f"secret corpus: {caught} of {len(CORPUS)} planted secrets caught")
    assert caught == len(CORPUS)


@pytest.mark.parametrize(
    "text",
    [
        "Enter your password: ",
        'password = input("Password: ")',
        "password = getpass.getpass()",
        "token = tokens[0]",
        "secret_key = settings.SECRET_KEY",
        'SECRET_KEY = os.environ["SECRET_KEY"]',
        '"password": "${DB_PASSWORD}"',
        "api_key: Optional[str] = None",
        'password = "changeme"',
        'api_token = "{{ vault_token }}"',
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "id 123e4567-e89b-12d3-a456-426614174000",
        "https://user@example.com/repo.git and http://localhost:8080/path",
        "the token is valid for 5 minutes; the secret is kept in a vault",
        'KEY_VARIABLE = "ANTHROPIC_API_KEY"',
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
        "sk-ant-demo-0000-not-a-real-key",
        'SECRET = "outside-secret-7f3a"',
        "DEPLOY_TOKEN=demo-deploy-token-5d1a",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDEMOattackerkey attacker@example",
        # Names and labels that read like assignments (found in a real site-packages and sdist).
        "def sign(private_key: Ed25519PrivateKey, data: bytes) -> bytes:",
        '_OID_NAMES = {NameOID.CHALLENGE_PASSWORD: "challengePassword"}',
        '{"token_url": "/v1/oauth/token", "authorize_url": "/v1/oauth/authorize"}',
        "url = 'http://user:pass%20pass@complex.url.com/path?query=yes'",
        "access_token = response.json()['access_token']",
        "password_hash = make_password_hash(password, salt)",
        "Authorization: Bearer <your-token-here>",
        "_authToken=${NPM_TOKEN}",
        "sha256=3f786850e387550fdab836ed7e6dc881de23001b3f786850e387550fdab836ed",
        pem("CERTIFICATE", lines=12),
        # A stand-in whose pieces repeat, and names whose head (before a preposition) is no secret.
        '"slack_token": "xoxp-5678-5678-5678-9f3e7d6c5b4a3928170af5e4d3c2b1a0"',
        "  keyVaultForTokens: prod-kv-2024118733",
        'path_to_secret = "k8s/prod/7f3a9c2e1b/db"',
        # A pair of relative paths, the first ending in a secret's word.
        '("data/../../outside/secret", "data/../../outside/new")',
        '("evil/secret", "data/up/new.txt")',
        # Paths of hyphenated words, or with a template's field for a directory.
        '("grep", ("secret", "{p}/out-link"))',
        'password_file = "test_data/out-link/new-file.txt"',
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert SecretScanner().find(text) == []


def _tracked_files() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, timeout=60
        ).stdout
        return [REPO / name for name in out.decode().split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for dirpath, dirnames, filenames in os.walk(REPO):
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "build"]
            found += [Path(dirpath, name) for name in filenames]
        return found


def test_the_projects_own_tree_has_no_false_positive() -> None:
    scanner = SecretScanner()
    scanned = 0
    size = 0
    findings = []
    for path in _tracked_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        scanned += 1
        size += len(text)
        for f in scanner.find(text):
            line = text.count("\n", 0, f.start) + 1
            findings.append(f"{path.relative_to(REPO)}:{line}: {f.kind}")
    print(
        f"secret scanner over the source tree: {scanned} files, {size} characters, {len(findings)} findings"
    )
    assert scanned > 50
    assert findings == []


def site_packages_like(base: Path) -> None:
    """A tree shaped like an installed site-packages: a CA bundle, crypto type hints, OID
    tables, OAuth clients, URL test cases, RECORD digests, hex test vectors, vendored code."""
    certifi = base / "certifi"
    certifi.mkdir(parents=True)
    (certifi / "cacert.pem").write_text(
        "".join(f"# Issuer: CN=Root {n}\n{pem('CERTIFICATE', lines=20)}\n\n" for n in range(40))
    )
    crypto = base / "cryptography" / "hazmat" / "primitives" / "asymmetric"
    crypto.mkdir(parents=True)
    (crypto / "ed25519.py").write_text(
        "class Ed25519PrivateKey(metaclass=abc.ABCMeta):\n"
        "    def public_key(self) -> Ed25519PublicKey: ...\n\n"
        "def load(data: bytes) -> Ed25519PrivateKey:\n"
        "    private_key: Ed25519PrivateKey = _backend.load(data)\n"
        "    return private_key\n"
    )
    (base / "cryptography" / "x509").mkdir()
    (base / "cryptography" / "x509" / "oid.py").write_text(
        '_OID_NAMES = {\n    NameOID.CHALLENGE_PASSWORD: "challengePassword",\n'
        '    NameOID.UNSTRUCTURED_NAME: "unstructuredName",\n}\n'
    )
    oauth = base / "oauthlib" / "oauth2"
    oauth.mkdir(parents=True)
    (oauth / "client.py").write_text(
        'TOKEN_URL = "/v1/oauth/token"\n'
        "token_endpoint: /v1/oauth/token\n"
        "def prepare_token_request(self, token_url, body='', **kwargs):\n"
        "    access_token = kwargs.get('access_token')\n"
        "    refresh_token = self.refresh_token or token.get('refresh_token')\n"
        "    headers = {'Authorization': 'Bearer ' + access_token}\n"
        "    client_secret: str | None = None\n"
    )
    tests = base / "requests" / "tests"
    tests.mkdir(parents=True)
    (tests / "test_utils.py").write_text(
        "@pytest.mark.parametrize('url, auth', [\n"
        "    ('http://user:pass@complex.url.com/path?query=yes', ('user', 'pass')),\n"
        "    ('http://user:pass%20pass@complex.url.com/path?query=yes', ('user', 'pass pass')),\n"
        "    ('http://user:pass pass@complex.url.com/path?query=yes', ('user', 'pass pass')),\n"
        "    ('http://user%25user:pass@complex.url.com/path?query=yes', ('user%user', 'pass')),\n"
        "])\n"
    )
    record = base / "requests-2.32.3.dist-info"
    record.mkdir()

    def digest() -> str:
        return base64.urlsafe_b64encode(_rng.randbytes(32)).decode().rstrip("=")

    (record / "RECORD").write_text(
        "".join(f"requests/m{n}.py,sha256={digest()},{_rng.randrange(100, 99999)}\n" for n in range(300))
    )
    vectors = base / "hashlib_vectors"
    vectors.mkdir()
    (vectors / "sha256.txt").write_text("".join(_rng.randbytes(32).hex() + "\n" for _ in range(200)))
    (vectors / "keys.py").write_text(
        "".join(f"KEY_{n} = bytes.fromhex('{_rng.randbytes(16).hex()}')\n" for n in range(20))
        + "password = getpass.getpass()\nsecret_key = os.urandom(32)\nconnect(api_key=api_key)\n"
        + "passphrase: bytes | None = None\nTOKEN_TYPE = 'Bearer'\n"
    )
    mime = base / "email" / "tests"
    mime.mkdir(parents=True)
    blob = base64.encodebytes(_rng.randbytes(4000)).decode()  # MIME: lines of 76 characters
    (mime / "msg_attachment.txt").write_text(f"Content-Transfer-Encoding: base64\n\n{blob}")


def test_a_site_packages_like_tree_has_no_false_positive(tmp_path: Path) -> None:
    site_packages_like(tmp_path)
    scanner = SecretScanner()
    findings, files = [], 0
    for path in sorted(tmp_path.rglob("*")):
        if path.is_file():
            files += 1
            text = path.read_text()
            findings += [
                f"{path.relative_to(tmp_path)}: {f.kind} {text[f.start : f.end][:40]!r}"
                for f in scanner.find(text)
            ]
    print(f"secret scanner over a site-packages-like tree: {files} files, {len(findings)} findings")
    assert files >= 9
    assert findings == []


def test_entropy() -> None:
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("abcd") == 2.0


# -- at the tool layer ---------------------------------------------------------------------------


def test_tool_results_are_redacted_before_entering_the_messages(ws: AgentWorkspace) -> None:
    token = "ghp_" + rand(ALNUM, 36)
    password = rand(ALNUM, 20) + "7"
    (ws.path / "config.json").write_text(
        json.dumps({"api_token": token, "db": {"password": password}, "name": "billing"}, indent=2)
    )
    turn = AssistantMessage(
        "", (ToolCall("r1", "read", {"path": "config.json"}), ToolCall("r2", "read", {"path": "hello.txt"}))
    )
    history = run_agent(
        ScriptedModelClient([turn, AssistantMessage("ok")]),
        guard_tools([ReadTool(ws.root)], scanner=SecretScanner()),
        prompt="go",
    )
    results = {m.tool_call_id: m for m in history if isinstance(m, ToolResult)}
    content = results["r1"].content
    assert token not in content and password not in content
    assert '"api_token": "[REDACTED:github-token]"' in content
    assert '"password": "[REDACTED:secret-assignment]"' in content
    assert '"name": "billing"' in content
    assert content.endswith("[2 secrets redacted before reaching the model: github-token, secret-assignment]")
    assert results["r2"].content == "     1\thello from inside\n"  # nothing found, nothing added


def test_an_edit_built_on_a_placeholder_is_refused(ws: AgentWorkspace) -> None:
    edit = ToolCall(
        "e1",
        "edit",
        {
            "path": "config.json",
            "old_string": '"api_token": "[REDACTED:github-token]"',
            "new_string": '"api_token": "new"',
        },
    )
    decision = refuse_placeholder_writes(edit)
    assert not decision.approved and decision.decided_by == "rule:redaction-placeholder"
    assert decision.reason == PLACEHOLDER_REFUSAL.format(
        tool="edit", field="old_string", placeholder="[REDACTED:github-token]"
    )
    assert "not shown to you" in str(decision.reason)
    write = ToolCall("w1", "write", {"path": "config.json", "content": "x [REDACTED:jwt] y"})
    assert not refuse_placeholder_writes(write).approved
    clean = ToolCall("e2", "edit", {"path": "a", "old_string": "name", "new_string": "title"})
    assert refuse_placeholder_writes(clean).approved


def test_a_write_of_a_file_seen_redacted_leaves_the_secret_in_place(ws: AgentWorkspace) -> None:
    secret = "glpat-" + rand(URLSAFE, 24)
    (ws.path / "settings.ini").write_text(f"[ci]\ntoken = {secret}\nname = old\n")
    tools = guard_tools([ReadTool(ws.root), WriteTool(ws.root)], scanner=SecretScanner())
    seen = tools[0].execute({"path": "settings.ini"}).content
    assert secret not in seen
    rewritten = seen.split("\n[1 secret")[0].replace("name = old", "name = new")
    turn = AssistantMessage("", (ToolCall("w1", "write", {"path": "settings.ini", "content": rewritten}),))
    history = run_agent(
        ScriptedModelClient([turn, AssistantMessage("ok")]),
        tools,
        prompt="go",
        before_tool_call=refuse_placeholder_writes,
    )
    result = next(m for m in history if isinstance(m, ToolResult))
    assert result.is_error and "redaction placeholder [REDACTED:gitlab-token]" in result.content
    assert (ws.path / "settings.ini").read_text() == f"[ci]\ntoken = {secret}\nname = old\n"


def test_an_edit_of_a_redacted_line_through_the_real_edit_tool_is_refused(ws: AgentWorkspace) -> None:
    secret = "xoxb-" + rand(string.digits, 12) + "-" + rand(ALNUM, 24)
    original = f"slack_token: {secret}\nchannel: general\n"
    (ws.path / "bot.yml").write_text(original)
    permissions = prepare(file_tools(ws.root), ws.root, mode="edit", scanner=SecretScanner())
    read = ToolCall("r1", "read", {"path": "bot.yml"})
    edit = ToolCall(
        "e1",
        "edit",
        {
            "path": "bot.yml",
            "old_string": "slack_token: [REDACTED:slack-token]\nchannel: general",
            "new_string": "slack_token: [REDACTED:slack-token]\nchannel: random",
        },
    )
    fine = ToolCall(
        "e2", "edit", {"path": "bot.yml", "old_string": "channel: general", "new_string": "channel: random"}
    )
    history = run_agent(
        ScriptedModelClient(
            [AssistantMessage("", (read,)), AssistantMessage("", (edit, fine)), AssistantMessage("ok")]
        ),
        permissions.tools,
        prompt="go",
        before_tool_call=permissions.policy,
    )
    results = {m.tool_call_id: m for m in history if isinstance(m, ToolResult)}
    assert "[REDACTED:slack-token]" in results["r1"].content and secret not in str(history)
    assert results["e1"].is_error
    assert results["e1"].content.startswith(
        "edit refused: old_string contains the redaction placeholder [REDACTED:slack-token]."
    )
    assert not results["e2"].is_error  # an edit beside the secret is fine
    assert (ws.path / "bot.yml").read_text() == f"slack_token: {secret}\nchannel: random\n"


@pytest.mark.parametrize(
    "noise",
    [
        base64.b64encode(_rng.randbytes(786432)).decode(),
        f"-----BEGIN RSA {PRIV}-----\n" * 20000,
        "password=" * 100000,
        "token = abcdefgh12 " * 20000,
        ("A" * 64 + "\n") * 10000,
        "<apiToken>" * 100000,
        'System.setProperty("API_TOKEN", ' * 30000,
        "api_key: Final[" * 60000,
        "token = " + "a1" * 500000,
        "     7\t" * 100000,
        # grep's prefixes and a key's decorations, over and over, with no key in them.
        "a-1-b:2:c-3-" * 80000 + "\n",
        ("src/x-1-" * 40 + '"' + "A" * 64 + '\\n" +\n') * 1000,
        f'-----BEGIN RSA {PRIV}-----\\n" +\n' + ('    "' + "QUJD" * 16 + '\\n" +\n') * 4000,
        "> echo '" * 100000,
    ],
    ids=[
        "base64-1MiB",
        "key-headers",
        "assignment-chain",
        "many-candidates",
        "flat-key-lines",
        "xml-openers",
        "property-pairs",
        "open-type-annotations",
        "one-long-value",
        "line-numbers",
        "grep-prefixes",
        "quoted-key-lines",
        "key-in-string-lines",
        "quote-and-echo-openers",
    ],
)
def test_adversarial_text_neither_hangs_nor_hides_a_later_secret(noise: str) -> None:
    token = "ghp_" + rand(ALNUM, 36)
    redaction = SecretScanner().redact(noise + "\n" + token + "\n")
    assert token not in redaction.text
    assert "[REDACTED:github-token]" in redaction.text


# -- what the tools show, typed assignments, other languages' syntaxes ---------------------------


def token_value() -> str:
    return rand(string.ascii_letters, 10) + rand(string.digits, 4) + rand(ALNUM, 10)


@pytest.mark.parametrize(
    "template",
    [
        'api_key: str = "{v}"',  # Python, annotated
        "DB_PASSWORD: Final = '{v}'",  # Python, Final
        'private readonly apiToken: string = "{v}";',  # TypeScript
        'var dbPassword string = "{v}"',  # Go
        'val clientSecret: String = "{v}"',  # Kotlin
        'const API_KEY: &str = "{v}";',  # Rust
        'static AUTH_TOKEN: &\'static str = "{v}";',  # Rust, a static
        'token: Optional[str] = "{v}"',  # Python, a generic type
    ],
)
def test_a_value_assigned_with_a_declared_type_is_found(template: str) -> None:
    value = token_value()
    redaction = SecretScanner().redact(template.format(v=value))
    assert value not in redaction.text and "[REDACTED:secret-assignment]" in redaction.text, redaction.text


@pytest.mark.parametrize(
    "template",
    [
        "<apiToken>\n    {v}\n</apiToken>",  # an XML element
        'var authToken string = "{v}"',  # Go, typed
        '$authToken .= "{v}";',  # PHP, appended
        'System.setProperty("AUTH_TOKEN", "{v}");',  # Java, a property
        "AUTH_TOKEN ::= {v}",  # make, POSIX
        "AUTH_TOKEN :::= {v}",  # make, POSIX, immediate with escapes
        "AUTH_TOKEN ?= {v}",  # make, if not set
        '<add key="ClearTextPassword" value="{v}" />',  # NuGet, .NET configuration
    ],
)
def test_a_value_assigned_in_other_languages_syntax_is_found(template: str) -> None:
    value = token_value()
    redaction = SecretScanner().redact(template.format(v=value))
    assert value not in redaction.text and "[REDACTED:secret-assignment]" in redaction.text, redaction.text


def test_what_the_read_tool_shows_is_redacted_as_the_raw_text_is(ws: AgentWorkspace) -> None:
    """The read tool numbers its lines (``     7\\t...``) and reads from an offset: a key body
    without its BEGIN line, a k8s ``tls.key`` and an ``.npmrc`` ``_auth=`` line are found in
    what it shows, as in the raw text."""
    key = pem(f"RSA {PRIV}", lines=26)
    tls = base64.b64encode(key.encode()).decode()
    auth = base64.b64encode(_rng.randbytes(24)).decode()
    (ws.path / "id_rsa.txt").write_text(key + "\n")
    (ws.path / "secret.yaml").write_text(
        f"kind: Secret\ndata:\n  tls.crt: LS0tLS1CRUdJTg==\n  tls.key: {tls}\n"
    )
    (ws.path / "npmrc.txt").write_text(f"registry=https://registry.npmjs.org/\n_auth={auth}\nemail=a@b.c\n")
    indented = "config:\n  key: |\n" + "".join(f"    {line}\n" for line in key.splitlines())
    (ws.path / "values.yaml").write_text(indented)
    tool = guard_tools([ReadTool(ws.root)], scanner=SecretScanner())[0]
    body = key.splitlines()[1:-1]
    for path, args, secrets in [
        ("id_rsa.txt", {"offset": 5, "limit": 10}, body[3:13]),
        ("id_rsa.txt", {"offset": 20}, body[18:]),
        ("secret.yaml", {}, [tls]),
        ("npmrc.txt", {}, [auth]),
        ("values.yaml", {"offset": 5, "limit": 12}, body[2:14]),
    ]:
        shown = tool.execute({"path": path, **args}).content
        leaked = [secret for secret in secrets if secret in shown]
        assert not leaked, (path, args, shown)
        assert "[REDACTED:" in shown
    # The same text as cat shows it, and indented without its BEGIN line.
    scanner = SecretScanner()
    for text in (indented.split("\n", 3)[3], "\n".join(f"  {line}" for line in body[4:12])):
        assert not [line for line in body if line in scanner.redact(text).text]


def pgp_block(label: str, version: str) -> str:
    lines = "\n".join(rand(B64, 64) for _ in range(12))
    armor = f"PGP {label} BLOCK-----"
    return f"-----BEGIN {armor}\n{version}\n\n{lines}\n={rand(B64, 4)}\n-----END {armor}\n"


@pytest.mark.parametrize(
    "version",
    [
        "Version: GnuPG v2.0.22 (GNU/Linux)",
        "Version: GnuPG/MacGPG2 v2\nComment: GPGTools - https://gpgtools.org",
    ],
)
def test_a_pgp_public_key_with_a_version_header_is_left_alone(version: str, ws: AgentWorkspace) -> None:
    public = pgp_block("PUBLIC KEY", version)
    assert SecretScanner().find(public) == []
    (ws.path / "key.asc").write_text(public)
    shown = guard_tools([ReadTool(ws.root)], scanner=SecretScanner())[0].execute({"path": "key.asc"}).content
    assert "REDACTED" not in shown
    private = pgp_block(PRIV, version)
    redaction = SecretScanner().redact(private)
    assert redaction.kinds() == ["private-key"]
    assert not [line for line in private.splitlines()[3:-2] if len(line) > 8 and line in redaction.text]


def _one_character_changed(key: str) -> str:
    """``key`` with one letter or digit in its second half replaced by another of its kind."""
    at = next(i for i in range(len(key) // 2, len(key)) if key[i].isalnum())
    old = key[at]
    new = str((int(old) + 1) % 10) if old.isdigit() else ("b" if old.lower() == "a" else "a")
    return key[:at] + (new.upper() if old.isupper() else new) + key[at + 1 :]


@pytest.mark.parametrize("key", sorted(PUBLISHED_KEYS))
def test_a_published_key_is_not_reported_but_its_neighbours_are(
    key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key published on purpose (a public SDK's test key, a documentation sample) is not
    reported, and only that value: the same key with one character changed is reported as the
    key itself would be without the list."""
    scanner = SecretScanner()
    templates = ('api_key = "{k}"', "{k}", '<add key="ClearTextPassword" value="{k}" />')
    neighbour = _one_character_changed(key)
    for template in templates:
        assert scanner.find(template.format(k=key)) == [], template
    found = [len(scanner.find(template.format(k=neighbour))) for template in templates]
    monkeypatch.setattr(secret_scanner, "_PUBLISHED", frozenset())
    assert found == [len(scanner.find(template.format(k=key))) for template in templates]


_PIECES = ["token", "Password", "KEY", "pw", "api_", "x", "Q9", ".", "-", "_", "'", '"', "`", "]", "[0]"]
_PIECES += [" ", "\t", "\n", ":", "=", "::", "?", "!", "<", ">", "(", ",", "@", "&", "'a ", "mut ", "str"]
_ASSIGNMENT_PIECES = st.lists(st.sampled_from([*_PIECES, "a1B2c3D4e5F6"]), max_size=8).map("".join)
# Declared types, operators, calls: the ways a name is followed in the assignment patterns.
_AFTER_NAME = st.sampled_from(
    [
        *(" = ", ":=", "::=", ":::=", "?=", ".=", "=>", " == ", "!=", "<-", ": ", "'] = ", "[16] = "),
        *(": str = ", " string = ", ": &'static str = ", ": Final[str] = ", ' "', '", "', "(@'", " <- "),
    ]
)
_ASSIGNMENTS = next(each for each in SecretScanner()._passes if each.starts is not None)


@settings(max_examples=400, deadline=None)
@given(_ASSIGNMENT_PIECES, _ASSIGNMENT_PIECES, _AFTER_NAME, _ASSIGNMENT_PIECES)
def test_the_assignment_pass_starts_only_where_its_cheap_condition_holds(
    before: str, name: str, after: str, value: str
) -> None:
    """The rescan of a rejected assignment looks with RE2 only where ``ASSIGNMENT_STARTS`` (a
    Python regex) holds: wherever a pattern of the assignment pass matches, it holds there too."""
    text = f"{before}token{name}{after}{value}a1B2c3D4e5F6"
    data = text.encode()
    starts = re.compile(ASSIGNMENT_STARTS.encode())
    for at in range(len(data)):
        if _ASSIGNMENTS.combined.match(data, at) is not None:
            assert starts.match(data, at) is not None, (text, at)


@settings(max_examples=300, deadline=None)
# Lists of characters, not st.text: text leaves lone surrogates out, and the scanner keeps them.
@given(st.lists(st.one_of(st.characters(), st.characters(categories=["Cs"]))).map("".join), st.integers(1, 8))
def test_text_encoded_in_slices_is_the_text_in_utf8(text: str, slice_length: int) -> None:
    """The scanner encodes a non-ASCII text in slices; the bytes are the whole text's UTF-8 (lone
    surrogates kept), wherever a slice ends."""
    assert utf8(text, slice_length) == text.encode("utf-8", "surrogatepass")


@pytest.mark.parametrize("spaces", [1, 90, 300])
def test_an_assignment_starting_inside_a_rejected_one_is_found(spaces: int) -> None:
    """A rejected candidate (a value that is a name) may hide the start of another assignment;
    it is found with spaces before its operator, as long as it ends within RESCAN_TAIL bytes."""
    value = token_value()
    text = f'token = abcdefgh_token{" " * spaces}= "{value}"\n'
    redaction = SecretScanner().redact(text)
    assert value not in redaction.text and redaction.kinds() == ["secret-assignment"], redaction.text
