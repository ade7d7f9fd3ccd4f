"""Text that is a secret: the one rule ``ol:NoSecrets`` (shapes/core.ttl) applies to stored
terms, the judge that stands in for its queries on the write path, and what every other door
uses — ids given by a caller, what the egress gate lets leave the machine, and the redaction
every message passes before it is printed.

The rule is written once, here, as tables: the token formats of the major providers (anchored
on gitleaks' rules: a distinctive prefix, the body's alphabet and length, a token boundary
where the prefix is short), secrets written as text (``password: …``, JSON, env files, a
value on the next line), credentials in a URL and Authorization headers. The two SPARQL
queries of ``ol:NoSecrets`` are generated from the same tables (:func:`no_secrets_selects`;
tests/test_secrets.py holds shapes/core.ttl to them), and the Python judges follow those
queries step by step, so the SHACL rule and the judge are one rule.

Text is judged normalised: characters that draw nothing (zero-width spaces and joiners, bidi
controls, soft hyphens, variation selectors) are removed, and compatibility forms whose NFKC
form is one ASCII letter, digit or token punctuation are folded to it (fullwidth ``ＡＫＩＡ``,
mathematical ``𝐀𝐊𝐈𝐀``, the long s, the Kelvin sign). NFKC forms of several characters
(``ﬁ`` → ``fi``) are not folded: no token format is written with them.
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata
from collections.abc import Iterator

from ontoloom.terms import Literal, NamedNode, Term

__all__ = [
    "NO_SECRETS_JUDGES",
    "TOKEN_KINDS",
    "holds_secret",
    "holds_token",
    "no_secrets_selects",
    "normalised",
    "redact",
    "redaction",
    "secret_property",
    "secret_value",
]

# -- normalisation ----------------------------------------------------------------------------

#: Characters that draw nothing, removed before judging: a token split by them is a token.
FORMAT_CHARACTERS = (
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)
_FORMAT = re.compile(FORMAT_CHARACTERS)
#: The characters a compatibility form is folded to: printable ASCII (fullwidth quotes and
#: braces around a fullwidth password are quotes and braces).
FOLD_TARGETS = string.ascii_letters + string.digits + string.punctuation + " "


@functools.cache
def _folded(char: str) -> str:
    form = unicodedata.normalize("NFKC", char)
    return form if len(form) == 1 and form in FOLD_TARGETS else char


class _Folds(dict[int, str]):
    """A ``str.translate`` table filled as characters are met (all of Unicode at once would
    cost a quarter of a second to build)."""

    def __missing__(self, point: int) -> str:
        self[point] = folded = _folded(chr(point))
        return folded


_FOLDS = _Folds()


def normalised(text: str) -> str:
    """``text`` as the rule reads it: format characters removed, compatibility forms folded.

    >>> normalised("AKIA\\u200bIOSF"), normalised("\\uff21\\uff2b\\uff29\\uff21"), normalised("pa\\u017f\\u017f")
    ('AKIAIOSF', 'AKIA', 'pass')
    """
    if text.isascii():
        return text
    return _FORMAT.sub("", text).translate(_FOLDS)


def _fold_table() -> dict[str, list[int]]:
    """Every code point outside ASCII whose fold is an ASCII character, by that character."""
    table: dict[str, list[int]] = {t: [] for t in FOLD_TARGETS}
    for point in range(0x80, 0x110000):
        char = chr(point)
        if (form := _folded(char)) != char:
            table[form].append(point)
    return {t: points for t, points in table.items() if points}


# -- the token formats ------------------------------------------------------------------------

#: Before a format with a short or word-like prefix: the start, or a character no token holds.
_START = "(^|[^A-Za-z0-9_])"
_START_DASH = "(^|[^A-Za-z0-9_-])"
#: After a fixed-length body: the end, or a character no token holds.
_END = "([^A-Za-z0-9_]|$)"

_GITLAB_KINDS = ("pat", "dt", "ft", "rt", "ptt", "soat", "cbt", "imt", "agent", "oas", "ffct")

#: (what it is, the words one must contain, its pattern): precise enough to refuse on sight,
#: wherever they appear. Patterns use what Oxigraph's and Python's regex engines read alike:
#: no look-around, no \b, no inline flags; a sieve word is a substring of every match.
TOKEN_KINDS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "an AWS access key",
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        "(A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}",
    ),
    ("an Amazon Bedrock API key", ("ABSK",), "ABSK[A-Za-z0-9+/]{109,}"),
    (
        "a GitHub token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        "(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,}",
    ),
    (
        "a GitLab token",
        tuple(f"gl{kind}-" for kind in _GITLAB_KINDS),
        "gl(pat|dt|ft|rt|ptt|soat|cbt|imt|agent|oas|ffct)-[0-9A-Za-z_-]{20,}",
    ),
    (
        "a Slack token",
        ("xox", "xapp-"),
        "xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,}",
    ),
    (
        "a Slack webhook URL",
        ("hooks.slack.com",),
        "hooks[.]slack[.]com/(services|workflows|triggers)/[A-Za-z0-9+/]{20,}",
    ),
    (
        "a Stripe secret key",
        ("_live_", "_test_", "_prod_"),
        _START + "(sk|rk)_(live|test|prod)_[A-Za-z0-9]{10,}",
    ),
    ("an API secret key", ("sk-",), _START_DASH + "sk-(ant-|proj-)?[A-Za-z0-9_-]{20,}"),
    ("a Google API key", ("AIza",), "AIza[0-9A-Za-z_-]{35}"),
    ("an npm access token", ("npm_",), _START + "npm_[A-Za-z0-9]{36}"),
    ("a Hugging Face token", ("hf_", "api_org_"), _START + "(hf|api_org)_[A-Za-z]{34}"),
    ("a PyPI token", ("pypi-AgEIcHlwaS5vcmc",), "pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
    ("a Docker Hub token", ("dckr_pat_",), "dckr_pat_[A-Za-z0-9_-]{27,}"),
    (
        "a JSON Web Token",
        ("eyJ",),
        "eyJ[A-Za-z0-9_-]{5,}[.]eyJ[A-Za-z0-9_-]{5,}[.][A-Za-z0-9_-]{5,}",
    ),
    ("a private key", ("PRIVATE KEY",), "-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----"),
    (
        "an age secret key",
        ("AGE-SECRET-KEY-1",),
        "AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    ),
    ("a DigitalOcean token", ("_v1_",), "do[opr]_v1_[a-f0-9]{64}"),
    (
        "a Shopify token",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        "shp(at|ca|pa|ss)_[a-fA-F0-9]{32}",
    ),
    ("a SendGrid API key", ("SG.",), _START + "SG[.][A-Za-z0-9_-]{16,}[.][A-Za-z0-9_-]{16,}"),
    ("a Twilio API key", ("SK",), _START + "SK[0-9a-fA-F]{32}" + _END),
    ("a Databricks token", ("dapi",), _START + "dapi[a-f0-9]{32}"),
    ("a Linear API key", ("lin_api_",), "lin_api_[A-Za-z0-9]{40}"),
    ("a Postman API key", ("PMAK-",), "PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),
    (
        "a Grafana token",
        ("glc_", "glsa_", "eyJrIjoi"),
        _START
        + "(glc_[A-Za-z0-9+/]{32,}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|eyJrIjoi[A-Za-z0-9]{70,})",
    ),
    ("a Sentry token", ("sntryu_", "sntrys_"), "sntry[us]_[A-Za-z0-9+/=]{40,}"),
    ("a Doppler token", ("dp.",), "dp[.](pt|st|sa|ct|scim|audit)[.][A-Za-z0-9]{40,}"),
    ("a HashiCorp Vault token", ("hvs.", "hvb."), _START + "hv[sb][.][A-Za-z0-9_-]{90,}"),
    ("an Atlassian API token", ("ATATT3",), "ATATT3[A-Za-z0-9_=-]{100,}"),
    ("a Notion token", ("ntn_",), _START + "ntn_[0-9]{11}[A-Za-z0-9]{35}"),
    ("a Perplexity API key", ("pplx-",), _START + "pplx-[A-Za-z0-9]{48}"),
    ("a Groq API key", ("gsk_",), _START + "gsk_[A-Za-z0-9]{52}"),
    ("an xAI API key", ("xai-",), _START + "xai-[A-Za-z0-9]{80}"),
    ("a Replicate token", ("r8_",), _START + "r8_[A-Za-z0-9]{37}"),
    ("a Heroku API key", ("HRKU-AA",), "HRKU-AA[0-9A-Za-z_-]{58}"),
    ("a Square token", ("sq0atp-", "sq0csp-"), "sq0(atp|csp)-[0-9A-Za-z_-]{22,}"),
    ("an Azure storage key", ("AccountKey=",), "AccountKey=[A-Za-z0-9+/]{86}=="),
    ("a Telegram bot token", (":AA",), _START + "[0-9]{8,10}:AA[0-9A-Za-z_-]{33}"),
    ("a Mailgun API key", ("key-",), _START + "key-[0-9a-f]{32}" + _END),
    ("an Alibaba Cloud access key", ("LTAI",), _START + "LTAI[A-Za-z0-9]{20}" + _END),
    ("an Artifactory API key", ("AKCp",), "AKCp[A-Za-z0-9]{69}"),
    ("a 1Password service-account token", ("ops_eyJ",), "ops_eyJ[A-Za-z0-9+/]{100,}"),
    ("a Fly.io token", ("fo1_",), _START + "fo1_[A-Za-z0-9_-]{43}"),
    ("a RubyGems API key", ("rubygems_",), "rubygems_[a-f0-9]{48}"),
    ("a PlanetScale token", ("pscale_",), "pscale_(tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,}"),
    ("a Pulumi token", ("pul-",), _START + "pul-[a-f0-9]{40}"),
    ("a Prefect API key", ("pnu_",), _START + "pnu_[A-Za-z0-9]{36}"),
    ("a Sourcegraph token", ("sgp_",), _START + "sgp_([a-fA-F0-9]{16}_)?[a-fA-F0-9]{40}"),
    ("a Brevo API key", ("xkeysib-",), "xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    ("a Dynatrace token", ("dt0c01.",), "dt0c01[.][A-Za-z0-9]{24}[.][A-Za-z0-9]{64}"),
    ("an OpenShift token", ("sha256~",), "sha256~[A-Za-z0-9_-]{43}"),
    ("a Flutterwave key", ("FLWSECK",), "FLWSECK(_TEST)?-[a-hA-H0-9]{12,}"),
)
# Compiled when a sieve word first lets text through (re keeps them): every command line
# imports this module, and most text holds no sieve word.
_TOKENS = TOKEN_KINDS


def _trie(words: set[str]) -> str:
    """A regex matching any of ``words``, factored by their first characters: Python's
    engine tries an alternation's branches one by one at each position, a trie's at once."""
    if "" in words:
        rest = _trie(words - {""}) if len(words) > 1 else ""
        return f"(?:{rest})?" if rest else ""
    heads: dict[str, set[str]] = {}
    for word in words:
        heads.setdefault(word[0], set()).add(word[1:])
    branches = [re.escape(head) + _trie(tails) for head, tails in sorted(heads.items())]
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


#: Any sieve word at all: text without one holds no token (one scan instead of one per kind).
_ANY_SIEVE = re.compile(_trie({w for _, sieve, _ in TOKEN_KINDS for w in sieve}))


def _token_kind(text: str) -> str | None:
    if _ANY_SIEVE.search(text) is None:
        return None
    for kind, sieve, pattern in _TOKENS:
        if any(word in text for word in sieve) and re.search(pattern, text):
            return kind
    return None


# -- secrets written as text ------------------------------------------------------------------


def _anycase(word: str) -> str:
    """``word`` matched in either case, ASCII only: ``[Pp][Aa]…`` (no flag "i", whose folds
    differ between regex engines)."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in word)


