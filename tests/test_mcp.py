"""`ontoloom mcp` driven by a real MCP client session (the SDK's stdio client): every typed
tool, refusals as tool errors, results equal to the CLI's --json, the tool list following
the schema, and several servers sharing one data dir."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

from conftest import Cli, Listener, quads_of, wait_until_async
from records_fixture import build

ONTOLOOM = str(Path(sys.executable).with_name("ontoloom"))
TYPED_TOOLS = [
    "create_entity",
    "update_entity",
    "delete_entity",
    "get_entity",
    "relate",
    "unrelate",
    "relations",
    "traverse",
    "search",
    "check",
    "query",
    "plan_apply",
    "schema_list",
    "schema_add_type",
    "schema_add_relation",
    "summary",
    "guard",
    "why",
    "hints",
    "proposals_list",
    "proposals_confirm",
    "proposals_reject",
]
MEMORY_TOOLS = [
    "create_entities",
    "create_relations",
    "add_observations",
    "delete_entities",
    "delete_observations",
    "delete_relations",
    "read_graph",
    "search_nodes",
    "open_nodes",
]


class Session:
    """A connected client with helpers that fail loudly on the wrong outcome."""

    def __init__(self, session: ClientSession, notifications: list[Any]) -> None:
        self.session = session
        self.notifications = notifications

    async def raw(self, tool: str, **args: Any) -> CallToolResult:
        return await self.session.call_tool(tool, args)

    async def ok(self, tool: str, **args: Any) -> Any:
        result = await self.raw(tool, **args)
        text = result.content[0].text  # type: ignore[union-attr]
        assert not result.isError, f"{tool} failed: {text}"
        data = json.loads(text)
        structured = result.structuredContent
        # The structured content is the JSON of the text (a list wrapped as {"result": …}), or,
        # for the memory-server tools, the object whose one list the reference prints as text.
        assert structured in ({"result": data}, data) or list(structured.values()) == [data]
        return data

    async def refused(self, tool: str, **args: Any) -> tuple[str, Any]:
        result = await self.raw(tool, **args)
        assert result.isError, f"{tool} should have been refused"
        return result.content[0].text, result.structuredContent  # type: ignore[union-attr]


def run(
    data_dir: Path | None, body: Callable[[Session], Awaitable[None]], cwd: Path | None = None
) -> None:
    """Start `ontoloom mcp` as a subprocess (on ``data_dir``, else the instance around
    ``cwd``), connect, run ``body``."""

    async def main() -> None:
        env = {k: v for k, v in os.environ.items() if k != "ONTOLOOM_HOME"}
        params = StdioServerParameters(
            command=ONTOLOOM,
            args=["--data-dir", str(data_dir), "mcp"] if data_dir else ["mcp"],
            env=env,
            cwd=str(cwd) if cwd else None,
        )
        notifications: list[Any] = []

        async def on_message(message: Any) -> None:
            notifications.append(message)

        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, message_handler=on_message) as session,
        ):
            await session.initialize()
            await body(Session(session, notifications))

    drive(main())


def drive(coroutine: Awaitable[None]) -> None:
    """Run a client coroutine; a failure inside the SDK's task groups surfaces as itself."""
    try:
        asyncio.run(asyncio.wait_for(coroutine, timeout=300))
    except BaseExceptionGroup as group:
        while isinstance(group, BaseExceptionGroup):
            group = group.exceptions[0]
        raise group from None


