"""``ontoloom mcp``: the graph as an MCP server over stdio, on the official SDK.

The tools are the application's operations (:mod:`ontoloom.ops`): the typed ones and the
reference memory server's. The first server of a data dir becomes its owner (:mod:`ontoloom.owner`)
and keeps the graph open; other servers, the CLI and the hooks send their work to it, so
several servers and the CLI share one instance without losing a write. Arguments are checked against the tool's schema built from the *live*
schema; any error becomes a tool error (``isError``) whose text says what and how to fix it,
a validation refusal's text being the report. The server itself never dies of a bad call.
"""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import NotificationOptions, Server

from ontoloom import ops
from ontoloom.errors import Internal, OntoloomError, OwnerTookOver, Stopped
from ontoloom.mcp_server.pipes import stdio_streams
from ontoloom.ops import Result, Scope, static_operations
from ontoloom.ops.describe import tool_list
from ontoloom.schema import Schema
from ontoloom.secret_text import redact

__all__ = ["build_server", "serve"]

INSTRUCTIONS = """\
ontoloom is the team's shared, typed memory: entities (tasks, people, projects, events,
documents…) and the operational record (recurring failures, rules, decisions, runbooks).
Every write is validated against the schema; a refused write says which rule broke and how
to fix it, and stores nothing. Search before you create. Ids look like task_a1b2c3d4 or
rule:no-raw-control-bytes. When something fails, ask guard whether it happened before; ask
why for the decisions behind a rule. Proposals are unconfirmed until a person confirms them.
The memory-server tools (create_entities, read_graph, …) work on the same graph."""


def _tools(data_dir: Path, scope: Scope | None = None) -> list[types.Tool]:
    """The tools as the live schema describes them, where the data dir's graph is open (here,
    or in its owner: a store another process holds has the same added types); the shipped
    schema's when there is no store. With ``scope``, those it allows, with its types."""
    from ontoloom.owner import run

    try:
        listed = run(data_dir, "tool_list", {}, claim=True, scope=scope).value
    except OntoloomError:  # an owner not answering: the tools still list, without extensions
        listed = tool_list(Schema.load(), scope)
    return [types.Tool.model_validate(tool) for tool in listed]


#: Where an HTTP front end puts the scope of a request's bearer token (in the ASGI scope)
#: for the MCP server to judge its calls by; a request without it is the server's own.
SCOPE_KEY = "ontoloom.scope"


def _is_tool(name: str) -> bool:
    known = static_operations().get(name)
    return known is not None and known.tool


def _text(data: Any) -> str:
    """The JSON the CLI's ``--json`` prints, on one line: fewer tokens for the agent, and
    the C encoder (an indented dump runs in pure Python: a third of a search's time here)."""
    return json.dumps(data, ensure_ascii=False, default=str)


# The command a message advises → the tool that does it here (the rest stay: editing a record
# and `ontoloom rebuild` are a person's work, named as such).
_TOOL_FOR_COMMAND = {
    "ontoloom list": "list_entities",
    "ontoloom create": "create_entity",
    "ontoloom update": "update_entity",
    "ontoloom delete": "delete_entity",
    "ontoloom show": "get_entity",
    "ontoloom relate": "relate",
    "ontoloom unrelate": "unrelate",
    "ontoloom relations": "relations",
    "ontoloom traverse": "traverse",
    "ontoloom search": "search",
    "ontoloom check": "check",
    "ontoloom query": "query",
    "ontoloom plan apply": "plan_apply",
    "ontoloom schema list": "schema_list",
    "ontoloom schema show": "schema_list",
    "ontoloom schema add-type": "schema_add_type",
    "ontoloom schema add-relation": "schema_add_relation",
    "ontoloom summary": "summary",
    "ontoloom guard": "guard",
    "ontoloom why": "why",
    "ontoloom hints": "hints",
    "ontoloom proposals confirm": "proposals_confirm",
    "ontoloom proposals reject": "proposals_reject",
    "ontoloom proposals": "proposals_list",
}
_COMMAND = re.compile(r"`(ontoloom [^`]*)`")


