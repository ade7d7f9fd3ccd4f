"""Rebuild isolates failures per entry (RECORDS.md): a bad value rejects only the object it
belongs to, with path:line and a reason; a relation into a rejected object is an orphan named
in a note, not a reason to reject the record holding it; anything in a records folder that is
not a regular file is skipped with a note, never read (a FIFO would hang the read)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Cli
from records_fixture import build

ONTOLOOM = str(Path(sys.executable).with_name("ontoloom"))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = build(tmp_path / "inst")
    Cli(root / ".ontoloom")("init", str(root))
    return root


def _rebuild(root: Path) -> dict:
    """`ontoloom rebuild --json` in a child process, so a hang is a timeout, not a stuck run."""
    done = subprocess.run(
        [ONTOLOOM, "--data-dir", str(root / ".ontoloom"), "--json", "rebuild"],
        capture_output=True,
        timeout=90,
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def _notes(report: dict, kind: str) -> list[str]:
    return [f"{n['path']}:{n['line']}: {n['message']}" for n in report["notes"].get(kind, [])]


def _exists(root: Path, object_id: str) -> bool:
    return Cli(root / ".ontoloom")("get", object_id).exit_code == 0


def test_a_fifo_or_a_socket_in_a_records_folder_is_skipped_not_read(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = root / "records" / "memory"
    os.mkfifo(memory / "pipe.md")  # reading it would wait for a writer forever
    monkeypatch.chdir(memory)  # a relative bind: socket paths are short
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind("sock.md")
        report = _rebuild(root)
    skipped = _notes(report, "skipped")
    assert "records/memory/pipe.md:None: not a regular file (a FIFO): not read" in skipped
    assert "records/memory/sock.md:None: not a regular file (a socket): not read" in skipped
    assert _exists(root, "rule:no-raw-control-bytes")  # the rest was read


BAD_DATE = "---\ntitle: A rule with a bad date\ndate: next tuesday\n---\nx\n"
POINTS_AT_IT = """\
---
title: Points at the bad one
relations:
  - sibling-of: rule:bad-date
  - enforced-by: action:strip-control-bytes
---
x
"""


def test_a_bad_value_rejects_only_its_object_with_path_line_and_reason(root: Path) -> None:
    (root / "records/memory/bad-date.md").write_text(BAD_DATE)
    log = root / "records/decisions/decision-log.md"
    text = log.read_text()
    log.write_text(text + "\n## 2026-13-45 An impossible day\n\nNope.\n")
    line = len(text.split("\n")) + 1  # the new section's heading
    report = _rebuild(root)
    rejected = _notes(report, "rejected")
    assert any(
        r.startswith("records/memory/bad-date.md:3: ") and "next tuesday" in r and "date" in r
        for r in rejected
    ), rejected
    assert any(
        r.startswith(f"records/decisions/decision-log.md:{line}: ") and "2026-13-45" in r
        for r in rejected
    ), rejected
    assert not _exists(root, "rule:bad-date")
    assert not _exists(root, "decision:2026-13-45-an-impossible-day")
    # The other sections of the same file, and every other record, are kept.
    assert _exists(root, "decision:2026-09-15-event-sourcing-for-ledger")
    assert _exists(root, "rule:no-raw-control-bytes")
    # Nothing invalid reached the store.
    assert Cli(root / ".ontoloom")("check").exit_code == 0


def test_a_relation_into_a_rejected_object_is_an_orphan_named_not_a_rejection(
    root: Path,
) -> None:
    (root / "records/memory/bad-date.md").write_text(BAD_DATE)
    (root / "records/memory/points-at-bad.md").write_text(POINTS_AT_IT)
    report = _rebuild(root)
    assert not any("points-at-bad.md" in r for r in _notes(report, "rejected"))
    orphans = _notes(report, "orphan")
    assert any(
        o.startswith("records/memory/points-at-bad.md:")
        and "rule:points-at-bad sibling-of rule:bad-date" in o
        and "rejected" in o
        for o in orphans
    ), orphans
    cli = Cli(root / ".ontoloom")
    holder = json.loads(cli.json("get", "rule:points-at-bad").output)
    assert ("enforced-by", "action:strip-control-bytes") in {
        (r["rel"], r["to_id"]) for r in holder["relations"]["outgoing"]
    }
    # Fixing the bad value brings the relation back, with no --full needed.
    (root / "records/memory/bad-date.md").write_text(BAD_DATE.replace("next tuesday", "2026-11-03"))
    report = _rebuild(root)
    assert not _notes(report, "orphan")
    holder = json.loads(cli.json("get", "rule:points-at-bad").output)
    assert ("sibling-of", "rule:bad-date") in {
        (r["rel"], r["to_id"]) for r in holder["relations"]["outgoing"]
    }
    assert cli("check").exit_code == 0
