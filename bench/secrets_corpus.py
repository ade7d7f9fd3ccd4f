"""A labelled corpus for `make bench-secrets`: ordinary text that must be stored, and fake
credentials that must be refused, each fake in every way it can reach the graph.

Written from the credential formats themselves (the shapes gitleaks documents for each
provider's tokens, and the ways people write a password down), never from ontoloom's own
patterns: nothing here imports ontoloom, so the corpus cannot agree with the rules by
construction. Everything is drawn from one ``random.Random(seed)``: the same seed gives the
same corpus, item for item.

    >>> c = corpus()
    >>> len({i.text for i in c.ordinary if i.carrier == "value"}) >= 10_000
    True
    >>> sorted({i.carrier for i in c.fakes}) == sorted(CARRIERS)
    True

An :class:`Item` is tagged with its ``format`` (for ordinary text, its category) and its
``carrier``: how the text travels (a whole value, inside a sentence, as JSON, split by an
invisible character, in fullwidth letters, as a property's name, as an IRI, as an id).
"""

from __future__ import annotations

import base64
import json
import random
import string
import urllib.parse
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

DEFAULT_SEED = 20261204

# -- carriers ---------------------------------------------------------------------------------
#: A text as a property's value: whole, in a sentence, as JSON text, among other lines.
LITERAL_CARRIERS = ("value", "sentence", "json", "multiline")
#: The same text with an invisible character inside the secret, or in fullwidth forms (the
#: same text under Unicode NFKC).
DISGUISED_CARRIERS = ("zwsp", "zwj", "shy", "fullwidth")
#: Where a secret is no value at all: a property's name, an IRI (object or subject of an
#: imported triple), an object's id.
NAME_CARRIERS = ("property-name", "object-iri", "subject-iri", "entity-id")
CARRIERS = (*LITERAL_CARRIERS, *DISGUISED_CARRIERS, *NAME_CARRIERS)
#: Carriers whose text is a literal value (what a title, a note or a record's body holds).
TEXT_CARRIERS = (*LITERAL_CARRIERS, *DISGUISED_CARRIERS)
IRI_CARRIERS = ("object-iri", "subject-iri")

INVISIBLE = {"zwsp": "\u200b", "zwj": "\u200d", "shy": "\u00ad"}

# -- alphabets --------------------------------------------------------------------------------
LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
LETTERS = string.ascii_letters
ALNUM = LETTERS + DIGITS
HEX = "0123456789abcdef"
UPPER_B32 = UPPER + "234567"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
WORD = ALNUM + "_"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
SYMBOLS = "!@#%^&*-_+=?.~$"
#: What the id of an object may hold, as the README documents it (letters, digits and
#: _ . : / @ + -, starting with a letter or digit, at most 200 characters).
ID_CHARS = set(ALNUM + "_.:/@+-")
#: What an IRI may hold without escapes, in this corpus (no space, no <>"{}|\\^`).
IRI_CHARS = set(ALNUM + "-._~:/?#[]@!$&'()*+,;=%")


@dataclass(frozen=True)
class Item:
    """One text to store. ``kind`` is ``ordinary`` (must be stored) or ``fake`` (must be
    refused). ``text`` is the literal, or for the carriers that are no value, the property's
    name, the IRI or the id; ``value`` is the property's value for ``property-name``.
    ``secret`` is the credential itself (fakes only), for checking it is never printed
    back; ``variant`` says more (a password's style, a key's type)."""

    kind: str
    format: str
    carrier: str
    text: str
    value: str = ""
    secret: str = ""
    variant: str = ""

    @property
    def named_gap(self) -> bool:
        """A fake of a form the README says the rule may let through (reported apart)."""
        return self.kind == "fake" and self.variant in NAMED_GAPS

    @property
    def scanned(self) -> str:
        """The text a scanner of plain text sees for this item."""
        return f"{self.text}={self.value}" if self.carrier == "property-name" else self.text

    def shown(self) -> str:
        """The item for a report: a fake never in full (its first 6 characters)."""
        if self.kind == "fake":
            head = self.secret[:6].replace("\n", " ")
            return (
                f"{self.format}/{self.carrier}{'/' + self.variant if self.variant else ''} {head}…"
            )
        text = self.text.replace("\n", "⏎")
        return f"{self.format}/{self.carrier} {text[:60]!r}{'…' if len(text) > 60 else ''}"


@dataclass
class Corpus:
    seed: int
    ordinary: list[Item] = field(default_factory=list)
    fakes: list[Item] = field(default_factory=list)

    @property
    def items(self) -> list[Item]:
        return [*self.ordinary, *self.fakes]


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _r_end_alnum(rng: random.Random, alphabet: str, n: int) -> str:
    """``n`` characters of ``alphabet`` whose first and last are letters or digits (a token
    the provider's own generator would make, ending where a word ends)."""
    if n < 2:
        return _r(rng, ALNUM, n)
    return rng.choice(ALNUM) + _r(rng, alphabet, n - 2) + rng.choice(ALNUM)


def _digits(rng: random.Random, lo: int, hi: int) -> str:
    return rng.choice("123456789") + _r(rng, DIGITS, rng.randint(lo, hi) - 1)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


# -- fake credentials: tokens and keys --------------------------------------------------------
def _jwt(rng: random.Random) -> str:
    header = {"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    claims = {
        "sub": str(rng.randint(10**6, 10**9)),
        "name": rng.choice(["Ann Lee", "Bo Chen", "Cy Diaz", "Di Evans"]),
        "iat": rng.randint(1_600_000_000, 1_800_000_000),
        "scope": rng.choice(["read", "read write", "admin"]),
    }
    sig = bytes(rng.getrandbits(8) for _ in range(rng.choice([32, 64])))
    parts = [json.dumps(part, separators=(",", ":")).encode() for part in (header, claims)]
    parts.append(sig)
    return ".".join(_b64url(p) for p in parts)


