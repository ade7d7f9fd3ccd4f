"""``ontoloom mcp``: the graph as an MCP server over stdio, on the official SDK.

Two tool sets: the typed tools (:mod:`.tools`) and the reference memory server's
(:mod:`.memory_tools`). The first server of a data dir becomes its owner (:mod:`ontoloom.owner`)
and keeps the graph open; other servers, the CLI and the hooks send their work to it, so
several servers and the CLI share one instance without losing a write. Arguments are checked against the tool's schema built from the *live*
schema; any error becomes a tool error (``isError``) whose text says what and how to fix it,
a validation refusal's text being the report. The server itself never dies of a bad call.
"""

from __future__ import annotations

import functools
import json
import re
import signal
import threading
import weakref
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import mcp.types as types
from mcp.server.lowlevel import NotificationOptions, Server

from ontoloom.errors import NoStore, OntoloomError, OwnerTookOver, Stopped
from ontoloom.mcp_server.memory_tools import EMPTY_RESULTS, memory_tools
from ontoloom.mcp_server.pipes import stdio_streams
from ontoloom.mcp_server.tools import ToolSpec, typed_tools

__all__ = ["build_server", "serve"]

INSTRUCTIONS = """\
ontoloom is the team's shared, typed memory: entities (tasks, people, projects, events,
documents…) and the operational record (recurring failures, rules, decisions, runbooks).
Every write is validated against the schema; a refused write says which rule broke and how
to fix it, and stores nothing. Search before you create. Ids look like task_a1b2c3d4 or
rule:no-raw-control-bytes. When something fails, ask guard whether it happened before; ask
why for the decisions behind a rule. Proposals are unconfirmed until a person confirms them.
The memory-server tools (create_entities, read_graph, …) work on the same graph."""


def _tools(data_dir: Path) -> list[ToolSpec]:
    return list(_specs(_schema(data_dir)).values())


def _schema(data_dir: Path) -> Any:
    """The live schema: the store's when there is one, else the shipped one."""
    from ontoloom.api import Graph
    from ontoloom.schema import Schema

    try:
        with Graph.open(data_dir) as g:
            return g.schema
    except OntoloomError:
        return Schema.load()


def _tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        inputSchema=spec.input_schema(),
        outputSchema=spec.output_schema,
        annotations=types.ToolAnnotations(
            title=spec.title,
            readOnlyHint=spec.read_only,
            destructiveHint=spec.destructive,
            idempotentHint=spec.idempotent,
            openWorldHint=False,
        ),
    )


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


def _argument_problem(
    spec: ToolSpec, arguments: dict[str, Any], validator: jsonschema.Draft202012Validator
) -> str | None:
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    error = errors[0]
    where = ".".join(str(p) for p in error.absolute_path) or "arguments"
    hint = ""
    if error.validator == "enum" and error.absolute_path and error.absolute_path[-1] == "type":
        hint = "; schema_list shows the types, schema_add_type adds one"
    elif error.validator == "enum" and error.absolute_path and error.absolute_path[-1] == "rel":
        hint = "; schema_list shows the relations, schema_add_relation adds one"
    return f"invalid arguments for {spec.name}: {where}: {_broken(error)}{hint}"


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")


def _broken(error: jsonschema.ValidationError) -> str:
    """What an argument breaks, in the schema's words only: jsonschema's own message quotes
    the value, which may be a secret pasted into the wrong place — never printed back."""
    rule, wanted = error.validator, error.validator_value
    if rule == "enum":
        shown = ", ".join(json.dumps(v) for v in wanted[:20])
        return f"not one of {shown}{', …' if len(wanted) > 20 else ''}"
    if rule == "type":
        return f"must be of type {wanted if isinstance(wanted, str) else ' or '.join(wanted)}"
    if rule == "required":
        return error.message  # names the missing argument, from the schema
    if rule == "additionalProperties":
        allowed = set(error.schema.get("properties", {}))
        given = error.instance if isinstance(error.instance, dict) else {}
        # a misspelt name is shown; a long or odd one may be pasted text, and is not
        named = [k for k in given if k not in allowed and _NAME.fullmatch(k)]
        extra = f" {', '.join(sorted(named))}" if named else ""
        return (
            f"holds an argument the tool does not take{extra} "
            f"(it takes {', '.join(sorted(allowed)) or 'none'})"
        )
    return f"breaks {rule} {json.dumps(wanted)}"


class _ToolSet:
    """The tools one schema object describes, and their argument validators (built on first
    use): built once per schema, not per call — a schema change makes a new schema object."""

    def __init__(self, schema: Any) -> None:
        self.specs = {t.name: t for t in [*typed_tools(schema), *memory_tools()]}
        self._validators: dict[str, jsonschema.Draft202012Validator] = {}

    def validator(self, name: str) -> jsonschema.Draft202012Validator:
        found = self._validators.get(name)
        if found is None:
            found = jsonschema.Draft202012Validator(self.specs[name].input_schema())
            self._validators[name] = found
        return found


_tool_sets: weakref.WeakKeyDictionary[Any, _ToolSet] = weakref.WeakKeyDictionary()
_tool_sets_lock = threading.Lock()


def _tool_set(schema: Any) -> _ToolSet:
    with _tool_sets_lock:
        found = _tool_sets.get(schema)
        if found is None:
            found = _tool_sets[schema] = _ToolSet(schema)
        return found


def _specs(schema: Any) -> dict[str, ToolSpec]:
    return _tool_set(schema).specs