def in_tool_terms(message: str) -> str:
    """A message with the CLI commands it advises named as this server's tools.

    >>> in_tool_terms("no entity with id x: check the id with `ontoloom list`")
    'no entity with id x: check the id with the `list_entities` tool'
    >>> in_tool_terms("edit the record and run `ontoloom rebuild`")
    'edit the record and run `ontoloom rebuild`'
    """

    def named(match: re.Match[str]) -> str:
        words = match.group(1).split()
        for n in range(len(words), 1, -1):
            tool = _TOOL_FOR_COMMAND.get(" ".join(words[:n]))
            if tool is not None:
                return f"the `{tool}` tool"
        return match.group(0)

    return _COMMAND.sub(named, message)


def _error(message: str, data: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)],
        structuredContent=data,
        isError=True,
    )


def tool_result(name: str, result: Result) -> types.CallToolResult:
    """An operation's result as the tool's: its JSON as structured content, its text form
    (the operation's rendering, else the JSON), and its note as a second text."""
    known = static_operations().get(name)
    data = result.value
    structured = data if isinstance(data, dict) else {"result": data}
    # A write whose owner died after committing it answers its write status, not its result.
    lost = isinstance(data, dict) and data.get("answer_lost")
    render = None if known is None or lost else known.render
    text = render(data) if render is not None else _text(data)
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
    if result.note:
        content.append(types.TextContent(type="text", text=f"note: {result.note}"))
    for warning in result.warnings:  # what the CLI prints on stderr (a shape judged in part)
        content.append(types.TextContent(type="text", text=f"warning: {warning}"))
    return types.CallToolResult(content=content, structuredContent=structured)


def tool_error(exc: OntoloomError) -> types.CallToolResult:
    """An error as a tool error (``isError``): its report, the CLI advice in tool terms."""
    report = exc.to_json()
    if isinstance(report.get("message"), str):
        report["message"] = in_tool_terms(report["message"])
    return _error(in_tool_terms(exc.message), report)


def call(
    data_dir: Path, name: str, arguments: dict[str, Any], scope: Scope | None = None
) -> types.CallToolResult:
    """Run one tool call to completion in this process (blocking): the operation of that
    name, its answer or its error as the tool's."""
    if not _is_tool(name):
        return _error(redact(f"unknown tool {name!r}: list the tools to see them"))
    try:
        return tool_result(name, ops.call(data_dir, name, arguments, scope=scope))
    except OwnerTookOver:
        raise  # nothing was done: dispatch sends the call to the new owner
    except OntoloomError as exc:
        return tool_error(exc)
    except Exception as exc:  # a bug must not take the server (and the agent's tools) down
        return tool_error(Internal(f"unexpected {type(exc).__name__}: {exc}"))


def dispatch(
    data_dir: Path, name: str, arguments: dict[str, Any], scope: Scope | None = None
) -> types.CallToolResult:
    """Run a tool call where the data dir's graph is open (:func:`ontoloom.owner.run`: here,
    or in its owner; a server with no owner alive claims the data dir), judged against
    ``scope`` there."""
    from ontoloom.owner import run

    if not _is_tool(name):
        return _error(redact(f"unknown tool {name!r}: list the tools to see them"))
    try:
        return tool_result(name, run(data_dir, name, arguments, claim=True, scope=scope))
    except OntoloomError as exc:
        return tool_error(exc)
    except Exception as exc:  # a bug must not take the server (and the agent's tools) down
        return tool_error(Internal(f"unexpected {type(exc).__name__}: {exc}"))


# The drop-in's reads answered off the search index (ontoloom.memory): milliseconds, like a
# call on one object. Over stdio one client waits for its own answer either way, so one is
# run on the event loop when the graph is free at once (two thread hand-offs spared); over
# HTTP it goes to a worker thread, so that a large answer never holds other clients' calls.
_INDEX_READS = frozenset({"search_nodes", "open_nodes"})


