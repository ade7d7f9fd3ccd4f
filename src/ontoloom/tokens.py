"""Scoped bearer tokens for the HTTP server (``ontoloom token add|list|revoke``).

A token is made once, shown once, and kept only as the SHA-256 of its text, in
``tokens.json`` in the data dir (mode 0600), beside the types it may read and write.
``ontoloom serve`` and ``ontoloom mcp --http`` take it as a bearer token, beside the
server's own token (which may do everything), and judge every call against its types
(:mod:`ontoloom.ops.scope`). A token of 32 random bytes cannot be guessed, so one round of
SHA-256 is enough to keep the file useless to whoever reads it; the comparison is
constant-time.

>>> import tempfile
>>> home = Path(tempfile.mkdtemp())
>>> token, entry = add_token(home, "ci", frozenset({"Task"}), frozenset())
>>> token.startswith("olt_"), token in (home / TOKENS_FILE).read_text()
(True, False)
>>> find_token(home, token).name, find_token(home, token + "x")
('ci', None)
>>> revoke_token(home, "ci").name, find_token(home, token)
('ci', None)
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ontoloom.errors import BadInput, NotFound, StorageError

__all__ = ["TOKENS_FILE", "TokenEntry", "add_token", "find_token", "list_tokens", "revoke_token"]

TOKENS_FILE = "tokens.json"
PREFIX = "olt_"  # says what the text is, to a reader and to a secret scanner
ALL = "*"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True)
class TokenEntry:
    """One token as stored: its name, its digest and its types (None: every type)."""

    name: str
    digest: str
    reads: frozenset[str] | None
    writes: frozenset[str] | None
    created: str

    def to_json(self) -> dict[str, Any]:
        """What ``token list`` shows: never the token, nor its digest."""
        return {
            "name": self.name,
            "reads": _shown(self.reads),
            "writes": _shown(self.writes),
            "created": self.created,
        }

    def stored(self) -> dict[str, Any]:
        return {**self.to_json(), "sha256": self.digest}


def _shown(types: frozenset[str] | None) -> str | list[str]:
    return ALL if types is None else sorted(types)


def _types(value: Any) -> frozenset[str] | None:
    return None if value == ALL else frozenset(str(v) for v in value or ())


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _path(data_dir: Path) -> Path:
    return Path(data_dir) / TOKENS_FILE


# (path, mtime_ns, size) → entries: a server checks a token on every request
_cache: dict[Path, tuple[int, int, list[TokenEntry]]] = {}
_cache_lock = threading.Lock()


def list_tokens(data_dir: Path) -> list[TokenEntry]:
    """The tokens of ``data_dir``, by name.

    :raises StorageError: the file is there but cannot be read or is not ontoloom's.
    """
    path = _path(data_dir)
    try:
        info = path.stat()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StorageError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    with _cache_lock:
        cached = _cache.get(path)
        if cached is not None and cached[:2] == (info.st_mtime_ns, info.st_size):
            return list(cached[2])
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = [
            TokenEntry(
                str(t["name"]),
                str(t["sha256"]),
                _types(t.get("reads")),
                _types(t.get("writes")),
                str(t.get("created", "")),
            )
            for t in data["tokens"]
        ]
    except OSError as exc:
        raise StorageError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except (ValueError, KeyError, TypeError):
        raise StorageError(
            f"{path} is not a token file ontoloom wrote: move it aside (its tokens stop "
            "working) and add the tokens again"
        ) from None
    entries.sort(key=lambda e: e.name)
    with _cache_lock:
        _cache[path] = (info.st_mtime_ns, info.st_size, entries)
    return list(entries)


def _write(data_dir: Path, entries: list[TokenEntry]) -> None:
    from ontoloom.records.writeback import atomic_write

    path = _path(data_dir)
    text = json.dumps({"tokens": [e.stored() for e in entries]}, indent=2) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text.encode("utf-8"), new_mode=0o600)
        os.chmod(path, 0o600)  # this user's alone, whatever it was before
    except OSError as exc:
        raise StorageError(f"{path}: cannot write it ({exc.strerror or exc})") from None


def add_token(
    data_dir: Path, name: str, reads: frozenset[str] | None, writes: frozenset[str] | None
) -> tuple[str, TokenEntry]:
    """A new token named ``name`` for these types: (the token, shown once; its entry).

    :raises BadInput: a name that is not a plain word, or one already taken.
    """
    if not _NAME.fullmatch(name):
        raise BadInput(
            "a token's name is a plain word (letters, digits, _ . -, at most 64), e.g. ci-triage"
        )
    entries = list_tokens(data_dir)
    if any(e.name == name for e in entries):
        raise BadInput(
            f"a token named {name!r} exists: `ontoloom token revoke {name}` first, or choose "
            "another name"
        )
    token = PREFIX + secrets.token_urlsafe(32)
    when = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    entry = TokenEntry(name, _digest(token), reads, writes, when)
    _write(data_dir, [*entries, entry])
    return token, entry


def revoke_token(data_dir: Path, name: str) -> TokenEntry:
    """Remove the token named ``name``: it stops working at once.

    :raises NotFound: no token has that name.
    """
    entries = list_tokens(data_dir)
    found = [e for e in entries if e.name == name]
    if not found:
        names = ", ".join(e.name for e in entries) or "none yet"
        raise NotFound(f"no token named {name!r} (`ontoloom token list`: {names})")
    _write(data_dir, [e for e in entries if e.name != name])
    return found[0]


def find_token(data_dir: Path, presented: str) -> TokenEntry | None:
    """The entry of the token ``presented``, or None. Every stored digest is compared, in
    constant time, so how long it takes says nothing about which one matched."""
    if not presented.startswith(PREFIX):
        return None
    digest = _digest(presented)
    match = None
    for entry in list_tokens(data_dir):
        if hmac.compare_digest(entry.digest, digest):
            match = entry
    return match
