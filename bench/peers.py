"""The reference memory server (`@modelcontextprotocol/server-memory`, npm), installed on first
use under bench/.peers/ (gitignored) — for `make bench-mcp` and for the differential test
(tests/test_memory_reference.py), which `.ci/run` readies with `python bench/peers.py`.

Standard library only: the tests load this file by path.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["PEERS", "REFERENCE_PACKAGE", "Unavailable", "installed", "reference_script"]

PEERS = Path(__file__).resolve().parent / ".peers"
REFERENCE_PACKAGE = "@modelcontextprotocol/server-memory"


class Unavailable(Exception):
    """A peer that cannot be installed, loaded or started here: its row says why."""


def installed(argv: list[str], what: str, script: Path) -> Path:
    """Run an installer (``argv``, described as ``what``) that should leave ``script``.

    :raises Unavailable: naming the installer's last line of error when it fails.
    """
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as exc:
        raise Unavailable(f"{what} failed: {exc}") from exc
    if done.returncode != 0 or not script.exists():
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise Unavailable(f"{what} failed: {last[:160]}")
    return script


def reference_script(peers: Path = PEERS, install: bool = True) -> Path:
    """The reference server's entry point, `npm install`ed on first use under ``peers``
    (only looked for, without ``install``).

    :raises Unavailable: when node/npm are missing or the install fails.
    """
    where = peers / "npm"
    script = (
        where / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
    )
    if script.exists() and shutil.which("node") is not None:
        return script
    if shutil.which("npm") is None or shutil.which("node") is None:
        raise Unavailable("node/npm not found")
    if not install:
        raise Unavailable(f"{REFERENCE_PACKAGE} is not installed under {where}")
    where.mkdir(parents=True, exist_ok=True)
    installed(
        ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(where), REFERENCE_PACKAGE],
        f"npm install {REFERENCE_PACKAGE}",
        script,
    )
    return script


if __name__ == "__main__":
    try:
        print(reference_script())
    except Unavailable as exc:
        sys.exit(f"not available: {exc}")
