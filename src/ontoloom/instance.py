"""Instances: a folder marked by ontoloom.toml, with its data dir."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ontoloom.config import DATA_DIR_NAME, INSTANCE_MARKER, resolve_data_dir
from ontoloom.errors import BadInput
from ontoloom.store import exists, open_backend

__all__ = ["init_instance"]

TEMPLATE = """\
# ontoloom instance (every key is optional; defaults shown)
[records]
failures  = "records/failures"
decisions = "records/decisions"
memory    = "records/memory"
runbooks  = "records/runbooks"

# [[documents]]
# root = "docs"
# privacy = "internal"
"""


def init_instance(directory: Path, data_dir: Path | None = None) -> dict[str, Any]:
    """Mark ``directory`` as an instance and create its store; idempotent."""
    directory = directory.resolve()
    if directory.exists() and not directory.is_dir():
        raise BadInput(f"{directory} is a file, not a directory")
    directory.mkdir(parents=True, exist_ok=True)
    marker = directory / INSTANCE_MARKER
    if not marker.exists():
        marker.write_text(TEMPLATE, encoding="utf-8")
    target = resolve_data_dir(data_dir) if data_dir else None
    if target is None:
        import os

        target = (
            Path(os.environ["ONTOLOOM_HOME"]).resolve()
            if os.environ.get("ONTOLOOM_HOME")
            else (directory / DATA_DIR_NAME)
        )
    created = not exists(target)
    with open_backend(target, write=True, create=True):
        pass
    gitignore = directory / ".gitignore"
    if target.parent == directory and not gitignore.exists():
        gitignore.write_text(f"{DATA_DIR_NAME}/\n", encoding="utf-8")
    return {"instance": str(directory), "data_dir": str(target), "created": created}
