"""What an operation is: its name, the JSON Schema of its arguments, truthful annotations
(reads or writes, destructive, idempotent) and the function that runs it on an open session.
Every front end reads the same table: the MCP server lists these as its tools, the HTTP API
routes them, the CLI and the owner call them by name."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ontoloom.api import Graph

__all__ = ["OUTPUT_DIALECT", "Access", "Handler", "Operation"]

OUTPUT_DIALECT = "http://json-schema.org/draft-07/schema#"

# How an operation opens the store; "create" is a write that makes the store when there is
# none.
Access = Literal["read", "write", "create"]
Handler = Callable[["Graph", dict[str, Any]], Any]


@dataclass(frozen=True)
class Operation:
    """One user-facing operation: its argument schema, its annotations and what it runs."""

    name: str
    title: str
    description: str
    properties: dict[str, Any]
    handler: Handler
    required: tuple[str, ...] = ()
    access: Access = "read"
    destructive: bool = False
    idempotent: bool = True
    strict: bool = True  # unknown arguments are refused (typos surface at once)
    output_schema: dict[str, Any] | None = None
    changes_schema: bool = False
    # Reads or writes one object (a few store reads and one commit): an event loop may run
    # it itself when the graph is free at once, sparing two thread hand-offs of the call.
    # A function of the arguments where that depends on them (one entity of a list).
    one_object: bool | Callable[[Mapping[str, Any]], bool] = False
    # The text form of a result (an MCP tool's text content); by default its JSON.
    render: Callable[[Any], str] | None = None
    # Offered to agents as a tool (MCP, /api); False: only the command line and the pages
    # call it (it answers a document for the caller to write, or reads the instance's files).
    tool: bool = True
    # Answers from the data dir's own files (ontoloom.toml), never opening its store: run
    # with the data dir instead of a graph — in the caller's process, even while the store
    # is busy, unreachable or not made yet. ``handler`` is then what an open graph runs.
    on_files: Callable[[Path, dict[str, Any]], Any] | None = None

    def on_one_object(self, arguments: Mapping[str, Any]) -> bool:
        """Whether a call with these arguments reads or writes one object (``one_object``)."""
        one = self.one_object
        return one(arguments) if callable(one) else one

    @property
    def read_only(self) -> bool:
        return self.access == "read"

    def describe(self) -> dict[str, Any]:
        """The operation as a tool, as data: what MCP's ``tools/list`` gives for it (its
        field names) and what the HTTP API's OpenAPI document is made from."""
        out: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema(),
            "annotations": {
                "title": self.title,
                "readOnlyHint": self.read_only,
                "destructiveHint": self.destructive,
                "idempotentHint": self.idempotent,
                "openWorldHint": False,
            },
        }
        if self.output_schema is not None:
            # Declared draft-07, as the reference memory server's (zod) schemas are: a client
            # checks every structured result against it, and the official Python client's
            # jsonschema checks an undeclared (2020-12) schema ten times slower — a dozen
            # milliseconds of a drop-in search's answer, where the schema says the same.
            out["outputSchema"] = {"$schema": OUTPUT_DIALECT, **self.output_schema}
        return out

    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "properties": self.properties}
        if self.required:
            schema["required"] = list(self.required)
        if self.strict:
            schema["additionalProperties"] = False
        return schema
