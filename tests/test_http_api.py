"""The HTTP API describes itself (issue 32): `GET /api` is an OpenAPI 3.1 document generated
from the application layer's operation table, `GET /` points at the endpoints, every error body
is JSON, and the enums the API and MCP offer are the live schema's."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import jsonschema
import pytest

from conftest import wait_until
from ontoloom.errors import OUTCOMES
from ontoloom.ops import tools
from ontoloom.schema import Schema
from test_serve import ONTOLOOM, Server

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process control")


@pytest.fixture
def server(data_dir: Path) -> Iterator[Server]:
    made = subprocess.run(
        [*ONTOLOOM, "--data-dir", str(data_dir), "init"], capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    s = Server(data_dir)
    yield s
    s.stop()


def _document(server: Server) -> dict:
    got = httpx.get(f"{server.url}/api", headers=server.headers, timeout=30)
    assert got.status_code == 200, got.text
    assert got.headers["content-type"].startswith("application/json")
    return got.json()


def test_get_api_is_an_openapi_document_of_the_tools(server: Server) -> None:
    doc = _document(server)
    assert doc["openapi"].startswith("3.1.") and doc["info"]["title"] == "ontoloom"
    offered = {o.name: o for o in tools(Schema.load())}
    assert set(doc["paths"]) == {f"/api/{name}" for name in offered}
    for name, operation in offered.items():
        post = doc["paths"][f"/api/{name}"]["post"]
        assert post["operationId"] == name and post["description"] == operation.description
        body = post["requestBody"]["content"]["application/json"]["schema"]
        assert body == operation.input_schema()
        jsonschema.Draft202012Validator.check_schema(body)
        assert "200" in post["responses"]
        for status in ("400", "401", "422"):
            error = post["responses"][status]["content"]["application/json"]["schema"]
            assert error == {"$ref": "#/components/schemas/Error"}
        assert post["security"] == [{"bearer": []}]
    create = doc["paths"]["/api/create_entity"]["post"]["requestBody"]["content"]
    entity_type = create["application/json"]["schema"]["properties"]["type"]
    # 11 of the schema's 17 types: the others come from records, and the enum says so
    assert set(entity_type["enum"]) < set(Schema.load().types)
    assert "FailureClass" in entity_type["description"] and "rebuild" in entity_type["description"]
    error = doc["components"]["schemas"]["Error"]
    assert set(error["properties"]["error"]["enum"]) >= set(OUTCOMES)
    assert error["required"] == ["error", "message"]
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


def test_every_error_of_the_http_api_is_json(server: Server) -> None:
    """405 and 404 came as text/plain from the router; the API's own errors were JSON."""
    h = server.headers
    cases = [
        ("GET", "/api", {}, 401),  # no token
        ("GET", "/api/create_entity", h, 405),  # a tool is POSTed
        ("PUT", "/api", h, 405),
        ("GET", "/nowhere", h, 404),
        ("POST", "/api/no_such_tool", h, 400),
        ("POST", "/api/get_entity", h, 400),  # the body is not a JSON object: below
        ("DELETE", "/sparql", h, 405),
    ]
    for method, path, headers, status in cases:
        content = b"[" if path == "/api/get_entity" else None
        r = httpx.request(method, f"{server.url}{path}", headers=headers, content=content)
        assert r.status_code == status, (method, path, r.status_code, r.text)
        assert r.headers["content-type"].startswith("application/json"), (method, path)
        body = r.json()
        assert set(body) >= {"error", "message"} and body["message"], (method, path)
        assert body["error"] in OUTCOMES and OUTCOMES[body["error"]][1] == status, (method, path)
        if status == 405:
            assert body["error"] == "method_not_allowed"
            assert "allow" in r.headers and r.headers["allow"] in body["message"]


def test_get_root_points_at_the_endpoints(server: Server) -> None:
    r = httpx.get(f"{server.url}/")  # no token: it holds nothing of the graph
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert {body["api"], body["sparql"], body["mcp"]} == {"/api", "/sparql", "/mcp/"}
    assert body["ui"] is None and "Bearer" in body["auth"]


def test_get_root_with_ui_is_a_page_of_links_for_a_browser(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from ontoloom.serve import build_app

    with TestClient(build_app(tmp_path / "d", "s3cret", ui=True)) as client:
        page = client.get("/", headers={"Accept": "text/html,*/*;q=0.8"})
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        for link in ('href="/ui/"', 'href="/ui/review"', 'href="/api"'):
            assert link in page.text
        data = client.get("/", headers={"Accept": "application/json"}).json()
        assert data["ui"] == "/ui/"


def test_the_api_and_mcp_offer_the_live_schemas_types_when_another_process_owns_it(
    data_dir: Path, tmp_path: Path
) -> None:
    """With `ontoloom mcp` owning the data dir, a second server fell back to the shipped
    schema: a type added at run time was missing from create_entity's enum."""
    run = [*ONTOLOOM, "--data-dir", str(data_dir)]
    assert subprocess.run([*run, "init"], capture_output=True).returncode == 0
    added = subprocess.run(
        [*run, "schema", "add-type", '{"type": "Sprint", "required": ["name"]}'],
        capture_output=True,
        text=True,
    )
    assert added.returncode == 0, added.stderr
    owner = subprocess.Popen(
        [*run, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_until(lambda: (data_dir / "owner.sock").exists(), 30, what="the mcp owner")
        server = Server(data_dir)
        try:
            assert "Sprint" in _mcp_create_types(server)
            doc = _document(server)
            post = doc["paths"]["/api/create_entity"]["post"]
            enum = post["requestBody"]["content"]["application/json"]["schema"]["properties"]
            assert "Sprint" in enum["type"]["enum"]
        finally:
            server.stop()
    finally:
        assert owner.stdin is not None
        owner.stdin.close()
        deadline = time.monotonic() + 10
        while owner.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if owner.poll() is None:
            owner.kill()


def _mcp_create_types(server: Server) -> list[str]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async def main() -> list[str]:
        async with (
            streamablehttp_client(f"{server.url}/mcp/", headers=server.headers) as (r, w, _),
            ClientSession(r, w) as session,
        ):
            await session.initialize()
            listed = {t.name: t for t in (await session.list_tools()).tools}
            return list(listed["create_entity"].inputSchema["properties"]["type"]["enum"])

    return asyncio.run(main())
