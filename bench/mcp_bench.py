"""`make bench-mcp`: MCP servers driven over stdio by the official MCP client, side by side.

Every figure is a round trip as an agent sees it: `mcp.ClientSession.call_tool` over the stdio
transport (`mcp.client.stdio.stdio_client`) against a server process started by this script,
timed on the client side. Rows name the graph size. In the same run:

* ontoloom mcp — the data dir's owner, store kept open — validated `create_entity` p50/p95,
  `search` (two-word queries) p95 and the drop-in's `search_nodes` p95 (the same queries, as
  the reference is called: no limit), the graph loaded first with `ontoloom import`;
* the prompt hook — `ontoloom hook prompt-context`, a fresh process per prompt, JSON on stdin —
  while that `ontoloom mcp` owner is alive on the same data dir (the hook goes through it);
* sage-memory (PyPI), its `sage_memory_store` p50 and `sage_memory_search` p95, its memories
  loaded through its own `store()` function beforehand;
* the reference memory server (`@modelcontextprotocol/server-memory`, npm), `create_entities`
  p50 and `search_nodes` p95 over a JSONL file written beforehand.

The peers are installed on first use under bench/.peers/ (a throwaway venv; `npm install`),
never into ontoloom's own environment; a peer that cannot be installed or started is a row
"not available: why".

Targets (printed, not asserted): ontoloom create p50 ≤ 3 ms and ≤ 0.3 x sage-memory's; search
p95 ≤ sage-memory's at the same size; the drop-in's search_nodes p95 ≤ 0.5 x sage-memory's
search and ≤ 0.1 x the reference's search_nodes; the drop-in's single create_entities p50
≤ 0.3 x sage-memory's store; its open_nodes of 100 names p95 ≤ 20 ms at 100k entities (the
reference's beside it); the hook p50 ≤ 60 ms at 100k entities.

    python bench/mcp_bench.py [--sizes 10000,100000] [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ontoloom.terms import RdfFormat, serialize
from ontoloom.vocab import IdSpace
from peers import PEERS, Unavailable, installed, reference_script
from run import compile_package, hook_prompt, percentile, synthetic_quads

SAGE_PACKAGE = "sage-memory"
CREATE_TARGET_MS = 3.0
CREATE_VS_SAGE = 0.3
HOOK_TARGET_MS = 60.0
NODES_VS_SAGE = 0.5  # the drop-in's search_nodes p95 against sage-memory's search
NODES_VS_REFERENCE = 0.1  # … and against the reference's own search_nodes
OPEN_TARGET_MS = 20.0  # the drop-in's open_nodes of 100 names, p95 at 100k entities


@dataclass
class Row:
    server: str
    operation: str
    entities: int
    samples: list[float] = field(default_factory=list)
    note: str = ""

    @property
    def p50(self) -> float:
        return statistics.median(self.samples) * 1000

    @property
    def p95(self) -> float:
        return percentile(self.samples, 0.95) * 1000


# -- the shape of the data ------------------------------------------------------------------------
def counts(n: int) -> tuple[int, int, int]:
    """people, projects, tasks — as bench/run.py's synthetic graph has them."""
    people, projects = max(1, n // 20), max(1, n // 50)
    return people, projects, n - people - projects


def two_word_queries(n: int, count: int, seed: int = 3) -> list[str]:
    """Two-word queries naming one object each: 'number 4711' (a task's title is
    'Task number 4711'), 'Person 42', 'Project 7'. Each is also a substring of a name, so the
    reference server's substring search finds the same object."""
    rng = random.Random(seed)
    people, projects, tasks = counts(n)
    queries = []
    for i in range(count):
        kind = i % 4
        if kind < 2:
            queries.append(f"number {rng.randrange(tasks)}")
        elif kind == 2:
            queries.append(f"Person {rng.randrange(people)}")
        else:
            queries.append(f"Project {rng.randrange(projects)}")
    return queries


def open_batches(n: int, count: int, size: int = 100, seed: int = 5) -> list[dict[str, Any]]:
    """``open_nodes`` calls of ``size`` names each (people, projects and tasks, as both the
    drop-in and the reference name them)."""
    people, projects, tasks = counts(n)
    names = [
        *(f"Person {i}" for i in range(people)),
        *(f"Project {i}" for i in range(projects)),
        *(f"Task number {i}" for i in range(tasks)),
    ]
    rng = random.Random(seed)
    return [{"names": rng.sample(names, min(size, len(names)))} for _ in range(count)]


def peer_records(n: int) -> list[dict[str, Any]]:
    """The same n objects for the peers: name, kind, a sentence about it, its links."""
    people, projects, tasks = counts(n)
    statuses = ["open", "in_progress", "blocked", "done", "cancelled"]
    out: list[dict[str, Any]] = []
    for i in range(people):
        out.append({"name": f"Person {i}", "kind": "person", "text": f"Person {i} is on the team."})
    for i in range(projects):
        out.append({"name": f"Project {i}", "kind": "project", "text": f"Project {i} is active."})
    for i in range(tasks):
        out.append(
            {
                "name": f"Task number {i}",
                "kind": "task",
                "text": f"Task number {i} is {statuses[i % 5]}, assigned to Person {i % people}, "
                f"part of Project {i % projects}.",
                "assigned_to": f"Person {i % people}",
                "project": f"Project {i % projects}",
            }
        )
    return out


# -- driving a server over stdio --------------------------------------------------------------------
async def timed_calls(
    session: ClientSession, name: str, argument_list: list[dict[str, Any]]
) -> list[float]:
    samples = []
    for arguments in argument_list:
        start = time.perf_counter()
        result = await session.call_tool(name, arguments)
        samples.append(time.perf_counter() - start)
        if result.isError:
            text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
            raise Unavailable(f"{name} failed: {str(text)[:200]}")
    return samples


@contextlib.asynccontextmanager
async def connected(
    command: str, args: list[str], env: dict[str, str], cwd: Path, log: Path
) -> Any:
    """An initialised `ClientSession` to a server started over stdio (its stderr to ``log``)."""
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(cwd))
    with log.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await asyncio.wait_for(session.initialize(), timeout=120)
            yield session


