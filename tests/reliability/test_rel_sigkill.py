"""Scenario 2: SIGKILL at random moments (delays from a seeded RNG) of ``import`` (a
large-ish Turtle file), ``rebuild`` (the records fixture), ``plan apply`` and ``proposals
confirm`` with its writeback. After each kill, before any other command: the store holds the
whole operation's effect or none of it (its quads equal those before, or those an
uninterrupted run leaves), every file of the instance is byte-for-byte as before or as after,
and ``ontoloom check`` conforms. A confirmation's pending writeback is then finished by the
next ``rebuild`` (test_writeback_safety's ``_assert_consistent``)."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import Cli, quads_of
from records_fixture import build
from reliability.plugin import Row, scale
from test_writeback_safety import RECORD, _assert_consistent, with_pending_proposal

ONTOLOOM = str(Path(sys.executable).with_name("ontoloom"))
KILLS = scale(2, 12)
DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"


def _norm(quads: set) -> set[tuple[str, ...]]:
    """Quads as comparable strings, the time of the write left out (an uninterrupted run
    happens at another moment than the killed one)."""
    out = set()
    for q in quads:
        obj = q.object
        text = (
            "<now>"
            if getattr(getattr(obj, "datatype", None), "value", None) == DATETIME
            else str(obj)
        )
        out.add((str(q.subject), str(q.predicate), text, str(q.graph_name)))
    return out


def _files(root: Path) -> dict[str, bytes]:
    """Every regular file of the instance outside its data dir (symlinks not followed)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] == ".ontoloom" or path.is_symlink() or not path.is_file():
            continue
        if any(p.is_symlink() for p in path.parents if root in p.parents):
            continue
        out[rel.as_posix()] = path.read_bytes()
    return out


@dataclass
class Operation:
    name: str
    args: Callable[[Path], list[str]]  # the command line for an instance root
    ok: tuple[int, ...]  # the exit codes of an uninterrupted run


def _copy(root: Path, into: Path) -> Path:
    target = into / "inst"
    shutil.copytree(root, target, symlinks=True)
    return target


