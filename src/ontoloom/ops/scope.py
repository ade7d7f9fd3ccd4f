"""What a caller may read and write: a skill's contract (``ontoloom mcp --skill``) or a scoped
HTTP token (``ontoloom token add``), judged here — in one place, for every front end — by
:func:`ontoloom.ops.call` before an operation runs, and applied to what it answers.

The rule of each tool is one row of :data:`RULES`:

* a write names its type (``create_entity``) or an object of it (``update_entity``,
  ``delete_entity``); the type must be among ``writes``;
* a relation is a statement of its *from* end: ``relate``/``unrelate`` need the from end's
  type among ``writes`` and the to end's readable; deleting an object also removes the
  relations other objects hold to it, so their types must be among ``writes`` as well;
* a read names a type or an object of one (``get_entity``, ``relations``, ``list_entities``
  with ``type``, ``search`` with ``type``, the start of ``traverse``): it must be readable
  (``reads`` and ``writes``). ``search`` without ``type`` searches the readable types;
  ``list_entities`` without ``type`` is refused (give one) unless every type is readable;
* ``get_entity`` and ``relations`` leave out the relations whose other end is not readable,
  and say so in their note; ``traverse`` that reaches an object that is not readable is
  refused, naming its type (give ``rel`` to follow only relations among readable types);
* what cannot be judged per type — a raw SPARQL ``query``, ``history``, ``check``, ``summary``, ``guard``,
  ``why``, ``hints``, the proposals, the drop-in memory tools (whose types are free text) —
  needs every type: ``reads: "*"`` to read, ``writes: "*"`` to write; so do schema changes.
  ``schema_list`` (the schema, not the data) and ``write_status`` (whether a write id was
  committed, which a caller whose write ended "outcome unknown" asks) are always allowed;
* every operation that is not a tool (exports, rebuilds, the pages' data) is refused.

A type covers its subclasses. A refusal is :class:`~ontoloom.errors.Forbidden` (exit 2,
HTTP 403, an MCP tool error) naming the contract and the type; nothing is stored.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput, Forbidden

if TYPE_CHECKING:
    from ontoloom.api import Graph
    from ontoloom.schema import Schema
    from ontoloom.skills import Contract

__all__ = ["RULES", "Scope"]

ALL = "*"
_WRITES = ("create", "write_object", "delete", "relate", "plan")

#: Each tool's rule under a scope (see the module's text). A tool with no row is refused.
RULES: dict[str, str] = {
    "create_entity": "create",
    "update_entity": "write_object",
    "delete_entity": "delete",
    "relate": "relate",
    "unrelate": "relate",
    "plan_apply": "plan",
    "get_entity": "get",
    "relations": "relations",
    # every version of every fact about an object, whatever the other end's type then
    "history": "read_all",
    "traverse": "traverse",
    "list_entities": "list",
    "search": "search",
    "schema_list": "schema",
    "tool_list": "schema",
    "api_document": "schema",
    "write_status": "write_status",  # whether a write id committed: no data of any type
    **dict.fromkeys(
        (
            "check",
            "summary",
            "query",
            "guard",
            "why",
            "hints",
            "proposals_list",
            "read_graph",
            "search_nodes",
            "open_nodes",
        ),
        "read_all",
    ),
    **dict.fromkeys(
        (
            "schema_add_type",
            "schema_add_relation",
            "proposals_confirm",
            "proposals_reject",
            "create_entities",
            "create_relations",
            "add_observations",
            "delete_entities",
            "delete_observations",
            "delete_relations",
        ),
        "write_all",
    ),
}


@dataclass(frozen=True)
class Scope:
    """Who calls (``name``, e.g. ``skill 'triage' (…/SKILL.md)``) and the types it may read
    and write; None for every type."""

    name: str
    reads: frozenset[str] | None = None
    writes: frozenset[str] | None = None

    @classmethod
    def of_contract(cls, contract: Contract) -> Scope:
        return cls(f"skill {contract.name!r} ({contract.path})", contract.reads, contract.writes)

    @property
    def readable(self) -> frozenset[str] | None:
        """``reads`` and ``writes`` (writing a type implies reading it); None: every type."""
        from ontoloom.skills import readable

        return readable(self.reads, self.writes)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "reads": ALL if self.reads is None else sorted(self.reads),
            "writes": ALL if self.writes is None else sorted(self.writes),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Scope:
        def types(value: Any) -> frozenset[str] | None:
            return None if value == ALL else frozenset(str(v) for v in value or ())

        return cls(str(data.get("name", "")), types(data.get("reads")), types(data.get("writes")))

    def allows(self, name: str) -> bool:
        """Whether operation ``name`` is offered under this scope at all (tools/list)."""
        try:
            self.offered(name)
        except Forbidden:
            return False
        return True

    def offered(self, name: str) -> None:
        """The check of ``name``'s rule that needs no graph.

        :raises Forbidden: ``name`` is never allowed under this scope.
        """
        rule = RULES.get(name)
        reads, writes = _listed(self.readable or ()), _listed(self.writes or ())
        if rule is None:
            raise Forbidden(f"{self.name} does not allow {name}: it is not one of the tools")
        if rule == "read_all" and self.readable is not None:
            raise Forbidden(
                f"{self.name} does not allow {name}: it reads across every type, and the "
                f'contract reads only {reads} (it would need reads: "*")'
            )
        if rule == "write_all" and self.writes is not None:
            raise Forbidden(
                f"{self.name} does not allow {name}: it writes beyond a declared type, and the "
                f'contract writes only {writes} (it would need writes: "*")'
            )
        if rule in _WRITES and self.writes is not None and not self.writes:
            raise Forbidden(f"{self.name} writes no type: {name} refused; nothing was stored")

    # -- the checks ---------------------------------------------------------------------
    def admit(self, g: Graph, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments ``name`` runs with under this scope (a search narrowed to the
        readable types), once it is allowed.

        :raises Forbidden: the call is outside the scope, naming it and the type.
        :raises NotFound: an object it names does not exist.
        """
        self.offered(name)
        rule = RULES.get(name)
        view = _view(g.schema, self)
        if rule == "create":
            view.writable(name, str(arguments.get("type", "")))
        elif rule in ("write_object", "delete"):
            entity_id = str(arguments.get("id", ""))
            view.writable(name, g.get(entity_id).type, entity_id)
            if rule == "delete":
                view.holders_writable(g, name, entity_id)
        elif rule == "relate":
            view.relatable(
                g, name, str(arguments.get("from_id", "")), str(arguments.get("to_id", ""))
            )
        elif rule == "plan":
            view.plan(g, arguments.get("plan"))
        elif rule in ("get", "relations", "traverse"):
            entity_id = str(arguments.get("id", ""))
            view.readable(name, g.get(entity_id).type, entity_id)
        elif rule == "list":
            if arguments.get("type") is not None:
                view.readable(name, str(arguments["type"]))
            elif view.read is not None:
                raise Forbidden(
                    f"{self.name} allows list_entities of one type at a time: give type, one "
                    f"of {_listed(view.declared_read)}"
                )
        elif rule == "search":
            given = arguments.get("type")
            wanted = [given] if isinstance(given, str) else list(given or [])
            for type_name in wanted:
                view.readable(name, str(type_name))
            if not wanted and view.read is not None:
                arguments = {**arguments, "type": sorted(view.read)}
        return arguments

    def answer(self, g: Graph, name: str, value: Any) -> tuple[Any, str | None]:
        """What ``name`` answered, as this scope may see it, and a note saying what was left
        out (None when nothing was).

        :raises Forbidden: a traversal reached an object the scope may not read.
        """
        view = _view(g.schema, self)
        if view.read is None:
            return value, None
        rule = RULES.get(name)
        if rule == "get" and isinstance(value, dict):
            relations = value.get("relations") or {}
            kept = {k: view.visible(v) for k, v in relations.items()}
            left = sum(len(v) for v in relations.values()) - sum(len(v) for v in kept.values())
            return {**value, "relations": kept}, view.left_out(left)
        if rule == "relations" and isinstance(value, list):
            kept_list = view.visible(value)
            return kept_list, view.left_out(len(value) - len(kept_list))
        if rule == "traverse" and isinstance(value, list):
            for item in value:
                type_name = str(item.get("type", ""))
                if type_name not in view.read:
                    raise Forbidden(
                        f"{self.name} does not read {type_name or 'untyped objects'}: this "
                        f"traversal reaches {item.get('id')} through "
                        f"{'/'.join(item.get('rels', []))}; give rel to follow only relations "
                        f"among {_listed(view.declared_read)}"
                    )
        return value, None

    # -- what agents see ------------------------------------------------------------------
    def types(self, schema: Schema, which: str) -> set[str] | None:
        """The schema's types this scope may ``read`` or ``write`` (subclasses included);
        None for every type."""
        view = _view(schema, self)
        found = view.read if which == "read" else view.write
        return None if found is None else set(found)

    def relations(self, schema: Schema, which: str) -> list[str]:
        """The schema's relations a call may name: ``write``, those from a writable type to
        a readable one; ``read``, those between readable types."""
        view = _view(schema, self)
        judge = view.relation_within if which == "write" else view.relation_seen
        return [n for n, r in schema.relations.items() if judge(schema, r.from_types, r.to_types)]


