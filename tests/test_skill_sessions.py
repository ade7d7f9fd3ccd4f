"""Sessions bound to a scope, through real clients (issue 33, item 4): `ontoloom mcp --skill`
over stdio with the SDK's client, and scoped tokens over HTTP (the JSON API, SPARQL and MCP
at /mcp) — the same refusals, as tool errors and as 403."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import Cli, quads_of
from test_mcp import ONTOLOOM as ONTOLOOM_EXE
from test_mcp import Session, drive
from test_serve import ONTOLOOM, Server

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process control")

TRIAGE = Path(__file__).resolve().parent.parent / "examples" / "skills" / "triage" / "SKILL.md"


def seed(data_dir: Path) -> None:
    """Ann (Person), project p, task t (assigned to Ann) — through the CLI."""
    for args in (
        ["create", "Person", "--id", "pers_ann", "-p", "name=Ann"],
        ["create", "Project", "--id", "proj_p", "-p", "name=Payments"],
        ["create", "Task", "--id", "task_t", "-p", "title=Fix login", "-p", "status=open"],
        ["relate", "task_t", "assigned_to", "pers_ann"],
    ):
        done = subprocess.run(
            [*ONTOLOOM, "--data-dir", str(data_dir), *args], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr


# -- mcp --skill ---------------------------------------------------------------------------------
def test_a_skill_session_offers_its_types_and_refuses_the_rest(data_dir: Path) -> None:
    seed(data_dir)

    async def body(s: Session) -> None:
        tools = {t.name: t for t in (await s.session.list_tools()).tools}
        assert "query" not in tools and "create_entities" not in tools
        assert tools["create_entity"].inputSchema["properties"]["type"]["enum"] == ["Task"]
        before = quads_of(data_dir)
        text, data = await s.refused(
            "create_entity", type="Project", properties={"name": "Side project"}
        )
        assert "skill 'triage'" in text and "does not write Project" in text
        assert data["error"] == "forbidden"
        assert quads_of(data_dir) == before  # nothing stored
        text, _ = await s.refused("get_entity", id="pers_ann")
        assert "skill 'triage'" in text and "does not read Person" in text
        text, _ = await s.refused("query", query="SELECT * WHERE { ?s ?p ?o }")
        assert 'reads: "*"' in text
        made = await s.ok(
            "create_entity", type="Task", properties={"title": "New", "status": "open"}
        )
        await s.ok("relate", from_id=made["id"], rel="part_of", to_id="proj_p")
        got = await s.raw("get_entity", id="task_t")
        assert not got.isError
        assert any("left out" in c.text for c in got.content)  # type: ignore[union-attr]

    run_skill_session(data_dir, TRIAGE, body)


def run_skill_session(data_dir: Path, skill: Path, body: Any) -> None:
    async def main() -> None:
        env = {k: v for k, v in os.environ.items() if k != "ONTOLOOM_HOME"}
        params = StdioServerParameters(
            command=ONTOLOOM_EXE,
            args=["--data-dir", str(data_dir), "mcp", "--skill", str(skill)],
            env=env,
        )
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            assert "skill 'triage'" in (init.instructions or "")
            await body(Session(session, []))

    drive(main())


def test_a_skill_session_beside_an_owner_is_judged_there_alike(
    data_dir: Path, served: tuple[Server, str]
) -> None:
    """The serve process owns the data dir: the skill session forwards its calls, with its
    contract, and the owner judges them as the session itself would."""

    async def body(s: Session) -> None:
        tools = {t.name: t for t in (await s.session.list_tools()).tools}
        assert tools["create_entity"].inputSchema["properties"]["type"]["enum"] == ["Task"]
        before = quads_of(data_dir)
        text, data = await s.refused("create_entity", type="Person", properties={"name": "Bo"})
        assert "skill 'triage'" in text and data["error"] == "forbidden"
        assert quads_of(data_dir) == before
        await s.ok(
            "create_entity", type="Task", properties={"title": "Via owner", "status": "open"}
        )

    run_skill_session(data_dir, TRIAGE, body)


def test_a_skill_without_a_valid_contract_is_refused_at_start(
    data_dir: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "SKILL.md"
    bad.write_text("---\nname: loose\ndescription: no contract\nontology:\n  writes: Task\n---\n")
    done = subprocess.run(
        [*ONTOLOOM, "--data-dir", str(data_dir), "mcp", "--skill", str(bad)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {bad}:5: ontology.writes: a list of type names")
    assert "Traceback" not in done.stderr
    over_http = subprocess.run(
        [*ONTOLOOM, "--data-dir", str(data_dir), "mcp", "--http", "--skill", str(TRIAGE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert over_http.returncode == 2 and "token add" in over_http.stderr


# -- tokens ----------------------------------------------------------------------------------------
def test_a_token_is_shown_once_and_stored_only_as_its_hash(cli: Cli, data_dir: Path) -> None:
    made = cli("token", "add", "triage", "--reads", "Project", "--writes", "Task")
    assert made.exit_code == 0, made.output
    token = made.stdout.strip()
    assert token.startswith("olt_") and len(token) > 40
    assert "shown this once" in made.stderr and token not in made.stderr
    path = data_dir / "tokens.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    stored = path.read_text()
    assert token not in stored
    assert json.loads(stored)["tokens"][0]["sha256"] == hashlib.sha256(token.encode()).hexdigest()
    listed = cli.json("token", "list")
    assert token not in listed.output and "sha256" not in listed.output
    assert json.loads(listed.output) == [
        {
            "name": "triage",
            "reads": ["Project"],
            "writes": ["Task"],
            "created": json.loads(stored)["tokens"][0]["created"],
        }
    ]
    again = cli("token", "add", "triage", "--reads", "Task")
    assert again.exit_code == 2 and "exists" in again.output
    assert cli("token", "add", "x", "--reads", "Tsk").exit_code == 2
    assert cli("token", "add", "y").exit_code == 2  # a token for no type
    assert cli("token", "revoke", "triage").exit_code == 0
    assert cli.json("token", "list").output.strip() == "[]"
    gone = cli("token", "revoke", "triage")
    assert gone.exit_code == 2 and "no token named 'triage'" in gone.output


@pytest.fixture
def served(data_dir: Path) -> Iterator[tuple[Server, str]]:
    seed(data_dir)
    server = Server(data_dir)
    try:
        # made while the server runs: through it, the data dir's owner
        made = subprocess.run(
            [
                *ONTOLOOM,
                "--data-dir",
                str(data_dir),
                "token",
                "add",
                "triage",
                "--reads",
                "Task,Project",
                "--writes",
                "Task",
            ],
            capture_output=True,
            text=True,
        )
        assert made.returncode == 0, made.stderr
        yield server, made.stdout.strip()
    finally:
        server.stop()


def post(server: Server, token: str, tool: str, body: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.post(f"{server.url}/api/{tool}", json=body, headers=headers, timeout=30)


def test_a_scoped_token_is_answered_403_outside_its_types(
    data_dir: Path, served: tuple[Server, str]
) -> None:
    server, token = served
    before = quads_of(data_dir)
    refused = post(server, token, "create_entity", {"type": "Project", "properties": {"name": "X"}})
    assert refused.status_code == 403
    assert refused.json()["error"] == "forbidden"
    assert "token 'triage'" in refused.json()["message"]
    assert quads_of(data_dir) == before
    assert post(server, token, "get_entity", {"id": "pers_ann"}).status_code == 403
    sparql = httpx.get(
        f"{server.url}/sparql",
        params={"query": "ASK { ?s ?p ?o }"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert sparql.status_code == 403 and sparql.json()["error"] == "forbidden"
    made = post(
        server,
        token,
        "create_entity",
        {"type": "Task", "properties": {"title": "T", "status": "open"}},
    )
    assert made.status_code == 200, made.text
    document = httpx.get(f"{server.url}/api", headers={"Authorization": f"Bearer {token}"}).json()
    assert "/api/query" not in document["paths"]
    # the server's own token still does everything
    assert (
        server.post("create_entity", {"type": "Project", "properties": {"name": "X"}}).status_code
        == 200
    )


def test_a_revoked_token_is_refused_at_once(data_dir: Path, served: tuple[Server, str]) -> None:
    server, token = served
    assert post(server, token, "get_entity", {"id": "task_t"}).status_code == 200
    revoked = subprocess.run(
        [*ONTOLOOM, "--data-dir", str(data_dir), "token", "revoke", "triage"],
        capture_output=True,
        text=True,
    )
    assert revoked.returncode == 0, revoked.stderr
    assert post(server, token, "get_entity", {"id": "task_t"}).status_code == 401
    assert post(server, token + "x", "get_entity", {"id": "task_t"}).status_code == 401


def test_mcp_over_http_judges_each_call_by_its_token(served: tuple[Server, str]) -> None:
    from mcp.client.streamable_http import streamablehttp_client

    server, token = served

    async def main() -> None:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            streamablehttp_client(f"{server.url}/mcp/", headers=headers) as (r, w, _),
            ClientSession(r, w) as session,
        ):
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert "query" not in tools
            assert tools["create_entity"].inputSchema["properties"]["type"]["enum"] == ["Task"]
            refused = await session.call_tool("get_entity", {"id": "pers_ann"})
            assert refused.isError and "token 'triage'" in refused.content[0].text  # type: ignore[union-attr]
            assert not (await session.call_tool("get_entity", {"id": "task_t"})).isError
        async with (
            streamablehttp_client(f"{server.url}/mcp/", headers=server.headers) as (r, w, _),
            ClientSession(r, w) as session,
        ):
            await session.initialize()
            assert "query" in {t.name for t in (await session.list_tools()).tools}
            assert not (await session.call_tool("get_entity", {"id": "pers_ann"})).isError

    asyncio.run(main())