#: The names whose value is a secret when written as ``name: value`` (any case, any prefix:
#: db_password, client_secret, AWS_SECRET_ACCESS_KEY).
_WRITTEN_NAMES = (
    *("password", "passwd", "passwort", "passphrase", "pwd", "secret", "token"),
    *("api[ _-]?key", "access[ _-]?key", "secret[ _-]?key", "private[ _-]?key"),
    *("signing[ _-]?key", "encryption[ _-]?key"),
)
#: A name, an optional closing quote, ``:`` ``=`` ``:=`` or ``=>``, the value perhaps on the
#: next line and quoted; the value runs to a space, quote, backslash or bracket. A quote may
#: be escaped and a line break written ``\\n``: JSON inside JSON, a string in a log line.
_QUOTE = "(\\\\?[\"'])?"
_NEXT_LINE = "((\r?\n|(\\\\r)?\\\\n)[ \t]*)?"
_ASSIGN = _QUOTE + "[ \t]*(:=|=>|:|=)[ \t]*" + _NEXT_LINE + _QUOTE
_VALUE = "([^ \t\r\n\"'`,;()<>{}\\[\\]\\\\]+)"
WRITTEN = "(" + "|".join(_anycase(n) for n in _WRITTEN_NAMES) + ")" + _ASSIGN + _VALUE
#: The first and the last value so written (a text rarely names more than two).
WRITTEN_FIRST = "^.*?" + WRITTEN + ".*$"
WRITTEN_LAST = "^.*" + WRITTEN + ".*$"
_WRITTEN_SIEVE = ("pass", "pwd", "secret", "key", "token")

