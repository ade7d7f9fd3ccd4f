"""Slugs and object ids, exactly as RECORDS.md defines them."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["KIND_PREFIX", "slug"]

# folder kind → (id prefix, type)
KIND_PREFIX = {
    "failures": ("failure", "FailureOccurrence"),
    "decisions": ("decision", "Decision"),
    "memory": ("rule", "Rule"),
    "runbooks": ("action", "Action"),
    "documents": ("doc", "Doc"),
}
PREFIXES = {"failure", "failure-class", "rule", "action", "decision", "doc"}
_NOT_ALNUM = re.compile(r"[\W_]+", re.UNICODE)


def slug(text: str) -> str:
    """NFKD, combining marks dropped, lower-cased; every run of characters that are not
    letters or digits (any script) becomes ``-``; ``-`` trimmed at both ends.

    >>> slug("Café Menü"), slug("Use Stripe's keys (all POSTs)")
    ('cafe-menu', 'use-stripe-s-keys-all-posts')
    >>> slug("2026-11-02 ctrl_bytes"), slug("Ünïcode 数据")
    ('2026-11-02-ctrl-bytes', 'unicode-数据')
    """
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(c for c in decomposed if not unicodedata.combining(c)).lower()
    return _NOT_ALNUM.sub("-", kept).strip("-")