def build_server(data_dir: Path, scope: Scope | None = None, *, one_client: bool = False) -> Server:
    """The MCP server over ``data_dir`` (the tools and their handler; no transport). Every
    call is judged against ``scope`` (a skill's contract), or over HTTP against the scope
    of the request's token (:data:`SCOPE_KEY`). ``one_client``: a transport serving one
    client (stdio), which may have the drop-in's index reads run on the event loop."""
    from importlib.metadata import version

    instructions = INSTRUCTIONS
    if scope is not None:
        instructions += (
            f"\nThis session is bound to {scope.name}: it reads "
            f"{_named(scope.readable)} and writes {_named(scope.writes)}; a call beyond that "
            "is refused."
        )
    server: Server = Server("ontoloom", version=version("ontoloom"), instructions=instructions)

    def scope_now() -> Scope | None:
        try:
            request = server.request_context.request
        except LookupError:  # a handler called outside a request (in process): the default
            return scope
        found = getattr(request, "scope", None)
        if isinstance(found, dict) and SCOPE_KEY in found:
            given: Scope | None = found[SCOPE_KEY]
            return given
        return scope

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return await anyio.to_thread.run_sync(_tools, data_dir, scope_now())

    @server.call_tool(validate_input=False)  # checked against the live schema in `call`
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        from ontoloom.owner import held_at_once

        caller = scope_now()
        known = static_operations().get(name)
        result = None
        if known is not None and (
            known.on_one_object(arguments or {}) or (one_client and name in _INDEX_READS)
        ):
            # A call on one object, with the graph free in this process: done here, in
            # milliseconds, rather than handed to a worker thread and back. Anything that
            # would wait (the graph busy, another process owning it) goes to the thread.
            with held_at_once(data_dir) as held:
                if held:
                    result = dispatch(data_dir, name, arguments or {}, caller)
        if result is None:
            result = await anyio.to_thread.run_sync(
                dispatch, data_dir, name, arguments or {}, caller
            )
        if known is not None and known.changes_schema and not result.isError:
            # The enums of types and relations changed: clients re-list the tools.
            await server.request_context.session.send_tool_list_changed()
        return result

    return server


def _named(types_: frozenset[str] | None) -> str:
    return "every type" if types_ is None else (", ".join(sorted(types_)) or "no type")


def serve(data_dir: str | Path | None = None, scope: Scope | None = None) -> None:
    """Serve over stdio until the client closes the connection; every call judged against
    ``scope`` (a skill's contract) when one is given."""
    import os
    import sys

    from ontoloom.locate import locate

    found = locate(os.fspath(data_dir) if data_dir else None)
    path = Path(found.path)
    if found.rule == "user":
        # Clients start servers anywhere: never write there; say once where memory lives.
        print(
            f"ontoloom: {found.reason} {path} (set ONTOLOOM_HOME or pass --data-dir to use "
            "another; `ontoloom where` shows it)",
            file=sys.stderr,
            flush=True,
        )
        path.mkdir(parents=True, exist_ok=True)
    server = build_server(path, scope, one_client=True)
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    # The process's own stdio, taken once: the transport speaks on nothing else.
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer

    stopped: list[int] = []

    async def run() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_stop_on_signals, tasks.cancel_scope, stopped)
            # inside the group a signal cancels: so is the transport's reader of a terminal
            async with stdio_streams(stdin, stdout) as (read, write):
                # Server.run annotates anyio's memory streams, but only receives from and
                # sends to them (as BaseSession does): the pipe transport's streams are
                # ObjectReceiveStream/ObjectSendStream implementations of their own.
                await server.run(read, write, options)  # type: ignore[arg-type]
            tasks.cancel_scope.cancel()  # stdin closed: the end

    from ontoloom.owner import owning

    handlers = {s: signal.getsignal(s) for s in _STOP_SIGNALS}
    try:
        with owning(path):
            anyio.run(run)
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    if stopped:
        raise Stopped(128 + stopped[0])


_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


async def _stop_on_signals(scope: anyio.CancelScope, stopped: list[int]) -> None:
    """SIGTERM and SIGINT end the server between two steps of the event loop: the call in
    progress finishes (its write committed or not at all), the rest is cancelled. The
    process-wide handler (:func:`ontoloom.entry.main`) would raise wherever the loop was,
    inside a task or a call done on the loop."""
    try:
        receiver = anyio.open_signal_receiver(*_STOP_SIGNALS)
    except NotImplementedError:  # no loop signal handlers here (Windows): the process's own
        return
    with receiver as signals:
        async for signum in signals:
            stopped.append(signum)
            scope.cancel()
            return
