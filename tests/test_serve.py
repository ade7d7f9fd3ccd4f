"""`ontoloom serve` (issue 12): the owner over HTTP — MCP at /mcp, SPARQL at /sparql, the
tools as JSON at /api/TOOL — behind a bearer token, on loopback unless told otherwise."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process control")

ONTOLOOM = [sys.executable, "-m", "ontoloom.entry"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, data_dir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if k != "ONTOLOOM_TOKEN"}
        env["ONTOLOOM_LOCK_TIMEOUT"] = "10"  # the owner's own calls wait as a client would
        self.proc = subprocess.Popen(
            [*ONTOLOOM, "--data-dir", str(data_dir), "serve", "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    break
            except OSError:
                assert self.proc.poll() is None, self.proc.stderr.read() if self.proc.stderr else ""
                time.sleep(0.1)
        self.token = (data_dir / "serve.token").read_text().strip()
        self.headers = {"Authorization": f"Bearer {self.token}"}

    def post(self, tool: str, body: object) -> httpx.Response:
        return httpx.post(f"{self.url}/api/{tool}", json=body, headers=self.headers, timeout=30)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture
def server(data_dir: Path) -> Iterator[Server]:
    init = subprocess.run(
        [
            *ONTOLOOM,
            "--data-dir",
            str(data_dir),
            "create",
            "Person",
            "--id",
            "pers_ann",
            "-p",
            "name=Ann",
        ],
        capture_output=True,
    )
    assert init.returncode == 0, init.stderr
    s = Server(data_dir)
    yield s
    s.stop()


def test_the_token_is_made_private_and_required(data_dir: Path, server: Server) -> None:
    assert stat.S_IMODE((data_dir / "serve.token").stat().st_mode) == 0o600
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        r = httpx.post(f"{server.url}/api/get_entity", json={"id": "pers_ann"}, headers=headers)
        assert r.status_code == 401
    assert httpx.get(f"{server.url}/sparql", params={"query": "ASK {}"}).status_code == 401
    assert httpx.post(f"{server.url}/mcp/", json={}).status_code == 401


def test_the_json_api_maps_refusals_to_statuses(server: Server) -> None:
    made = server.post(
        "create_entity", {"type": "Task", "properties": {"title": "A", "status": "open"}}
    )
    assert made.status_code == 200, made.text
    assert made.json()["type"] == "Task"
    refused = server.post(
        "create_entity", {"type": "Task", "properties": {"title": "B", "status": "wip"}}
    )
    assert refused.status_code == 422
    assert refused.json()["error"] == "validation" and refused.json()["results"]
    assert server.post("get_entity", {"id": "pers_nope"}).status_code == 404
    assert server.post("get_entity", {"nope": 1}).status_code == 400
    assert server.post("no_such_tool", {}).status_code == 400
    bad = httpx.post(f"{server.url}/api/get_entity", content=b"{", headers=server.headers)
    assert bad.status_code == 400


def test_a_page_of_a_listing_with_more_after_it_says_where_the_next_begins(
    server: Server,
) -> None:
    for name in ("Bo", "Cy", "Di"):
        assert server.post("create_entity", {"type": "Person", "properties": {"name": name}})
    first = server.post("list_entities", {"type": "Person", "limit": 2})
    assert first.status_code == 200 and len(first.json()) == 2
    note = json.loads(f'"{first.headers["X-Ontoloom-Note"]}"')  # JSON-escaped ASCII
    after = note.rsplit('"after": "', 1)[1].rstrip('"')
    assert after == first.json()[-1]["id"]
    rest = server.post("list_entities", {"type": "Person", "limit": 2, "after": after})
    assert len(rest.json()) == 2 and "X-Ontoloom-Note" not in rest.headers  # the last page
    names = {e["properties"]["name"] for e in [*first.json(), *rest.json()]}
    assert names == {"Ann", "Bo", "Cy", "Di"}


def test_sparql_protocol_reads_and_refuses_updates(server: Server) -> None:
    q = "SELECT ?n WHERE { ?p <https://ontoloom.dev/ns#name> ?n }"
    got = httpx.get(f"{server.url}/sparql", params={"query": q}, headers=server.headers)
    assert got.status_code == 200
    assert got.headers["content-type"].startswith("application/sparql-results+json")
    assert [b["n"]["value"] for b in got.json()["results"]["bindings"]] == ["Ann"]
    posted = httpx.post(
        f"{server.url}/sparql",
        content=q,
        headers={**server.headers, "Content-Type": "application/sparql-query"},
    )
    assert posted.status_code == 200
    update = httpx.post(
        f"{server.url}/sparql",
        data={"update": "DELETE WHERE { ?s ?p ?o }"},
        headers=server.headers,
    )
    assert update.status_code == 400
    sneaky = httpx.get(
        f"{server.url}/sparql",
        params={"query": "DELETE WHERE { ?s ?p ?o }"},
        headers=server.headers,
    )
    assert sneaky.status_code == 400
    assert server.post("get_entity", {"id": "pers_ann"}).status_code == 200


@pytest.mark.parametrize(
    ("accept", "media"),
    [
        ("application/sparql-results+xml", "application/sparql-results+xml"),
        ("text/csv", "text/csv"),
        ("text/tab-separated-values;q=0.9, text/csv;q=0.1", "text/tab-separated-values"),
        ("*/*", "application/sparql-results+json"),
    ],
)
def test_sparql_results_come_in_the_format_accept_asks_for(
    server: Server, accept: str, media: str
) -> None:
    import pyoxigraph

    q = "SELECT ?n WHERE { ?p <https://ontoloom.dev/ns#name> ?n }"
    got = httpx.get(
        f"{server.url}/sparql", params={"query": q}, headers={**server.headers, "Accept": accept}
    )
    assert got.status_code == 200 and got.headers["content-type"].startswith(media)
    if media == "text/csv":  # lossy: pyoxigraph does not read it back
        assert got.text.split() == ["n", "Ann"]
        return
    fmt = pyoxigraph.QueryResultsFormat.from_media_type(media)
    rows = pyoxigraph.parse_query_results(got.content, format=fmt)
    assert [str(row["n"].value) for row in rows] == ["Ann"]


def test_sparql_graphs_come_as_turtle_or_n_triples_and_an_unserved_type_is_406(
    server: Server,
) -> None:
    q = "CONSTRUCT { ?p <https://ontoloom.dev/ns#name> ?n } WHERE { ?p <https://ontoloom.dev/ns#name> ?n }"

    def get(accept: str) -> httpx.Response:
        return httpx.get(
            f"{server.url}/sparql",
            params={"query": q},
            headers={**server.headers, "Accept": accept},
        )

    turtle, triples = get("text/turtle"), get("application/n-triples")
    assert turtle.headers["content-type"].startswith("text/turtle")
    assert triples.headers["content-type"].startswith("application/n-triples")
    assert triples.text.strip().endswith('"Ann" .') and triples.text.count("\n") == 1
    refused = get("image/png")
    assert refused.status_code == 406 and "text/csv" in refused.json()["message"]


def test_a_query_whose_kind_of_answer_accept_leaves_out_is_406(server: Server) -> None:
    select = "SELECT ?n WHERE { ?p <https://ontoloom.dev/ns#name> ?n }"
    construct = "CONSTRUCT { ?p <https://ontoloom.dev/ns#name> ?n } WHERE { ?p <https://ontoloom.dev/ns#name> ?n }"

    def get(query: str, accept: str) -> httpx.Response:
        headers = {**server.headers, "Accept": accept}
        return httpx.get(f"{server.url}/sparql", params={"query": query}, headers=headers)

    for query, accept in ((select, "text/turtle"), (construct, "application/sparql-results+json")):
        refused = get(query, accept)
        assert refused.status_code == 406, (accept, refused.text)
        assert "Accept" in refused.json()["message"]
    assert get(select, "text/*").headers["content-type"].startswith("text/csv")
    assert (
        get(construct, "application/*").headers["content-type"].startswith("application/n-triples")
    )


def test_sparql_refuses_updates_posted_the_standard_way_and_text_that_is_not_utf8(
    server: Server,
) -> None:
    update = httpx.post(
        f"{server.url}/sparql",
        content="INSERT DATA { <a:b> <a:c> <a:d> }",
        headers={**server.headers, "Content-Type": "application/sparql-update"},
    )
    assert update.status_code == 400 and "read-only" in update.json()["message"]
    raw = httpx.post(
        f"{server.url}/sparql",
        content=b'ASK {"\xff"}',
        headers={**server.headers, "Content-Type": "application/sparql-query"},
    )
    assert raw.status_code == 400 and raw.json()["error"] == "bad_input"
    api = httpx.post(
        f"{server.url}/api/search", content=b'{"query":"\xff"}', headers=server.headers
    )
    assert api.status_code == 400 and api.json()["error"] == "bad_input"


def test_mcp_over_http_with_the_official_client(server: Server) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async def main() -> None:
        async with (
            streamablehttp_client(f"{server.url}/mcp/", headers=server.headers) as (r, w, _),
            ClientSession(r, w) as session,
        ):
            await session.initialize()
            tools = await session.list_tools()
            assert "create_entity" in {t.name for t in tools.tools}
            got = await session.call_tool("get_entity", {"id": "pers_ann"})
            assert not got.isError

    asyncio.run(main())


def test_cli_works_through_the_server_as_owner(data_dir: Path, server: Server) -> None:
    done = subprocess.run(
        [*ONTOLOOM, "--data-dir", str(data_dir), "get", "pers_ann"],
        capture_output=True,
        text=True,
        env={**os.environ, "ONTOLOOM_LOCK_TIMEOUT": "0.3"},
    )
    assert done.returncode == 0, done.stderr


def test_a_public_address_needs_a_token_set_up_first(tmp_path: Path) -> None:
    data_dir = tmp_path / "d" / ".ontoloom"
    env = {k: v for k, v in os.environ.items() if k != "ONTOLOOM_TOKEN"}
    done = subprocess.run(
        [*ONTOLOOM, "--data-dir", str(data_dir), "serve", "--host", "0.0.0.0", "--port", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2
    assert "ONTOLOOM_TOKEN" in done.stderr and "Traceback" not in done.stderr
    assert not (data_dir / "serve.token").exists()


@pytest.mark.parametrize(
    "case", ["port in use", "blank env token", "empty token file", "open token file"]
)
def test_a_server_that_cannot_start_safely_says_why_with_exit_2(tmp_path: Path, case: str) -> None:
    import socket

    data_dir = tmp_path / "d" / ".ontoloom"
    data_dir.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k != "ONTOLOOM_TOKEN"}
    token = data_dir / "serve.token"
    says = {
        "port in use": "cannot listen on 127.0.0.1:",
        "blank env token": "ONTOLOOM_TOKEN is set but blank",
        "empty token file": "is empty",
        "open token file": "chmod 600",
    }[case]
    if case == "blank env token":
        env["ONTOLOOM_TOKEN"] = "  "
    elif case == "empty token file":
        token.write_text("\n")
        token.chmod(0o600)
    elif case == "open token file":
        token.write_text("s3cret-token\n")
        token.chmod(0o644)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1] if case == "port in use" else free_port()
        done = subprocess.run(
            [*ONTOLOOM, "--data-dir", str(data_dir), "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
    assert done.returncode == 2, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr
    assert "s3cret-token" not in done.stderr


def test_a_request_under_a_foreign_name_is_refused(server: Server) -> None:
    """DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends its own Host."""
    url = f"{server.url}/api/get_entity"
    body = {"id": "pers_ann"}
    for headers in (
        {"Host": f"evil.example:{server.port}"},
        {"Origin": "http://evil.example"},
    ):
        refused = httpx.post(url, json=body, headers={**server.headers, **headers}, timeout=30)
        assert refused.status_code == 403 and refused.json()["error"] == "forbidden"
        assert "pers_ann" not in refused.text
    local = {"Host": f"localhost:{server.port}", "Origin": f"http://127.0.0.1:{server.port}"}
    assert httpx.post(url, json=body, headers={**server.headers, **local}).status_code == 200


def test_an_oversized_or_too_deep_body_is_refused(server: Server) -> None:
    big = httpx.post(
        f"{server.url}/api/search",
        content=b'{"query": "' + b"x" * (65 * 1024 * 1024) + b'"}',
        headers={**server.headers, "Content-Type": "application/json"},
        timeout=60,
    )
    assert big.status_code == 413 and big.json()["error"] == "bad_input"
    deep = httpx.post(
        f"{server.url}/api/search",
        content=b"[" * 100_000 + b"]" * 100_000,
        headers=server.headers,
        timeout=30,
    )
    assert deep.status_code == 400 and deep.json()["error"] == "bad_input"
    assert server.post("get_entity", {"id": "pers_ann"}).status_code == 200  # still serving


def _first_line(proc: subprocess.Popen[bytes], timeout: float = 10) -> str:
    """The first line the server writes on stderr, waited for up to ``timeout`` seconds."""
    import select

    assert proc.stderr is not None
    ready, _, _ = select.select([proc.stderr], [], [], timeout)
    assert ready, f"nothing on stderr within {timeout:g} s"
    return proc.stderr.readline().decode("utf-8", "replace")


def test_serve_announces_its_address_and_where_the_token_is_never_the_token(
    data_dir: Path, server: Server
) -> None:
    line = _first_line(server.proc)
    assert f"http://127.0.0.1:{server.port}/" in line
    assert str(data_dir / "serve.token") in line
    assert server.token not in line


def test_serve_on_port_0_announces_the_port_it_listens_on_and_a_token_from_the_env(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "ONTOLOOM_TOKEN": "s3cret-token"}
    data_dir = tmp_path / "d" / ".ontoloom"
    made = [*ONTOLOOM, "--data-dir", str(data_dir), "create", "Person", "-p", "name=Ann"]
    assert subprocess.run(made, capture_output=True).returncode == 0
    proc = subprocess.Popen(
        [*ONTOLOOM, "--data-dir", str(data_dir), "serve", "--port", "0", "--ui"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        line = _first_line(proc)
        assert "ONTOLOOM_TOKEN" in line and "s3cret-token" not in line
        url = line.split("http://", 1)[1].split("/", 1)[0]
        assert not url.endswith(":0")
        answer = httpx.get(
            f"http://{url}/sparql",
            params={"query": "ASK {}"},
            headers={"Authorization": "Bearer s3cret-token"},
        )
        assert answer.status_code == 200
        assert f"http://{url}/ui/" in line  # one line, the view's address in it
        proc.terminate()
        assert proc.wait(timeout=20) == 0
        assert proc.stderr is not None  # after the address, only the request's log line
        rest = proc.stderr.read().decode("utf-8").splitlines()
        assert len(rest) == 1 and '"GET /sparql HTTP/1.1" 200' in rest[0], rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT"])
def test_a_signal_lets_the_request_in_flight_finish_and_the_server_exits_0(
    server: Server, stop: str
) -> None:
    import signal

    body = json.dumps({"id": "pers_ann"}).encode()
    head = (
        f"POST /api/get_entity HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        f"Authorization: Bearer {server.token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as slow:
        slow.sendall(head + body[:3])  # the request has begun; its body is still coming
        # Answered after the slow request's head was sent, on the same event loop: by then
        # the server has read that head, and the request is in flight.
        assert server.post("get_entity", {"id": "pers_ann"}).status_code == 200
        server.proc.send_signal(getattr(signal, stop))
        slow.sendall(body[3:])
        answer = b""
        while chunk := slow.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert b'"pers_ann"' in answer
    assert server.proc.wait(timeout=20) == 0
    assert server.proc.stderr is not None
    rest = server.proc.stderr.read().decode("utf-8", "replace")
    assert "error" not in rest and "Traceback" not in rest


def test_each_request_is_one_log_line_without_its_query_or_token(server: Server) -> None:
    """Issue 32: a service logs one line per request (the Common Log Format and the time
    taken); a SPARQL query's text and the bearer token stay out of the log."""
    assert server.post("get_entity", {"id": "pers_ann"}).status_code == 200
    secret_query = "SELECT * WHERE { ?s ?p 'private words' }"
    got = httpx.get(f"{server.url}/sparql", params={"query": secret_query}, headers=server.headers)
    assert got.status_code == 200
    assert httpx.get(f"{server.url}/api/nope", headers=server.headers).status_code == 405
    server.stop()
    assert server.proc.stderr is not None
    lines = server.proc.stderr.read().decode("utf-8").splitlines()[1:]  # after the address
    assert len(lines) == 3, lines
    pattern = re.compile(
        r'^127\.0\.0\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\] "(\w+) (\S+) HTTP/1\.1" '
        r"(\d{3}) (\d+|-) \d+\.\dms$"
    )
    parsed = [pattern.match(line) for line in lines]
    assert all(parsed), lines
    assert [(m[1], m[2], m[3]) for m in parsed if m] == [
        ("POST", "/api/get_entity", "200"),
        ("GET", "/sparql", "200"),
        ("GET", "/api/nope", "405"),
    ]
    log = "\n".join(lines)
    assert "private" not in log and server.token not in log


