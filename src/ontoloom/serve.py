"""``ontoloom serve``: the data dir's owner over HTTP (Starlette on uvicorn).

* ``/mcp`` — the MCP server (the same tools as ``ontoloom mcp``) over streamable HTTP;
* ``/sparql`` — the SPARQL 1.1 Protocol, query only (GET ``?query=``, POST form or
  ``application/sparql-query``); updates are refused;
* ``/api/{tool}`` — POST the tool's arguments as JSON, get its result as JSON: the CLI's
  refusals with their meanings as HTTP statuses (:data:`STATUS`).

Every request needs ``Authorization: Bearer <token>``: ``ONTOLOOM_TOKEN``, else the token
file in the data dir (created 0600 on first start, on loopback only). Every call goes
through :func:`ontoloom.mcp_server.dispatch`, so it runs where the graph is open: here when
this server owns the data dir, else in its owner.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import os
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ontoloom.errors import BadInput

__all__ = ["STATUS", "TOKEN_FILE", "build_app", "resolve_token", "serve"]

TOKEN_FILE = "serve.token"

# An error kind (the CLI's JSON "error") → the HTTP status that says the same.
STATUS = {
    "validation": 422,  # exit 1: refused by a rule, nothing stored
    "bad_input": 400,
    "parse": 400,
    "not_found": 404,
    "no_store": 404,
    "unsupported_query": 400,
    "busy": 503,
    "timeout": 504,
    "owner_gone": 502,
    "internal": 500,
}


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve_token(data_dir: Path, host: str) -> str:
    """The bearer token: ``ONTOLOOM_TOKEN``, else the data dir's token file — made (0600)
    on first start when the server listens on loopback only.

    :raises BadInput: a non-loopback bind with no token set up beforehand.
    """
    env = os.environ.get("ONTOLOOM_TOKEN")
    if env:
        return env
    path = data_dir / TOKEN_FILE
    if path.exists():
        token = path.read_text(encoding="utf-8").strip()
        if token:
            return token
    if not is_loopback(host):
        raise BadInput(
            f"--host {host} would serve the graph beyond this machine without a token: set "
            f"ONTOLOOM_TOKEN (or write one into {path}, mode 0600) first"
        )
    token = secrets.token_urlsafe(32)
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    return token


def build_app(data_dir: Path, token: str) -> Any:
    """The Starlette app serving ``data_dir`` (no owner claimed here: see :func:`serve`)."""
    import anyio
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Mount, Route
    from starlette.types import Receive, Scope, Send

    from ontoloom.mcp_server import build_server, dispatch

    sessions = StreamableHTTPSessionManager(app=build_server(data_dir), json_response=True)

    def authorised(headers: Any) -> bool:
        given = headers.get("authorization", "")
        scheme, _, value = given.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(value.strip(), token)

    def unauthorised() -> Response:
        return JSONResponse(
            {"error": "unauthorised", "message": "send Authorization: Bearer <token>"},
            status_code=401,
            headers={"WWW-Authenticate": 'Bearer realm="ontoloom"'},
        )

    async def call(name: str, arguments: dict[str, Any]) -> tuple[int, Any]:
        result = await anyio.to_thread.run_sync(dispatch, data_dir, name, arguments)
        data = result.structuredContent
        if result.isError:
            kind = (data or {}).get("error", "bad_input")
            text = result.content[0].text if result.content else ""
            body = data if data else {"error": kind, "message": text}
            return STATUS.get(kind, 400), body
        if isinstance(data, dict) and set(data) == {"result"}:
            data = data["result"]
        return 200, data

    async def api(request: Request) -> Response:
        if not authorised(request.headers):
            return unauthorised()
        try:
            arguments = json.loads(await request.body() or b"{}")
        except json.JSONDecodeError as exc:
            return JSONResponse(
                {"error": "bad_input", "message": f"the body is not JSON ({exc.msg})"}, 400
            )
        if not isinstance(arguments, dict):
            return JSONResponse(
                {"error": "bad_input", "message": "the body is a JSON object of arguments"}, 400
            )
        status, body = await call(request.path_params["tool"], arguments)
        return JSONResponse(body, status_code=status)

    async def sparql(request: Request) -> Response:
        if not authorised(request.headers):
            return unauthorised()
        query = request.query_params.get("query")
        if request.method == "POST":
            kind = request.headers.get("content-type", "").split(";")[0].strip()
            if kind == "application/sparql-query":
                query = (await request.body()).decode("utf-8")
            elif kind == "application/x-www-form-urlencoded":
                form = await request.form()
                if "update" in form:
                    query = None
                else:
                    value = form.get("query")
                    query = value if isinstance(value, str) else None
            else:
                return Response("POST application/sparql-query or a form", status_code=415)
        if not query:
            return Response("give the query: ?query=… (updates are not served)", 400)
        status, body = await call("query", {"query": query})
        if status != 200:
            return JSONResponse(body, status_code=status)
        if isinstance(body, dict) and body.get("format") == "turtle":  # CONSTRUCT, DESCRIBE
            return Response(body["turtle"], media_type="text/turtle")
        return JSONResponse(body, media_type="application/sparql-results+json")

    async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        if not authorised(headers):
            await unauthorised()(scope, receive, send)
            return
        await sessions.handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with sessions.run():
            yield

    return Starlette(
        routes=[
            Route("/api/{tool}", api, methods=["POST"]),
            Route("/sparql", sparql, methods=["GET", "POST"]),
            Mount("/mcp", app=mcp_endpoint),
        ],
        lifespan=lifespan,
    )


def serve(data_dir: Path, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve until interrupted; this process owns the data dir while it can."""
    import uvicorn

    from ontoloom.owner import Owner

    token = resolve_token(data_dir, host)
    owner = Owner.claim(data_dir)
    try:
        uvicorn.run(build_app(data_dir, token), host=host, port=port, log_level="warning")
    finally:
        if owner is not None:
            owner.close()