def _pem(kind: str) -> Callable[[random.Random], str]:
    def make(rng: random.Random) -> str:
        body = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(rng.randint(180, 400))))
        text = body.decode("ascii")
        lines = [text[i : i + 64] for i in range(0, len(text), 64)]
        label = f"{kind} PRIVATE KEY" if kind else "PRIVATE KEY"
        return "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])

    return make


def _grafana_cloud(rng: random.Random) -> str:
    claims: dict[str, object] = {"o": _digits(rng, 6, 7), "n": f"stack-{_r(rng, LOWER, 6)}"}
    claims |= {"k": _r(rng, ALNUM, 24), "m": {"r": rng.choice(["us", "eu", "au"])}}
    return "glc_" + base64.b64encode(json.dumps(claims).encode()).decode("ascii")


def _atlassian(rng: random.Random) -> str:
    return "ATATT3" + _r_end_alnum(rng, B64URL, 177) + "=" + _r(rng, HEX.upper(), 8)


#: Each token or key format (gitleaks' rule for it, as named there, in brackets) → a maker
#: of one fake of it, with random characters of the right alphabet and length.
TOKEN_FORMATS: dict[str, Callable[[random.Random], str]] = {
    "aws-akia": lambda r: "AKIA" + _r(r, UPPER_B32, 16),  # [aws-access-token]
    "aws-asia": lambda r: "ASIA" + _r(r, UPPER_B32, 16),
    "github-ghp": lambda r: "ghp_" + _r(r, ALNUM, 36),  # [github-pat]
    "github-gho": lambda r: "gho_" + _r(r, ALNUM, 36),  # [github-oauth]
    "github-ghu": lambda r: "ghu_" + _r(r, ALNUM, 36),  # [github-app-token]
    "github-ghs": lambda r: "ghs_" + _r(r, ALNUM, 36),
    "github-ghr": lambda r: "ghr_" + _r(r, ALNUM, 36),  # [github-refresh-token]
    "github-fine-grained": lambda r: "github_pat_" + _r(r, ALNUM, 22) + "_" + _r(r, ALNUM, 59),
    "gitlab-glpat": lambda r: "glpat-" + _r_end_alnum(r, WORD + "-", 20),  # [gitlab-pat]
    "slack-xoxb": lambda r: (  # [slack-bot-token]
        f"xoxb-{_digits(r, 10, 13)}-{_digits(r, 10, 13)}-{_r(r, ALNUM, 24)}"
    ),
    "slack-xoxp": lambda r: (  # [slack-user-token]
        f"xoxp-{_digits(r, 10, 13)}-{_digits(r, 10, 13)}-{_digits(r, 10, 13)}-{_r(r, HEX, 32)}"
    ),
    "slack-webhook": lambda r: (  # [slack-webhook-url]
        f"https://hooks.slack.com/services/T{_r(r, UPPER + DIGITS, 8)}"
        f"/B{_r(r, UPPER + DIGITS, 10)}/{_r(r, ALNUM, 24)}"
    ),
    "stripe-sk-live": lambda r: "sk_live_" + _r(r, ALNUM, 24),  # [stripe-access-token]
    "stripe-rk-live": lambda r: "rk_live_" + _r(r, ALNUM, 24),
    "stripe-sk-test": lambda r: "sk_test_" + _r(r, ALNUM, 24),
    "openai-project": lambda r: (  # [openai-api-key]
        "sk-proj-" + _r_end_alnum(r, B64URL, 74) + "T3BlbkFJ" + _r_end_alnum(r, B64URL, 74)
    ),
    "openai-legacy": lambda r: "sk-" + _r(r, ALNUM, 20) + "T3BlbkFJ" + _r(r, ALNUM, 20),
    "anthropic": lambda r: "sk-ant-api03-" + _r_end_alnum(r, B64URL, 93) + "AA",
    "google-api-key": lambda r: "AIza" + _r_end_alnum(r, B64URL, 35),  # [gcp-api-key]
    "npm": lambda r: "npm_" + _r(r, ALNUM, 36),  # [npm-access-token]
    "huggingface": lambda r: "hf_" + _r(r, LETTERS, 34),  # [huggingface-access-token]
    "jwt": _jwt,  # [jwt]
    "pem-rsa": _pem("RSA"),  # [private-key]
    "pem-ec": _pem("EC"),
    "pem-openssh": _pem("OPENSSH"),
    "pem-pkcs8": _pem(""),
    "age": lambda r: "AGE-SECRET-KEY-1" + _r(r, BECH32, 58),  # [age-secret-key]
    "digitalocean": lambda r: "dop_v1_" + _r(r, HEX, 64),  # [digitalocean-pat]
    "shopify": lambda r: "shpat_" + _r(r, HEX, 32),  # [shopify-access-token]
    "sendgrid": lambda r: (  # [sendgrid-api-token]
        "SG." + _r_end_alnum(r, B64URL, 22) + "." + _r_end_alnum(r, B64URL, 43)
    ),
    "pypi": lambda r: "pypi-AgEIcHlwaS5vcmc" + _r_end_alnum(r, B64URL, 60),  # [pypi-upload-token]
    "twilio": lambda r: "SK" + _r(r, HEX, 32),  # [twilio-api-key]
    "databricks": lambda r: "dapi" + _r(r, HEX, 32),  # [databricks-api-token]
    "linear": lambda r: "lin_api_" + _r(r, ALNUM, 40),  # [linear-api-key]
    "postman": lambda r: f"PMAK-{_r(r, HEX, 24)}-{_r(r, HEX, 34)}",  # [postman-api-token]
    "grafana-cloud": _grafana_cloud,  # [grafana-cloud-api-token]
    "grafana-service-account": lambda r: "glsa_" + _r(r, ALNUM, 32) + "_" + _r(r, HEX, 8),
    "sentry-user": lambda r: "sntryu_" + _r(r, HEX, 64),  # [sentry-user-token]
    "doppler": lambda r: "dp.pt." + _r(r, ALNUM, 43),  # [doppler-api-token]
    "vault": lambda r: (
        "hvs." + _r_end_alnum(r, B64URL, r.randint(90, 110))
    ),  # [vault-service-token]
    "atlassian": _atlassian,  # [atlassian-api-token]
    "notion": lambda r: "ntn_" + _digits(r, 11, 11) + _r(r, ALNUM, 35),  # [notion-api-token]
    "perplexity": lambda r: "pplx-" + _r(r, ALNUM, 48),  # [perplexity-api-key]
    "heroku": lambda r: "HRKU-AA" + _r_end_alnum(r, B64URL, 58),  # [heroku-api-key-v2]
    "square": lambda r: (
        "sq0atp-" + _r_end_alnum(r, B64URL, r.randint(22, 60))
    ),  # [square-access-token]
}