#: A value is a secret when it has a digit, a symbol or a case change inside it, is a long
#: run of lower-case letters (a passphrase), or a shorter run no English word could be (five
#: consonants together, ``q`` without ``u``, ``j`` before a consonant, four vowels, four
#: consonants at an end: about 75% of random 8–11 letter runs, and 0.4% of the 10,000 most
#: frequent English words of that length, e.g. strength); not a placeholder, a count, a reference to where
#: the secret is kept (``vault:…``, ``env:…``, ``op://…``, ``arn:…``) or to code that reads
#: it (``settings.API_KEY``: identifiers, each snake, upper, camel or Pascal case).
PLACEHOLDER = "^([$*%&]|[xX]+$)"
REFERENCE = (
    "^("
    + "|".join(
        _anycase(scheme)
        for scheme in (
            *("env", "vault", "op", "arn", "ssm", "sops", "keychain", "keyring", "secretsmanager"),
            *("aws-secretsmanager", "gcp-secretmanager", "azure-keyvault", "kms", "file", "k8s"),
        )
    )
    + "):"
)
_IDENTIFIER = "([a-z_][a-z0-9_]*|[A-Z_][A-Z0-9_]*|[a-z]+([A-Z][a-z0-9]+)+|([A-Z][a-z0-9]+)+)"
CODE_REFERENCE = "^" + _IDENTIFIER + "([.]" + _IDENTIFIER + ")+$"
COUNT = "^[0-9]{1,5}$"
STRONG = "[0-9!@#$%^&*+=?]|[a-z][A-Z]"
PASSPHRASE = "^[a-z]{12,}$"
_CONSONANT = "[bcdfghjklmnpqrstvwxz]"
LETTERS = "^[a-z]{8,}$"
UNPRONOUNCEABLE = (
    f"{_CONSONANT}{{5}}|q[^u]|q$|j{_CONSONANT}|[aeiou]{{4}}|{_CONSONANT}{{4}}$|^{_CONSONANT}{{4}}"
)