def test_mcp_http_is_the_server_announced_and_its_options_need_it(tmp_path: Path) -> None:
    data_dir = tmp_path / ".ontoloom"
    env = {k: v for k, v in os.environ.items() if k != "ONTOLOOM_TOKEN"}
    misused = subprocess.run(
        [*ONTOLOOM, "--data-dir", str(data_dir), "mcp", "--port", "1"],
        capture_output=True,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert misused.returncode == 2 and b"--port is for --http" in misused.stderr
    assert (
        subprocess.run(
            [*ONTOLOOM, "--data-dir", str(data_dir), "create", "Person", "-p", "name=Ann"],
            capture_output=True,
            env=env,
        ).returncode
        == 0
    )
    proc = subprocess.Popen(
        [*ONTOLOOM, "--data-dir", str(data_dir), "mcp", "--http", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        line = _first_line(proc)
        assert line.startswith("serving http://127.0.0.1:") and "serve.token" in line
        url = line.split("http://", 1)[1].split("/", 1)[0]
        token = (data_dir / "serve.token").read_text().strip()
        listed = httpx.post(
            f"http://{url}/mcp/",
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-03-26", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}},
            headers={"Authorization": f"Bearer {token}",
                     "Accept": "application/json, text/event-stream"},
        )  # fmt: skip
        assert listed.status_code == 200 and listed.json()["result"]["serverInfo"]
        proc.terminate()
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