# -- fake credentials: secrets written as text ------------------------------------------------
def password(rng: random.Random, style: str) -> str:
    """A random password: ``mixed`` (10 to 24 characters, upper, lower, digit and symbol, the
    first a letter or digit, as most generators make them), ``lower`` (12 to 24 letters a-z:
    a passphrase) or ``lower-short`` (8 to 11 letters a-z: the README's named gap, since a
    run that short may read like a word)."""
    if style == "lower":
        return _r(rng, LOWER, rng.randint(12, 24))
    if style == "lower-short":
        return _r(rng, LOWER, rng.randint(8, 11))
    n = rng.randint(10, 24)
    classes = [UPPER, LOWER, DIGITS, SYMBOLS]
    chars = [rng.choice(c) for c in classes] + [rng.choice(ALNUM + SYMBOLS) for _ in range(n - 4)]
    rng.shuffle(chars)
    first = next(i for i, c in enumerate(chars) if c in ALNUM)
    chars[0], chars[first] = chars[first], chars[0]
    return "".join(chars)


def _pct(text: str) -> str:
    return urllib.parse.quote(text, safe="")


@dataclass(frozen=True)
class Written:
    """A secret written as text: the text, where inside it an invisible character goes
    (inside its keyword), its (name, value) as a property, and its IRI form."""

    text: str
    secret: str
    split: int
    name: tuple[str, str] | None
    iri: str | None


_USERS = ("admin", "deploy", "app", "svc_billing", "root", "ci-bot")