# -- the tool list -------------------------------------------------------------------------------
def test_tools_are_listed_with_schemas_enums_and_truthful_annotations(data_dir: Path) -> None:
    async def body(s: Session) -> None:
        tools = {t.name: t for t in (await s.session.list_tools()).tools}
        assert set(TYPED_TOOLS + MEMORY_TOOLS) <= set(tools)
        create = tools["create_entity"].inputSchema
        assert set(create["required"]) == {"type", "properties"}
        assert "Task" in create["properties"]["type"]["enum"]
        assert "FailureClass" not in create["properties"]["type"]["enum"]  # read from records
        assert "Task: requires" in tools["create_entity"].description
        relate = tools["relate"].inputSchema
        assert set(relate["required"]) == {"from_id", "rel", "to_id"}
        assert "blocks" in relate["properties"]["rel"]["enum"]
        assert tools["traverse"].inputSchema["properties"]["depth"]["maximum"] == 5
        assert set(tools["search"].inputSchema["properties"]) >= {"query", "limit", "type"}
        for name in ("get_entity", "relations", "traverse", "search", "check", "query",
                     "schema_list", "summary", "guard", "why", "hints", "proposals_list",
                     "read_graph", "search_nodes", "open_nodes"):  # fmt: skip
            assert tools[name].annotations.readOnlyHint is True, name
        for name in ("delete_entity", "unrelate", "delete_entities", "delete_relations",
                     "delete_observations", "update_entity", "plan_apply"):  # fmt: skip
            hints = tools[name].annotations
            assert hints.readOnlyHint is False and hints.destructiveHint is True, name
        for name in ("create_entity", "create_entities", "schema_add_type", "proposals_reject"):
            hints = tools[name].annotations
            assert hints.readOnlyHint is False and hints.destructiveHint is False, name
        assert tools["create_entity"].annotations.idempotentHint is False
        assert tools["delete_entity"].annotations.idempotentHint is True
        assert all(t.annotations.openWorldHint is False for t in tools.values())

    run(data_dir, body)
    assert not data_dir.exists()  # listing tools never creates a store


# -- every typed tool ------------------------------------------------------------------------------
def test_entity_and_relation_tools_match_the_cli_json(data_dir: Path, cli: Cli) -> None:
    async def body(s: Session) -> None:
        alice = await s.ok("create_entity", type="Person", properties={"name": "Alice"})
        task = await s.ok(
            "create_entity",
            type="Task",
            id="task_fix",
            properties={"title": "Fix payment timeout", "status": "open", "tags": ["payments"]},
        )
        assert task["id"] == "task_fix" and task["properties"]["tags"] == ["payments"]
        deploy = await s.ok(
            "create_entity", type="Task", properties={"title": "Deploy checkout", "status": "open"}
        )
        related = await s.ok("relate", from_id="task_fix", rel="blocks", to_id=deploy["id"])
        assert related["created"] is True and related["rel"] == "blocks"
        await s.ok("relate", from_id="task_fix", rel="assigned_to", to_id=alice["id"])
        updated = await s.ok("update_entity", id="task_fix", properties={"priority": "high"})
        assert updated["properties"]["priority"] == "high"
        unset = await s.ok("update_entity", id="task_fix", unset=["priority"])
        assert "priority" not in unset["properties"]

        got = await s.ok("get_entity", id="task_fix")
        assert got == json.loads(cli.json("get", "task_fix").output)
        rels = await s.ok("relations", id="task_fix", direction="out")
        assert rels == json.loads(cli.json("relations", "task_fix", "--direction", "out").output)
        reached = await s.ok("traverse", id="task_fix", rel="blocks", depth=2)
        assert [r["id"] for r in reached] == [deploy["id"]]
        hits = await s.ok("search", query="payment timeout", type="Task", limit=5)
        assert hits[0]["id"] == "task_fix"
        listed = await s.ok("list_entities", type="Task", where={"status": "open"})
        assert {e["id"] for e in listed} == {"task_fix", deploy["id"]}
        assert await s.ok("summary") == json.loads(cli.json("summary").output)

        gone = await s.ok("unrelate", from_id="task_fix", rel="blocks", to_id=deploy["id"])
        assert gone["to_id"] == deploy["id"]
        deleted = await s.ok("delete_entity", id=deploy["id"])
        assert deleted["deleted"]["id"] == deploy["id"]

    run(data_dir, body)


