"""How sure ontoloom is of mined knowledge: high, medium or low — never a bare fact.

Confirmed knowledge starts high, a MEDIUM proposal medium, the rest low; every
:data:`USES_PER_STEP` uses nobody objected to (a hook or ``hints`` showed it) raise it a
level, every correction (``mine --correct``) drops it one and the uses counted so far no
longer count. Unconfirmed conversation knowledge never rises above medium (conversation trust
is capped). Standard library only: the hooks read it.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from pathlib import Path
from typing import Any

__all__ = ["LEVELS", "USAGE", "USES_PER_STEP", "confidence", "load_usage", "record_use"]

LEVELS = ("low", "medium", "high")
USES_PER_STEP = 3
USAGE = Path("mining") / "usage.json"  # in the data dir


def confidence(status: str, tier: str, usage: dict[str, Any] | None) -> str:
    """
    >>> confidence("pending", "LOW", {"uses": 3}), confidence("pending", "MEDIUM", {"uses": 9})
    ('medium', 'medium')
    >>> confidence("confirmed", "LOW", {"corrections": 1}), confidence("pending", "LOW", None)
    ('medium', 'low')
    """
    usage = usage or {}
    base = 2 if status == "confirmed" else (1 if tier in ("MEDIUM", "HIGH") else 0)
    level = base + int(usage.get("uses", 0)) // USES_PER_STEP - int(usage.get("corrections", 0))
    cap = 2 if status == "confirmed" else 1
    return LEVELS[max(0, min(cap, level))]


def load_usage(data_dir: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads((data_dir / USAGE).read_text(encoding="utf-8"))
        items = data.get("items", {}) if isinstance(data, dict) else {}
        return items if isinstance(items, dict) else {}
    except (OSError, ValueError):
        return {}


def record_use(data_dir: Path, pids: list[str]) -> None:
    """Count one use of each mined proposal. Best effort, never raises: a lost count only
    delays a confidence step. Only where mining has run (the folder exists)."""
    path = data_dir / USAGE
    if not pids or not path.parent.is_dir():
        return
    with contextlib.suppress(Exception):
        items = load_usage(data_dir)
        for pid in pids:
            item = items.setdefault(pid, {"uses": 0, "corrections": 0})
            item["uses"] = int(item.get("uses", 0)) + 1
        tmp = path.with_name(f".usage.{secrets.token_hex(4)}.tmp")
        tmp.write_text(json.dumps({"version": 1, "items": items}), encoding="utf-8")
        os.replace(tmp, path)