def _written(fmt: str, rng: random.Random, style: str) -> Written:
    pw = password(rng, style)
    user = rng.choice(_USERS)
    query = f"https://ex.org/login?user={user}&password={_pct(pw)}"
    if fmt in ("password-lower", "password-upper", "password-mixed"):
        key = {"password-lower": "password", "password-upper": "PASSWORD"}.get(fmt)
        key = key or rng.choice(["Password", "PassWord", "passWord"])
        text = f"{key}{rng.choice([': ', ':', ' : '])}{pw}"
        return Written(text, pw, 4, (key, pw), query)
    if fmt == "password-json":
        text = json.dumps({"user": user, "password": pw})
        return Written(text, pw, text.index("password") + 4, ("password", pw), None)
    if fmt == "password-env":
        key = rng.choice(["PASSWORD", "DB_PASSWORD", "POSTGRES_PASSWORD", "MYSQL_ROOT_PASSWORD"])
        return Written(f"{key}={pw}", pw, key.index("PASSWORD") + 4, (key, pw), None)
    if fmt == "password-next-line":
        text = f"password:\n{rng.choice(['', '  ', '    '])}{pw}"
        return Written(text, pw, 4, None, None)
    if fmt == "bearer":
        token = _r(rng, LOWER, 32) if style == "lower" else _r(rng, ALNUM, 32)
        return Written(f"Authorization: Bearer {token}", token, 17, ("authorization", token), None)
    if fmt == "basic":
        cred = base64.b64encode(f"{user}:{pw}".encode()).decode("ascii")
        return Written(f"Authorization: Basic {cred}", cred, 17, ("authorization", cred), None)
    if fmt.startswith("url-"):
        scheme = fmt[4:]
        host = {
            "postgres": "db.example.com:5432/app",
            "mysql": "mysql.internal:3306/shop",
            "redis": "cache.internal:6379/0",
            "amqp": "mq.internal:5672/jobs",
            "https": "git.example.com/org/repo.git",
        }[scheme]
        name = "default" if scheme == "redis" else user
        text = f"{scheme}://{name}:{_pct(pw)}@{host}"
        return Written(text, _pct(pw), len(scheme) // 2, None, text)
    if fmt == "api-key":
        key = _r(rng, LOWER, 32) if style == "lower" else _r(rng, ALNUM, 32)
        text = f'api_key{rng.choice(["=", " = "])}"{key}"'
        return Written(text, key, 4, ("api_key", key), f"https://ex.org/v1/data?api_key={key}")
    if fmt == "client-secret":
        secret = _r(rng, LOWER, 40) if style == "lower" else _r_end_alnum(rng, ALNUM + "~._-", 40)
        text = f"client_secret: {secret}"
        iri = f"https://ex.org/oauth/token?client_secret={secret}"
        return Written(text, secret, 9, ("client_secret", secret), iri)
    raise KeyError(fmt)


WRITTEN_FORMATS = (
    "password-lower",
    "password-upper",
    "password-mixed",
    "password-json",
    "password-env",
    "password-next-line",
    "bearer",
    "basic",
    "url-postgres",
    "url-mysql",
    "url-redis",
    "url-amqp",
    "url-https",
    "api-key",
    "client-secret",
)
PASSWORD_STYLES = ("mixed", "lower", "lower-short")
#: The styles the README names as a gap: measured, reported apart, not counted in recall.
NAMED_GAPS = frozenset({"lower-short"})
FORMATS = (*TOKEN_FORMATS, *WRITTEN_FORMATS)


def _iri_safe(text: str) -> bool:
    return bool(text) and all(c in IRI_CHARS for c in text)


def applicable(fmt: str) -> tuple[str, ...]:
    """The carriers a fake of ``fmt`` travels in: every text carrier; a property name when
    the format has a name (a token, or the key it is written under); an IRI when it can be
    one (a token, a URL, a query string); an id when a token fits an id's alphabet."""
    carriers = list(TEXT_CARRIERS)
    if fmt.startswith("pem-"):
        return tuple(carriers)
    if fmt in TOKEN_FORMATS:
        carriers += ["property-name", *IRI_CARRIERS]
        if fmt != "slack-webhook":
            sample = TOKEN_FORMATS[fmt](random.Random(0))
            if all(c in ID_CHARS for c in sample):
                carriers.append("entity-id")
        return tuple(carriers)
    probe = _written(fmt, random.Random(0), "mixed")
    if probe.name:
        carriers.append("property-name")
    if probe.iri:
        carriers += IRI_CARRIERS
    return tuple(carriers)


def fullwidth(text: str) -> str:
    """``text`` in fullwidth forms: the same text under NFKC (U+FF01..U+FF5E, U+3000)."""
    return "".join(
        chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" if c == " " else c for c in text
    )


_SENTENCES = (
    "deploy with {} tonight",
    "the staging job only passed after I pasted {} into the settings",
    "use {} for the nightly export",
    "rotated today; the old one was {} (do not reuse)",
    "Kunde meldet Fehler, Zugang war {} laut Ticket",
    "note to self: {} works for the sandbox",
    "curl call in the runbook still has {} in it",
    "new value: {}",
)
_JSON_KEYS = ("value", "data", "config", "note", "env", "header")
_LINES = (
    ("Steps to reproduce:", "Then run the import again."),
    ("# staging", "# end"),
    ("Hi team,", "Thanks, Ann"),
    ("[default]", "region = eu-west-1"),
)


def _carry(
    rng: random.Random,
    fmt: str,
    carrier: str,
    core: str,
    split: int,
    name: tuple[str, str] | None,
    iri: str | None,
    secret: str,
    variant: str,
) -> Item:
    """One fake: ``core`` (the credential as written) in ``carrier``."""

    def item(text: str, value: str = "") -> Item:
        return Item("fake", fmt, carrier, text, value, secret, variant)

    if carrier == "value":
        return item(core)
    if carrier == "sentence":
        return item(rng.choice(_SENTENCES).format(core))
    if carrier == "json":
        step = {"step": rng.randint(1, 9), rng.choice(_JSON_KEYS): core}
        return item(json.dumps(step, ensure_ascii=False))
    if carrier == "multiline":
        first, last = rng.choice(_LINES)
        return item(f"{first}\n{core}\n{last}")
    if carrier in INVISIBLE:
        return item(core[:split] + INVISIBLE[carrier] + core[split:])
    if carrier == "fullwidth":
        return item(fullwidth(core))
    if carrier == "property-name":
        assert name is not None
        return item(name[0], name[1])
    if carrier == "object-iri":
        assert iri is not None
        return item(iri)
    if carrier == "subject-iri":
        assert iri is not None
        return item(iri)
    if carrier == "entity-id":
        return item(core)
    raise KeyError(carrier)


def fakes(rng: random.Random, per_cell: int = 3) -> list[Item]:
    """``per_cell`` fakes of every format in every carrier it travels in; for a secret
    written as text, ``per_cell`` of each password style."""
    out: list[Item] = []
    for fmt in FORMATS:
        for carrier in applicable(fmt):
            if fmt in TOKEN_FORMATS:
                for _ in range(per_cell):
                    core = TOKEN_FORMATS[fmt](rng)
                    iri = core if fmt == "slack-webhook" else f"https://ex.org/{core}"
                    split = len(core) // 2
                    if fmt.startswith("pem-"):
                        split = core.index("PRIVATE") + 3
                    name = (core, "1")
                    out.append(_carry(rng, fmt, carrier, core, split, name, iri, core, ""))
            else:
                for style in PASSWORD_STYLES:
                    for _ in range(per_cell):
                        w = _written(fmt, rng, style)
                        args = (w.text, w.split, w.name, w.iri, w.secret, style)
                        out.append(_carry(rng, fmt, carrier, *args))
    return out


# -- ordinary text ----------------------------------------------------------------------------
#: Words that hold sk, key, token, secret, pass, auth, pat or pin and are no secret at all.
TRAP_WORDS = (
    "risk-assessment", "mask-card-numbers", "task-force", "disk-usage", "whiskey", "keyboard",
    "monkey-patch", "tokenizer", "passenger", "compass", "bypass-cache", "secretary",
    "authorship", "pattern", "pinned", "spinach", "skeleton", "skill-matrix", "basket",
    "keynote", "turnkey", "hockey", "donkey", "passport", "token-bucket", "secret-santa",
    "authentication-page", "oauth-callback", "path-finder", "pastry", "trespass", "asking",
    "desk-booking", "kiosk-mode", "sketchpad", "skyline", "skip-list", "dusk-theme", "flask-app",
    "whisk", "keystone", "keychain-sync", "passive-mode", "passthrough", "authority",
    "author-bio", "patio", "patron", "patent-filing", "dispatch", "spinner", "pinpoint",
    "opinion-poll", "pineapple", "pinch-zoom", "tokenomics", "token-count", "secretive",
    "secretariat", "password-reset-flow", "api-key-rotation-docs", "key-value-store",
    "sort-key", "primary-key", "public-key-fingerprint", "passkey-support", "skunkworks",
    "task_test_suite_runner", "desk_live_support_rotation", "ask-the-platform-team",
    "brisket", "musk-ox", "asterisk", "obelisk", "husky", "frisky", "tsk-tsk",
)  # fmt: skip
VERBS = (
    "fix", "add", "remove", "refactor", "document", "migrate", "rename", "test", "speed-up",
    "review", "deprecate", "split", "merge", "cache", "log", "retry", "validate", "index",
    "backfill", "monitor", "profile", "upgrade", "pin", "mask", "rotate", "audit", "bypass",
    "tokenize", "sketch", "draft",
)  # fmt: skip
OBJECTS = (
    "login-form", "search-index", "invoice-export", "user-settings", "billing-page",
    "release-notes", "ci-pipeline", "deploy-script", "error-banner", "audit-log",
    "rate-limiter", "session-store", "csv-import", "email-templates", "dark-mode",
    "onboarding-flow", "pdf-renderer", "cron-jobs", "feature-flags", "graph-view",
    "query-planner", "thumbnail-cache", "webhook-retries", "metrics-dashboard", "access-log",
    "schema-migration", "health-check", "sitemap", "tooltips", "date-picker", *TRAP_WORDS,
)  # fmt: skip
QUALIFIERS = (
    "", "for-payments-team", "on-db-primary", "in-staging", "before-launch", "for-mobile",
    "v2", "phase-1", "q3", "2026", "in-eu-region", "for-safari", "behind-flag", "follow-up",
    "hotfix", "spike", "take-two", "for-api-v3", "nightly", "on-arm64",
)  # fmt: skip
THINGS = (
    "test", "query", "login", "import", "export", "report", "build", "upload", "job", "sync",
    "webhook", "migration", "cache", "parser", "tokenizer", "keyboard shortcut", "passport scan",
    "spinner", "pattern matcher", "task force sync", "disk usage alert", "compass widget",
    "secretary's calendar", "authorship check", "pinned tab", "passenger list",
)  # fmt: skip
AREAS = (
    "the billing service", "the admin panel", "CI", "the mobile app", "search", "onboarding",
    "the data warehouse", "the docs site", "the API gateway", "the scheduler", "checkout",
    "the graph view", "the auth service", "the key-value store", "the token bucket",
)  # fmt: skip
TITLE_TEMPLATES = (
    "Fix flaky {thing} in {area}",
    "Investigate slow {thing} on {area}",
    "Add retries to the {thing} in {area}",
    "Write docs for the {thing} ({area})",
    "Remove dead code around the {thing}",
    "Ship the new {thing} to {area}",
    "Why does the {thing} time out in {area}?",
    "Pair with Ana on the {thing}",
    "Backlog: {thing} for {area}",
    "[{area}] {thing} regression after 2.3",
)
PEOPLE = ("Ana", "Bo", "Chen", "Dara", "Eli", "Femi", "Gus", "Hana", "Ivo", "Juno", "Kai", "Lea")
PROSE_TEMPLATES = (
    "{who} thinks the {thing} in {area} should wait until after the release.",
    "We agreed to move the {thing} out of {area} next sprint.",
    "The {thing} failed twice last night, both times in {area}.",
    "{who} will pair with {who2} on the {thing} tomorrow morning.",
    "Remember to rotate the API key monthly; the runbook for {area} says how.",
    "Password reset flow for {area} needs a second review from {who}.",
    "The token bucket in {area} refills every {n} seconds.",
    "{who} asked whether the {thing} can reuse the keyboard shortcuts.",
    "Ticket {n}: the {thing} shows the wrong total in {area}.",
    "Nobody should paste secrets into tickets; {who} will remind {area}.",
    "Store a secret_ref to the vault path instead of the credential itself.",
    "The secretary of the board signs off on {area} by {day}.",
    "Passengers on the {n} o'clock shuttle asked about the compass app.",
    "Our tokenizer splits {thing} names on dashes and underscores.",
)
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "next week", "end of month")
COMMIT_TYPES = ("fix", "feat", "chore", "docs", "refactor", "test", "perf", "ci", "build")
SCOPES = (
    "auth", "billing", "search", "cli", "api", "ui", "store", "deps", "tokenizer", "keys",
    "secrets", "passwords", "session", "import",
)  # fmt: skip
COMMIT_MESSAGES = (
    "handle expired tokens in the refresh flow",
    "do not log the password field",
    "redact secrets in error messages",
    "bump {dep} to {ver}",
    "rename {ident} to {ident2}",
    "add a test for the {thing}",
    "make the {thing} idempotent",
    "drop support for python 3.9",
    "read the API key from the environment, never from the repo",
    "use secret_ref instead of storing credentials",
    "speed up the {thing} by {n}%",
    "fix typo in the {thing} docs",
)
DEPS = ("requests", "pydantic", "ruff", "httpx", "rich", "click", "numpy", "react", "vite")
IDENT_PARTS = (
    "token", "count", "sort", "key", "user", "id", "name", "author", "pattern", "pinned", "at",
    "pass", "through", "secret", "ref", "keyboard", "layout", "tokenizer", "config",
    "passenger", "list", "monkey", "patch", "enabled", "max", "retries", "cache", "bypass",
    "compass", "heading", "primary", "index", "path", "total", "page", "size", "spinach",
    "weight", "risk", "score", "task", "force", "disk", "usage",
)  # fmt: skip
#: Identifier words never written alone as a property named like a secret (the rule refuses a
#: property named "token", "secret" or "key" by design: those are no ordinary names).
_SECRET_NAMES = {"token", "secret", "key", "pass", "passkey", "secretkey", "tokens", "keys"}
#: The words a property's name ends in when it names a secret (README: "no entity carries a
#: property named like a secret (password, secret, token, key, …)"): an identifier ending in
#: one is no ordinary property name, though it is ordinary text.
_SECRET_LAST_WORDS = ("token", "secret", "pass", "key")


