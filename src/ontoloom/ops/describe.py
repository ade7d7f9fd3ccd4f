"""The tools described as data, from one schema: the list MCP's ``tools/list`` answers and the
HTTP API's OpenAPI 3.1 document (``GET /api``). Both come from the operation table built from
the live schema, so a type or relation added at run time is in their enums at once.

>>> from ontoloom.schema import Schema
>>> doc = api_document(Schema.load())
>>> create = doc["paths"]["/api/create_entity"]["post"]
>>> doc["openapi"], create["requestBody"]["content"]["application/json"]["schema"]["required"]
('3.1.0', ['type', 'properties'])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ontoloom.errors import OUTCOMES

if TYPE_CHECKING:
    from ontoloom.ops.scope import Scope
    from ontoloom.schema import Schema

__all__ = ["ERROR_SCHEMA", "api_document", "tool_list"]

#: The body of every error the HTTP API answers.
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error", "message"],
    "properties": {
        "error": {
            "type": "string",
            "enum": sorted(OUTCOMES),
            "description": "The kind of error: it decides the HTTP status (and the CLI's exit "
            "code) alike.",
        },
        "message": {"type": "string", "description": "What went wrong, where, how to fix it."},
        "results": {
            "type": "array",
            "description": "validation only: each rule the write broke, with its fix.",
            "items": {"type": "object"},
        },
    },
}


def tool_list(schema: Schema, scope: Scope | None = None) -> list[dict[str, Any]]:
    """Every tool as MCP lists it, its enums from ``schema``; with ``scope``, the tools it
    allows, their enums the types and relations it may name."""
    from ontoloom.ops import tools

    return [operation.describe() for operation in tools(schema, scope)]


def _statuses() -> dict[int, list[str]]:
    """HTTP status → the kinds of error answered with it."""
    found: dict[int, list[str]] = {}
    for kind, (_exit, status) in OUTCOMES.items():
        found.setdefault(status, []).append(kind)
    return dict(sorted(found.items()))


def api_document(schema: Schema, scope: Scope | None = None) -> dict[str, Any]:
    """The HTTP API as an OpenAPI 3.1 document: one ``POST /api/{tool}`` per tool, its JSON
    body the tool's arguments (their JSON Schema as MCP gives it), its answer the tool's
    result, every error ``{"error": kind, "message": …}`` with its status from
    :data:`ontoloom.errors.OUTCOMES`."""
    from importlib.metadata import version

    errors = {
        str(status): {
            "description": ", ".join(kinds),
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
        for status, kinds in _statuses().items()
    }
    paths: dict[str, Any] = {}
    for tool in tool_list(schema, scope):
        result = tool.get("outputSchema") or {"description": "The tool's result, as JSON."}
        annotations = tool["annotations"]
        paths[f"/api/{tool['name']}"] = {
            "post": {
                "operationId": tool["name"],
                "summary": tool["title"],
                "description": tool["description"],
                "tags": ["reads" if annotations["readOnlyHint"] else "writes"],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": tool["inputSchema"]}},
                },
                "responses": {
                    "200": {
                        "description": "Done: the tool's result.",
                        "headers": {
                            "X-Ontoloom-Note": {
                                "description": "A note beside the result (a listing with "
                                "more after it names the next page), JSON-escaped ASCII.",
                                "schema": {"type": "string"},
                            }
                        },
                        "content": {"application/json": {"schema": result}},
                    },
                    **errors,
                },
                "security": [{"bearer": []}],
                "x-ontoloom-annotations": {
                    k: v for k, v in annotations.items() if k.endswith("Hint")
                },
            }
        }
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {
            "title": "ontoloom",
            "version": version("ontoloom"),
            "description": "The tools of the graph as JSON: POST a tool's arguments to "
            "/api/{tool}. Every write is validated first; a refused one stores nothing "
            "(422, with the rules broken). Enums of types and relations are this store's "
            "schema, extensions included.",
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "schemas": {"Error": ERROR_SCHEMA},
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "ONTOLOOM_TOKEN, else the data dir's serve.token; or a "
                    "scoped token (`ontoloom token add`), answered 403 beyond its types.",
                }
            },
        },
    }
