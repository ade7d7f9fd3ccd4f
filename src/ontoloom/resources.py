"""Files that ship with ontoloom: ontology/, shapes/ and queries/.

In a wheel they sit under ``ontoloom/_data``; in a source checkout, at the repo root.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["resource_dir"]

_PACKAGE = Path(__file__).resolve().parent


def resource_dir(name: str) -> Path:
    packaged = _PACKAGE / "_data" / name
    if packaged.is_dir():
        return packaged
    return _PACKAGE.parents[1] / name