def _names_a_secret(ident: str) -> bool:
    last = ident.replace("-", "_").split("_")[-1].lower()
    camel = "".join(c if c.islower() else " " + c.lower() for c in ident).split()
    return last in _SECRET_LAST_WORDS or (bool(camel) and camel[-1] in _SECRET_LAST_WORDS)


HOSTS = ("example.com", "docs.example.org", "api.example.net", "github.com", "intranet.local")
URL_PATHS = (
    "docs/getting-started", "pulls", "issues/{n}", "settings/tokens", "docs/api-keys",
    "search", "users/{who}/repos", "blog/2026/03/password-managers", "v2/tasks/{n}",
    "tokenizer/demo", "keyboard-shortcuts", "auth/callback",
)  # fmt: skip
QUERY_PARTS = (
    "page=2", "sort=asc", "q=risk+assessment", "tab=personal", "lang=de", "per_page=50",
    "ref=main", "utm_source=newsletter", "filter=open", "view=board", "token_type=bearer",
)  # fmt: skip
PATH_DIRS = ("src", "tests", "docs", "var/log", "etc/nginx", "home/ana/projects", "opt/app")
PATH_FILES = (
    "token_store.py", "keyboard.ts", "passenger_manifest.csv", "auth_middleware.go",
    "secrets.example.env", "README.md", "pattern_matcher.rs", "pinned.json", "app.log",
    "tokenizer_config.json", "risk_model.ipynb", "compass.svg",
)  # fmt: skip
LOG_LEVELS = ("INFO", "WARN", "DEBUG", "ERROR")
LOG_MESSAGES = (
    "processed {n} jobs in {f}s",
    "token bucket refilled (capacity={n})",
    "cache miss for key user:{n}:profile",
    "retrying request {n}/5 after 503",
    "login succeeded for user_id={n}",
    "password reset email queued for user_id={n}",
    "rotated signing keys (kid={hex8})",
    "worker[{n}] heartbeat",
    "GET /api/v1/tasks?page={n} 200 {f}ms",
    "auth: session expired, redirecting to /login",
)
GERMAN = (
    "Bitte das Passwort nicht im Ticket speichern, sondern im Tresor.",
    "Der Zugangsschlüssel wird monatlich gewechselt.",
    "Fehlerbericht: Die Suche ist nach dem Update langsam.",
    "Besprechung mit dem Risikoteam am Donnerstag.",
    "Straße, Größe und Übergröße werden korrekt sortiert.",
)
FRENCH = (
    "Ne jamais coller le mot de passe dans la conversation.",
    "La clé d'API est stockée dans le coffre-fort.",
    "Réunion de l'équipe produit à 14 h, salle Éole.",
    "Le déploiement est prévu pour vendredi soir.",
)
CJK = (
    "パスワード：金庫を参照してください。",
    "デプロイは金曜日の夜に予定しています。",
    "トークンの有効期限が切れました（再ログインが必要です）。",
    "密码：请在保险库中查看。",
    "下周一上线新的搜索功能！",
    "令牌已过期，请重新登录。",
    "비밀번호 재설정 절차를 검토해 주세요.",
    "배포는 금요일 저녁에 진행합니다.",
    "キーボードショートカット一覧（更新版）",
)
PLACEHOLDER_KEYS = (
    "password", "Password", "PASSWORD", "token", "api_key", "API_KEY", "secret",
    "client_secret", "access_token", "db_password", "passphrase",
)  # fmt: skip
PLACEHOLDERS = (
    "<redacted>", "${API_KEY}", "*****", "{{ vault.secret }}", "see the vault", "<your token>",
    "${{ secrets.DB_PASSWORD }}", "$DB_PASSWORD", "********", "<secret>", "{{ .Values.password }}",
    "", "ask ops", "stored in the vault", "$(cat /run/secrets/db)", "<set me>",
    # what people write instead of a secret, capitalised or as a reference
    "See the vault", "Ask Ops", "TBD", "N/A", "REDACTED", "[REDACTED]", "<REDACTED>", "(none)",
    "In 1Password", "env:DB_PASSWORD", "vault:secret/data/db#password", "%DB_PASSWORD%",
    "from AWS Secrets Manager", "see SECRETS.md", "Not set", "Bearer <token>",
)  # fmt: skip
SECRET_TALK = (
    "rotate the API key monthly",
    "the password is in the team vault under billing/prod",
    "never commit tokens; use the secret_ref property instead",
    "How do we rotate the Stripe secret key without downtime?",
    "AWS access key ids start with AKIA and are 20 characters long",
    "GitHub tokens start with ghp_ and Stripe keys with sk_live_",
    "JWTs have three dot-separated parts, the first one starting with eyJ",
    "a PEM private key starts with a BEGIN line",
    "keys are rotated by the platform team every 90 days",
    "reset your password from the account page",
    "the passphrase lives in 1Password, ask Ana for access",
    "token expiry is 15 minutes; refresh tokens last 30 days",
)
MARKDOWN = (
    "## Setup\n\n- install `uv`\n- run `make test`",
    "| key | value |\n| --- | --- |\n| region | eu-west-1 |\n| tier | {n} |",
    "See [the docs](https://docs.example.org/{n}) for details.",
    '```bash\nexport API_KEY="$(vault read -field=key secret/app)"\n```',
    "> **Note**: the secret is read from the environment at start-up.",
    "1. open the **Settings** page\n2. click *Tokens*\n3. revoke the old one",
    "- [x] rotate keys\n- [ ] update the runbook ({n})",
    "### Password policy\n\nAt least 12 characters, checked by zxcvbn.",
)


