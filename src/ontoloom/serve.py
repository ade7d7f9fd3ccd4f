"""``ontoloom serve``: the data dir's owner over HTTP (Starlette on uvicorn).

* ``/mcp`` — the MCP server (the same tools as ``ontoloom mcp``) over streamable HTTP;
* ``/sparql`` — the SPARQL 1.1 Protocol, query only (GET ``?query=``, POST form or
  ``application/sparql-query``); updates are refused;
* ``/api/{tool}`` — POST the tool's arguments as JSON, get its result as JSON: the CLI's
  refusals with their meanings as HTTP statuses (:data:`ontoloom.errors.OUTCOMES`);
  ``GET /api`` — the OpenAPI 3.1 document of those (:func:`ontoloom.ops.describe.api_document`,
  from the live schema); every error, the router's own included, is JSON;
* ``/`` — where the endpoints are (JSON; a page of links for a browser with ``--ui``);
* ``/ui/`` and ``/ui/review`` (with ``--ui``) — the graph view and the review page. The pages
  carry no data: they fetch it from ``/ui/api/…`` with the same bearer token (taken from the
  address's ``#token=`` fragment or typed in), so every byte of the graph still needs it. A
  review decision runs the same operation as ``ontoloom proposals confirm ID``
  (:func:`run_operation`), where the graph is open.

Every request needs ``Authorization: Bearer <token>``: ``ONTOLOOM_TOKEN``, else the token
file in the data dir (created 0600 on first start, on loopback only) — it may do everything —
or a scoped token (``ontoloom token add``, :mod:`ontoloom.tokens`), whose calls are judged
against its types where every call is (:func:`ontoloom.ops.call`): 403 beyond them. Every call runs its
operation through :func:`ontoloom.owner.run`, where the graph is open: here when this server
owns the data dir, else in its owner.
"""

from __future__ import annotations

import contextlib
import hmac
import io
import ipaddress
import json
import os
import secrets
import sys
from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput, Internal, OntoloomError, Stopped
from ontoloom.secret_text import redact

if TYPE_CHECKING:
    from ontoloom.ops import Scope

__all__ = ["TOKEN_FILE", "announcement", "build_app", "resolve_token", "run_operation", "serve"]

TOKEN_FILE = "serve.token"


# What /sparql answers in, by media type: SELECT/ASK results, and CONSTRUCT/DESCRIBE graphs.
RESULT_TYPES = {
    "json": "application/sparql-results+json",
    "xml": "application/sparql-results+xml",
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
}
GRAPH_TYPES = {"turtle": "text/turtle", "ntriples": "application/n-triples"}
_ACCEPTED = {
    **{media: ("results", name) for name, media in RESULT_TYPES.items()},
    "application/json": ("results", "json"),
    "application/xml": ("results", "xml"),
    **{media: ("graph", name) for name, media in GRAPH_TYPES.items()},
    "text/plain": ("graph", "ntriples"),
}
SERVED = ", ".join([*RESULT_TYPES.values(), *GRAPH_TYPES.values()])


def negotiated(accept: str) -> tuple[str | None, str | None] | None:
    """The (results, graph) formats an Accept header asks for, most wanted first (q values;
    JSON and Turtle where it leaves the choice open): a side it leaves out is None (a query
    answering that way is then 406); None when it accepts nothing served.

    >>> negotiated("text/csv;q=0.5, application/n-triples")
    ('csv', 'ntriples')
    >>> negotiated(""), negotiated("text/*"), negotiated("text/turtle")
    (('json', 'turtle'), ('csv', 'turtle'), (None, 'turtle'))
    >>> negotiated("image/png") is None
    True
    """
    ranked: list[tuple[float, int, str]] = []
    for i, part in enumerate(p for p in accept.split(",") if p.strip()):
        media, *params = (x.strip() for x in part.split(";"))
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if q > 0:
            ranked.append((-q, i, media.lower()))
    if not ranked:
        return "json", "turtle"
    medias = [m for _, _, m in sorted(ranked)]
    found: dict[str, str | None] = {"results": None, "graph": None}
    for media in medias:
        if media in _ACCEPTED:
            side, name = _ACCEPTED[media]
            found[side] = found[side] or name
        elif media in _WILDCARDS:
            results, graph = _WILDCARDS[media]
            found["results"] = found["results"] or results
            found["graph"] = found["graph"] or graph
    if found["results"] is None and found["graph"] is None:
        return None
    return found["results"], found["graph"]


