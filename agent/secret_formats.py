"""Published token formats of services, one line each: the kind reported and an RE2 regex for
the token (a fixed prefix, a length, an alphabet). :mod:`agent.secret_scanner` runs them beside
its own patterns; a token whose random part is a placeholder (``xxxx``, ``abcdef...``, one
character repeated) is not reported.

Each format is the service's own: a prefix the service puts on every token it issues, so a
match is a token whatever the text around it (a bare line, an assignment, a URL, a header).
Formats that have no prefix of their own (a 32-character hex key) are found by the name they
are assigned to instead, in :mod:`agent.secret_scanner`.
"""

from __future__ import annotations

# What may follow a token: RE2 has no lookahead, so the character is consumed; the token itself
# is the ``value`` group.
_END = r"(?:[^A-Za-z0-9_-]|\z)"
_END_B64 = r"(?:[^A-Za-z0-9+/=_-]|\z)"


def _token(body: str, end: str = _END) -> str:
    """``body`` as a whole token: not preceded by a token character, not followed by one."""
    return rf"(?:^|[^A-Za-z0-9_.+/-])(?P<value>{body}){end}"


# (kind, regex): each regex has a ``value`` group, the token.
TOKEN_FORMATS: tuple[tuple[str, str], ...] = (
    ("1password-token", _token(r"ops_eyJ[A-Za-z0-9+/]{250,}={0,3}", _END_B64)),
    (
        "1password-secret-key",
        _token(
            r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}"
        ),
    ),
    ("adobe-client-secret", _token(r"p8e-[A-Za-z0-9]{32}")),
    ("age-secret-key", _token(r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}")),
    ("airtable-token", _token(r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}")),
    ("alibaba-access-key-id", _token(r"LTAI[A-Za-z0-9]{20}")),
    ("artifactory-token", _token(r"AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59}")),
    (
        "authress-key",
        _token(
            r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}"
            r"\.[A-Za-z0-9+/_=-]{30,120}",
            _END_B64,
        ),
    ),
    ("aws-bedrock-key", _token(r"ABSK[A-Za-z0-9+/]{109,269}={0,2}", _END_B64)),
    (
        "aws-bedrock-key",
        _token(r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=&%]{20,}", _END_B64),
    ),
    (
        "azure-ad-client-secret",
        r"(?:^|[\\'\"`\s>=:(,)])(?P<value>[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?:[\\'\"`\s<),]|\z)",
    ),
    ("clickhouse-key", _token(r"4b1d[A-Za-z0-9]{38}")),
    ("clojars-token", _token(r"(?i:CLOJARS_)[A-Za-z0-9]{60}")),
    ("cloudflare-origin-ca-key", _token(r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}")),
    ("databricks-token", _token(r"dapi[a-f0-9]{32}(?:-\d)?")),
    ("digitalocean-token", _token(r"do[por]_v1_[a-f0-9]{64}")),
    ("discord-bot-token", _token(r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}")),
    ("doppler-token", _token(r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}")),
    ("dropbox-token", _token(r"sl\.[A-Za-z0-9_=-]{130,140}")),
    ("duffel-token", _token(r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}")),
    ("dynatrace-token", _token(r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}")),
    ("easypost-key", _token(r"EZ[AT]K[A-Za-z0-9]{54}")),
    ("facebook-token", _token(r"EAA[MC][A-Za-z0-9]{100,}|\d{15,16}(?:\||%7C)[A-Za-z0-9_-]{27,40}")),
    ("flutterwave-key", _token(r"FLW(?:PUBK|SECK)(?:_TEST)?-[a-hA-H0-9]{12,32}(?:-X)?")),
    (
        "flyio-token",
        _token(
            r"fo1_[A-Za-z0-9_-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3}", _END_B64
        ),
    ),
    ("frameio-token", _token(r"fio-u-[A-Za-z0-9_=-]{64}")),
    (
        "gitlab-token",
        _token(r"gl(?:pat|dt|ft|soat|rt|cbt|ffct|imt|agent|oas|ptt)-[A-Za-z0-9_-]{20,300}(?:\.[0-9a-z]{9})?"),
    ),
    ("gitlab-token", _token(r"GR1348941[A-Za-z0-9_-]{20,}")),
    ("gitlab-session", r"(?P<value>_gitlab_session=[0-9a-z]{32})"),
    ("grafana-token", _token(r"eyJrIjoi[A-Za-z0-9]{70,400}={0,3}|glc_[A-Za-z0-9+/]{32,400}={0,3}", _END_B64)),
    ("grafana-token", _token(r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}")),
    ("harness-token", _token(r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}")),
    ("terraform-token", _token(r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}")),
    ("vault-token", _token(r"hv[sb]\.[A-Za-z0-9_-]{90,300}")),
    ("heroku-key", _token(r"HRKU-AA[A-Za-z0-9_-]{58}")),
    ("huggingface-token", _token(r"api_org_[A-Za-z]{34}")),
    ("infracost-token", _token(r"ico-[A-Za-z0-9]{32}")),
    ("intra42-secret", _token(r"s-s4t2(?:ud|af)-[a-fA-F0-9]{64}")),
    ("linear-key", _token(r"lin_api_[A-Za-z0-9]{40}")),
    ("mailchimp-key", _token(r"[a-f0-9]{32}-us\d{1,2}")),
    ("lob-key", _token(r"(?:live|test)_(?:pub_)?[a-f0-9]{31,35}")),
    ("mailgun-key", _token(r"(?:key|pubkey)-[a-f0-9]{32}")),
    ("maxmind-key", _token(r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk")),
    ("new-relic-key", _token(r"NRAK-[A-Za-z0-9]{27}|NRJS-[a-f0-9]{19}|NRII-[A-Za-z0-9-]{32}")),
    ("notion-token", _token(r"ntn_[0-9]{11}[A-Za-z0-9]{35}")),
    ("octopus-deploy-key", _token(r"API-[A-Z0-9]{26}")),
    ("openshift-token", _token(r"sha256~[A-Za-z0-9_-]{43}")),
    ("perplexity-key", _token(r"pplx-[A-Za-z0-9]{48}")),
    ("planetscale-token", _token(r"pscale_(?:pw|tkn|oauth)_[A-Za-z0-9_=.-]{32,64}")),
    ("postman-key", _token(r"PMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34}")),
    ("prefect-token", _token(r"pnu_[A-Za-z0-9]{36}")),
    ("pulumi-token", _token(r"pul-[a-f0-9]{40}")),
    ("readme-token", _token(r"rdme_[a-z0-9]{70}")),
    ("rubygems-token", _token(r"rubygems_[a-f0-9]{48}")),
    ("scalingo-token", _token(r"tk-us-[A-Za-z0-9_-]{48}")),
    ("sendinblue-key", _token(r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}")),
    ("sentry-token", _token(r"sntrys_eyJpYXQiO[A-Za-z0-9+/=]{20,400}_[A-Za-z0-9+/]{43}|sntryu_[a-f0-9]{64}")),
    ("settlemint-token", _token(r"sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}")),
    ("shippo-token", _token(r"shippo_(?:live|test)_[a-fA-F0-9]{40}")),
    ("shopify-token", _token(r"shp(?:ss|at|ca|pa)_[a-fA-F0-9]{32}")),
    ("sourcegraph-token", _token(r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}")),
    ("square-token", _token(r"(?:EAAA|sq0atp-)[A-Za-z0-9_-]{22,60}|sq0csp-[A-Za-z0-9_-]{43}")),
    ("telegram-bot-token", _token(r"\d{5,16}:A[A-Za-z0-9_-]{34}")),
    ("twilio-key", _token(r"SK[0-9a-fA-F]{32}")),
    ("typeform-token", _token(r"tfp_[A-Za-z0-9_.=-]{59}")),
    ("yandex-key", _token(r"AQVN[A-Za-z0-9_-]{35,38}|t1\.[A-Za-z0-9_-]+=*\.[A-Za-z0-9_-]{86}")),
    (
        "teams-webhook",
        r"(?P<value>https://[a-z0-9]+\.webhook\.office\.com/webhookb2/[a-z0-9-]{36}@[a-z0-9-]{36}"
        r"/IncomingWebhook/[a-z0-9]{32}/[a-z0-9-]{36})",
    ),
)