def _pick(rng: random.Random, options: tuple[str, ...]) -> str:
    return rng.choice(options)


def _slug(rng: random.Random) -> str:
    parts = [_pick(rng, VERBS), _pick(rng, OBJECTS), _pick(rng, QUALIFIERS)]
    return "-".join(p for p in parts if p)


def _title(rng: random.Random) -> str:
    return _pick(rng, TITLE_TEMPLATES).format(thing=_pick(rng, THINGS), area=_pick(rng, AREAS))


def _prose(rng: random.Random) -> str:
    who, who2 = rng.sample(PEOPLE, 2)
    return _pick(rng, PROSE_TEMPLATES).format(
        who=who,
        who2=who2,
        thing=_pick(rng, THINGS),
        area=_pick(rng, AREAS),
        n=rng.randint(2, 999),
        day=_pick(rng, DAYS),
    )


def _ident(rng: random.Random, style: str | None = None) -> str:
    while True:
        parts = rng.sample(IDENT_PARTS, rng.randint(2, 4))
        if "".join(parts) not in _SECRET_NAMES:
            break
    style = style or rng.choice(["snake", "camel", "pascal", "kebab", "screaming"])
    if style == "snake":
        return "_".join(parts)
    if style == "kebab":
        return "-".join(parts)
    if style == "screaming":
        return "_".join(parts).upper()
    camel = parts[0] + "".join(p.capitalize() for p in parts[1:])
    return camel if style == "camel" else camel[0].upper() + camel[1:]