# What a media range stands for: the first served type it covers, for results and graphs.
_WILDCARDS = {
    "*/*": ("json", "turtle"),
    "application/*": ("json", "ntriples"),
    "text/*": ("csv", "turtle"),
}


def _unserved(types: dict[str, str]) -> str:
    return f"the Accept header allows none of {', '.join(types.values())}"


def graph_response(turtle: str, fmt: str) -> Any:
    """A CONSTRUCT/DESCRIBE result (Turtle, as the query tool gives it) in ``fmt``."""
    from starlette.responses import Response

    if fmt == "turtle":
        return Response(turtle, media_type=GRAPH_TYPES["turtle"])
    from ontoloom.terms import RdfFormat, parse, serialize

    triples = [q.triple for q in parse(turtle.encode("utf-8"), format=RdfFormat.TURTLE)]
    out = io.BytesIO()
    serialize(triples, out, RdfFormat.N_TRIPLES)
    return Response(out.getvalue(), media_type=GRAPH_TYPES["ntriples"])


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
    if env is not None:
        if not env.strip():
            raise BadInput(
                "ONTOLOOM_TOKEN is set but blank: no request could ever pass; set a token"
            )
        return env
    path = data_dir / TOKEN_FILE
    if path.exists():
        mode = path.stat().st_mode & 0o077
        if mode and os.name != "nt":
            raise BadInput(
                f"{path} can be read by other users (mode {path.stat().st_mode & 0o777:o}): "
                f"`chmod 600 {path}`, or delete it to have a new one made"
            )
        token = path.read_text(encoding="utf-8").strip()
        if not token:
            raise BadInput(f"{path} is empty: write a token into it, or delete it to have one made")
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


def run_operation(
    data_dir: Path, name: str, arguments: dict[str, Any], scope: Scope | None = None
) -> tuple[int, Any, str]:
    """Run an operation where the data dir's graph is open (:func:`ontoloom.owner.run`: here,
    or in its owner; a server with no owner alive claims the data dir), judged against the
    token's ``scope``: (HTTP status — from :data:`ontoloom.errors.OUTCOMES` for an error, 403
    outside the scope —, its JSON, its note)."""
    from ontoloom.owner import run

    try:
        result = run(data_dir, name, arguments, claim=True, scope=scope)
    except OntoloomError as exc:
        return exc.http_status, exc.to_json(), ""
    except Exception as exc:  # a bug must not take the server down, nor go unanswered
        return 500, Internal(f"unexpected {type(exc).__name__}: {exc}").to_json(), ""
    return 200, result.value, result.note or ""


def host_allowed(host: str, named: Collection[str]) -> bool:
    """Whether a request's ``Host`` (or its ``Origin``'s host) may be served: an IP address,
    ``localhost``, or a name the server was told (``--allow-host``). A DNS-rebinding page
    reaches the server under its own domain name, which is none of these.

    >>> host_allowed("127.0.0.1:8765", ()), host_allowed("[::1]:80", ()), host_allowed("localhost", ())
    (True, True, True)
    >>> host_allowed("evil.example:8765", ()), host_allowed("team.example", ["team.example"])
    (False, True)
    """
    import ipaddress
    from urllib.parse import urlsplit

    name = urlsplit(f"//{host}").hostname or ""
    if name == "localhost" or name in named or name in {n.lower() for n in named}:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Caller:
    """Who an authorised request comes from: the server's own token (``scope`` None: every
    type) or a scoped token (its types)."""

    scope: Scope | None