#: A password in a URL's user info (``postgres://admin:pw@host``), not a placeholder.
URL_PASSWORD = "[A-Za-z][A-Za-z0-9+.-]*://[^ \t\r\n/:@]+:[^ \t\r\n/@$<{*%\\[][^ \t\r\n/@]*@"
#: An Authorization header with its credentials.
AUTHORIZATION = (
    _anycase("authorization")
    + _ASSIGN
    + "("
    + "|".join(_anycase(s) for s in ("bearer", "basic", "token", "digest"))
    + ")[ \t]+[A-Za-z0-9._~+/=-]{8,}"
)

#: The group of WRITTEN (and of WRITTEN_FIRST, WRITTEN_LAST) that holds the value.
VALUE_GROUP = re.compile(WRITTEN).groups
_WRITTEN_FIRST = re.compile(WRITTEN_FIRST, re.S)
_WRITTEN_LAST = re.compile(WRITTEN_LAST, re.S)


@functools.cache
def _value_tests() -> list[re.Pattern[str]]:  # compiled when a value is first judged
    return [
        re.compile(p)
        for p in (PLACEHOLDER, REFERENCE, CODE_REFERENCE, COUNT, STRONG, PASSPHRASE, LETTERS)
    ]


_UNPRONOUNCEABLE = re.compile(UNPRONOUNCEABLE)
_URL_PASSWORD = re.compile(URL_PASSWORD)
_AUTHORIZATION = re.compile(AUTHORIZATION)
_WRITTEN_ANYWHERE = re.compile(WRITTEN)