def _commit(rng: random.Random) -> str:
    message = _pick(rng, COMMIT_MESSAGES).format(
        dep=_pick(rng, DEPS),
        ver=f"{rng.randint(0, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 9)}",
        ident=_ident(rng, "snake"),
        ident2=_ident(rng, "snake"),
        thing=_pick(rng, THINGS),
        n=rng.randint(5, 80),
    )
    head = f"{_pick(rng, COMMIT_TYPES)}({_pick(rng, SCOPES)}): {message}"
    if rng.random() < 0.3:
        head += f"\n\nCloses #{rng.randint(1, 4000)}."
    return head


def _hash(rng: random.Random) -> str:
    kind = rng.randint(0, 6)
    if kind == 0:
        return _r(rng, HEX, 40)  # a git SHA
    if kind == 1:
        return _r(rng, HEX, rng.randint(7, 12))  # a short SHA
    if kind == 2:
        return "sha256:" + _r(rng, HEX, 64)  # an image digest
    if kind == 3:
        return _r(rng, HEX, 32)  # an MD5
    if kind == 4:
        digest = bytes(rng.getrandbits(8) for _ in range(48))
        return "sha384-" + base64.b64encode(digest).decode("ascii")  # subresource integrity
    if kind == 5:
        return f"commit {_r(rng, HEX, 40)}"
    return f"{_r(rng, HEX, 64)}  dist/app-{rng.randint(1, 9)}.{rng.randint(0, 20)}.tar.gz"


def _uuid(rng: random.Random) -> str:
    value = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    return value.upper() if rng.random() < 0.2 else value


def _url(rng: random.Random) -> str:
    path = _pick(rng, URL_PATHS).format(n=rng.randint(1, 9999), who=_pick(rng, PEOPLE).lower())
    url = f"https://{_pick(rng, HOSTS)}/{path}"
    if rng.random() < 0.7:
        url += "?" + "&".join(rng.sample(QUERY_PARTS, rng.randint(1, 3)))
    if rng.random() < 0.2:
        url += "#" + _pick(rng, ("top", "install", "faq", "L42"))
    return url


def _path(rng: random.Random) -> str:
    if rng.random() < 0.15:
        return f"C:\\Users\\{_pick(rng, PEOPLE)}\\Documents\\{_pick(rng, PATH_FILES)}"
    extra = "/".join(rng.sample(("api", "core", "v2", "internal", "legacy", "utils"), 2))
    lead = rng.choice(["/", "./", "~/", ""])
    return f"{lead}{_pick(rng, PATH_DIRS)}/{extra}/{_pick(rng, PATH_FILES)}"


def _version(rng: random.Random) -> str:
    major, minor, patch = rng.randint(0, 20), rng.randint(0, 60), rng.randint(0, 30)
    kind = rng.randint(0, 5)
    if kind == 0:
        return f"v{major}.{minor}.{patch}"
    if kind == 1:
        return f"{major}.{minor}.{patch}-rc.{rng.randint(1, 5)}"
    if kind == 2:
        return f"{major}.{minor}.{patch}+build.{rng.randint(1, 999)}"
    if kind == 3:
        return f"{_pick(rng, DEPS)}=={major}.{minor}.{patch}"
    if kind == 4:
        return f"python {rng.choice([3])}.{rng.randint(8, 14)}.{patch}"
    return f"{major}.{minor}"


def _date(rng: random.Random) -> str:
    y, m, d = rng.randint(2000, 2030), rng.randint(1, 12), rng.randint(1, 28)
    h, mi, s = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
    kind = rng.randint(0, 3)
    if kind == 0:
        return f"{y:04}-{m:02}-{d:02}"
    if kind == 1:
        return f"{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z"
    if kind == 2:
        return f"{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}+{rng.randint(0, 12):02}:00"
    return f"{y:04}-W{rng.randint(1, 52):02}"


def _log(rng: random.Random) -> str:
    when = f"2026-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}T{rng.randint(0, 23):02}:"
    when += f"{rng.randint(0, 59):02}:{rng.randint(0, 59):02}.{rng.randint(0, 999):03}Z"
    message = _pick(rng, LOG_MESSAGES).format(
        n=rng.randint(1, 9999), f=round(rng.uniform(0.1, 99), 2), hex8=_r(rng, HEX, 8)
    )
    return f"{when} {_pick(rng, LOG_LEVELS)} {_pick(rng, ('api', 'worker', 'cron', 'auth'))}: {message}"


def _placeholder(rng: random.Random) -> str:
    key, value = _pick(rng, PLACEHOLDER_KEYS), _pick(rng, PLACEHOLDERS)
    sep = rng.choice([": ", "=", " = ", ":"])
    if rng.random() < 0.25:
        return json.dumps({key: value})
    return f"{key}{sep}{value}".rstrip()


def _talk(rng: random.Random) -> str:
    text = _pick(rng, SECRET_TALK)
    return text if rng.random() < 0.5 else f"{_pick(rng, PEOPLE)}: {text}"


def _foreign(rng: random.Random) -> str:
    pool = rng.choice([GERMAN, FRENCH, CJK])
    text = _pick(rng, pool)
    if rng.random() < 0.5:
        text = f"{text} ({_pick(rng, PEOPLE)}, #{rng.randint(1, 999)})"
    return text