def test_refusals_are_tool_errors_with_the_report_and_store_nothing(data_dir: Path) -> None:
    async def body(s: Session) -> None:
        await s.ok(
            "create_entity", type="Task", id="task_a", properties={"title": "A", "status": "open"}
        )
        await s.ok(
            "create_entity", type="Task", id="task_b", properties={"title": "B", "status": "open"}
        )
        await s.ok("relate", from_id="task_a", rel="blocks", to_id="task_b")
        before = quads_of(data_dir)

        text, data = await s.refused(
            "create_entity", type="Task", properties={"title": "No status"}
        )
        assert "A Task needs a status" in text and "nothing was stored" in text
        assert data["error"] == "validation" and data["results"][0]["path"] == "status"
        text, _ = await s.refused(
            "create_entity", type="Task", properties={"title": "x", "status": "finished"}
        )
        assert "exactly one of open" in text
        text, _ = await s.refused("relate", from_id="task_b", rel="blocks", to_id="task_a")
        assert "cycle" in text.lower()
        text, _ = await s.refused("create_entity", type="Sprint", properties={})
        assert "type: not one of" in text and '"Task"' in text and "schema_add_type" in text
        # an argument in the wrong place may be a secret: the message never quotes it
        token = "ghp_" + "a1B2" * 9
        for wrong in (
            {"type": token, "properties": {}},
            {"type": "Task", "properties": f"password={token}"},
            {"type": "Task", "properties": {}, token: 1},
        ):
            text, _ = await s.refused("create_entity", **wrong)
            assert token not in text and "invalid arguments for create_entity" in text
        text, _ = await s.refused("relate", from_id="task_a", rel="likes", to_id="task_b")
        assert "rel" in text and "schema_add_relation" in text
        text, data = await s.refused("get_entity", id="task_nope")
        assert "no entity with id 'task_nope'" in text
        # advice in this server's tools, not the CLI's commands
        assert "`list_entities` tool" in text and "`ontoloom" not in text
        assert "`ontoloom" not in data["message"]
        text, _ = await s.refused("create_entity", type="Task", properties={}, entity_id="x")
        assert "entity_id" in text  # a misspelt argument is named, not ignored
        text, _ = await s.refused("traverse", id="task_a", depth=9)
        assert "depth" in text
        text, _ = await s.refused("query", query="DELETE WHERE { ?s ?p ?o }")
        assert "read-only" in text
        text, _ = await s.refused("update_entity", id="task_a")
        assert "nothing to change" in text
        text, _ = await s.refused("no_such_tool")
        assert "unknown tool" in text
        text, data = await s.refused(
            "plan_apply",
            plan={"steps": [{"op": "relate", "from": "task_b", "rel": "blocks", "to": "task_a"}]},
            dry_run=True,
        )
        assert "would be refused" in text and data["valid"] is False
        text, _ = await s.refused(
            "plan_apply",
            plan=[
                {
                    "op": "create",
                    "type": "Task",
                    "as": "c",
                    "properties": {"title": "C", "status": "open"},
                },
                {"op": "relate", "from": "task_b", "rel": "blocks", "to": "task_a"},
            ],
        )
        assert "step 2" in text
        assert quads_of(data_dir) == before  # every refusal left the store as it was
        assert (await s.ok("get_entity", id="task_a"))["id"] == "task_a"  # still serving

    run(data_dir, body)


def test_query_plan_and_schema_tools(data_dir: Path) -> None:
    async def body(s: Session) -> None:
        plan = {
            "steps": [
                {"op": "create", "type": "Project", "as": "p", "properties": {"name": "Checkout"}},
                {
                    "op": "create",
                    "type": "Task",
                    "as": "t",
                    "properties": {"title": "Pay", "status": "open"},
                },
                {"op": "relate", "from": "p", "rel": "has_task", "to": "t"},
            ]
        }
        dry = await s.ok("plan_apply", plan=plan, dry_run=True)
        assert dry["applied"] is False and dry["valid"] is True and dry["delta"]["adds"]
        applied = await s.ok("plan_apply", plan=plan)
        assert applied["applied"] is True and set(applied["aliases"]) == {"p", "t"}

        rows = await s.ok("query", query="SELECT ?t WHERE { ?t a ol:Task } ORDER BY ?t")
        assert rows["head"]["vars"] == ["t"] and len(rows["results"]["bindings"]) == 1
        named = await s.ok("query", query="open-tasks-by-project")
        assert len(named["results"]["bindings"]) == 1
        bound = await s.ok(
            "query", query="neighbourhood", params={"start": applied["aliases"]["p"], "hops": 1}
        )
        assert "results" in bound
        graph = await s.ok("query", query="CONSTRUCT { ?t a ol:Task } WHERE { ?t a ol:Task }")
        assert graph["format"] == "turtle" and "Task" in graph["turtle"]
        assert (await s.ok("query", query="ASK { ?t a ol:Project }"))["boolean"] is True

        audit = await s.ok("check", explain=True)
        assert audit["conforms"] is True and audit["violations"] == 0 and audit["engines"]

        schema = await s.ok("schema_list")
        assert "Task" in {t["type"] for t in schema["types"]}
        added = await s.ok("schema_add_type", type="Sprint", required=["name"],
                           enums={"status": ["planning", "active", "closed"]})  # fmt: skip
        assert added["type"] == "Sprint" and added["builtin"] is False
        await wait_until_async(
            lambda: any(
                getattr(getattr(n, "root", None), "method", "")
                == "notifications/tools/list_changed"
                for n in s.notifications
            ),
            what="the tools/list_changed notification",
        )
        tools = {t.name: t for t in (await s.session.list_tools()).tools}
        assert "Sprint" in tools["create_entity"].inputSchema["properties"]["type"]["enum"]
        sprint = await s.ok(
            "create_entity", type="Sprint", properties={"name": "S1", "status": "active"}
        )
        text, _ = await s.refused("create_entity", type="Sprint", properties={"status": "active"})
        assert "Sprint needs name" in text
        rel = await s.ok("schema_add_relation", rel="in_sprint", from_types=["Task"],
                         to_types=["Sprint"], cardinality="many_to_one")  # fmt: skip
        assert rel["rel"] == "in_sprint"
        await s.ok("relate", from_id=applied["aliases"]["t"], rel="in_sprint", to_id=sprint["id"])
        text, _ = await s.refused("schema_add_type", type="Sprint")
        assert "already exists" in text

    run(data_dir, body)