def _listed(names: Iterable[str]) -> str:
    found = sorted(names)
    return ", ".join(found) if found else "no type"


class _View:
    """A scope resolved against one schema: the type names it covers, subclasses included."""

    def __init__(self, schema: Schema, scope: Scope) -> None:
        self.scope = scope
        self.declared_read = sorted(scope.readable or ())
        self.declared_write = sorted(scope.writes or ())
        self.read = None if scope.readable is None else _covered(schema, scope.readable)
        self.write = None if scope.writes is None else _covered(schema, scope.writes)

    def writable(self, name: str, type_name: str, entity_id: str | None = None) -> None:
        if self.write is not None and type_name not in self.write:
            what = f"{entity_id}, a {type_name}" if entity_id else type_name
            raise Forbidden(
                f"{self.scope.name} does not write {type_name or 'untyped objects'}: {name} "
                f"of {what} refused (it writes {_listed(self.declared_write)}); nothing was "
                "stored"
            )

    def readable(self, name: str, type_name: str, entity_id: str | None = None) -> None:
        if self.read is not None and type_name not in self.read:
            what = f"{entity_id}, a {type_name}" if entity_id else type_name
            raise Forbidden(
                f"{self.scope.name} does not read {type_name or 'untyped objects'}: {name} "
                f"of {what} refused (it reads {_listed(self.declared_read)})"
            )

    def relatable(self, g: Graph, name: str, from_id: str, to_id: str) -> None:
        self.writable(name, g.get(from_id).type, from_id)
        self.readable(name, g.get(to_id).type, to_id)

    def holders_writable(self, g: Graph, name: str, entity_id: str) -> None:
        """Deleting ``entity_id`` removes the relations others hold to it: theirs to write."""
        if self.write is None:
            return
        for relation in g.relations(entity_id, direction="in"):
            held_by = relation.from_type or ""
            if held_by not in self.write:
                raise Forbidden(
                    f"{self.scope.name} does not write {held_by or 'untyped objects'}: {name} "
                    f"of {entity_id} would remove {relation.from_id} {relation.rel} "
                    f"{entity_id}, a statement of {relation.from_id} (it writes "
                    f"{_listed(self.declared_write)}); nothing was stored"
                )

    def plan(self, g: Graph, plan: Any) -> None:
        """Each step of a plan as the tool of the same act would be judged."""
        from ontoloom.plans import steps_of

        if self.write is None:
            return
        made: dict[str, str] = {}  # alias or id of an object the plan creates → its type

        def type_of(ref: str) -> str:
            return made[ref] if ref in made else g.get(ref).type

        for n, step in enumerate(steps_of(plan), start=1):
            op = step["op"]
            name = f"plan_apply step {n} ({op})"
            if op == "create":
                type_name = str(step.get("type", ""))
                self.writable(name, type_name)
                for key in ("as", "id"):
                    if step.get(key):
                        made[str(step[key])] = type_name
            elif op in ("update", "delete"):
                ref = str(step.get("id", ""))
                self.writable(name, type_of(ref), ref)
                if op == "delete" and ref not in made:
                    self.holders_writable(g, name, ref)
            elif op in ("relate", "unrelate"):
                source, target = str(step.get("from", "")), str(step.get("to", ""))
                self.writable(name, type_of(source), source)
                self.readable(name, type_of(target), target)
            else:  # steps_of knows every op; a new one is refused until judged here
                raise BadInput(f"step {n}: {op} is not judged under a contract")

    def relation_within(self, schema: Schema, from_types: list[str], to_types: list[str]) -> bool:
        """Whether a relation of these ends can be written (from a writable type to a
        readable one) under this scope."""
        return any(
            (self.write is None or t in self.write) and _within(schema, t, from_types)
            for t in schema.types
        ) and any(
            (self.read is None or t in self.read) and _within(schema, t, to_types)
            for t in schema.types
        )

    def relation_seen(self, schema: Schema, from_types: list[str], to_types: list[str]) -> bool:
        """Whether a relation of these ends can join two readable objects."""
        return all(
            any(
                (self.read is None or t in self.read) and _within(schema, t, ends)
                for t in schema.types
            )
            for ends in (from_types, to_types)
        )

    def visible(self, relations: list[Any]) -> list[Any]:
        """The relations (as JSON) both of whose ends are readable."""
        assert self.read is not None
        return [
            r
            for r in relations
            if r.get("from_type") in self.read and r.get("to_type") in self.read
        ]

    def left_out(self, count: int) -> str | None:
        if not count:
            return None
        return (
            f"{count} relation(s) to objects of types {self.scope.name} does not read were "
            f"left out (it reads {_listed(self.declared_read)})"
        )


def _covered(schema: Schema, names: Iterable[str]) -> frozenset[str]:
    """The types of ``schema`` among ``names``, or subclasses of one of them."""
    return frozenset(t for t in schema.types if _within(schema, t, names))


def _within(schema: Schema, type_name: str, classes: Iterable[str]) -> bool:
    """Whether ``type_name`` is one of ``classes`` or a subclass of one (classes may be
    the schema's abstract ones, e.g. Object or Record)."""
    from ontoloom.model import vocab_iri

    iri = schema.types[type_name].iri
    return any(iri in schema.hierarchy.subclasses(vocab_iri(c)) for c in classes)


_views: weakref.WeakKeyDictionary[Any, dict[Scope, _View]] = weakref.WeakKeyDictionary()
_views_lock = threading.Lock()


def _view(schema: Schema, scope: Scope) -> _View:
    """``scope`` resolved against ``schema``: once per schema (a schema change makes a new
    schema object)."""
    with _views_lock:
        per_schema = _views.setdefault(schema, {})
        found = per_schema.get(scope)
        if found is None:
            found = per_schema[scope] = _View(schema, scope)
        return found