def _is_secret_value(value: str) -> bool:
    placeholder, reference, code, count, strong, passphrase, letters = _value_tests()
    return (
        len(value) >= 3
        and not placeholder.search(value)
        and not reference.search(value)
        and not code.search(value)
        and not count.search(value)
        and (
            strong.search(value) is not None
            or passphrase.search(value) is not None
            or (letters.search(value) is not None and _UNPRONOUNCEABLE.search(value) is not None)
        )
    )


def _written_kind(text: str) -> str | None:
    lower = text.lower()
    if ("=" in text or ":" in text) and any(word in lower for word in _WRITTEN_SIEVE):
        first, last = _WRITTEN_FIRST.match(text), _WRITTEN_LAST.match(text)
        values = [m.group(VALUE_GROUP) for m in (first, last) if m is not None]
        if any(_is_secret_value(v) for v in values):
            return "a secret written as text"
    if "://" in text and "@" in text and _URL_PASSWORD.search(text):
        return "a password in a URL"
    if "authorization" in lower and _AUTHORIZATION.search(text):
        return "an Authorization header"
    return None


# -- the judges of ol:NoSecrets ---------------------------------------------------------------

#: Text in which this finds nothing holds no secret: every token format holds a sieve word,
#: and every secret written as text an ``:`` or ``=`` (WRITTEN and AUTHORIZATION assign
#: with one, URL_PASSWORD has ``://``). One scan of normalised text where the judges make
#: several: most literals (titles, names, statuses) are let go here — a bulk import judges
#: every one. It can only say "no secret"; text it lets through is judged in full.
_MAY_HOLD = re.compile("[:=]|" + _trie({w for _, sieve, _ in TOKEN_KINDS for w in sieve}))


def secret_kind(text: str) -> str | None:
    """What secret ``text`` holds (the first kind found), or None.

    >>> secret_kind("ghp_" + "a" * 36), secret_kind("password: hunter2"), secret_kind("see vault")
    ('a GitHub token', 'a secret written as text', None)
    """
    text = normalised(text)
    if _MAY_HOLD.search(text) is None:
        return None
    return _token_kind(text) or _written_kind(text)


def holds_token(text: str) -> bool:
    """Whether ``text`` holds a token or key in a well-known format (for ids and names,
    where ``token:refresh`` is a name, not a secret written as text).

    >>> holds_token("ghp_" + "a" * 36), holds_token("task_token_refresh")
    (True, False)
    """
    return _token_kind(normalised(text)) is not None


def holds_secret(text: str) -> bool:
    """Whether ``text`` holds a token or key, or a secret written as text."""
    return secret_kind(text) is not None


_NAME_SIEVE = (
    *("pass", "pwd", "otp", "pin", "pat", "dsn", "jwt", "auth", "key", "secret", "token"),
    *("credential", "cookie", "bearer", "connection", "mnemonic", "seed"),
)
NAMESPACE = "^.*[/#:]"
CAMEL = "([a-z0-9])([A-Z])"
SEPARATORS = "[^A-Za-z0-9]+"
SUFFIXES = (
    "(_(pem|der|b64|base64|hex|raw|value|val|str|string|text|data|enc|encoded|plain|plaintext"
    "|current|new|old|tmp|temp|json|yaml|yml|file|[0-9]+)|[0-9]+)+$"
)
KEY_NAME = "^keys?$"
SHORT_NAME = "(^|_)(pass|pwd|otp|totp|pin|pat|dsn|jwt|auth)s?$"
LONG_NAME = (
    "(password|passwort|passwd|passphrase|secret|token|apikey|privatekey|secretkey|accesskey"
    "|sshkey|signingkey|encryptionkey|credential|cookie|bearer|authorization|connectionstring"
    "|mnemonic|seedphrase|otpseed)s?$"
)


@functools.cache
def _name_tests() -> tuple[list[re.Pattern[str]], list[re.Pattern[str]]]:
    """Compiled when a name first passes the sieve."""
    return (
        [re.compile(p) for p in (NAMESPACE, CAMEL, SEPARATORS, SUFFIXES)],
        [re.compile(p) for p in (KEY_NAME, SHORT_NAME, LONG_NAME)],
    )