def base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONTOLOOM_")}
    env.update(extra)
    return env


# -- ontoloom -------------------------------------------------------------------------------------
def ontoloom_command() -> str:
    script = Path(sys.executable).with_name("ontoloom")
    return str(script) if script.exists() else shutil.which("ontoloom") or "ontoloom"


def load_ontoloom(tmp: Path, n: int) -> tuple[Path, float]:
    """An instance with n synthetic entities, loaded by `ontoloom import` of an N-Triples
    file; its data dir and the import's wall time."""
    ontoloom = ontoloom_command()
    root = tmp / "ontoloom"
    subprocess.run([ontoloom, "init", str(root)], check=True, capture_output=True)
    data_dir = root / ".ontoloom"
    path = tmp / "data.nt"
    quads = synthetic_quads(types.SimpleNamespace(ids=IdSpace()), n)  # type: ignore[arg-type]
    with path.open("wb") as out:
        serialize([q.triple for q in quads], out, RdfFormat.N_TRIPLES)
    # 100k entities are 70 MiB of N-Triples, above the default input limit (64 MiB)
    limit = str(max(path.stat().st_size, 64 << 20))
    start = time.perf_counter()
    done = subprocess.run(
        [ontoloom, "import", str(path), "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        env={**base_env(), "ONTOLOOM_MAX_INPUT_BYTES": limit},
    )
    if done.returncode != 0:
        raise RuntimeError(f"ontoloom import failed: {done.stderr[-500:]}")
    return data_dir, time.perf_counter() - start


async def bench_ontoloom(n: int, repeat: int, hook_repeat: int, tmp: Path) -> list[Row]:
    data_dir, load = load_ontoloom(tmp, n)
    print(f"  ontoloom: imported {n} entities in {load:.1f} s", flush=True)
    creates = [
        {"type": "Task", "properties": {"title": f"Benchmark task {i}", "status": "open"}}
        for i in range(repeat)
    ]
    searches = [{"query": q, "limit": 10} for q in two_word_queries(n, repeat)]
    drop_in = [{"query": q} for q in two_word_queries(n, repeat)]
    env = base_env()
    ontoloom = ontoloom_command()
    async with connected(
        ontoloom, ["mcp", "--data-dir", str(data_dir)], env, tmp, tmp / "ontoloom-mcp.log"
    ) as session:
        await session.list_tools()
        # Warm the compiled plans and the search index, as a long-lived server has them.
        warm = [{"type": "Task", "properties": {"title": "Warm-up task", "status": "open"}}]
        await timed_calls(session, "create_entity", warm)
        await timed_calls(session, "search", searches[:5])
        create = await timed_calls(session, "create_entity", creates)
        search = await timed_calls(session, "search", searches)
        # the drop-in: the reference's own call (no limit), the same queries
        await timed_calls(session, "search_nodes", drop_in[:5])
        nodes = await timed_calls(session, "search_nodes", drop_in)
        # the drop-in's own create: one entity a call, as the reference is called
        drop_creates = [
            {
                "entities": [
                    {
                        "name": f"Drop-in task {i}",
                        "entityType": "Task",
                        "observations": ["status: open"],
                    }
                ]
            }
            for i in range(repeat)
        ]
        drop_create = await timed_calls(session, "create_entities", drop_creates)
        opened = await timed_calls(session, "open_nodes", open_batches(n, max(20, repeat // 4)))
        if not (data_dir / "owner.sock").exists():
            raise RuntimeError("ontoloom mcp did not become the data dir's owner")
        hook, answered, matching = await asyncio.to_thread(run_hooks, data_dir, n, hook_repeat, tmp)
    return [
        Row("ontoloom mcp (owner)", "create_entity", n, create, "validated"),
        Row("ontoloom mcp (owner)", "search", n, search, "two-word query"),
        Row("ontoloom mcp (owner)", "search_nodes", n, nodes, "drop-in; two-word query"),
        Row("ontoloom mcp (owner)", "create_entities", n, drop_create, "drop-in; one entity"),
        Row("ontoloom mcp (owner)", "open_nodes", n, opened, "drop-in; 100 names"),
        Row(
            "ontoloom hook, owner alive",
            "prompt-context",
            n,
            hook,
            f"fresh process; {answered}/{matching} matching prompts answered",
        ),
    ]


def run_hooks(data_dir: Path, n: int, repeat: int, tmp: Path) -> tuple[list[float], int, int]:
    """`ontoloom hook prompt-context` as Claude Code runs it, once per prompt: the times, how
    many prompts that should point at something got an answer, and of how many."""
    compile_package()
    rng = random.Random(5)
    people, projects, tasks = counts(n)
    args = [ontoloom_command(), "hook", "prompt-context", "--data-dir", str(data_dir)]
    samples, answered, matching = [], 0, 0
    for i in range(repeat + 1):
        prompt, expected = hook_prompt(i, rng, people, projects, tasks)
        event = {"hook_event_name": "UserPromptSubmit", "cwd": str(tmp), "prompt": prompt}
        start = time.perf_counter()
        done = subprocess.run(
            args, input=json.dumps(event).encode(), capture_output=True, env=base_env()
        )
        elapsed = time.perf_counter() - start
        if i == 0:
            continue  # warm the page cache, as a live instance has it
        samples.append(elapsed)
        matching += expected
        answered += bool(done.stdout) and expected
    return samples, answered, matching


# -- sage-memory ----------------------------------------------------------------------------------
SAGE_LOADER = r"""
import json, sys, time
from sage_memory import store as st
from sage_memory.embedder import LocalEmbedder, resolve, set_embedder
try:
    set_embedder(resolve(384))
except Exception:
    set_embedder(LocalEmbedder())
records = json.load(sys.stdin)
start = time.perf_counter()
for r in records:
    out = st.store(content=r["text"], title=r["name"], tags=[r["kind"]])
    if not out.get("success"):
        sys.exit("store failed: " + json.dumps(out)[:300])
print(time.perf_counter() - start)
"""


def sage_command(peers: Path) -> str:
    """The `sage-memory` console script (its MCP server over stdio), installed on first use
    into a throwaway venv under ``peers``."""
    venv = peers / "sage-venv"
    script = venv / "bin" / "sage-memory"
    if script.exists():
        return str(script)
    peers.mkdir(parents=True, exist_ok=True)
    python = python_with_sqlite_extensions()
    try:
        subprocess.run(
            [python, "-m", "venv", "--clear", str(venv)],
            check=True,
            capture_output=True,
            timeout=300,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise Unavailable(f"could not make a venv for {SAGE_PACKAGE}: {exc}") from exc
    pip = [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check"]
    installed([*pip, SAGE_PACKAGE], f"pip install {SAGE_PACKAGE}", script)
    return str(script)


def python_with_sqlite_extensions() -> str:
    """A Python ≥ 3.11 whose sqlite3 can load extensions (sage-memory loads sqlite-vec); some
    builds (pyenv's, by default) leave that out."""
    probe = (
        "import sqlite3, sys; assert sys.version_info >= (3, 11); "
        "sqlite3.connect(':memory:').enable_load_extension"
    )
    candidates = [sys.executable, "/usr/bin/python3", shutil.which("python3") or "python3"]
    for python in dict.fromkeys(candidates):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            if (
                subprocess.run([python, "-c", probe], capture_output=True, timeout=60).returncode
                == 0
            ):
                return python
    raise Unavailable("no Python ≥ 3.11 here whose sqlite3 can load extensions (sqlite-vec)")


async def bench_sage(n: int, repeat: int, peers: Path, tmp: Path, timeout: float) -> list[Row]:
    command = sage_command(peers)
    python = str(Path(command).with_name("python"))
    project, home = tmp / "sage-project", tmp / "sage-home"
    project.mkdir()
    home.mkdir()
    env = base_env(HOME=str(home), SAGE_PROJECT_ROOT=str(project), SAGE_CONFIG_DIR=str(project))
    try:
        done = subprocess.run(
            [python, "-c", SAGE_LOADER],
            input=json.dumps(peer_records(n)),
            capture_output=True,
            text=True,
            env=env,
            cwd=project,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        raise Unavailable(
            f"loading {n} memories through sage_memory.store() took over {timeout:.0f} s"
        ) from exc
    if done.returncode != 0:
        raise Unavailable(f"loading memories failed: {done.stderr.strip()[-200:]}")
    print(f"  sage-memory: stored {n} memories in {float(done.stdout):.1f} s", flush=True)
    stores = [
        {
            "content": f"Benchmark task {i} is open, assigned to Person {i % 7}.",
            "title": f"Benchmark task {i}",
            "tags": ["task"],
        }
        for i in range(repeat)
    ]
    searches = [{"query": q, "limit": 10} for q in two_word_queries(n, repeat)]
    async with connected(command, [], env, project, tmp / "sage.log") as session:
        await session.list_tools()
        await timed_calls(session, "sage_memory_search", searches[:5])
        await timed_calls(
            session,
            "sage_memory_store",
            [{"content": "A warm-up memory, stored before timing.", "title": "warm"}],
        )
        store = await timed_calls(session, "sage_memory_store", stores)
        search = await timed_calls(session, "sage_memory_search", searches)
    return [
        Row("sage-memory", "sage_memory_store", n, store, "unvalidated"),
        Row("sage-memory", "sage_memory_search", n, search, "two-word query"),
    ]


# -- the reference memory server ------------------------------------------------------------------
async def bench_reference(n: int, repeat: int, peers: Path, tmp: Path) -> list[Row]:
    script = reference_script(peers)
    memory = tmp / "memory.jsonl"
    with memory.open("w") as out:
        records = peer_records(n)
        for r in records:
            entity = {
                "type": "entity",
                "name": r["name"],
                "entityType": r["kind"],
                "observations": [r["text"]],
            }
            out.write(json.dumps(entity) + "\n")
        for r in records:
            if r["kind"] == "task":
                for source, target, rel in (
                    (r["name"], r["assigned_to"], "assigned_to"),
                    (r["project"], r["name"], "has_task"),
                ):
                    line = {"type": "relation", "from": source, "to": target, "relationType": rel}
                    out.write(json.dumps(line) + "\n")
    creates = [
        {
            "entities": [
                {
                    "name": f"Benchmark task {i}",
                    "entityType": "task",
                    "observations": ["open"],
                }
            ]
        }
        for i in range(repeat)
    ]
    searches = [{"query": q} for q in two_word_queries(n, repeat)]
    env = base_env(MEMORY_FILE_PATH=str(memory))
    async with connected("node", [str(script)], env, tmp, tmp / "reference.log") as session:
        await session.list_tools()
        await timed_calls(session, "search_nodes", searches[:3])
        create = await timed_calls(session, "create_entities", creates)
        search = await timed_calls(session, "search_nodes", searches)
        opened = await timed_calls(session, "open_nodes", open_batches(n, max(20, repeat // 4)))
    return [
        Row("server-memory (reference)", "create_entities", n, create, "one entity"),
        Row("server-memory (reference)", "search_nodes", n, search, "two-word query"),
        Row("server-memory (reference)", "open_nodes", n, opened, "100 names"),
    ]


# -- the table ------------------------------------------------------------------------------------
HEADER = f"{'server':<28}{'operation':<20}{'entities':>9}{'p50 ms':>10}{'p95 ms':>10}  note"


def show(row: Row) -> None:
    figures = f"{row.p50:>10.2f}{row.p95:>10.2f}" if row.samples else f"{'-':>10}{'-':>10}"
    print(f"{row.server:<28}{row.operation:<20}{row.entities:>9}{figures}  {row.note}", flush=True)


async def guarded(
    server: str, n: int, run: Callable[[], Awaitable[list[Row]]], timeout: float
) -> list[Row]:
    """A peer's rows, or one row saying why it could not be measured."""
    try:
        try:
            rows = await asyncio.wait_for(run(), timeout=timeout)
        except BaseExceptionGroup as group:  # the MCP client's task groups wrap what failed
            raise leaf(group) from group
    except Unavailable as exc:
        rows = [Row(server, "-", n, note=f"not available: {exc}")]
    except TimeoutError:
        rows = [Row(server, "-", n, note=f"not available: no answer within {timeout:.0f} s")]
    except Exception as exc:  # a peer's failure must not lose the other rows
        rows = [Row(server, "-", n, note=f"not available: {type(exc).__name__}: {exc}")]
    for row in rows:
        show(row)
    return rows


def leaf(group: BaseExceptionGroup) -> BaseException:
    """The first exception that is not a group: what actually failed."""
    first = group.exceptions[0]
    return leaf(first) if isinstance(first, BaseExceptionGroup) else first


def targets(rows: list[Row]) -> list[str]:
    def find(server: str, operation: str, n: int) -> Row | None:
        return next(
            (
                r
                for r in rows
                if r.server.startswith(server)
                and r.operation == operation
                and r.entities == n
                and r.samples
            ),
            None,
        )

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    lines = []
    for n in sorted({r.entities for r in rows}):
        ours = find("ontoloom mcp", "create_entity", n)
        sage_store = find("sage-memory", "sage_memory_store", n)
        if ours:
            lines.append(
                f"create p50 at {n}: {ours.p50:.2f} ms (target ≤ {CREATE_TARGET_MS:.0f} ms: "
                f"{verdict(ours.p50 <= CREATE_TARGET_MS)})"
            )
            if sage_store:
                ratio = ours.p50 / sage_store.p50
                lines.append(
                    f"create p50 at {n}: {ratio:.2f} x sage-memory's {sage_store.p50:.2f} ms "
                    f"(target ≤ {CREATE_VS_SAGE}x: {verdict(ratio <= CREATE_VS_SAGE)})"
                )
        search = find("ontoloom mcp", "search", n)
        sage_search = find("sage-memory", "sage_memory_search", n)
        if search and sage_search:
            lines.append(
                f"search p95 at {n}: {search.p95:.2f} ms vs sage-memory's {sage_search.p95:.2f} ms "
                f"(target ≤: {verdict(search.p95 <= sage_search.p95)})"
            )
        nodes = find("ontoloom mcp", "search_nodes", n)
        reference = find("server-memory", "search_nodes", n)
        if nodes and sage_search:
            ratio = nodes.p95 / sage_search.p95
            lines.append(
                f"drop-in search_nodes p95 at {n}: {nodes.p95:.2f} ms, {ratio:.2f} x "
                f"sage-memory's search (target ≤ {NODES_VS_SAGE}x: {verdict(ratio <= NODES_VS_SAGE)})"
            )
        if nodes and reference:
            ratio = nodes.p95 / reference.p95
            lines.append(
                f"drop-in search_nodes p95 at {n}: {ratio:.3f} x the reference's "
                f"{reference.p95:.2f} ms (target ≤ {NODES_VS_REFERENCE}x: "
                f"{verdict(ratio <= NODES_VS_REFERENCE)})"
            )
        drop_create = find("ontoloom mcp", "create_entities", n)
        if drop_create and sage_store:
            ratio = drop_create.p50 / sage_store.p50
            lines.append(
                f"drop-in create_entities p50 at {n}: {drop_create.p50:.2f} ms, {ratio:.2f} x "
                f"sage-memory's store (target ≤ {CREATE_VS_SAGE}x: {verdict(ratio <= CREATE_VS_SAGE)})"
            )
        opened = find("ontoloom mcp", "open_nodes", n)
        if opened and n >= 100000:
            lines.append(
                f"drop-in open_nodes (100 names) p95 at {n}: {opened.p95:.2f} ms "
                f"(target ≤ {OPEN_TARGET_MS:.0f} ms: {verdict(opened.p95 <= OPEN_TARGET_MS)})"
            )
        hook = find("ontoloom hook", "prompt-context", n)
        if hook and n >= 100000:
            lines.append(
                f"hook p50 at {n}: {hook.p50:.1f} ms (target ≤ {HOOK_TARGET_MS:.0f} ms: "
                f"{verdict(hook.p50 <= HOOK_TARGET_MS)})"
            )
    return lines


async def run_all(args: argparse.Namespace) -> list[Row]:
    sizes = [int(s) for s in args.sizes.split(",") if s]
    peers = Path(args.peers)
    print(HEADER, flush=True)
    rows: list[Row] = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="ontoloom-mcp-bench-") as name:
            tmp = Path(name)
            rows += await guarded(
                "ontoloom mcp (owner)",
                n,
                lambda n=n, tmp=tmp: bench_ontoloom(n, args.repeat, args.hook_repeat, tmp),
                args.timeout,
            )
            if "sage" not in args.skip:
                if n <= args.sage_max:
                    rows += await guarded(
                        "sage-memory",
                        n,
                        lambda n=n, tmp=tmp: bench_sage(n, args.repeat, peers, tmp, args.timeout),
                        args.timeout * 2,
                    )
                else:
                    rows.append(
                        Row(
                            "sage-memory",
                            "-",
                            n,
                            note="not run: above --sage-max (loading through its store() takes too long)",
                        )
                    )
                    show(rows[-1])
            if "reference" not in args.skip:
                if n <= args.reference_max:
                    rows += await guarded(
                        "server-memory (reference)",
                        n,
                        lambda n=n, tmp=tmp: bench_reference(n, args.repeat, peers, tmp),
                        args.timeout,
                    )
                else:
                    note = "not run: above --reference-max (it rewrites its whole file per write)"
                    rows.append(Row("server-memory (reference)", "-", n, note=note))
                    show(rows[-1])
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000", help="entities, comma-separated")
    parser.add_argument("--repeat", type=int, default=200, help="timed calls per tool")
    parser.add_argument("--hook-repeat", type=int, default=24, help="fresh hook processes")
    parser.add_argument(
        "--sage-max",
        type=int,
        default=10000,
        help="largest size for sage-memory (its own store() loads ~100 memories/s here)",
    )
    parser.add_argument(
        "--reference-max", type=int, default=10000, help="largest size for the reference server"
    )
    parser.add_argument(
        "--skip", default="", help="peers to leave out, comma-separated: sage,reference"
    )
    parser.add_argument("--peers", default=str(PEERS), help="where the peers are installed")
    parser.add_argument(
        "--timeout", type=float, default=900, help="seconds one server's figures may take"
    )
    args = parser.parse_args(argv)
    rows = asyncio.run(run_all(args))
    print()
    for line in targets(rows):
        print(line)


if __name__ == "__main__":
    main()