class _Guard:
    """What every request passes before the app sees it: a ``Host`` (and ``Origin``) the
    server answers to — see :func:`host_allowed` — and a body no larger than the largest
    input ontoloom reads (``ONTOLOOM_MAX_INPUT_BYTES``), refused while it streams in."""

    def __init__(self, app: Any, hosts: Collection[str] | None, max_body: int) -> None:
        self.app, self.max_body = app, max_body
        self.hosts = None if hosts is None else frozenset(h.lower() for h in hosts)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if self.hosts is not None:
            origin = headers.get("origin")
            wrong = not host_allowed(headers.get("host", ""), self.hosts) or (
                origin not in (None, "null")
                and not host_allowed(origin.partition("://")[2].partition("/")[0], self.hosts)
            )
            if wrong:
                message = (
                    "this server answers only to its address, an IP or localhost: start it "
                    "with --allow-host NAME to be reached under a name"
                )
                await _refuse(send, 403, "forbidden", message)
                return
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_body:
            await _refuse(send, 413, "bad_input", self._too_large())
            return
        seen = 0

        async def bounded() -> Any:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_body:
                raise _TooLarge
            return message

        try:
            await self.app(scope, bounded, send)
        except _TooLarge:
            await _refuse(send, 413, "bad_input", self._too_large())

    def _too_large(self) -> str:
        return (
            f"the body is larger than {self.max_body} bytes (ONTOLOOM_MAX_INPUT_BYTES): "
            "send less, or raise the limit where the server runs"
        )


class _TooLarge(Exception):
    pass


class RequestLog:
    """One line per HTTP request on ``stream`` once it is answered, in the Common Log Format
    with the time taken after it: ``127.0.0.1 - - [06/Dec/2026:01:30:00 +0000] "POST
    /api/create_entity HTTP/1.1" 200 345 2.1ms``. The path is written without its query
    string, and no header is: a query's text and the token never reach a log."""

    def __init__(self, app: Any, stream: Any = None) -> None:
        self.app, self.stream = app, stream

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        import time

        started = time.perf_counter()
        status, size = 0, 0

        async def counted(message: Any) -> None:
            nonlocal status, size
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                size += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, counted)
        finally:
            self._write(scope, status or 500, size, time.perf_counter() - started)

    def _write(self, scope: Any, status: int, size: int, seconds: float) -> None:
        import datetime as dt

        client = (scope.get("client") or ("-", 0))[0]
        when = dt.datetime.now(dt.UTC).strftime("%d/%b/%Y:%H:%M:%S +0000")
        path = scope.get("path", "") or "/"
        request = f"{scope.get('method', '-')} {path} HTTP/{scope.get('http_version', '1.1')}"
        line = f'{client} - - [{when}] "{request}" {status} {size or "-"} {seconds * 1000:.1f}ms'
        stream = self.stream or sys.stderr
        stream.write(redact(line) + "\n")
        stream.flush()