def _named_like_a_secret(name: str) -> bool:
    if not any(word in name.lower() for word in _NAME_SIEVE):
        return False
    tests, matches = _name_tests()
    namespace, camel, separators, suffixes = tests
    key_name, short_name, long_name = matches
    local = namespace.sub("", name, count=1)
    split = separators.sub("_", camel.sub(r"\1 \2", local)).lower()
    tokens = suffixes.sub("", split)
    joined = tokens.replace("_", "")
    return bool(key_name.search(joined) or short_name.search(tokens) or long_name.search(joined))


def secret_property(path: Term, value: Term) -> dict[str, Term] | None:
    """ol:NoSecrets' first SELECT: a property named like a secret (in any namespace), or
    whose name holds a token.

    >>> from ontoloom.terms import Literal, NamedNode
    >>> secret_property(NamedNode("https://ex.org/ns#apiKey"), Literal("x"))
    {}
    >>> secret_property(NamedNode("https://ex.org/ns#keyboard"), Literal("x")) is None
    True
    """
    if not isinstance(path, NamedNode):
        return None
    return {} if _secret_name(path.value) else None


@functools.lru_cache(maxsize=4096)
def _secret_name(iri: str) -> bool:
    """Whether a property IRI is named like a secret or holds a token: judged once per
    property, where a whole-store validation asks it of every triple."""
    name = normalised(iri)
    return _named_like_a_secret(name) or _token_kind(name) is not None


def secret_value(path: Term, value: Term) -> dict[str, Term] | None:
    """ol:NoSecrets' second SELECT: a literal or IRI that is a secret, ``kind`` naming it.

    >>> from ontoloom.terms import Literal, NamedNode
    >>> secret_value(NamedNode("https://ex.org/p"), Literal("password: hunter2"))["kind"].value
    'a secret written as text'
    """
    if not isinstance(value, (Literal, NamedNode)):
        return None
    kind = secret_kind(value.value)
    return None if kind is None else {"kind": Literal(kind)}


# -- redaction ----------------------------------------------------------------------------------


def redaction(secret: str, *, token: bool = True) -> str:
    """What is shown instead of a secret: a long token's first four characters (its public
    prefix, which says what kind of secret it is) and a mark; of a short one or a password,
    only the mark (a prefix would give away part of it).

    >>> redaction("sk_live_4eC39HqLyjWDarjtT1zdp7dc"), redaction("hunter2")
    ('sk_l…(redacted)', '…(redacted)')
    """
    return f"{secret[:4] if token and len(secret) >= 16 else ''}…(redacted)"


def _secret_spans(text: str) -> Iterator[tuple[int, int, bool]]:
    """(start, end, whether its prefix may be shown) of each secret in normalised text: a
    token's prefix names its kind; a password's says part of it."""
    for _, sieve, pattern in _TOKENS:
        if any(word in text for word in sieve):
            for m in re.finditer(pattern, text):
                # a leading boundary group is the character before the token: kept
                start = m.end(1) if pattern.startswith("(^|") else m.start()
                yield start, m.end(), True
    for m in _WRITTEN_ANYWHERE.finditer(text):
        if _is_secret_value(m.group(VALUE_GROUP)):
            yield *m.span(VALUE_GROUP), False
    for m in _URL_PASSWORD.finditer(text):
        yield text.rindex(":", m.start(), m.end() - 1) + 1, m.end() - 1, False
    for m in _AUTHORIZATION.finditer(text):
        scheme = m.end(_AUTHORIZATION.groups)  # the credentials follow the scheme and blanks
        blanks = len(text[scheme:]) - len(text[scheme:].lstrip(" \t"))
        yield scheme + blanks, m.end(), False