def call(data_dir: Path, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """Run one tool call to completion (blocking): open, check arguments, run, close."""
    from ontoloom.api import Graph

    known = _static_specs().get(name)
    if known is None:
        return _error(f"unknown tool {name!r}: list the tools to see them")
    try:
        with Graph.open(data_dir, write=not known.read_only, create=known.access == "create") as g:
            tools = _tool_set(g.schema)
            spec = tools.specs[name]
            problem = _argument_problem(spec, arguments, tools.validator(name))
            if problem:
                return _error(problem, {"error": "bad_input", "message": problem})
            data = spec.handler(g, arguments)
    except NoStore as exc:
        if name not in EMPTY_RESULTS:
            return _error(exc.message, exc.to_json())
        data = EMPTY_RESULTS[name]
    except OwnerTookOver:
        raise  # nothing was done: dispatch sends the call to the new owner
    except OntoloomError as exc:
        report = exc.to_json()
        if isinstance(report.get("message"), str):
            report["message"] = in_tool_terms(report["message"])
        return _error(in_tool_terms(exc.message), report)
    except Exception as exc:  # a bug must not take the server (and the agent's tools) down
        message = f"unexpected {type(exc).__name__}: {exc}"
        return _error(message, {"error": "internal", "message": message})
    structured = data if isinstance(data, dict) else {"result": data}
    text = known.render(data) if known.render is not None else _text(data)
    content = [types.TextContent(type="text", text=text)]
    note = getattr(data, "note", None)
    if note:
        content.append(types.TextContent(type="text", text=f"note: {note}"))
    return types.CallToolResult(content=content, structuredContent=structured)


_TAKEOVERS = 3  # owners appearing while a call waits, before it gives up (busy)


def dispatch(data_dir: Path, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """Run a tool call where the data dir's graph is open: here when this process owns it,
    else in its owner; with no owner alive, this process claims the data dir (or, when it
    cannot, opens the store for just this call, as before owners existed)."""
    from ontoloom.owner import Owner, owns
    from ontoloom.owner_client import OwnerGone, OwnerUnresponsive, caller_wait, forward
    from ontoloom.store import lock_timeout

    for _ in range(_TAKEOVERS):
        if not owns(data_dir):
            request = {"kind": "tool", "name": name, "arguments": arguments}
            try:
                answer = forward(data_dir, request, wait=caller_wait(lock_timeout()))
            except OwnerGone as exc:
                return _error(str(exc), {"error": "owner_gone", "message": str(exc)})
            except OwnerUnresponsive as exc:
                return _error(str(exc), {"error": "busy", "message": str(exc)})
            if answer is not None:
                if "error" in answer:
                    return _error(answer["error"]["message"], answer["error"])
                return types.CallToolResult.model_validate(answer["result"])
            Owner.claim(data_dir)
        try:
            return call(data_dir, name, arguments)
        except OwnerTookOver as exc:  # another process became owner while this waited
            took_over = exc
    return _error(took_over.message, took_over.to_json())


def build_server(data_dir: Path) -> Server:
    """The MCP server over ``data_dir`` (the tools and their handler; no transport)."""
    from importlib.metadata import version

    server: Server = Server("ontoloom", version=version("ontoloom"), instructions=INSTRUCTIONS)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        specs = await anyio.to_thread.run_sync(_tools, data_dir)
        return [_tool(spec) for spec in specs]

    @server.call_tool(validate_input=False)  # checked against the live schema in `call`
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        from ontoloom.owner import held_at_once

        known = _static_specs().get(name)
        result = None
        if known is not None and known.one_object:
            # A call on one object, with the graph free in this process: done here, in
            # milliseconds, rather than handed to a worker thread and back. Anything that
            # would wait (the graph busy, another process owning it) goes to the thread.
            with held_at_once(data_dir) as held:
                if held:
                    result = dispatch(data_dir, name, arguments or {})
        if result is None:
            result = await anyio.to_thread.run_sync(dispatch, data_dir, name, arguments or {})
        if known is not None and known.changes_schema and not result.isError:
            # The enums of types and relations changed: clients re-list the tools.
            await server.request_context.session.send_tool_list_changed()
        return result

    return server


@functools.cache
def _static_specs() -> dict[str, ToolSpec]:
    """The tools as the shipped schema describes them: enough to know how a tool opens the
    store, its annotations and its rendering, none of which depend on the schema."""
    from ontoloom.schema import Schema

    return _specs(Schema.load())


def serve(data_dir: str | Path | None = None) -> None:
    """Serve over stdio until the client closes the connection."""
    import os
    import sys

    from ontoloom.config import find_instance, resolve_data_dir

    path = resolve_data_dir(data_dir, outside_instance="user")
    if not data_dir and not os.environ.get("ONTOLOOM_HOME") and find_instance(Path.cwd()) is None:
        # Clients start servers anywhere: never write there; say once where memory lives.
        print(
            f"ontoloom: no instance (ontoloom.toml) around {Path.cwd()}; using the per-user "
            f"data dir {path} (set ONTOLOOM_HOME or pass --data-dir to use another)",
            file=sys.stderr,
            flush=True,
        )
        path.mkdir(parents=True, exist_ok=True)
    server = build_server(path)
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    # The process's own stdio, taken before claiming the data dir: a command line the owner
    # runs for another process swaps sys.stdin/sys.stdout while it runs (click's CliRunner).
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer

    stopped: list[int] = []

    async def run() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_stop_on_signals, tasks.cancel_scope, stopped)
            # inside the group a signal cancels: so is the transport's reader of a terminal
            async with stdio_streams(stdin, stdout) as (read, write):
                await server.run(read, write, options)
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