async def _refuse(send: Any, status: int, kind: str, message: str) -> None:
    body = json.dumps({"error": kind, "message": message}).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(body)),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def build_app(
    data_dir: Path, token: str, ui: bool = False, *, hosts: Collection[str] | None = None
) -> Any:
    """The Starlette app serving ``data_dir`` (no owner claimed here: see :func:`serve`);
    ``ui`` adds the pages under ``/ui/``; ``hosts``: the names it answers to besides IPs and
    localhost (None: any ``Host``, for an app mounted by its caller)."""
    import anyio
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Mount, Route
    from starlette.types import Receive, Send
    from starlette.types import Scope as Asgi

    from ontoloom.mcp_server import SCOPE_KEY, build_server
    from ontoloom.ops import static_operations

    sessions = StreamableHTTPSessionManager(app=build_server(data_dir), json_response=True)

    def authorised(headers: Any) -> Caller | None:
        """Who sends a request: the server's token (every type), a scoped token (its
        types, :mod:`ontoloom.tokens`), or None — not authorised."""
        given = headers.get("authorization", "")
        scheme, _, value = given.partition(" ")
        if scheme.lower() != "bearer":
            return None
        value = value.strip()
        if hmac.compare_digest(value.encode("utf-8"), token.encode("utf-8")):
            return Caller(None)
        from ontoloom.ops import Scope as Scoped
        from ontoloom.tokens import find_token

        try:
            entry = find_token(data_dir, value)
        except OntoloomError:  # a token file it cannot read: no scoped token passes
            return None
        if entry is None:
            return None
        return Caller(Scoped(f"token {entry.name!r}", entry.reads, entry.writes))

    def unauthorised() -> Response:
        return JSONResponse(
            {"error": "unauthorised", "message": "send Authorization: Bearer <token>"},
            status_code=401,
            headers={"WWW-Authenticate": 'Bearer realm="ontoloom"'},
        )

    async def call(
        name: str, arguments: dict[str, Any], scope: Scope | None
    ) -> tuple[int, Any, dict[str, str]]:
        """(status, body, headers) of a tool call; a note the tool adds to its result (a
        page with more after it names the next page's ``after``) is the X-Ontoloom-Note
        header, JSON-escaped to ASCII, so the body stays the tool's result."""
        known = static_operations().get(name)
        if known is None or not known.tool:
            message = f"unknown tool {name!r}: list the tools to see them"
            return 400, {"error": "bad_input", "message": message}, {}
        status, body, note = await anyio.to_thread.run_sync(
            run_operation, data_dir, name, arguments, scope
        )
        headers = {"X-Ontoloom-Note": json.dumps(note)[1:-1]} if note else {}
        return status, body, headers

    async def api(request: Request) -> Response:
        caller = authorised(request.headers)
        if caller is None:
            return unauthorised()
        try:
            arguments = json.loads(await request.body() or b"{}")
        except json.JSONDecodeError as exc:
            return JSONResponse(
                {"error": "bad_input", "message": f"the body is not JSON ({exc.msg})"}, 400
            )
        except UnicodeDecodeError:
            return bad_input("the body is not UTF-8 text")
        except RecursionError:
            return bad_input("the body nests too deeply to be arguments")
        if not isinstance(arguments, dict):
            return JSONResponse(
                {"error": "bad_input", "message": "the body is a JSON object of arguments"}, 400
            )
        status, body, headers = await call(request.path_params["tool"], arguments, caller.scope)
        return JSONResponse(body, status_code=status, headers=headers)

    def bad_input(message: str, status: int = 400) -> Response:
        kind = "bad_input" if status == 400 else _error_kind(status)
        return JSONResponse({"error": kind, "message": message}, status_code=status)

    read_only = "updates are not served here: /sparql is read-only (write through /api)"

    async def sparql(request: Request) -> Response:
        caller = authorised(request.headers)
        if caller is None:
            return unauthorised()
        wanted = negotiated(request.headers.get("accept", ""))
        if wanted is None:
            return bad_input(f"none of the Accept types is served; use one of {SERVED}", 406)
        results, graph = wanted

        query = request.query_params.get("query")
        if "update" in request.query_params:
            return bad_input(read_only)
        if request.method == "POST":
            kind = request.headers.get("content-type", "").split(";")[0].strip()
            if kind == "application/sparql-query":
                try:
                    query = (await request.body()).decode("utf-8")
                except UnicodeDecodeError:
                    return bad_input("the query is not UTF-8 text")
            elif kind == "application/x-www-form-urlencoded":
                form = await request.form()
                if "update" in form:
                    return bad_input(read_only)
                value = form.get("query")
                query = value if isinstance(value, str) else None
            elif kind == "application/sparql-update":
                return bad_input(read_only)
            else:
                return bad_input(
                    "POST the query as application/sparql-query or as a form", status=415
                )
        if not query:
            return bad_input("give the query: ?query=… (GET or a form) or a sparql-query body")
        arguments = {"query": query, "format": results or "json"}
        status, body, _ = await call("query", arguments, caller.scope)
        if status != 200:
            return JSONResponse(body, status_code=status)
        if isinstance(body, dict) and body.get("format") == "turtle":  # CONSTRUCT, DESCRIBE
            if graph is None:
                return bad_input(f"this query answers a graph; {_unserved(GRAPH_TYPES)}", 406)
            return graph_response(body["turtle"], graph)
        if results is None:
            return bad_input(f"this query answers results; {_unserved(RESULT_TYPES)}", 406)
        if results != "json":
            return Response(body["text"], media_type=RESULT_TYPES[results])
        return JSONResponse(body, media_type="application/sparql-results+json")

    async def mcp_endpoint(scope: Asgi, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        caller = authorised(headers)
        if caller is None:
            await unauthorised()(scope, receive, send)
            return
        # the MCP server judges this request's calls by its token's scope
        await sessions.handle_request({**scope, SCOPE_KEY: caller.scope}, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with sessions.run():
            yield

    async def api_document(request: Request) -> Response:
        caller = authorised(request.headers)
        if caller is None:
            return unauthorised()
        status, body, _ = await anyio.to_thread.run_sync(
            run_operation, data_dir, "api_document", {}, caller.scope
        )
        return JSONResponse(body, status_code=status)

    async def root(request: Request) -> Response:
        index = endpoints(ui)
        if ui and _prefers_html(request.headers.get("accept", "")):
            return HTMLResponse(_index_page(index))
        return JSONResponse(index)

    routes: list[Any] = [
        Route("/", root, methods=["GET"]),
        Route("/api", api_document, methods=["GET"]),
        Route("/api/{tool}", api, methods=["POST"]),
        Route("/sparql", sparql, methods=["GET", "POST"]),
        Mount("/mcp", app=mcp_endpoint),
    ]
    if ui:
        routes += _ui_routes(data_dir, authorised, unauthorised)
    from ontoloom.store.rdfio import input_limits

    handlers = {HTTPException: _http_error, Exception: _unexpected}
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers=handlers)
    return _Guard(app, hosts, input_limits()[0])


def endpoints(ui: bool) -> dict[str, Any]:
    """What ``GET /`` answers: where the server's endpoints are (no data of the graph, so no
    token is needed to read it)."""
    return {
        "name": "ontoloom",
        "api": "/api",
        "sparql": "/sparql",
        "mcp": "/mcp/",
        "ui": "/ui/" if ui else None,
        "auth": "every endpoint needs Authorization: Bearer <token> (ONTOLOOM_TOKEN, else the "
        "data dir's serve.token, or a scoped token from `ontoloom token add`); GET /api is the "
        "OpenAPI 3.1 document of POST /api/{tool}",
    }


def _prefers_html(accept: str) -> bool:
    """Whether a browser asks (text/html named before any JSON type)."""
    kinds = [part.split(";")[0].strip().lower() for part in accept.split(",")]
    html = kinds.index("text/html") if "text/html" in kinds else None
    json_at = kinds.index("application/json") if "application/json" in kinds else None
    return html is not None and (json_at is None or html < json_at)


def _index_page(index: dict[str, Any]) -> str:
    from html import escape

    links = [
        (index["ui"], "the graph view"),
        ("/ui/review", "the review page"),
        (index["api"], "the JSON API (OpenAPI 3.1)"),
        (index["sparql"], "SPARQL (read-only)"),
        (index["mcp"], "MCP (streamable HTTP)"),
    ]
    items = "".join(
        f'<li><a href="{escape(h)}">{escape(h)}</a> — {escape(t)}</li>' for h, t in links
    )
    return (
        '<!doctype html><html lang="en"><meta charset="utf-8"><title>ontoloom</title>'
        f"<h1>ontoloom</h1><ul>{items}</ul><p>{escape(index['auth'])}</p></html>"
    )


def _error_kind(status: int) -> str:
    """The kind an HTTP status stands for in :data:`ontoloom.errors.OUTCOMES` (the first with
    it); a status no kind has (413, 415) is bad input of the request's form."""
    from ontoloom.errors import OUTCOMES

    found = [kind for kind, (_exit, http) in OUTCOMES.items() if http == status]
    return found[0] if found else ("internal" if status >= 500 else "bad_input")


async def _http_error(request: Any, exc: Any) -> Any:
    """The router's own errors (no such path, a method the path does not take) as the API's:
    JSON, never text/plain."""
    from starlette.responses import JSONResponse

    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        allowed = headers.get("Allow", "")
        message = f"{request.method} is not served at {request.url.path}: use {allowed}"
    elif exc.status_code == 404:
        message = (
            f"nothing is served at {request.url.path}: GET / lists the endpoints, GET /api "
            "the tools"
        )
    else:
        message = str(exc.detail)
    body = {"error": _error_kind(exc.status_code), "message": message}
    return JSONResponse(body, status_code=exc.status_code, headers=headers)


async def _unexpected(request: Any, exc: Exception) -> Any:
    from starlette.responses import JSONResponse

    error = Internal(f"unexpected {type(exc).__name__}: {exc}")
    return JSONResponse(error.to_json(), status_code=500)


# What the review page may ask for: the operation that does it and the keys it takes.
_ACTIONS = {
    "confirm": ("proposals_confirm", ("id",)),
    "reject": ("proposals_reject", ("id", "reason")),
    "type": ("links_type", ("id", "rel")),
    "dismiss": ("links_dismiss", ("id",)),
}
_NEEDS = {"confirm": ("id",), "reject": ("id",), "type": ("id", "rel"), "dismiss": ("id",)}


def _ui_routes(data_dir: Path, authorised: Any, unauthorised: Any) -> list[Any]:
    import anyio
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
    from starlette.routing import Route

    from ontoloom.view import render_page

    headers = {
        "Cache-Control": "no-store",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "X-Content-Type-Options": "nosniff",
    }

    async def operation(name: str, arguments: dict[str, Any], scope: Scope | None) -> Response:
        status, body, _ = await anyio.to_thread.run_sync(
            run_operation, data_dir, name, arguments, scope
        )
        return JSONResponse(body, status_code=status, headers=headers)

    def bad(message: str) -> Response:
        return JSONResponse({"error": "bad_input", "message": message}, 400, headers=headers)

    async def page(request: Request) -> Response:
        kind = "review" if request.url.path.endswith("/review") else "view"
        return HTMLResponse(render_page(kind), headers=headers)

    async def view(request: Request) -> Response:
        caller = authorised(request.headers)
        if caller is None:
            return unauthorised()
        q = request.query_params
        arguments: dict[str, Any] = {
            "types": q.getlist("type"),
            "include_private": q.get("include_private") in ("1", "true"),
        }
        if q.get("focus"):
            depth = q.get("depth") or "1"
            if not depth.isdigit() or not 0 <= int(depth) <= 10:
                return bad(f"depth is a whole number from 0 to 10, not {depth!r}")
            arguments.update(focus=q["focus"], depth=int(depth))
        return await operation("view_data", arguments, caller.scope)

    async def queue(request: Request) -> Response:
        caller = authorised(request.headers)
        if caller is None:
            return unauthorised()
        out: dict[str, Any] = {}
        for key, name, arguments in (
            ("proposals", "proposals_list", {"status": "pending"}),
            ("candidates", "links_list", {}),
            ("schema", "schema_list", {}),
        ):
            status, body, _ = await anyio.to_thread.run_sync(
                run_operation, data_dir, name, arguments, caller.scope
            )
            if status != 200:
                return JSONResponse(body, status_code=status, headers=headers)
            out[key] = body
        schema = out.pop("schema")
        out["relations"] = [r["rel"] for r in schema.get("relations", [])]
        return JSONResponse(out, headers=headers)

    async def act(request: Request) -> Response:
        caller = authorised(request.headers)
        if caller is None:
            return unauthorised()
        action = request.path_params["action"]
        if action not in _ACTIONS:
            return JSONResponse(
                {"error": "not_found", "message": f"no action {action!r}: {', '.join(_ACTIONS)}"},
                404,
                headers=headers,
            )
        try:
            body = json.loads(await request.body() or b"{}")
        except json.JSONDecodeError as exc:
            return bad(f"the body is not JSON ({exc.msg})")
        except RecursionError:
            return bad("the body nests too deeply")
        if not isinstance(body, dict):
            return bad('the body is a JSON object, e.g. {"id": "1a2b3c4d5e6f"}')
        for key in _NEEDS[action]:
            if not isinstance(body.get(key), str) or not body[key]:
                return bad(f'{action} needs "{key}" (a string)')
        if body.get("reason") is not None and not isinstance(body["reason"], str):
            return bad('"reason" is a string')
        name, keys = _ACTIONS[action]
        return await operation(name, {key: body.get(key) for key in keys}, caller.scope)

    return [
        Route("/ui", lambda request: RedirectResponse("/ui/"), methods=["GET"]),
        Route("/ui/", page, methods=["GET"]),
        Route("/ui/review", page, methods=["GET"]),
        Route("/ui/api/view", view, methods=["GET"]),
        Route("/ui/api/review", queue, methods=["GET"]),
        Route("/ui/api/review/{action}", act, methods=["POST"]),
    ]


def serve(
    data_dir: Path,
    host: str = "127.0.0.1",
    port: int = 8765,
    ui: bool = False,
    allow_hosts: Collection[str] = (),
) -> None:
    """Serve until interrupted; this process owns the data dir while it can. Requests must
    name the server by an IP address, ``localhost``, ``host`` or one of ``allow_hosts``.

    Once it listens, one line on stderr says where (:func:`announcement`). SIGTERM or SIGINT
    stops it as a service is stopped: no new connection is taken, the requests in flight are
    answered, then :class:`~ontoloom.errors.Stopped` is raised here (the CLI exits 0).

    :raises BadInput: it cannot listen there, or has no token it may use.
    """
    import uvicorn

    from ontoloom.owner import owning

    token = resolve_token(data_dir, host)
    where = "ONTOLOOM_TOKEN" if os.environ.get("ONTOLOOM_TOKEN") else str(data_dir / TOKEN_FILE)
    _check_listen(host, port)

    class Announced(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                bound = self.servers[0].sockets[0].getsockname()[1]
                sys.stderr.write(announcement(host, bound, where, ui) + "\n")
                sys.stderr.flush()

    with owning(data_dir):
        app = RequestLog(build_app(data_dir, token, ui, hosts=[host, *allow_hosts]))
        server = Announced(uvicorn.Config(app, host=host, port=port, log_level="warning"))
        try:
            server.run()
        except Stopped:  # the signal uvicorn caught, raised again once it has shut down
            raise
        except SystemExit as exc:  # uvicorn could not start (it logged why)
            if exc.code not in (0, None):
                raise BadInput(f"cannot serve on {host}:{port}: see the message above") from None
            raise
        if not server.started:
            raise BadInput(f"cannot serve on {host}:{port}: see the message above")


def announcement(host: str, port: int, token_at: str, ui: bool = False) -> str:
    """The line a server writes once it listens: its address, and where its token is (a
    file or the variable, never the token itself).

    >>> announcement("127.0.0.1", 8765, "/srv/team/.ontoloom/serve.token")
    'serving http://127.0.0.1:8765/ (the bearer token is in /srv/team/.ontoloom/serve.token)'
    >>> announcement("::1", 80, "ONTOLOOM_TOKEN", ui=True)  # doctest: +NORMALIZE_WHITESPACE
    'serving http://[::1]:80/ (the bearer token is in ONTOLOOM_TOKEN); the view at
     http://[::1]:80/ui/ asks for it, or open http://[::1]:80/ui/#token=TOKEN'
    """
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    line = f"serving {url} (the bearer token is in {token_at})"
    if ui:
        line += f"; the view at {url}ui/ asks for it, or open {url}ui/#token=TOKEN"
    return line


def _check_listen(host: str, port: int) -> None:
    """Refuse an address this process cannot listen on, by name, before starting.

    :raises BadInput: an unknown host, or an address in use or not this machine's.
    """
    import socket

    try:
        family, kind, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise BadInput(f"--host {host}: not an address of this machine ({exc})") from None
    with socket.socket(family, kind) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise BadInput(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another --port "
                "(or --host), or stop what listens there"
            ) from None