def test_the_query_tool_refuses_service_and_reaches_no_endpoint(
    data_dir: Path, listener: Listener
) -> None:
    url = listener.url

    async def body(s: Session) -> None:
        await s.ok("create_entity", type="Task", properties={"title": "A", "status": "open"})
        for query in [
            f"SELECT * WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
            f"select * where {{ ?x ?y ?z optional {{ service silent <{url}> {{ ?s ?p ?o }} }} }}",
            f"ASK {{ ?s ?p ?o # note\rSERVICE <{url}> {{ ?a ?b ?c }}\n}}",
        ]:
            text, data = await s.refused("query", query=query)
            assert f"SERVICE <{url}> is refused" in text and "service_allow" in text
            assert data["error"] == "unsupported_query"
        text, _ = await s.refused(
            "query", query=f"SELECT * WHERE {{ BIND(<{url}> AS ?e) SERVICE ?e {{ ?s ?p ?o }} }}"
        )
        assert "variable" in text
        assert (await s.ok("query", query="ASK { ?t a ol:Task }"))["boolean"] is True

    run(data_dir, body)
    assert listener.requests == 0


def test_the_query_tool_stops_a_slow_query_at_its_timeout_and_a_write_then_goes_through(
    data_dir: Path, cli: Cli, tmp_path: Path
) -> None:
    data = tmp_path / "big.nt"
    data.write_text("".join(f'<urn:x:n{i}> <urn:x:p> "v{i}" .\n' for i in range(3000)))
    assert cli("import", str(data)).exit_code == 0

    async def body(s: Session) -> None:
        started = time.monotonic()
        text, result = await s.refused(
            "query",
            query="SELECT (COUNT(*) AS ?n) WHERE { ?a ?p ?b . ?c ?q ?d . ?e ?r ?f }",
            timeout=1,
        )
        assert "the query ran longer than 1 s and was stopped" in text
        assert "raise the timeout argument" in text and result["error"] == "timeout"
        assert time.monotonic() - started < 10
        await s.ok("create_entity", type="Person", properties={"name": "Wanda"})
        text, _ = await s.refused("query", query="ASK { ?s ?p ?o }", timeout=0)
        assert "timeout" in text

    run(data_dir, body)


def test_guard_why_hints_and_proposals(tmp_path: Path) -> None:
    root = build(tmp_path / "inst")
    cli = Cli(root / ".ontoloom")
    cli("init", str(root))
    cli("rebuild")
    response = tmp_path / "response.json"
    response.write_text(
        json.dumps(
            {
                "version": 1,
                "model": "claude-haiku-4-5",
                "candidates": [
                    {
                        "source": "rule:escape-terminal-output",
                        "relation": "enforced-by",
                        "target": "action:strip-control-bytes",
                        "evidence": {
                            "path": "records/memory/escape-terminal-output.md",
                            "quote": "Terminal output is escaped before it is logged.",
                        },
                    }
                ],
            }
        )
    )
    assert cli.json("enrich", "--ingest", str(response)).exit_code == 0

    async def body(s: Session) -> None:
        guarded = await s.ok("guard", text="ANSI escape codes ended up in the changelog")
        assert guarded == json.loads(
            cli.json("guard", "ANSI escape codes ended up in the changelog").output
        )
        assert guarded["matched"] is True and guarded["classes"][0]["recurrences"] >= 1
        assert (await s.ok("guard", **{"class": "literal-control-bytes"}))["matched"] is True
        assert (await s.ok("guard", text="the coffee machine is empty"))["matched"] is False
        text, _ = await s.refused("guard")
        assert "text" in text
        why = await s.ok("why", target="rule:no-raw-control-bytes")
        assert why == json.loads(cli.json("why", "rule:no-raw-control-bytes").output)
        hints = await s.ok("hints", target="rule:escape-terminal-output")
        assert len(hints) == 1 and hints[0]["status"] == "pending"
        pending = await s.ok("proposals_list")
        assert [p["id"] for p in pending] == [hints[0]["id"]]
        assert await s.ok("proposals_list", status="confirmed") == []
        confirmed = await s.ok("proposals_confirm", id=hints[0]["id"])
        assert confirmed["proposal"]["status"] == "confirmed"
        again = await s.ok("proposals_confirm", id=hints[0]["id"])  # idempotent
        assert again["already"] is True and again["proposal"]["status"] == "confirmed"
        text, _ = await s.refused("proposals_reject", id="000000000000")
        assert "000000000000" in text

    run(root / ".ontoloom", body)


