"""The reference memory server's tools as operations (``@modelcontextprotocol/server-memory``), same names,
arguments and results, over :class:`ontoloom.memory.Memory` — plus what its users ask for:
optional pages of ``read_graph`` (and a summary mode) past the whole-graph answer, ranked
``search_nodes``."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput, NotFound
from ontoloom.memory import FULL_READ, MAX_PAGE, Memory, without_cli_advice
from ontoloom.ops.spec import Operation

if TYPE_CHECKING:
    from ontoloom.api import Graph

__all__ = ["EMPTY_RESULTS", "indented_json", "memory_operations"]

_STRINGS = {"type": "array", "items": {"type": "string"}}
_ENTITY = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The name of the entity"},
        "entityType": {"type": "string", "description": "The type of the entity"},
        "observations": {
            **_STRINGS,
            "description": "An array of observation contents associated with the entity",
        },
    },
    "required": ["name", "entityType", "observations"],
}
_RELATION = {
    "type": "object",
    "properties": {
        "from": {
            "type": "string",
            "description": "The name of the entity where the relation starts",
        },
        "to": {"type": "string", "description": "The name of the entity where the relation ends"},
        "relationType": {"type": "string", "description": "The type of the relation"},
    },
    "required": ["from", "to", "relationType"],
}
_GRAPH_OUT = {
    "type": "object",
    "properties": {
        "entities": {"type": "array", "items": {"type": "object"}},
        "relations": {"type": "array", "items": _RELATION},
        "nextCursor": {"type": "string"},
        "note": {"type": "string"},
    },
    "required": ["entities"],
}
_DONE_OUT = {
    "type": "object",
    "properties": {"success": {"type": "boolean"}, "message": {"type": "string"}},
    "required": ["success", "message"],
}


def _per_entity(key: str, values: str, name_help: str, values_help: str) -> dict[str, Any]:
    """``{key: [{entityName, <values>: [...]}]}``, the shape of the observation tools."""
    item = {
        "type": "object",
        "properties": {
            "entityName": {"type": "string", "description": name_help},
            values: {**_STRINGS, "description": values_help},
        },
        "required": ["entityName", values],
    }
    return {key: {"type": "array", "items": item}}


def _one_item(key: str) -> Callable[[Mapping[str, Any]], bool]:
    """A call whose list under ``key`` holds one item: one object's reads and one commit."""
    return lambda a: isinstance(a.get(key), list) and len(a[key]) == 1


def _done(message: str) -> dict[str, Any]:
    return {"success": True, "message": message}


def indented_json(value: Any) -> str:
    r"""``json.dumps(value, indent=2, ensure_ascii=False)``, the reference server's text, byte
    for byte — built from the C encoder's strings instead of the pure-Python encoder that an
    indented dump runs (a few milliseconds for a search's thousand relations).

    >>> indented_json({"entities": [{"name": "Ada", "observations": []}], "relations": []})
    '{\n  "entities": [\n    {\n      "name": "Ada",\n      "observations": []\n    }\n  ],\n  "relations": []\n}'
    """
    out: list[str] = []
    _indented(value, "\n", out)
    return "".join(out)


def _flat(value: dict[Any, Any], newline: str) -> str | None:
    """A dict of string keys whose values are strings or lists of strings (an entity, a
    relation) as :func:`_indented` writes it, in one step; None for any other."""
    inner, deeper = newline + "  ", newline + "    "
    fields = []
    for key, item in value.items():
        if not isinstance(key, str):
            return None
        if isinstance(item, str):
            text = encode_basestring(item)
        elif isinstance(item, list) and all(isinstance(v, str) for v in item):
            text = (
                "[" + deeper + ("," + deeper).join(map(encode_basestring, item)) + inner + "]"
                if item
                else "[]"
            )
        else:
            return None
        fields.append(encode_basestring(key) + ": " + text)
    return "{" + inner + ("," + inner).join(fields) + newline + "}"


