"""Text that is a secret, by its well-known formats: the patterns ``ol:NoSecrets`` (shapes/core.ttl)
applies to stored values, for the places that must judge text outside validation — ids given by
a caller, and what the egress gate lets leave the machine."""

from __future__ import annotations

import re

#: Token and key formats: precise enough to refuse on sight, wherever the text appears.
TOKEN_FORMATS = [
    re.compile(p)
    for p in (
        r"(AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}",
        r"(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,}",
        r"glpat-[A-Za-z0-9_-]{20}",
        r"xox[abposr]-[A-Za-z0-9-]{10,}",
        r"(sk|rk)_(live|test)_[A-Za-z0-9]+",
        r"sk-(ant-|proj-)?[A-Za-z0-9_-]{20,}",
        r"AIza[0-9A-Za-z_-]{35}",
        r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}",
        r"-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----",
    )
]

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