def test_rejecting_a_proposal(tmp_path: Path) -> None:
    root = build(tmp_path / "inst")
    cli = Cli(root / ".ontoloom")
    cli("init", str(root))
    cli("rebuild")
    worklist = json.loads(cli.json("links").output)
    proposal = json.loads(cli.json("links", "type", worklist[0]["id"], "relates-to").output)

    async def body(s: Session) -> None:
        rejected = await s.ok("proposals_reject", id=proposal["id"], reason="not what it says")
        assert rejected["status"] == "rejected"
        assert await s.ok("proposals_list") == []

    run(root / ".ontoloom", body)


def test_read_tools_on_a_missing_store_say_how_to_make_one(data_dir: Path) -> None:
    async def body(s: Session) -> None:
        text, data = await s.refused("summary")
        assert "no ontoloom store" in text and data["error"] == "no_store"
        assert await s.ok("read_graph") == {"entities": [], "relations": []}

    run(data_dir, body)
    assert not data_dir.exists()


def test_the_server_finds_the_instance_it_is_started_in(tmp_path: Path) -> None:
    root = tmp_path / "team"
    Cli(root / ".ontoloom")("init", str(root))
    (root / "sub").mkdir()

    async def body(s: Session) -> None:
        await s.ok("create_entity", type="Person", properties={"name": "Ada"})

    run(None, body, cwd=root / "sub")
    assert len(json.loads(Cli(root / ".ontoloom").json("list", "--type", "Person").output)) == 1


