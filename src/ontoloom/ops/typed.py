"""The typed operations: one per user-facing operation, with the CLI's argument names and
the JSON its ``--json`` prints — the MCP server's typed tools, the HTTP API's routes and what
the CLI's commands call. Input schemas are built from the live schema (enums of types and
relations, required properties in the descriptions), so a model fills them right first time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput, NotFound, ValidationFailed
from ontoloom.ops.spec import Operation

if TYPE_CHECKING:
    from ontoloom.api import Graph
    from ontoloom.ops.scope import Scope
    from ontoloom.schema import Schema

__all__ = ["MAX_TOOL_TIMEOUT", "typed_operations"]

MAX_TOOL_TIMEOUT = 300.0  # seconds: the longest query an agent's call (MCP, HTTP) may run


class PlanRefused(ValidationFailed):
    """A dry-run plan that would be refused: an error carrying the plan result."""

    def __init__(self, result: Any) -> None:
        super().__init__(result.findings, "dry run: the plan would be refused; nothing was stored")
        self.result = result

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = self.result.to_json(with_delta=True)
        return data


# -- schema pieces ---------------------------------------------------------------------------
def _string(description: str, **more: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **more}


def _creatable(schema: Schema) -> list[str]:
    from ontoloom.schema import ENTITY

    creatable = schema.hierarchy.subclasses(ENTITY)
    return sorted(name for name, spec in schema.types.items() if spec.iri in creatable)


def _entity_type(schema: Schema) -> str:
    """What create_entity's type enum leaves out of the schema's types, and why: the `schema
    list` of the command line shows them all."""
    records = sorted(set(schema.types) - set(_creatable(schema)))
    if not records:
        return "The entity type."
    return (
        f"The entity type. {', '.join(records)} are read from records, not created: write "
        "the record file and run `ontoloom rebuild`."
    )


def _type_rules(schema: Schema, types: list[str]) -> str:
    lines = []
    for name in types:
        spec = schema.types[name]
        parts = [f"requires {', '.join(spec.required)}" if spec.required else "no required"]
        parts += [
            f"{prop} ∈ {{{', '.join(map(str, values))}}}" for prop, values in spec.enums.items()
        ]
        lines.append(f"{name}: {'; '.join(parts)}")
    return "\n".join(lines)


def _relation_rules(schema: Schema, rels: list[str]) -> str:
    lines = []
    for name in rels:
        spec = schema.relations[name]
        flags = " acyclic" if spec.acyclic else ""
        lines.append(
            f"{name}: {' | '.join(spec.from_types)} → {' | '.join(spec.to_types)} ({spec.cardinality}{flags})"
        )
    return "\n".join(lines)


def _rel(rels: list[str], description: str) -> dict[str, Any]:
    return {"type": "string", "enum": rels, "description": description}


_ID = _string("An entity id, e.g. task_a1b2c3d4 (see search or get_entity).")
_FORMS = "An ISO 8601 date (2026-10-01) or date-time (2026-10-01T09:00:00Z)."
_VALID_FROM = _string(f"When this started to hold in the world (default: now). {_FORMS}")
_VALID_TO = _string(f"When this stops holding (default: open). {_FORMS}")
_ENDED = _string(f"When it stopped holding (default: now). {_FORMS}")
_PURGE = {
    "type": "boolean",
    "default": False,
    "description": "Also erase its history (for mistakes and erasure requests).",
}
_AS_OF = _string(f"Answer as of this time: what was valid then. {_FORMS}")
_RECORDED_AS_OF = _string(f"Answer with what the store knew at this time. {_FORMS}")


def _timed(a: dict[str, Any]) -> dict[str, Any]:
    return {"valid_from": a.get("valid_from"), "valid_to": a.get("valid_to")}


def _in_time(a: dict[str, Any]) -> bool:
    return a.get("as_of") is not None or a.get("recorded_as_of") is not None


_TARGET = _string("An object: id, slug, title or alias, e.g. rule:no-raw-control-bytes.")


# -- handlers --------------------------------------------------------------------------------
def _create(g: Graph, a: dict[str, Any]) -> Any:
    return g.create(a["type"], a.get("properties") or {}, id=a.get("id"), **_timed(a)).to_json()


def _update(g: Graph, a: dict[str, Any]) -> Any:
    props, unset = a.get("properties") or {}, a.get("unset") or []
    if not props and not unset:
        raise BadInput('nothing to change: give "properties" (null unsets one) or "unset"')
    from ontoloom.ops import Result

    unsetting = [*unset, *(k for k, v in props.items() if v is None)]
    held = g.get(a["id"]).properties if unsetting else {}
    entity = g.update(a["id"], props, unset, **_timed(a))
    # Unsetting what is not there changes nothing: said, not passed off as an update.
    absent = [k for k in dict.fromkeys(unsetting) if k not in held]
    setting = any(v is not None for v in props.values())
    unchanged = not setting and len(absent) == len(dict.fromkeys(unsetting))
    return Result(
        entity.to_json(),
        note=f"{a['id']} unchanged" if unchanged else None,
        warnings=tuple(f"{a['id']} has no {k!r}: nothing to unset" for k in absent),
    )


def _delete(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.model import deletion_json

    return deletion_json(*g.delete(a["id"], valid_to=a.get("valid_to"), purge=bool(a.get("purge"))))


def _relate(g: Graph, a: dict[str, Any]) -> Any:
    return g.relate(a["from_id"], a["rel"], a["to_id"], **_timed(a)).to_json()


def _unrelate(g: Graph, a: dict[str, Any]) -> Any:
    return g.unrelate(
        a["from_id"],
        a["rel"],
        a["to_id"],
        valid_to=a.get("valid_to"),
        purge=bool(a.get("purge")),
    ).to_json()


def _get(g: Graph, a: dict[str, Any]) -> Any:
    if _in_time(a):
        return g.describe_as_of(a["id"], a.get("as_of"), a.get("recorded_as_of"))
    return g.describe(a["id"])


def _relations(g: Graph, a: dict[str, Any]) -> Any:
    if _in_time(a):
        found = g.relations_as_of(
            a["id"],
            a.get("rel"),
            a.get("direction", "both"),
            as_of=a.get("as_of"),
            recorded_as_of=a.get("recorded_as_of"),
        )
    else:
        found = g.relations(a["id"], a.get("rel"), a.get("direction", "both"))
    return [r.to_json() for r in found]


def _then(handler: Any) -> Any:
    """``handler`` as it reads the current graph, and — given ``as_of`` or
    ``recorded_as_of`` — the same read over the graph as it was then (:meth:`Graph.at_time`)."""

    def in_time(g: Graph, a: dict[str, Any]) -> Any:
        if not _in_time(a):
            return handler(g, a)
        with g.at_time(a.get("as_of"), a.get("recorded_as_of")) as past:
            try:
                return handler(past, a)
            except NotFound as exc:
                when = a.get("as_of") or a.get("recorded_as_of")
                raise NotFound(
                    f"{exc.message} — in the graph as it was at {when}: nothing about it "
                    "held then (`ontoloom history ID` lists its versions)"
                ) from None

    in_time.__doc__ = handler.__doc__
    return in_time


def _traverse(g: Graph, a: dict[str, Any]) -> Any:
    return g.traverse(a["id"], a.get("rel"), a.get("direction", "out"), a.get("depth", 1))


def _listed(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _list(g: Graph, a: dict[str, Any]) -> Any:
    limit = a.get("limit", 100)
    if limit is None and a.get("after") is None:  # every entity (the command line's default)
        return [e.to_json() for e in g.entities(a.get("type"), a.get("where") or {})]
    found, cursor = g.entity_page(
        a.get("type"),
        a.get("where") or {},
        after=a.get("after"),
        limit=100 if limit is None else limit,
    )
    page = Noted(e.to_json() for e in found)
    if cursor is not None:
        page.cursor = cursor
        page.note = (
            f"{len(found)} entities shown, in id order; more follow: call list_entities "
            f'again with the same arguments and "after": "{cursor}"'
        )
    return page


class Noted(list[Any]):
    """A JSON list result with a note for the agent beside it (a second text item) and,
    for a page with more after it, the next page's cursor."""

    note: str | None = None
    cursor: str | None = None