def _indented(value: Any, newline: str, out: list[str]) -> None:
    inner = newline + "  "
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif isinstance(value, dict) and value and (flat := _flat(value, newline)) is not None:
        out.append(flat)  # an entity or a relation: one string, not a call per key
    elif isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
        out.append("{")
        separator = inner
        for key, item in value.items():
            out.append(separator + encode_basestring(key) + ": ")
            _indented(item, inner, out)
            separator = "," + inner
        out.append(newline + "}")
    elif isinstance(value, list | tuple) and value:
        if all(isinstance(v, str) for v in value):  # observations: one join
            out.append("[" + inner + ("," + inner).join(map(encode_basestring, value)))
        else:
            out.append("[")
            separator = inner
            for item in value:
                out.append(separator)
                _indented(item, inner, out)
                separator = "," + inner
        out.append(newline + "]")
    elif isinstance(value, list | tuple | dict) and not value:
        out.append("{}" if isinstance(value, dict) else "[]")
    else:  # numbers, booleans, null, keys json.dumps turns into strings
        out.append(json.dumps(value, indent=2, ensure_ascii=False).replace("\n", newline))


def _json_of(key: str) -> Callable[[Any], str]:
    """The reference server's text: the JSON of the list under ``key``, not the wrapper."""
    return lambda data: indented_json(data[key])


def _graph_text(data: Any) -> str:
    """The reference's text (the graph's JSON); a partial answer *starts* with its note
    (how many of how many, how to get the rest), for agents that read only the text."""
    rest = {k: v for k, v in data.items() if k != "note"}
    body = indented_json(rest)
    return f"{data['note']}\n{body}" if "note" in data else body


def _message(data: Any) -> str:
    return str(data["message"])


def _in_agent_terms(handler: Callable[[Graph, dict[str, Any]], Any]) -> Callable[..., Any]:
    """An error from below the drop-in (a record's object, an id check) without the CLI
    advice it was written with: an agent on MCP can only change its call."""

    def run(g: Graph, a: dict[str, Any]) -> Any:
        try:
            return handler(g, a)
        except (BadInput, NotFound) as exc:
            if "`ontoloom" not in exc.message and "-p " not in exc.message:
                raise
            text = without_cli_advice(exc.message)
            if "from a record" in exc.message:
                text = (
                    "that entity was read from a record file, not written with these tools: "
                    "leave it out of this call (its record file is where it changes)"
                )
            raise type(exc)(text) from None

    return run


def _create_entities(g: Graph, a: dict[str, Any]) -> Any:
    return {"entities": Memory(g).create_entities(a["entities"])}


def _create_relations(g: Graph, a: dict[str, Any]) -> Any:
    return {"relations": Memory(g).create_relations(a["relations"])}


def _add_observations(g: Graph, a: dict[str, Any]) -> Any:
    return {"results": Memory(g).add_observations(a["observations"])}


def _delete_entities(g: Graph, a: dict[str, Any]) -> Any:
    Memory(g).delete_entities(a["entityNames"])
    return _done("Entities deleted successfully")


def _delete_observations(g: Graph, a: dict[str, Any]) -> Any:
    Memory(g).delete_observations(a["deletions"])
    return _done("Observations deleted successfully")


def _delete_relations(g: Graph, a: dict[str, Any]) -> Any:
    Memory(g).delete_relations(a["relations"])
    return _done("Relations deleted successfully")


def _read_graph(g: Graph, a: dict[str, Any]) -> Any:
    return Memory(g).read_graph(a.get("cursor"), a.get("limit"), bool(a.get("summary")))


def _search_nodes(g: Graph, a: dict[str, Any]) -> Any:
    return Memory(g).search_nodes(a["query"], a.get("limit"))


def _open_nodes(g: Graph, a: dict[str, Any]) -> Any:
    return Memory(g).open_nodes(a["names"])


# Results when the data dir has no store yet: the reference server reads a missing file as
# an empty graph, and so do these.
EMPTY_RESULTS: dict[str, dict[str, Any]] = {
    "read_graph": {"entities": [], "relations": []},
    "search_nodes": {"entities": [], "relations": []},
    "open_nodes": {"entities": [], "relations": []},
}


