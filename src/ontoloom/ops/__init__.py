"""The application floor: one operation per user-facing act, the same for every front end.

An operation takes JSON arguments (checked against its schema, built from the live schema),
runs on the data dir's open session and answers a :class:`Result` — its JSON value and a
note for the reader — or raises an :class:`~ontoloom.errors.OntoloomError`, whose kind
decides the exit code, HTTP status and MCP ``isError`` alike
(:data:`ontoloom.errors.OUTCOMES`). The CLI, the MCP server, the HTTP API and the data dir's
owner all call :func:`call` (the owner on behalf of other processes, see
:mod:`ontoloom.owner`); none of them asks another front end for its answer.

>>> import tempfile
>>> home = tempfile.mkdtemp()
>>> call(home, "create_entity", {"type": "Task", "properties": {"title": "x", "status": "open"},
...      "id": "task_x"}).value["id"]
'task_x'
>>> call(home, "get_entity", {"id": "task_nope"})
Traceback (most recent call last):
ontoloom.errors.NotFound: no entity with id 'task_nope': check the id with `ontoloom list`
"""

from __future__ import annotations

import functools
import json
import re
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema

from ontoloom.errors import BadInput, NoStore, NotFound
from ontoloom.ops.commands import command_operations
from ontoloom.ops.describe import api_document, tool_list
from ontoloom.ops.memory import EMPTY_RESULTS, memory_operations
from ontoloom.ops.scope import Scope
from ontoloom.ops.spec import Access, Operation
from ontoloom.ops.typed import typed_operations
from ontoloom.secret_text import redact
from ontoloom.suggest import did_you_mean

if TYPE_CHECKING:
    from ontoloom.schema import Schema

__all__ = [
    "Access",
    "Operation",
    "Result",
    "Scope",
    "call",
    "operations",
    "static_operations",
    "tools",
]


@dataclass(frozen=True)
class Result:
    """What an operation answers: its JSON value, and beside it what is not part of the value:
    a note for the reader (a search that matched loosely; an agent's next page), warnings (a
    shape an engine could only partly judge: the CLI prints them on stderr) and the cursor of
    the next page (the ``after`` to give for it)."""

    value: Any
    note: str | None = None
    warnings: tuple[str, ...] = ()
    cursor: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"result": self.value}
        if self.note:
            out["note"] = self.note
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.cursor is not None:
            out["cursor"] = self.cursor
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Result:
        return cls(
            data.get("result"),
            data.get("note"),
            tuple(data.get("warnings") or ()),
            data.get("cursor"),
        )


class _Table:
    """The operations one schema object describes (as one scope sees them: its types in the
    enums), and their argument validators (built on first use): built once per schema and
    scope, not per call — a schema change makes a new schema."""

    def __init__(self, schema: Schema, scope: Scope | None = None) -> None:
        every = [*typed_operations(schema, scope), *memory_operations(), *command_operations()]
        self.operations = {o.name: o for o in every}
        self._validators: dict[str, jsonschema.Draft202012Validator] = {}

    def validator(self, name: str) -> jsonschema.Draft202012Validator:
        found = self._validators.get(name)
        if found is None:
            found = jsonschema.Draft202012Validator(self.operations[name].input_schema())
            self._validators[name] = found
        return found


_tables: weakref.WeakKeyDictionary[Any, dict[Scope | None, _Table]] = weakref.WeakKeyDictionary()
_tables_lock = threading.Lock()


def _table(schema: Schema, scope: Scope | None = None) -> _Table:
    with _tables_lock:
        per_schema = _tables.setdefault(schema, {})
        found = per_schema.get(scope)
        if found is None:
            found = per_schema[scope] = _Table(schema, scope)
        return found


def operations(schema: Schema, scope: Scope | None = None) -> dict[str, Operation]:
    """Every operation as ``schema`` describes them (enums of its types and relations; with
    ``scope``, of those the scope may name)."""
    return _table(schema, scope).operations


def tools(schema: Schema, scope: Scope | None = None) -> list[Operation]:
    """The operations offered to agents as tools (MCP, the HTTP API): not those only the
    command line and the pages call (an export to a file, a rebuild from the records); with
    ``scope``, only those it allows, their enums its types."""
    return [
        o
        for o in operations(schema, scope).values()
        if o.tool and (scope is None or scope.allows(o.name))
    ]