# -- several servers, one data dir ---------------------------------------------------------------
def test_two_servers_writing_concurrently_lose_nothing(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    per_server = 25

    async def writer(tag: str) -> None:
        params = StdioServerParameters(
            command=ONTOLOOM, args=["--data-dir", str(data_dir), "mcp"], env=dict(os.environ)
        )
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            s = Session(session, [])
            for i in range(per_server):
                await s.ok("create_entities", entities=[
                    {"name": f"{tag}-{i}", "entityType": "person", "observations": [f"seen {i}"]},
                    {"name": "shared", "entityType": "project", "observations": []},
                ])  # fmt: skip
                await s.ok("create_relations", relations=[
                    {"from": f"{tag}-{i}", "to": "shared", "relationType": "works_on"},
                ])  # fmt: skip
                await s.ok("create_entity", type="Task",
                           properties={"title": f"{tag} task {i}", "status": "open"})  # fmt: skip

    async def both() -> None:
        await asyncio.gather(writer("left"), writer("right"))

    monkeypatch.setenv("ONTOLOOM_LOCK_TIMEOUT", "30")
    drive(both())
    monkeypatch.setenv("ONTOLOOM_LOCK_TIMEOUT", "0.3")

    async def verify(s: Session) -> None:
        graph = await s.ok("read_graph", limit=1000)
        names = [e["name"] for e in graph["entities"]]
        assert sorted(n for n in names if "-" in n) == sorted(
            f"{tag}-{i}" for tag in ("left", "right") for i in range(per_server)
        )
        assert names.count("shared") == 1  # created once, however the calls interleaved
        tasks = [n for n in names if " task " in n]
        assert len(tasks) == 2 * per_server
        assert (
            len([r for r in graph["relations"] if r["relationType"] == "works_on"])
            == 2 * per_server
        )
        assert (await s.ok("check"))["conforms"] is True

    run(data_dir, verify)


# a raw client's first two messages (id 1 is answered with the server's info)
HANDSHAKE: list[Any] = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def test_a_server_whose_stdin_is_a_file_reads_it_and_ends_at_its_end(
    data_dir: Path, tmp_path: Path
) -> None:
    """Pipes are read by the event loop itself; anything else (a file here, a terminal)
    the SDK's own way, which ends the session at the end of the file (a request still being
    answered then is dropped, as the SDK does: only the handshake is sure to be answered)."""
    import subprocess

    requests = HANDSHAKE
    script = tmp_path / "requests.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in requests))
    with script.open("rb") as stdin:
        done = subprocess.run(
            [ONTOLOOM, "--data-dir", str(data_dir), "mcp"],
            stdin=stdin,
            capture_output=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    answers = {a["id"]: a for a in map(json.loads, done.stdout.decode().splitlines())}
    assert answers[1]["result"]["serverInfo"]["name"] == "ontoloom"


def test_over_pipes_a_line_that_is_no_message_is_reported_and_the_server_goes_on(
    data_dir: Path,
) -> None:
    """The pipe transport reads and writes on the event loop: a line that is not JSON-RPC is
    reported (a log notification, as the SDK's transport does) and the next request answered;
    a message far longer than the event loop's default line limit (64 KiB) is read whole."""
    import subprocess

    long_title = "x" * 200_000
    requests = [
        *HANDSHAKE,
        "this line is no message",
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "create_entity",
                "arguments": {
                    "type": "Task",
                    "properties": {"title": long_title, "status": "open"},
                },
            },
        },
    ]
    lines = [r if isinstance(r, str) else json.dumps(r) for r in requests]
    server = subprocess.Popen(
        [ONTOLOOM, "--data-dir", str(data_dir), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(("\n".join(lines) + "\n").encode())
        server.stdin.flush()
        answers: dict[int, Any] = {}
        logged: list[Any] = []
        while 2 not in answers:
            line = server.stdout.readline()
            assert line, server.stderr.read() if server.stderr else "the server ended"
            message = json.loads(line)
            if "id" in message:
                answers[message["id"]] = message
            elif message.get("method") == "notifications/message":
                logged.append(message["params"])
        server.stdin.close()
        assert server.wait(timeout=60) == 0
    finally:
        if server.poll() is None:
            server.kill()
    assert answers[1]["result"]["serverInfo"]["name"] == "ontoloom"
    assert [entry["level"] for entry in logged] == ["error"]
    created = answers[2]["result"]
    assert created.get("isError") is not True, created
    assert created["structuredContent"]["properties"]["title"] == long_title


def test_a_tool_query_timeout_is_bounded(tmp_path: Path) -> None:
    """One call must not hold the read lock for as long as it likes (issue: an unbounded
    timeout let a single request block every writer)."""
    from ontoloom import ops
    from ontoloom.errors import BadInput

    ops.call(tmp_path, "create_entity", {"type": "Person", "properties": {"name": "A"}})
    with pytest.raises(BadInput, match="timeout"):
        ops.call(tmp_path, "query", {"query": "ASK {}", "timeout": 1e9})
    assert ops.call(tmp_path, "query", {"query": "ASK {}", "timeout": 300}).value["boolean"]


def test_the_check_tool_explains_as_the_cli_does(tmp_path: Path) -> None:
    """A drift between front ends: `check --explain --json` carried as_written, the MCP
    check tool did not. Both are one operation now."""
    from ontoloom import ops

    ops.call(tmp_path, "create_entity", {"type": "Person", "properties": {"name": "A"}})
    explained = ops.call(tmp_path, "check", {"explain": True}).value
    assert {"engines", "as_written"} <= set(explained) and explained["conforms"] is True


def test_the_query_tool_never_reads_a_file_named_by_its_caller(tmp_path: Path) -> None:
    """The owner answers other processes' calls: a `.rq` path is read by whoever names it
    (the CLI), never by the operation with the owner's rights."""
    from ontoloom import ops
    from ontoloom.errors import BadInput

    ops.call(tmp_path, "create_entity", {"type": "Person", "properties": {"name": "A"}})
    query = tmp_path / "private.rq"
    query.write_text("SELECT ?s WHERE { ?s ?p ?o }")
    with pytest.raises(BadInput, match="read by whoever names it"):
        ops.call(tmp_path, "query", {"query": str(query)})