def _search(g: Graph, a: dict[str, Any]) -> Any:
    hits = g.search(
        a["query"],
        types=_listed(a.get("type")),
        tags=_listed(a.get("tag")),
        rel=a.get("rel"),
        limit=a.get("limit", 10),
    )
    page = Noted(h.to_json() for h in hits)
    page.note = hits.note
    return page


def _check(g: Graph, a: dict[str, Any]) -> Any:
    return audited(g, a, apply=False)


def audited(g: Graph, a: dict[str, Any], *, apply: bool) -> Any:
    """The audit of the whole graph as every front end reports it: the report, with
    ``explain`` which engine judged which shape (and which read terms as written), with
    ``repair`` the repairs proposed (``apply``: and what applying them did), with
    ``format: turtle`` the SHACL report graph; the shapes no engine judged in full as
    warnings."""
    from ontoloom.audit import apply_repairs, audit, audit_warnings, plan_repairs
    from ontoloom.ops import Result

    allow = bool(a.get("allow_unsupported"))
    result = audit(g, allow_unsupported=allow)
    repairs = plan_repairs(g, result) if a.get("repair") else []
    applied = apply_repairs(g, repairs) if apply else []
    if applied:
        result = audit(g, allow_unsupported=allow)
    data = result.to_json()
    if a.get("explain"):
        data["engines"] = result.engines
        data["as_written"] = result.as_written
        data["explain"] = result.explanation
    if a.get("repair"):
        data["repairs"] = [r.to_json() for r in repairs]
    if apply:
        data["applied"] = [{"description": r.description, "refused": why} for r, why in applied]
    if a.get("format") == "turtle":
        from ontoloom.shacl.report import report_turtle

        data["turtle"] = report_turtle(result.report, g.schema.shapes)
    return Result(data, warnings=tuple(audit_warnings(result, g.schema.shapes)))