def redact(text: str) -> str:
    """``text`` with every secret in it replaced by its :func:`redaction` — for every message,
    finding, log line and HTTP body that may quote what a user wrote. Text without a secret
    is returned as it is; text with one is returned normalised (see :func:`normalised`).

    >>> redact("deploy with ghp_" + "a" * 36 + " tonight")
    'deploy with ghp_…(redacted) tonight'
    >>> redact("db: postgres://admin:pw@db.example.com/app; password: Hunter2!")
    'db: postgres://admin:…(redacted)@db.example.com/app; password: …(redacted)'
    """
    if not text:
        return text
    plain = normalised(text)
    spans = sorted(_secret_spans(plain))
    if not spans:
        return text
    merged: list[tuple[int, int, bool]] = []
    for start, end, prefix in spans:
        if merged and start <= merged[-1][1]:
            last = merged.pop()
            merged.append((last[0], max(last[1], end), last[2] and prefix))
        else:
            merged.append((start, end, prefix))
    out, at = [], 0
    for start, end, prefix in merged:
        out += [plain[at:start], redaction(plain[start:end], token=prefix)]
        at = end
    out.append(plain[at:])
    return "".join(out)


# -- the rule as SPARQL -------------------------------------------------------------------------


def _sparql_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + '"'


def _ranges(points: list[int]) -> str:
    """Code points, ascending, as the body of a regex character class: ``a-z`` for runs."""
    runs: list[list[int]] = []
    for point in points:
        if runs and point == runs[-1][1] + 1:
            runs[-1][1] = point
        else:
            runs.append([point, point])
    return "".join(chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in runs)


def _normalised_sparql(source: str, target: str) -> str:
    """BINDs normalising ``source`` into ``target`` (:func:`normalised`, in SPARQL): format
    characters removed, then one REPLACE per ASCII character folding its compatibility forms
    to it. Each in a BIND of its own: Oxigraph's parser takes time exponential in the depth
    of nested function calls. Printable ASCII (tabs and line breaks too) is left as it is."""
    name = target.lstrip("?")
    steps = [
        f'BIND (REGEX({source}, "[^ -~\\t\\n\\r]") AS ?{name}Folds)',
        f'BIND (IF(?{name}Folds, REPLACE({source}, {_sparql_string(FORMAT_CHARACTERS)}, ""),'
        f" {source}) AS ?{name}0)",
    ]
    table = sorted(_fold_table().items())
    for i, (char, points) in enumerate(table, start=1):
        into = target if i == len(table) else f"?{name}{i}"
        steps.append(
            f"BIND (IF(?{name}Folds, REPLACE(?{name}{i - 1},"
            f" {_sparql_string('[' + _ranges(points) + ']')}, {_sparql_string(_replacement(char))}),"
            f" ?{name}{i - 1}) AS {into})"
        )
    return "\n                ".join(steps)


def _replacement(char: str) -> str:
    """``char`` as the replacement of fn:replace, where ``$`` and ``\\`` are special."""
    return "\\" + char if char in "$\\" else char


def _token_tests(text: str) -> list[tuple[str, str]]:
    """(kind, SPARQL condition) of each token format, its REGEX behind its CONTAINS sieve."""
    tests = []
    for kind, sieve, pattern in TOKEN_KINDS:
        contains = " || ".join(f"CONTAINS({text}, {_sparql_string(w)})" for w in sieve)
        tests.append((kind, f"IF({contains}, REGEX({text}, {_sparql_string(pattern)}), false)"))
    return tests


def _first_kind(tests: list[tuple[str, str]], target: str) -> str:
    """BINDs naming in ``target`` the kind of the first test that holds, else "": a chain of
    BINDs, not nested IFs, which rdflib's parser (pySHACL's) reads only to a shallow depth."""
    name = target.lstrip("?")
    binds = []
    for i, (kind, condition) in enumerate(tests, start=1):
        into = target if i == len(tests) else f"?{name}{i}"
        found = f'IF({condition}, {_sparql_string(kind)}, "")'
        if i > 1:
            found = f'IF(?{name}{i - 1} != "", ?{name}{i - 1}, {found})'
        binds.append(f"BIND ({found} AS {into})")
    return "\n                ".join(binds)


def _secret_value_test(variable: str) -> str:
    tests = (PLACEHOLDER, REFERENCE, CODE_REFERENCE, COUNT, STRONG, PASSPHRASE, LETTERS)
    placeholder, reference, code, count, strong, passphrase, letters = map(_sparql_string, tests)
    unpronounceable = _sparql_string(UNPRONOUNCEABLE)
    return (
        f"(STRLEN({variable}) >= 3 && !REGEX({variable}, {placeholder})"
        f" && !REGEX({variable}, {reference})"
        f" && !REGEX({variable}, {code}) && !REGEX({variable}, {count})"
        f" && (REGEX({variable}, {strong}) || REGEX({variable}, {passphrase})"
        f" || (REGEX({variable}, {letters}) && REGEX({variable}, {unpronounceable}))))"
    )


