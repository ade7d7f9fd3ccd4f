"""Scenario 1: concurrent writers through every front end — two CLI loops, one Python API
process and one MCP server (driven by the SDK's stdio client) — each creating and relating
its own tasks, all on one data dir. Afterwards every acknowledged write is there, no refused
one is, and ``ontoloom check`` conforms. A "busy" refusal (exit 2, ``"error": "busy"``) is
allowed; it is never acknowledged, and it stores nothing."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import Cli
from ontoloom.api import Graph
from reliability.plugin import Row, scale

ONTOLOOM = str(Path(sys.executable).with_name("ontoloom"))
OPS = scale(4, 50)  # per writer: create, relate, create, relate, …
SHARED = "pers_shared"


def ops(tag: str) -> list[tuple[str, ...]]:
    """A writer's operations: its task k, then a relation from it (to the shared person
    first, then to its previous task, a chain of ``blocks``)."""
    out: list[tuple[str, ...]] = []
    for j in range(OPS):
        k = j // 2
        task = f"task_{tag}_{k}"
        if j % 2 == 0:
            out.append(("create", task, f"{tag} task {k}"))
        elif k == 0:
            out.append(("relate", task, "assigned_to", SHARED))
        else:
            out.append(("relate", task, "blocks", f"task_{tag}_{k - 1}"))
    return out


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ONTOLOOM_HOME"}
    env["ONTOLOOM_LOCK_TIMEOUT"] = "20"
    return env


def _outcome(ok: bool, error: str | None) -> str:
    if ok:
        return "ok"
    return "busy" if error == "busy" else f"refused:{error}"


# -- the four writers: each returns [(op, outcome)] ------------------------------------------------
def cli_writer(data_dir: Path, tag: str) -> list[tuple[tuple[str, ...], str]]:
    results = []
    for op in ops(tag):
        if op[0] == "create":
            args = ["create", "Task", "--id", op[1], "-p", f"title={op[2]}", "-p", "status=open"]
        else:
            args = ["relate", *op[1:]]
        done = subprocess.run(
            [ONTOLOOM, "--data-dir", str(data_dir), "--json", *args],
            capture_output=True,
            text=True,
            env=_env(),
            timeout=120,
        )
        error = None
        if done.returncode != 0:
            try:
                error = json.loads(done.stdout or done.stderr).get("error")
            except ValueError:
                error = f"exit {done.returncode}: {done.stderr[-300:]}"
        assert "Traceback" not in done.stdout + done.stderr, done.stderr
        results.append((op, _outcome(done.returncode == 0, error)))
    return results


API_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from ontoloom.api import Graph
    from ontoloom.errors import OntoloomError
    data_dir, ops = sys.argv[1], json.loads(sys.argv[2])
    for op in ops:
        try:
            with Graph.open(data_dir, write=True) as g:  # one open per write, as a process would
                if op[0] == "create":
                    g.create("Task", {"title": op[2], "status": "open"}, id=op[1])
                else:
                    g.relate(*op[1:])
            print(json.dumps([op, None]), flush=True)
        except OntoloomError as exc:
            print(json.dumps([op, exc.to_json().get("error")]), flush=True)
    """
)


def api_writer(data_dir: Path, tag: str) -> list[tuple[tuple[str, ...], str]]:
    done = subprocess.run(
        [sys.executable, "-c", API_SCRIPT, str(data_dir), json.dumps(ops(tag))],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    results = []
    for line in done.stdout.splitlines():
        op, error = json.loads(line)
        results.append((tuple(op), _outcome(error is None, error)))
    return results


def mcp_writer(data_dir: Path, tag: str) -> list[tuple[tuple[str, ...], str]]:
    results: list[tuple[tuple[str, ...], str]] = []

    async def main() -> None:
        params = StdioServerParameters(
            command=ONTOLOOM, args=["--data-dir", str(data_dir), "mcp"], env=_env()
        )
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for op in ops(tag):
                if op[0] == "create":
                    args: dict[str, Any] = {
                        "type": "Task",
                        "id": op[1],
                        "properties": {"title": op[2], "status": "open"},
                    }
                    result = await session.call_tool("create_entity", args)
                else:
                    args = {"from_id": op[1], "rel": op[2], "to_id": op[3]}
                    result = await session.call_tool("relate", args)
                error = (result.structuredContent or {}).get("error") if result.isError else None
                if result.isError and error is None:
                    error = result.content[0].text  # type: ignore[union-attr]
                results.append((op, _outcome(not result.isError, error)))

    asyncio.run(asyncio.wait_for(main(), timeout=600))
    return results


def test_concurrent_writers_through_cli_api_and_mcp_lose_no_acknowledged_write(
    data_dir: Path, cli: Cli, soak_row: Row
) -> None:
    assert cli("create", "Person", "--id", SHARED, "-p", "name=Shared").exit_code == 0
    writers = {
        "cli1": cli_writer,
        "cli2": cli_writer,
        "api": api_writer,
        "mcp": mcp_writer,
    }
    outcomes: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    crashes: dict[str, BaseException] = {}

    def run(tag: str) -> None:
        try:
            outcomes[tag] = writers[tag](data_dir, tag)
        except BaseException as exc:  # reported below, with the writer's name
            crashes[tag] = exc

    started = time.monotonic()
    threads = [threading.Thread(target=run, args=(tag,)) for tag in writers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=900)
    elapsed = time.monotonic() - started
    assert not crashes, crashes

    problems: list[str] = []
    acknowledged = busy = lost = 0
    created: dict[str, bool] = {}
    with Graph.open(data_dir) as g:
        tasks = {e.id for e in g.entities("Task")}
        for tag, results in outcomes.items():
            assert len(results) == OPS, (tag, len(results))
            for op, outcome in results:
                if op[0] == "create":
                    created[op[1]] = outcome == "ok"
                if outcome == "busy":
                    busy += 1
                    if op[0] == "create" and op[1] in tasks:
                        problems.append(f"{tag}: busy but stored: {op}")
                    continue
                if outcome != "ok":
                    # Only a relation whose task was never created may fail: its source not
                    # found, or its target refused by the rule that it must exist.
                    dependent = op[0] == "relate" and not all(
                        created.get(x, True) for x in (op[1], op[3])
                    )
                    if not (dependent and outcome in ("refused:not_found", "refused:validation")):
                        problems.append(f"{tag}: {op} → {outcome}")
                    continue
                acknowledged += 1
                if op[0] == "create":
                    if op[1] not in tasks or g.get(op[1]).properties.get("title") != op[2]:
                        lost += 1
                        problems.append(f"{tag}: acknowledged but lost: {op}")
                else:
                    rels = {
                        (r.from_id, r.rel, r.to_id) for r in g.relations(op[1], direction="out")
                    }
                    if tuple(op[1:]) not in rels:
                        lost += 1
                        problems.append(f"{tag}: acknowledged but lost: {op}")
        extra = tasks - {t for t, ok in created.items() if ok}
        if extra:
            problems.append(f"tasks no writer acknowledged: {sorted(extra)}")
    check = subprocess.run(
        [ONTOLOOM, "--data-dir", str(data_dir), "check"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
    )
    conforms = check.returncode == 0
    if not conforms:
        problems.append(f"check: exit {check.returncode}: {check.stdout[-500:]}")
    soak_row(
        "writers CLI+API+MCP",
        f"{len(writers)} procs × {OPS} ops",
        len(problems),
        f"acked {acknowledged} · busy {busy} · lost {lost} · conforms "
        f"{'yes' if conforms else 'no'} · {elapsed:.0f} s",
    )
    assert not problems, "\n".join(problems)
    assert acknowledged > 0