@functools.cache
def static_operations() -> dict[str, Operation]:
    """The operations as the shipped schema describes them: enough to know how one opens
    the store, its annotations and its rendering, none of which depend on the schema."""
    from ontoloom.schema import Schema

    return operations(Schema.load())


def call(
    data_dir: str | Path | None,
    name: str,
    arguments: Mapping[str, Any],
    *,
    checked: bool = True,
    scope: Scope | None = None,
) -> Result:
    """Run one operation to completion on ``data_dir``'s graph: open it as the operation
    needs, check the arguments against the live schema, run, close.

    ``scope``: the caller's (a skill's contract, a scoped token): the call is judged against
    it before it runs and its answer narrowed to it (:mod:`ontoloom.ops.scope`) — here, in
    one place, for every front end.

    ``checked=False`` skips the argument schema: for the command line, whose arguments click
    has typed already and whose values the domain judges in the words its users know
    ("unknown entity type 'Foo'…", exit 1) rather than the schema's (an enum, exit 2).

    :raises NotFound: an unknown operation (or what the operation itself finds missing).
    :raises BadInput: arguments the operation's schema refuses (named, never quoted).
    :raises Forbidden: the call is outside ``scope``; nothing ran.
    :raises OntoloomError: whatever the operation raises; nothing is stored on a refusal.
    """
    from ontoloom.api import Graph

    known = static_operations().get(name)
    if known is None:
        raise NotFound(f"unknown operation {name!r}: list the tools to see them")
    if scope is not None:
        scope.offered(name)
    given = dict(arguments)
    scoped_note: str | None = None
    if known.on_files is not None:  # the data dir's files, not its store
        from ontoloom.config import resolve_data_dir

        if checked:
            problem = argument_problem(known, given, _table(_shipped_schema()).validator(name))
            if problem:
                raise BadInput(problem)
        return Result(known.on_files(resolve_data_dir(data_dir), given))
    try:
        with Graph.open(data_dir, write=not known.read_only, create=known.access == "create") as g:
            table = _table(g.schema)
            operation = table.operations[name]
            problem = argument_problem(operation, given, table.validator(name)) if checked else None
            if problem:
                raise BadInput(problem)
            if scope is None:
                value = operation.handler(g, given)
            elif name in _SHIPPED_SCHEMA:  # the tools as the scope sees them
                value = _SHIPPED_SCHEMA[name](g.schema, scope)
            else:
                value = operation.handler(g, scope.admit(g, name, given))
                value, scoped_note = scope.answer(g, name, value)
    except NoStore:
        if name in _SHIPPED_SCHEMA:  # what a first write would find: the shipped schema's
            value = _SHIPPED_SCHEMA[name](_shipped_schema(), scope)
        elif name in EMPTY_RESULTS:
            value = EMPTY_RESULTS[name]
        elif name == "token_list":  # no store, no token
            value = []
        else:
            raise
    if not isinstance(value, Result):
        value = Result(value, getattr(value, "note", None), cursor=getattr(value, "cursor", None))
    if scoped_note:
        value = replace(value, note=f"{value.note}; {scoped_note}" if value.note else scoped_note)
    # A note or warning may quote what was given (a property name, a query): never a secret.
    return replace(
        value,
        note=None if value.note is None else redact(value.note),
        warnings=tuple(redact(w) for w in value.warnings),
    )


# Operations that describe the tools: with no store yet, the shipped schema's.
_SHIPPED_SCHEMA = {"tool_list": tool_list, "api_document": api_document}


def _shipped_schema() -> Schema:
    from ontoloom.schema import Schema

    return Schema.load()


def argument_problem(
    operation: Operation, arguments: dict[str, Any], validator: jsonschema.Draft202012Validator
) -> str | None:
    """What is wrong with ``arguments`` for ``operation``, in the schema's words; None when
    nothing is."""
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    error = errors[0]
    where = ".".join(str(p) for p in error.absolute_path) or "arguments"
    hint = ""
    if error.validator == "enum" and isinstance(error.instance, str):
        # the closest names allowed (only they are quoted, never the value given)
        hint = did_you_mean(error.instance, [str(v) for v in error.validator_value])
    if error.validator == "enum" and error.absolute_path and error.absolute_path[-1] == "type":
        hint += "; schema_list shows the types, schema_add_type adds one"
    elif error.validator == "enum" and error.absolute_path and error.absolute_path[-1] == "rel":
        hint += "; schema_list shows the relations, schema_add_relation adds one"
    return f"invalid arguments for {operation.name}: {where}: {_broken(error)}{hint}"


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