def no_secrets_selects() -> tuple[str, str]:
    """The two sh:select queries of ``ol:NoSecrets``, names then values, generated from the
    tables of this module (shapes/core.ttl holds them as generated: tests/test_secrets.py)."""
    written_sieve = " || ".join(f'CONTAINS(?lower, "{w}")' for w in _WRITTEN_SIEVE)
    name_sieve = " || ".join(f'CONTAINS(?lowerName, "{w}")' for w in _NAME_SIEVE)
    url = f'IF(CONTAINS(?text, "://") && CONTAINS(?text, "@"), REGEX(?text, {_sparql_string(URL_PASSWORD)}), false)'
    authorization = f'IF(CONTAINS(?lower, "authorization"), REGEX(?text, {_sparql_string(AUTHORIZATION)}), false)'
    written = [
        (
            "a secret written as text",
            f"{_secret_value_test('?first')} || {_secret_value_test('?last')}",
        ),
        ("a password in a URL", url),
        ("an Authorization header", authorization),
    ]
    names = f"""
            SELECT $this ?path ?value WHERE {{
                $this ?path ?value .
                # Generated by ontoloom.secret_text.no_secrets_selects(): edit the tables there.
                BIND (STR(?path) AS ?rawName)
                {_normalised_sparql("?rawName", "?name")}
                BIND (LCASE(?name) AS ?lowerName)
                BIND (REPLACE(?name, {_sparql_string(NAMESPACE)}, "") AS ?local)
                BIND (LCASE(REPLACE(REPLACE(?local, {_sparql_string(CAMEL)}, "$1 $2"), {_sparql_string(SEPARATORS)}, "_")) AS ?split)
                BIND (REPLACE(?split, {_sparql_string(SUFFIXES)}, "") AS ?tokens)
                BIND (REPLACE(?tokens, "_", "") AS ?joined)
                {_first_kind(_token_tests("?name"), "?nameKind")}
                FILTER (IF({name_sieve},
                           REGEX(?joined, {_sparql_string(KEY_NAME)}) || REGEX(?tokens, {_sparql_string(SHORT_NAME)})
                           || REGEX(?joined, {_sparql_string(LONG_NAME)}), false)
                        || ?nameKind != "")
            }}"""
    values = f"""
            SELECT $this ?path ?value ?kind WHERE {{
                $this ?path ?value .
                # Generated by ontoloom.secret_text.no_secrets_selects(): edit the tables there.
                FILTER (isLiteral(?value) || isIRI(?value))
                BIND (STR(?value) AS ?raw)
                {_normalised_sparql("?raw", "?text")}
                BIND (LCASE(?text) AS ?lower)
                BIND (IF(IF((CONTAINS(?text, ":") || CONTAINS(?text, "=")) && ({written_sieve}),
                            REGEX(?text, {_sparql_string(WRITTEN)}), false),
                         REPLACE(?text, {_sparql_string(WRITTEN_FIRST)}, "${VALUE_GROUP}", "s"), "") AS ?first)
                BIND (IF(?first != "", REPLACE(?text, {_sparql_string(WRITTEN_LAST)}, "${VALUE_GROUP}", "s"), "") AS ?last)
                {_first_kind(_token_tests("?text") + written, "?kind")}
                FILTER (?kind != "")
            }}"""
    return names, values


#: The SHA-256 of each SELECT of ol:NoSecrets as shapes/core.ttl writes it → its judge. An
#: edited query has another digest, and is then evaluated by the store as written
#: (tests/test_secrets.py holds these to :func:`no_secrets_selects`).
NO_SECRETS_JUDGES = {
    "5a49ad979a9b1c3797b9e7eefdf7727a7840ba528c4dd635af7ebcd6e5ba3b6f": secret_property,
    "c68f4254c73f05053c3466907d5604741f603d2c00e36bbc4fe1ab13079fc045": secret_value,
}