def _cloud_id(rng: random.Random) -> str:
    """Identifiers that providers print and that are no secret: ARNs, Stripe and Slack object
    ids, image references, pod names."""
    kind = rng.randint(0, 7)
    if kind == 0:
        account = _r(rng, DIGITS, 12)
        return f"arn:aws:iam::{account}:role/{_pick(rng, ('ci-deploy', 'reader', 'app-task'))}"
    if kind == 1:
        return f"arn:aws:s3:::{_pick(rng, ('acme', 'billing', 'logs'))}-{rng.randint(2020, 2030)}"
    if kind == 2:
        prefix, n = rng.choice([("cus_", 14), ("pi_", 24), ("price_", 24), ("evt_", 24)])
        return prefix + _r(rng, ALNUM, n)  # Stripe object ids (public)
    if kind == 3:
        return rng.choice("CUGD") + _r(rng, UPPER + DIGITS, rng.randint(8, 10))  # Slack ids
    if kind == 4:
        image = _pick(rng, ("api", "worker", "web", "cron"))
        return f"ghcr.io/acme/{image}:{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"
    if kind == 5:
        return f"registry.example.com/team/app@sha256:{_r(rng, HEX, 64)}"
    if kind == 6:
        return (
            f"{_pick(rng, ('api', 'worker', 'web'))}-{_r(rng, HEX, 9)}-{_r(rng, LOWER + DIGITS, 5)}"
        )
    return f"projects/{_pick(rng, ('acme-prod', 'acme-dev'))}/locations/europe-west1/jobs/{_r(rng, DIGITS, 8)}"


def _data_uri(rng: random.Random) -> str:
    data = bytes(rng.getrandbits(8) for _ in range(rng.randint(30, 90)))
    mime = _pick(rng, ("image/png", "image/gif", "font/woff2", "application/octet-stream"))
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _markdown(rng: random.Random) -> str:
    return _pick(rng, MARKDOWN).format(n=rng.randint(1, 9999))


#: Each ordinary category → (a maker of one item, how many distinct items to make).
ORDINARY: dict[str, tuple[Callable[[random.Random], str], int]] = {
    "slug": (_slug, 2400),
    "task-title": (_title, 1200),
    "prose": (_prose, 1500),
    "commit": (_commit, 1000),
    "identifier": (_ident, 1200),
    "hash": (_hash, 700),
    "uuid": (_uuid, 300),
    "url": (_url, 900),
    "path": (_path, 600),
    "version": (_version, 400),
    "date": (_date, 300),
    "log": (_log, 700),
    "placeholder": (_placeholder, 300),
    "cloud-id": (_cloud_id, 500),
    "data-uri": (_data_uri, 150),
    "secret-talk": (_talk, 24),
    "non-english": (_foreign, 150),
    "markdown": (_markdown, 300),
    "trap-word": (lambda r: _pick(r, TRAP_WORDS), len(TRAP_WORDS)),
}
#: How many identifiers and slugs are tried as property names and as ids as well.
ORDINARY_NAMES = 600
ORDINARY_IDS = 600


def _distinct(rng: random.Random, make: Callable[[random.Random], str], n: int) -> Iterator[str]:
    seen: dict[str, None] = {}
    tries = 0
    while len(seen) < n and tries < n * 50:
        tries += 1
        text = make(rng)
        if text not in seen:
            seen[text] = None
            yield text


def ordinary(rng: random.Random) -> list[Item]:
    out: list[Item] = []
    seen: dict[str, None] = {}
    for category, (make, n) in ORDINARY.items():
        for text in _distinct(rng, make, n):
            if text not in seen:
                seen[text] = None
                out.append(Item("ordinary", category, "value", text))
    idents = [
        i.text
        for i in out
        if i.format == "identifier"
        and i.text[0].isalpha()
        and len(i.text) <= 64
        and not _names_a_secret(i.text)
    ]
    for text in idents[:ORDINARY_NAMES]:
        out.append(Item("ordinary", "identifier", "property-name", text, "1"))
    slugs = [i.text for i in out if i.format in ("slug", "trap-word")]
    for text in rng.sample(slugs, min(ORDINARY_IDS, len(slugs))):
        out.append(Item("ordinary", "slug", "entity-id", text))
    return out


def corpus(seed: int = DEFAULT_SEED, per_cell: int = 3) -> Corpus:
    """The whole corpus: the same ``seed`` gives the same items in the same order."""
    rng = random.Random(seed)
    return Corpus(seed, ordinary(rng), fakes(rng, per_cell))


def sample(items: list[Item], n: int, seed: int) -> list[Item]:
    """``n`` of ``items``, spread over their (format, carrier) cells, in a seeded order."""
    rng = random.Random(seed)
    cells: dict[tuple[str, str], list[Item]] = {}
    for item in items:
        cells.setdefault((item.format, item.carrier), []).append(item)
    for members in cells.values():
        rng.shuffle(members)
    order = list(cells.values())
    rng.shuffle(order)
    out: list[Item] = []
    depth = 0
    while len(out) < n and any(len(m) > depth for m in order):
        for members in order:
            if len(members) > depth and len(out) < n:
                out.append(members[depth])
        depth += 1
    return out


def one_per_cell(items: list[Item]) -> list[Item]:
    """The first item of every (format, carrier) cell."""
    seen: dict[tuple[str, str], Item] = {}
    for item in items:
        seen.setdefault((item.format, item.carrier), item)
    return list(seen.values())


if __name__ == "__main__":
    c = corpus()
    cats: dict[str, int] = {}
    for i in c.ordinary:
        cats[f"{i.format}/{i.carrier}"] = cats.get(f"{i.format}/{i.carrier}", 0) + 1
    print(f"seed {c.seed}: {len(c.ordinary)} ordinary, {len(c.fakes)} fakes")
    for k, v in cats.items():
        print(f"  {k}: {v}")