def _query(g: Graph, a: dict[str, Any]) -> Any:
    import json

    from ontoloom.query import DEFAULT_TIMEOUT, run_query

    params = a.get("params") or {}
    fmt = a.get("format", "json")
    kind, raw = run_query(
        g,
        a["query"],
        {k.lstrip("?$"): str(v) for k, v in params.items()},
        fmt,
        timeout=a.get("timeout", DEFAULT_TIMEOUT),
        timeout_option="the timeout argument",
        then=g.then(a.get("as_of"), a.get("recorded_as_of")) if _in_time(a) else None,
    )
    assert isinstance(raw, bytes)
    if kind == "graph":  # CONSTRUCT / DESCRIBE: the triples as Turtle
        return {"format": "turtle", "turtle": raw.decode("utf-8")}
    if fmt != "json":
        return {"format": fmt, "text": raw.decode("utf-8")}
    return json.loads(raw)


def _plan(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.plans import steps_of

    dry_run = bool(a.get("dry_run"))
    result = g.apply_plan(steps_of(a["plan"]), dry_run=dry_run)
    if not result.valid:
        raise PlanRefused(result)
    return result.to_json(with_delta=dry_run)


def _schema_list(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.extensions import describe_schema

    return describe_schema(g)


def _add_type(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.extensions import add_type

    return add_type(g, a)


def _add_relation(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.extensions import add_relation

    return add_relation(g, a)


def _guard(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.actions import guard, guard_json

    if not a.get("text") and not a.get("class"):
        raise BadInput('give "text" (what went wrong) or "class" (a failure class slug)')
    return guard_json(guard(g, a.get("text"), a.get("class"), a.get("limit", 3)))


def _why(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.actions import why

    return why(g, a["target"])


def _hints(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.actions import labelled_hints

    return labelled_hints(g, a["target"])


def _proposals(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.proposals.store import list_proposals

    status = a.get("status", "pending")
    found = list_proposals(g, status=None if status == "all" else status, tier=a.get("tier"))
    return [p.to_json() for p in found]


def _confirm(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.proposals.review import confirm

    return confirm(g, a["id"])


def _reject(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.proposals.review import reject

    return reject(g, a["id"], a.get("reason"))


# -- the operations ---------------------------------------------------------------------------
def typed_operations(schema: Schema, scope: Scope | None = None) -> list[Operation]:
    """Every typed operation, its schema drawn from ``schema``; with ``scope``, its enums
    (and the rules listed) only the types and relations the scope may name."""
    types, all_types = _creatable(schema), sorted(schema.types)
    rels_read = rels_write = list(schema.relations)
    if scope is not None:
        readable, writable = scope.types(schema, "read"), scope.types(schema, "write")
        types = [t for t in types if writable is None or t in writable]
        all_types = [t for t in all_types if readable is None or t in readable]
        rels_read, rels_write = scope.relations(schema, "read"), scope.relations(schema, "write")
    type_rules = _type_rules(schema, types)
    relation_rules = _relation_rules(schema, rels_write)
    direction = {"type": "string", "enum": ["out", "in", "both"], "default": "both"}
    type_filter = {
        "description": "Only objects of this type (or these types).",
        "anyOf": [
            {"type": "string", "enum": all_types},
            {"type": "array", "items": {"type": "string", "enum": all_types}},
        ],
    }
    properties = {
        "type": "object",
        "description": "Property values: strings, numbers, booleans, or lists of them. "
        "Dates as 2026-11-02, times as 2026-11-02T09:00:00Z.",
    }
    return [
        Operation(
            "create_entity",
            "Create an entity",
            "Create a typed entity; it is validated before anything is stored and refused "
            "with the rule and the fix otherwise. Search first so as not to duplicate.\n"
            f"Types and their rules:\n{type_rules}",
            {
                "type": {
                    "type": "string",
                    "enum": types,
                    "description": _entity_type(schema) if scope is None else "The entity type.",
                },
                "properties": properties,
                "id": _string("Optional id; by default one like task_a1b2c3d4 is generated."),
                "valid_from": _VALID_FROM,
                "valid_to": _VALID_TO,
            },
            _create,
            required=("type", "properties"),
            access="create",
            idempotent=False,
            one_object=True,
        ),
        Operation(
            "update_entity",
            "Update an entity",
            "Set properties of an entity (each replaces its previous values; null unsets) "
            f"or unset them. Validated like create.\nTypes and their rules:\n{type_rules}",
            {
                "id": _ID,
                "properties": {**properties, "description": "Properties to set; null unsets."},
                "unset": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Property names to remove.",
                },
                "valid_from": _string(
                    "When the new values started to hold; the values they replace stop "
                    f"then (default: now). {_FORMS}"
                ),
                "valid_to": _VALID_TO,
            },
            _update,
            required=("id",),
            access="write",
            destructive=True,
            one_object=True,
        ),
        Operation(
            "delete_entity",
            "Delete an entity",
            "Delete an entity and every relation touching it, in one step. Their history "
            "stays, ended (see history); purge erases it too.",
            {"id": _ID, "valid_to": _ENDED, "purge": _PURGE},
            _delete,
            required=("id",),
            access="write",
            destructive=True,
        ),
        Operation(
            "get_entity",
            "Get an entity",
            "An entity's properties with its outgoing and incoming relations; with as_of "
            "or recorded_as_of, as they were then (from the history).",
            {"id": _ID, "as_of": _AS_OF, "recorded_as_of": _RECORDED_AS_OF},
            _get,
            required=("id",),
        ),
        Operation(
            "list_entities",
            "List entities",
            "Entities, optionally of one type and with given property values: a page of "
            "`limit` in id order; when more follow, a note gives the `after` of the next page. "
            "With as_of or recorded_as_of, the entities as they were then.",
            {
                "type": {"type": "string", "enum": all_types, "description": "Only this type."},
                "where": {
                    "type": "object",
                    "description": 'Property filters, e.g. {"status": "open"}.',
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 1000,
                    "default": 100,
                    "description": "Entities per page.",
                },
                "after": {
                    "type": "string",
                    "description": "The id the previous page ended at (from its note).",
                },
                "as_of": _AS_OF,
                "recorded_as_of": _RECORDED_AS_OF,
            },
            _then(_list),
        ),
        Operation(
            "relate",
            "Relate two entities",
            "Relate from_id to to_id by rel. Types, cardinality and cycles are checked, at "
            "every instant of the history too; a many_to_one relation replaces the previous "
            "one (the result says which), whose validity ends when the new one starts. A "
            "valid_to before now records a fact that held only then.\n"
            f"Relations:\n{relation_rules}",
            {
                "from_id": _ID,
                "rel": _rel(rels_write, "The relation."),
                "to_id": _ID,
                "valid_from": _VALID_FROM,
                "valid_to": _VALID_TO,
            },
            _relate,
            required=("from_id", "rel", "to_id"),
            access="write",
            destructive=True,  # replaces a many_to_one relation
        ),
        Operation(
            "unrelate",
            "Remove a relation",
            "Remove the relation from_id rel to_id: its validity ends (its history stays); "
            "purge erases its history too.",
            {
                "from_id": _ID,
                "rel": _rel(rels_write, "The relation."),
                "to_id": _ID,
                "valid_to": _ENDED,
                "purge": _PURGE,
            },
            _unrelate,
            required=("from_id", "rel", "to_id"),
            access="write",
            destructive=True,
        ),
        Operation(
            "relations",
            "Relations of an entity",
            "The relations touching an entity, optionally one kind and one direction; with "
            "as_of or recorded_as_of, as they were then.",
            {
                "id": _ID,
                "rel": _rel(rels_read, "Only this relation."),
                "direction": direction,
                "as_of": _AS_OF,
                "recorded_as_of": _RECORDED_AS_OF,
            },
            _relations,
            required=("id",),
        ),
        Operation(
            "history",
            "History of an entity",
            "Every version of every fact about an entity (its type, properties and relations "
            "either way), each with when it held (valid_from, valid_to) and when the store "
            "recorded and retired it. Who held a task before: the versions of assigned_to.",
            {"id": _ID},
            lambda g, a: g.history(a["id"]),
            required=("id",),
        ),
        Operation(
            "traverse",
            "Traverse the graph",
            "Everything reachable from an entity within depth hops, each with its distance "
            "and path (cycle-safe); with as_of or recorded_as_of, over the graph as it was then.",
            {
                "id": _ID,
                "rel": _rel(rels_read, "Follow only this relation."),
                "direction": {"type": "string", "enum": ["out", "in"], "default": "out"},
                "depth": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1},
                "as_of": _AS_OF,
                "recorded_as_of": _RECORDED_AS_OF,
            },
            _then(_traverse),
            required=("id",),
        ),
        Operation(
            "search",
            "Search the graph",
            "Search in words (BM25) over ids, titles, every property, tags and relations. "
            "Any text is a safe query. With as_of or recorded_as_of, over the graph as it was "
            "then.",
            {
                "query": _string("Words to look for, or an id."),
                "type": type_filter,
                "tag": {
                    "description": "Only objects with this tag (all of these tags).",
                    "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
                },
                "rel": _rel(rels_read, "Only objects with a relation of this kind."),
                "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 10},
                "as_of": _AS_OF,
                "recorded_as_of": _RECORDED_AS_OF,
            },
            _then(_search),
            required=("query",),
        ),
        Operation(
            "check",
            "Audit the graph",
            "Audit the whole graph against every rule (shapes, cycles, orphans): conforms, "
            "counts and each finding with its fix.",
            {
                "explain": {
                    "type": "boolean",
                    "description": "Also say which engine checked which shape.",
                },
                "repair": {
                    "type": "boolean",
                    "description": "Also propose repairs (nothing is applied).",
                },
                "allow_unsupported": {
                    "type": "boolean",
                    "description": "Audit the rest when shapes use features ontoloom does "
                    "not evaluate (they are named in the warnings).",
                },
            },
            _check,
        ),
        Operation(
            "query",
            "Run a SPARQL query",
            "A read-only SPARQL 1.1 query (prefix ol: is predefined) or a named query; "
            "SELECT/ASK give SPARQL JSON results (or, with format, the XML, CSV or TSV "
            "results as text), CONSTRUCT gives Turtle. Updates are refused, "
            "and so is SERVICE unless the instance's ontoloom.toml allows the endpoint. The "
            "query is stopped after timeout seconds.",
            {
                "query": _string("SPARQL text, or a named query such as open-tasks-by-project."),
                "params": {
                    "type": "object",
                    "additionalProperties": {"type": ["string", "number", "boolean"]},
                    "description": 'Bind ?name to a value, e.g. {"start": "task_a1b2c3d4"}.',
                },
                "timeout": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    # One call must not hold the read lock (and the writers behind it) for
                    # longer than this: an agent's query is bounded; the CLI's is the user's.
                    "maximum": MAX_TOOL_TIMEOUT,
                    "default": 30,
                    "description": "Stop the query after this many seconds (at most "
                    f"{MAX_TOOL_TIMEOUT:g}).",
                },
                "format": {
                    "enum": ["json", "xml", "csv", "tsv"],
                    "default": "json",
                    "description": "SELECT/ASK results format (SPARQL 1.1 JSON, XML, CSV, TSV).",
                },
                "as_of": _string(
                    "Run the query over the graph as it was at this time: the facts valid "
                    f"then (and the schema), in a temporary store. {_FORMS}"
                ),
                "recorded_as_of": _RECORDED_AS_OF,
            },
            _query,
            required=("query",),
        ),
        Operation(
            "plan_apply",
            "Apply a plan",
            "Several operations (create with a local alias 'as', relate, update, delete, "
            "unrelate) validated as one and committed atomically, or refused whole naming the "
            'failing step. Example: {"steps": [{"op": "create", "type": "Task", "as": "fix", '
            '"properties": {"title": "Fix it", "status": "open"}}, {"op": "relate", "from": '
            '"fix", "rel": "blocks", "to": "task_a1b2c3d4"}]}',
            {
                "plan": {
                    "description": 'The plan: {"steps": [...]} or the list of steps.',
                    "anyOf": [{"type": "object"}, {"type": "array", "items": {"type": "object"}}],
                },
                "dry_run": {
                    "type": "boolean",
                    "default": False,
                    "description": "Validate and show the delta; store nothing.",
                },
            },
            _plan,
            required=("plan",),
            access="create",
            destructive=True,
            idempotent=False,
        ),
        Operation(
            "schema_list",
            "List the schema",
            "Every type (required properties, enums) and relation (domain, range, "
            "cardinality, acyclicity), built in or added.",
            {},
            _schema_list,
        ),
        Operation(
            "schema_add_type",
            "Add an entity type",
            "Add an entity type; required properties and enums become validation rules.",
            {
                "type": _string("A CamelCase name, e.g. Sprint."),
                "required": {"type": "array", "items": {"type": "string"}},
                "enums": {
                    "type": "object",
                    "additionalProperties": {"type": "array"},
                    "description": 'Allowed values per property, e.g. {"status": ["active", "closed"]}.',
                },
                "description": _string("What the type is for."),
            },
            _add_type,
            required=("type",),
            access="create",
            changes_schema=True,
        ),
        Operation(
            "schema_add_relation",
            "Add a relation",
            "Add a relation; domain, range, cardinality and acyclicity become validation rules.",
            {
                "rel": _string("A lower-case name, e.g. mentors."),
                "from_types": {
                    "type": "array",
                    "items": {"type": "string", "enum": all_types},
                    "minItems": 1,
                },
                "to_types": {
                    "type": "array",
                    "items": {"type": "string", "enum": all_types},
                    "minItems": 1,
                },
                "cardinality": {
                    "type": "string",
                    "enum": ["many_to_many", "many_to_one", "one_to_many", "one_to_one"],
                    "default": "many_to_many",
                },
                "acyclic": {"type": "boolean", "default": False},
                "symmetric": {"type": "boolean", "default": False},
                "description": _string("What the relation means."),
            },
            _add_relation,
            required=("rel", "from_types", "to_types"),
            access="create",
            changes_schema=True,
        ),
        Operation(
            "summary",
            "Summarise the graph",
            "Counts per type and relation, the vocabulary in use, and the last change.",
            {},
            lambda g, a: g.summary(),
        ),
        Operation(
            "guard",
            "Is this a known failure?",
            "Has this failure happened before? Its recurrences and the rules and actions that "
            "cover it. Give what went wrong as text, or a failure class.",
            {
                "text": _string("What went wrong, in words."),
                "class": _string("A failure class slug, e.g. literal-control-bytes."),
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 3},
            },
            _guard,
        ),
        Operation(
            "why",
            "Why is this so?",
            "Decision archaeology: the decisions behind an object, up to 3 hops, each step "
            "with its evidence.",
            {"target": _TARGET},
            _why,
            required=("target",),
        ),
        Operation(
            "hints",
            "Unconfirmed hints",
            "Unconfirmed proposals touching an object — not facts until a person confirms them.",
            {"target": _TARGET},
            _hints,
            required=("target",),
        ),
        Operation(
            "proposals_list",
            "List proposals",
            "Proposals (extracted relations awaiting review), by status and tier.",
            {
                "status": {
                    "type": "string",
                    "enum": ["pending", "confirmed", "rejected", "all"],
                    "default": "pending",
                },
                "tier": {"type": "string", "enum": ["HIGH", "MEDIUM", "LOW", "rejected"]},
            },
            _proposals,
        ),
        Operation(
            "proposals_confirm",
            "Confirm a proposal",
            "Confirm a proposal (a person's decision): validated, stored as confirmed "
            "knowledge and written back to its record.",
            {"id": _string("A proposal id, e.g. 1a2b3c4d5e6f.")},
            _confirm,
            required=("id",),
            access="write",
        ),
        Operation(
            "proposals_reject",
            "Reject a proposal",
            "Reject a proposal; it is remembered and never proposed again.",
            {"id": _string("A proposal id."), "reason": _string("Why (kept with it).")},
            _reject,
            required=("id",),
            access="write",
        ),
    ]