def _run(root: Path, args: list[str]) -> tuple[int, float, str]:
    start = time.monotonic()
    done = subprocess.run(
        [ONTOLOOM, "--data-dir", str(root / ".ontoloom"), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.returncode, time.monotonic() - start, done.stdout[-300:] + done.stderr[-500:]


# -- the instances each operation starts from ------------------------------------------------------
def big_turtle(path: Path, tasks: int = scale(600, 1000)) -> Path:
    lines = ["@prefix ol: <https://ontoloom.dev/ns#> .", "@prefix id: <https://ontoloom.dev/id/> ."]
    for i in range(tasks):
        lines.append(
            f'id:task_imp{i} a ol:Task ; ol:title "Imported task {i}" ; ol:status "open" .'
        )
        if i:
            lines.append(f"id:task_imp{i} ol:blocks id:task_imp{i - 1} .")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def plan_file(path: Path, tasks: int = 120) -> Path:
    steps: list[dict] = [
        {
            "op": "create",
            "type": "Person",
            "id": "pers_pat",
            "as": "p",
            "properties": {"name": "Pat"},
        }
    ]
    for i in range(tasks):
        steps.append(
            {
                "op": "create",
                "type": "Task",
                "id": f"task_pl{i}",
                "properties": {"title": f"Planned {i}", "status": "open"},
            }
        )
        steps.append({"op": "relate", "from": f"task_pl{i}", "rel": "assigned_to", "to": "p"})
        if i:
            steps.append(
                {"op": "relate", "from": f"task_pl{i}", "rel": "blocks", "to": f"task_pl{i - 1}"}
            )
    steps.append({"op": "update", "id": "task_base", "properties": {"status": "blocked"}})
    path.write_text(json.dumps({"steps": steps}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def instances(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """name → (template instance, its pending proposal's id or "")."""
    made: dict[str, tuple[Path, str]] = {}
    # import and plan: a small store to add to
    for name in ("import", "plan"):
        root = tmp_path_factory.mktemp(name) / "inst"
        cli = Cli(root / ".ontoloom")
        assert cli("init", str(root)).exit_code == 0
        assert (
            cli(
                "create", "Task", "--id", "task_base", "-p", "title=Base", "-p", "status=open"
            ).exit_code
            == 0
        )
        made[name] = (root, "")
    big_turtle(made["import"][0] / "big.ttl")
    plan_file(made["plan"][0] / "plan.json")
    # rebuild: the records fixture, never rebuilt yet
    root = build(tmp_path_factory.mktemp("rebuild") / "inst")
    assert Cli(root / ".ontoloom")("init", str(root)).exit_code == 0
    made["rebuild"] = (root, "")
    # confirm: rebuilt, with one pending proposal quoted from RECORD (as test_writeback_safety)
    made["confirm"] = with_pending_proposal(tmp_path_factory.mktemp("confirm") / "inst")
    return made


OPERATIONS = {
    "import": Operation("import", lambda root: ["import", str(root / "big.ttl")], (0,)),
    "rebuild": Operation("rebuild", lambda root: ["rebuild", "--full"], (0, 1)),
    "plan": Operation("plan apply", lambda root: ["plan", "apply", str(root / "plan.json")], (0,)),
    "confirm": Operation("proposals confirm", lambda root: [], (0,)),
}


@pytest.mark.parametrize("kind", list(OPERATIONS))
def test_sigkill_leaves_all_or_nothing(
    kind: str, instances: dict[str, tuple[Path, str]], tmp_path: Path, soak_row: Row
) -> None:
    template, pid = instances[kind]
    op = OPERATIONS[kind]

    def args(root: Path) -> list[str]:
        return ["proposals", "confirm", pid] if kind == "confirm" else op.args(root)

    before_quads = _norm(quads_of(template / ".ontoloom"))
    before_files = _files(template)
    # An uninterrupted run: what "after" is, and how long the operation takes.
    whole = _copy(template, tmp_path / "whole")
    code, duration, out = _run(whole, args(whole))
    assert code in op.ok, out
    after_quads = _norm(quads_of(whole / ".ontoloom"))
    after_files = _files(whole)
    assert after_quads != before_quads, "the operation changes the store"

    rng = random.Random(f"sigkill-{kind}")
    seen: Counter[str] = Counter()
    problems: list[str] = []
    for i in range(KILLS):
        root = _copy(template, tmp_path / f"run{i}")
        # Most kills land while the command works (after start-up), some anywhere.
        delay = rng.uniform(0.4, 1.05) * duration if i % 3 != 2 else rng.uniform(0, duration)
        proc = subprocess.Popen(
            [ONTOLOOM, "--data-dir", str(root / ".ontoloom"), *args(root)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        where = f"run {i} (killed at {delay:.2f} s of {duration:.2f} s)"
        quads = _norm(quads_of(root / ".ontoloom"))
        state = "before" if quads == before_quads else "after" if quads == after_quads else "half"
        seen[state] += 1
        if state == "half":
            problems.append(
                f"{where}: half-applied: {len(quads - before_quads)} quads added and "
                f"{len(before_quads - quads)} removed of {len(after_quads - before_quads)}"
                f"/{len(before_quads - after_quads)}"
            )
        files = _files(root)
        if set(files) != set(before_files):
            problems.append(
                f"{where}: files appeared or vanished: {set(files) ^ set(before_files)}"
            )
        for path, data in files.items():
            if data not in (before_files.get(path), after_files.get(path)):
                problems.append(f"{where}: {path} is neither before nor after")
        check = Cli(root / ".ontoloom")("check")
        if check.exit_code != 0:
            problems.append(f"{where}: check exit {check.exit_code}: {check.output[-300:]}")
        if kind == "confirm":
            # The next command finishes (or drops) a pending writeback; all in step then.
            rebuilt = Cli(root / ".ontoloom")("rebuild")
            if rebuilt.exit_code not in (0, 1):
                problems.append(f"{where}: rebuild after the kill: {rebuilt.output[-300:]}")
            _assert_consistent(root, pid, _records_of(before_files), after_files[RECORD])
    soak_row(
        f"SIGKILL {op.name}",
        f"{KILLS} kills (op {duration:.1f} s)",
        len(problems),
        f"half-applied {seen['half']} · before {seen['before']} · after {seen['after']}",
    )
    assert not problems, "\n".join(problems)


def _records_of(files: dict[str, bytes]) -> dict[str, bytes]:
    """The files test_writeback_safety's helpers compare: those under records/ and ontoloom/."""
    return {p: d for p, d in files.items() if p.split("/", 1)[0] in ("records", "ontoloom")}
