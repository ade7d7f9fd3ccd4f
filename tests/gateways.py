"""Gateways on a SPARQL endpoint, as the fault tests drive them: an instance initialised
against a query and an update URL (often the fault proxy's), and the CLI run in-process."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from ontoloom.cli import main


def gateway(root: Path, query: str, update: str, timeout: float = 2.0) -> Path:
    """An instance at ``root`` on that endpoint, its requests timed out after ``timeout``
    seconds; its data dir."""
    done = CliRunner().invoke(
        main, ["init", str(root), "--endpoint", query, "--update-endpoint", update]
    )
    assert done.exit_code == 0, done.output
    toml = root / "ontoloom.toml"
    toml.write_text(toml.read_text() + f"timeout = {timeout}\n")
    return root / ".ontoloom"


def cli(data_dir: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--data-dir", str(data_dir), *args])


def titles(data_dir: Path) -> list[str]:
    listed = cli(data_dir, "list", "--json")
    assert listed.exit_code == 0, listed.output
    return sorted(e["properties"]["title"] for e in json.loads(listed.stdout))
