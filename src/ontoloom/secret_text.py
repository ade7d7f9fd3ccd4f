"""Text that is a secret, by its well-known formats: the patterns ``ol:NoSecrets`` (shapes/core.ttl)
applies to stored values, for the places that must judge text outside validation — ids given by
a caller, and what the egress gate lets leave the machine."""

from __future__ import annotations

import re

from ontoloom.terms import Literal, NamedNode, Term

#: Token and key formats, each with what it is and the words one must contain (the sieve
#: ol:NoSecrets tests before its REGEX): precise enough to refuse on sight, wherever they appear.
TOKEN_KINDS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (kind, sieve, re.compile(pattern))
    for kind, sieve, pattern in (
        (
            "an AWS access key",
            ("AKIA", "ASIA", "ABIA", "ACCA"),
            r"(AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}",
        ),
        (
            "a GitHub token",
            ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
            r"(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,}",
        ),
        ("a GitLab token", ("glpat-",), r"glpat-[A-Za-z0-9_-]{20}"),
        ("a Slack token", ("xox",), r"xox[abposr]-[A-Za-z0-9-]{10,}"),
        (
            "a Stripe secret key",
            ("_live_", "_test_"),
            r"(^|[^A-Za-z0-9_])(sk|rk)_(live|test)_[A-Za-z0-9]{10,}",
        ),
        ("an API secret key", ("sk-",), r"(^|[^A-Za-z0-9_-])sk-(ant-|proj-)?[A-Za-z0-9_-]{20,}"),
        ("a Google API key", ("AIza",), r"AIza[0-9A-Za-z_-]{35}"),
        ("an npm access token", ("npm_",), r"(^|[^A-Za-z0-9_])npm_[A-Za-z0-9]{36}"),
        ("a Hugging Face token", ("hf_",), r"(^|[^A-Za-z0-9_])hf_[A-Za-z]{34}"),
        (
            "a JSON Web Token",
            ("eyJ",),
            r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}",
        ),
        ("a private key", ("PRIVATE KEY",), r"-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----"),
    )
)
TOKEN_FORMATS = [pattern for _, _, pattern in TOKEN_KINDS]

#: A secret written as text ("password: …", "api_key=…"): for prose, not for ids, where
#: ``token:refresh`` is a name.
WRITTEN_SECRET = re.compile(
    r"(?i)(password|passwd|pwd|passphrase|secret|api[ _-]?key|access[ _-]?key|private[ _-]?key"
    r"|client[ _-]?secret|auth[ _-]?token|access[ _-]?token|token)[ \t]*[:=][ \t]*[^ \t$<{*][^ \t]*"
)


def holds_token(text: str) -> bool:
    """Whether ``text`` holds a token or key in a well-known format.

    >>> holds_token("ghp_" + "a" * 36), holds_token("task_token_refresh")
    (True, False)
    """
    return any(p.search(text) for p in TOKEN_FORMATS)


def holds_secret(text: str) -> bool:
    """Whether ``text`` holds a token or key, or a secret written as text."""
    return holds_token(text) or WRITTEN_SECRET.search(text) is not None


# -- ol:NoSecrets on the write path ---------------------------------------------------------
# The two SELECTs of ol:NoSecrets (shapes/core.ttl), their FILTERs and BINDs written in Python
# (:mod:`ontoloom.shacl.native`): planning their expressions was a third of a validated create.
# Each function follows its query step by step, sieves included, with Oxigraph's semantics:
# LCASE is str.lower (both full Unicode lowercase), REGEX a search, ``$`` the end of the text
# (\Z here), and the flag "i" Unicode simple case folding — which Python's re.IGNORECASE
# extends with ı and İ as forms of i; the text is read with those two made inert.
_NAME_SIEVE = (
    *("pass", "pwd", "otp", "pin", "pat", "dsn", "jwt", "auth", "key", "secret", "token"),
    *("credential", "cookie", "bearer", "connection", "mnemonic", "seed", "\u017f"),
)
_NAMESPACE = re.compile(r"^.*[/#:]")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")
_SUFFIXES = re.compile(
    r"(_(pem|der|b64|base64|hex|raw|value|val|str|string|text|data|enc|encoded|plain|plaintext"
    r"|current|new|old|tmp|temp|json|yaml|yml|file|[0-9]+)|[0-9]+)+\Z"
)
_KEY_NAME = re.compile(r"^keys?\Z")
_SHORT_NAME = re.compile(r"(^|_)(pass|pwd|otp|totp|pin|pat|dsn|jwt|auth)s?\Z")
_LONG_NAME = re.compile(
    r"(password|passwort|passwd|passphrase|secret|token|apikey|privatekey|secretkey|accesskey"
    r"|sshkey|signingkey|encryptionkey|credential|cookie|bearer|authorization|connectionstring"
    r"|mnemonic|seedphrase|otpseed)s?\Z"
)


def secret_property(path: Term, value: Term) -> dict[str, Term] | None:
    """ol:NoSecrets' first SELECT: a property named like a secret, in any namespace.

    >>> from ontoloom.terms import Literal, NamedNode
    >>> secret_property(NamedNode("https://ex.org/ns#apiKey"), Literal("x"))
    {}
    >>> secret_property(NamedNode("https://ex.org/ns#keyboard"), Literal("x")) is None
    True
    """
    if not isinstance(path, NamedNode):
        return None
    name = path.value.lower()
    if not any(word in name for word in _NAME_SIEVE):
        return None
    local = _NAMESPACE.sub("", path.value)
    split = _SEPARATORS.sub("_", _CAMEL.sub(r"\1 \2", local)).lower()
    tokens = _SUFFIXES.sub("", split)
    joined = tokens.replace("_", "")
    if _KEY_NAME.search(joined) or _SHORT_NAME.search(tokens) or _LONG_NAME.search(joined):
        return {}
    return None


_WRITTEN_WORDS = ("pass", "pwd", "secret", "key", "token")
_WRITTEN_VALUE = re.compile(r"[:=][ \t]*[^ \t]*[0-9A-Z_!@#%^&+/=-]")
_NOT_I = str.maketrans({"\u0131": "\x01", "\u0130": "\x01"})  # no form of i under SPARQL's "i"


def secret_value(path: Term, value: Term) -> dict[str, Term] | None:
    """ol:NoSecrets' second SELECT: a literal that is a secret, with ``kind`` naming it.

    >>> from ontoloom.terms import Literal, NamedNode
    >>> secret_value(NamedNode("https://ex.org/p"), Literal("password: hunter2"))["kind"].value
    'a secret written as text'
    """
    if not isinstance(value, Literal):
        return None
    text = value.value
    for kind, sieve, pattern in TOKEN_KINDS:
        if any(word in text for word in sieve) and pattern.search(text):
            return {"kind": Literal(kind)}
    lower = text.lower()
    if (
        ("=" in text or ":" in text)
        and (any(word in lower for word in _WRITTEN_WORDS) or "\u017f" in text)
        and WRITTEN_SECRET.search(text.translate(_NOT_I))
        and _WRITTEN_VALUE.search(text)
    ):
        return {"kind": Literal("a secret written as text")}
    return None


#: The SHA-256 of each SELECT of ol:NoSecrets as shapes/core.ttl writes it → its judge. An
#: edited query has another digest, and is then evaluated by the store as written.
NO_SECRETS_JUDGES = {
    "a7ffe98fd0535458420ef6a8e26b183c72c8db5d465157db013c6b3d88d4f034": secret_property,
    "6116e5986e738d5c7e80c87aea309d4409ca5d25a14516e17d3fdfd6b0515237": secret_value,
}