def memory_operations() -> list[Operation]:
    return [
        Operation(
            "create_entities",
            "Create Entities",
            "Create multiple new entities in the knowledge graph (names already there are "
            "skipped). Any entityType is accepted and read back as written; where it names a "
            "schema type (person, task, project, organization…; any case, spaces, - or "
            "camelCase) the entity is typed.",
            {"entities": {"type": "array", "items": _ENTITY}},
            _in_agent_terms(_create_entities),
            required=("entities",),
            idempotent=False,
            one_object=_one_item("entities"),
            output_schema={
                "type": "object",
                "properties": {"entities": {"type": "array", "items": _ENTITY}},
            },
            access="create",
            strict=False,
            render=_json_of("entities"),
        ),
        Operation(
            "create_relations",
            "Create Relations",
            "Create multiple new relations between entities in the knowledge graph. Relations "
            "should be in active voice. Both ends must exist. A relationType that names a "
            "schema relation (blocks, assigned_to, member_of…; any case, spaces, - or "
            "camelCase) is that typed relation under the schema's rules: a call breaking one "
            "(a blocks cycle, ends of the wrong type) is refused whole, and a many-to-one "
            "relation (assigned_to, part_of…) replaces the one set. Any other relationType is "
            "kept verbatim as an open relation.",
            {"relations": {"type": "array", "items": _RELATION}},
            _in_agent_terms(_create_relations),
            required=("relations",),
            idempotent=False,
            output_schema={
                "type": "object",
                "properties": {"relations": {"type": "array", "items": _RELATION}},
            },
            access="create",
            strict=False,
            render=_json_of("relations"),
        ),
        Operation(
            "add_observations",
            "Add Observations",
            "Add new observations to existing entities in the knowledge graph",
            _per_entity(
                "observations",
                "contents",
                "The name of the entity to add the observations to",
                "An array of observation contents to add",
            ),
            _in_agent_terms(_add_observations),
            required=("observations",),
            idempotent=False,
            output_schema={"type": "object", "properties": {"results": {"type": "array"}}},
            access="create",
            strict=False,
            render=_json_of("results"),
        ),
        Operation(
            "delete_entities",
            "Delete Entities",
            "Delete multiple entities and their associated relations from the knowledge graph",
            {"entityNames": {**_STRINGS, "description": "An array of entity names to delete"}},
            _in_agent_terms(_delete_entities),
            required=("entityNames",),
            destructive=True,
            output_schema=_DONE_OUT,
            access="create",
            strict=False,
            render=_message,
        ),
        Operation(
            "delete_observations",
            "Delete Observations",
            "Delete specific observations from entities in the knowledge graph",
            _per_entity(
                "deletions",
                "observations",
                "The name of the entity containing the observations",
                "An array of observations to delete",
            ),
            _in_agent_terms(_delete_observations),
            required=("deletions",),
            destructive=True,
            output_schema=_DONE_OUT,
            access="create",
            strict=False,
            render=_message,
        ),
        Operation(
            "delete_relations",
            "Delete Relations",
            "Delete multiple relations from the knowledge graph",
            {
                "relations": {
                    "type": "array",
                    "items": _RELATION,
                    "description": "An array of relations to delete",
                }
            },
            _in_agent_terms(_delete_relations),
            required=("relations",),
            destructive=True,
            output_schema=_DONE_OUT,
            access="create",
            strict=False,
            render=_message,
        ),
        Operation(
            "read_graph",
            "Read Graph",
            f"Read the entire knowledge graph: every entity and relation (up to {FULL_READ} "
            "entities; past that, the first page, its text starting with how many of how many "
            "were returned and the cursor to pass for the rest). Optional: cursor and limit "
            "read it a page at a time (ordered by id); summary: true gives counts per entity "
            "type and relation type, and each entity's observation count.",
            {
                "cursor": {"type": "string", "description": "The nextCursor of the previous page."},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_PAGE,
                    "description": "Entities per page (pages are ordered by id).",
                },
                "summary": {"type": "boolean", "default": False},
            },
            _in_agent_terms(_read_graph),
            output_schema=_GRAPH_OUT,
            strict=False,
            render=_graph_text,
        ),
        Operation(
            "search_nodes",
            "Search Nodes",
            "Search for nodes in the knowledge graph based on a query: every entity whose "
            "name, type or an observation contains it (case-insensitive), best matches first, "
            "with every relation that has an end among them.",
            {
                "query": {
                    "type": "string",
                    "description": "The search query to match against entity names, types, and observation content",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_PAGE,
                    "description": f"At most this many entities (default and most: {MAX_PAGE}).",
                },
            },
            _in_agent_terms(_search_nodes),
            required=("query",),
            output_schema=_GRAPH_OUT,
            strict=False,
            render=_graph_text,
        ),
        Operation(
            "open_nodes",
            "Open Nodes",
            "Open specific nodes in the knowledge graph by their names (an id works too), "
            "with every relation that has an end among them.",
            {"names": {**_STRINGS, "description": "An array of entity names to retrieve"}},
            _in_agent_terms(_open_nodes),
            required=("names",),
            output_schema=_GRAPH_OUT,
            strict=False,
            render=_graph_text,
        ),
    ]
