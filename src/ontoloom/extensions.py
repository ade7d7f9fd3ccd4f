"""Schema extensions made at run time: new entity types, new relations, whole shapes
files. They are stored as OWL + SHACL in the store's schema graph and apply to every
later write. An extension that the data already in the graph would violate is refused,
with the report of which data.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput, ValidationFailed
from ontoloom.findings import Finding
from ontoloom.model import check_property_name, literal_from_json
from ontoloom.resources import resource_dir
from ontoloom.store.base import Delta
from ontoloom.store.rdfio import guess_format, read_triples
from ontoloom.suggest import did_you_mean
from ontoloom.terms import BlankNode, Literal, NamedNode, Quad, Term, Triple, node, spo, subject
from ontoloom.vocab import OL, OWL, RDF, RDFS, SCHEMA_GRAPH, SH, XSD, compact

if TYPE_CHECKING:
    from ontoloom.session import Session

__all__ = [
    "add_relation",
    "add_schema_triples",
    "add_shapes",
    "add_type",
    "describe_schema",
    "parse_spec",
    "show_type",
]

CARDINALITIES = ("many_to_one", "one_to_many", "one_to_one", "many_to_many")
_TYPE_NAME = re.compile(r"^[A-Z][A-Za-z0-9_]{0,63}$")
_REL_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")

A = NamedNode(RDF + "type")


def _ol(local: str) -> NamedNode:
    return NamedNode(OL + local)


def _sh(local: str) -> NamedNode:
    return NamedNode(SH + local)


def _lit(text: str) -> Literal:
    return Literal(text)


class _Triples:
    """Collects triples; writes RDF lists."""

    def __init__(self) -> None:
        self.items: list[Triple] = []

    def add(self, s: Term, p: NamedNode, o: Term) -> None:
        self.items.append(Triple(subject(s), p, o))

    def rdf_list(self, members: list[Term]) -> Term:
        head: Term = NamedNode(RDF + "nil")
        for member in reversed(members):
            node = BlankNode()
            self.add(node, NamedNode(RDF + "first"), member)
            self.add(node, NamedNode(RDF + "rest"), head)
            head = node
        return head


def _article(name: str) -> str:
    return "An" if name[:1].lower() in "aeiou" else "A"


def parse_spec(value: Any, what: str) -> dict[str, Any]:
    """A schema addition given as JSON text (or already as an object), as an object."""
    if isinstance(value, str):
        import json

        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise BadInput(f"{what}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(value, dict):
        raise BadInput(f"{what}: give a JSON object")
    return value


def _refuse_unknown_keys(spec: dict[str, Any], what: str, keys: tuple[str, ...]) -> None:
    """Checked before any value: a misspelt key (``"typ"``) is named as the typo it is, not
    reported as its correct key missing."""
    unknown = sorted(k for k in spec if k not in keys)
    if unknown:
        raise BadInput(
            f"{what}: unknown key {unknown[0]!r}{did_you_mean(unknown[0], keys)}; "
            f"the keys are {', '.join(keys)}"
        )


def add_type(graph: Session, spec: Any) -> dict[str, Any]:
    """``{"type": "Sprint", "required": [...], "enums": {prop: [values]}, "description": …}``"""
    spec = parse_spec(spec, "add-type")
    _refuse_unknown_keys(spec, "add-type", ("type", "required", "enums", "description"))
    name = spec.get("type")
    if not isinstance(name, str) or not _TYPE_NAME.match(name):
        raise BadInput('add-type: "type" is a CamelCase name, e.g. {"type": "Sprint"}')
    if name in graph.schema.types or name in ("Object", "Entity", "Record"):
        raise BadInput(
            f"add-type: the type {name} already exists; `ontoloom schema show {name}` describes it"
        )
    required = spec.get("required", [])
    enums = spec.get("enums", {})
    if not isinstance(required, list) or not isinstance(enums, dict):
        raise BadInput(
            'add-type: "required" is a list of property names, "enums" maps a property to its values'
        )
    t = _Triples()
    cls = _ol(name)
    t.add(cls, A, NamedNode(OWL + "Class"))
    t.add(cls, NamedNode(RDFS + "subClassOf"), _ol("Entity"))
    t.add(cls, NamedNode(RDFS + "label"), _lit(name))
    if isinstance(spec.get("description"), str):
        t.add(cls, NamedNode(RDFS + "comment"), _lit(spec["description"]))
    for prop in required:
        check_property_name(prop)
        shape = _ol(f"{name}{prop.capitalize()}Required")
        t.add(shape, A, _sh("PropertyShape"))
        t.add(shape, _sh("targetClass"), cls)
        t.add(shape, _sh("path"), _ol(prop))
        t.add(shape, _sh("minCount"), Literal("1", datatype=NamedNode(XSD + "integer")))
        t.add(
            shape,
            _sh("message"),
            _lit(f"{_article(name)} {name} needs {prop}: set it with -p {prop}=…"),
        )
    for prop, values in enums.items():
        check_property_name(prop)
        if not isinstance(values, list) or not values:
            raise BadInput(f"add-type: enums.{prop} is a non-empty list of allowed values")
        literals = [lit for v in values for lit in literal_from_json(v, field_name=f"enums.{prop}")]
        shape = _ol(f"{name}{prop.capitalize()}Enum")
        t.add(shape, A, _sh("PropertyShape"))
        t.add(shape, _sh("targetClass"), cls)
        t.add(shape, _sh("path"), _ol(prop))
        t.add(shape, _sh("in"), t.rdf_list(list(literals)))
        t.add(shape, _sh("maxCount"), Literal("1", datatype=NamedNode(XSD + "integer")))
        allowed = ", ".join(str(v) for v in values)
        t.add(
            shape,
            _sh("message"),
            _lit(f"{_article(name)} {name}'s {prop} is exactly one of {allowed}"),
        )
    add_schema_triples(graph, t.items, source=f"add-type {name}")
    return {"added": "type", **graph.schema.types[name].to_json()}


def add_relation(graph: Session, spec: Any) -> dict[str, Any]:
    """``{"rel": "mentors", "from_types": [...], "to_types": [...], "cardinality": …,
    "acyclic": bool, "symmetric": bool}``"""
    spec = parse_spec(spec, "add-relation")
    _refuse_unknown_keys(
        spec,
        "add-relation",
        ("rel", "from_types", "to_types", "cardinality", "acyclic", "symmetric", "description"),
    )
    name = spec.get("rel")
    if not isinstance(name, str) or not _REL_NAME.match(name):
        raise BadInput('add-relation: "rel" is a lower-case name, e.g. {"rel": "mentors"}')
    if name in graph.schema.relations:
        raise BadInput(f"add-relation: the relation {name} already exists")
    ends = {}
    for key in ("from_types", "to_types"):
        types = spec.get(key)
        if not isinstance(types, list) or not types or not all(isinstance(x, str) for x in types):
            raise BadInput(f'add-relation: "{key}" is a non-empty list of types')
        missing = [x for x in types if x not in graph.schema.types]
        if missing:
            raise BadInput(
                f"add-relation: unknown type {missing[0]!r} in {key}; add it first with `schema add-type`"
            )
        ends[key] = types
    cardinality = spec.get("cardinality", "many_to_many")
    if cardinality not in CARDINALITIES:
        raise BadInput(f"add-relation: cardinality is one of {', '.join(CARDINALITIES)}")
    t = _Triples()
    prop = _ol(name)
    t.add(prop, A, NamedNode(OWL + "ObjectProperty"))
    t.add(prop, NamedNode(RDFS + "label"), _lit(name))
    if spec.get("symmetric"):
        t.add(prop, A, NamedNode(OWL + "SymmetricProperty"))
    for key, axis in (("from_types", "domain"), ("to_types", "range")):
        classes = [_ol(x) for x in ends[key]]
        if len(classes) == 1:
            t.add(prop, NamedNode(RDFS + axis), classes[0])
        else:
            union = BlankNode()
            t.add(union, NamedNode(OWL + "unionOf"), t.rdf_list(list(classes)))
            t.add(prop, NamedNode(RDFS + axis), union)
    from_words = " or ".join(ends["from_types"])
    to_words = " or ".join(ends["to_types"])
    _class_constraint(
        t,
        _ol(f"{name}Domain"),
        "NodeShape",
        "targetSubjectsOf",
        prop,
        None,
        ends["from_types"],
        f"{name} starts at a {from_words}",
    )
    _class_constraint(
        t,
        _ol(f"{name}Range"),
        "PropertyShape",
        "targetSubjectsOf",
        prop,
        prop,
        ends["to_types"],
        f"{name} points at a {to_words}",
    )
    one = Literal("1", datatype=NamedNode(XSD + "integer"))
    if cardinality in ("many_to_one", "one_to_one"):
        shape = _ol(f"{name}Cardinality")
        _property_shape(t, shape, "targetSubjectsOf", prop, prop)
        t.add(shape, _sh("maxCount"), one)
        t.add(
            shape, _sh("message"), _lit(f"{name} is {cardinality}: a {from_words} has at most one")
        )
    if cardinality in ("one_to_many", "one_to_one"):
        shape = _ol(f"{name}InverseCardinality")
        inverse = BlankNode()
        t.add(inverse, _sh("inversePath"), prop)
        _property_shape(t, shape, "targetObjectsOf", prop, inverse)
        t.add(shape, _sh("maxCount"), one)
        t.add(
            shape,
            _sh("message"),
            _lit(
                f"{name} is {cardinality}: a {to_words} is the target of at most one; unrelate the other first"
            ),
        )
    if spec.get("acyclic"):
        shape = _ol(f"{name}Acyclic")
        _property_shape(t, shape, "targetSubjectsOf", prop, prop)
        t.add(shape, _ol("acyclic"), Literal("true", datatype=NamedNode(XSD + "boolean")))
        t.add(
            shape,
            _sh("message"),
            _lit(f"{name} is acyclic: nothing can reach itself through {name}"),
        )
    add_schema_triples(graph, t.items, source=f"add-relation {name}")
    return {"added": "relation", **graph.schema.relations[name].to_json()}


def _property_shape(
    t: _Triples, shape: NamedNode, target: str, target_term: Term, path: Term
) -> None:
    t.add(shape, A, _sh("PropertyShape"))
    t.add(shape, _sh(target), target_term)
    t.add(shape, _sh("path"), path)


def _class_constraint(
    t: _Triples,
    shape: NamedNode,
    kind: str,
    target: str,
    prop: NamedNode,
    path: Term | None,
    types: list[str],
    message: str,
) -> None:
    t.add(shape, A, _sh(kind))
    t.add(shape, _sh(target), prop)
    if path is not None:
        t.add(shape, _sh("path"), path)
    if len(types) == 1:
        t.add(shape, _sh("class"), _ol(types[0]))
    else:
        members = []
        for x in types:
            member = BlankNode()
            t.add(member, _sh("class"), _ol(x))
            members.append(member)
        t.add(shape, _sh("or"), t.rdf_list(list(members)))
    t.add(shape, _sh("message"), _lit(message))


def add_shapes(
    graph: Session,
    path: Any,
    format_name: str | None = None,
    *,
    data: bytes | None = None,
    label: str | None = None,
    base_iri: str | None = None,
) -> dict[str, Any]:
    """Add a shapes file (or ``data``, the content of the file its caller read and calls
    ``label``, by default standard input); the result says, per shape it targets with, how
    writes check it.

    :raises BadInput: a format that cannot be told from the name, or no triple at all.
    """

    if data is not None:
        named = label if label not in (None, "-") else None
        label = named or "standard input"
    else:
        named = label = str(path)
    if data is None and not Path(path).exists():
        raise BadInput(f"{path}: no such file")
    name = format_name or (guess_format(Path(named)) if named else None)
    if name is None:
        raise BadInput(
            f"cannot tell the RDF format of {label}: pass --format "
            "(turtle, trig, nquads, ntriples, jsonld, rdfxml)"
        )
    if data is not None:
        triples = read_triples(
            data=data, format_name=name, label=named or "<stdin>", base_iri=base_iri
        )
    else:
        triples = read_triples(path=path, format_name=name, base_iri=Path(path).resolve().as_uri())
    if not triples:
        raise BadInput(f"{label}: read as {name}, it holds no triple; no shapes were added")
    add_schema_triples(graph, triples, source=label)
    defined = {t.subject for t in triples}
    checks = [
        {"shape": str(getattr(node, "value", node)), "route": reach.route, "how": reach.describe()}
        for node, reach in graph.writes.reaches.items()
        if node in defined
    ]
    return {"added": "shapes", "file": label, "triples": len(triples), "checks": checks}


def add_schema_triples(graph: Session, triples: list[Triple], *, source: str) -> None:
    """Store new schema triples through the write path, which checks that they are valid
    SHACL and that the data already in the graph does not break them.

    :raises ValidationFailed: the shapes are not valid SHACL, or data would break them.
    """
    delta = Delta(adds={Quad(t.subject, t.predicate, t.object, SCHEMA_GRAPH) for t in triples})
    try:
        graph.writes.commit(delta)
    except ValidationFailed as exc:
        if exc.findings and all(f.constraint == "shacl-shacl" for f in exc.findings):
            raise ValidationFailed(
                exc.findings, f"refused: {source} is not a valid SHACL shapes graph"
            ) from None
        own = [_own_value(f, triples, source) for f in exc.findings]
        if own and all(own):
            raise ValidationFailed(
                [f for f in own if f], f"refused: {source} itself holds a value that breaks a rule"
            ) from None
        raise ValidationFailed(
            exc.findings, f"refused: data already in the graph would break {source}"
        ) from None


def _own_value(finding: Finding, triples: list[Triple], source: str) -> Finding | None:
    """``finding`` named in the schema's words when it is about one of ``triples`` (the new
    schema's own text, such as a secret in a description); None when it is about data."""
    for t in triples:
        s, p, _ = spo(t)
        if _written(s) == finding.focus and _written(p) == finding.path:
            focus = (
                compact(s.value)
                if isinstance(s, NamedNode)
                else f"(a list or shape inside {source})"
            )
            return replace(finding, focus=focus, path=compact(p.value))
    return None


def _written(term: Term) -> str:
    return f"_:{term.value}" if isinstance(term, BlankNode) else term.value


def schema_problems(triples: list[Triple]) -> list[Finding]:
    """Why ``triples`` are not a valid SHACL shapes graph (SHACL-SHACL), if they are not."""
    from ontoloom.shacl.validate import validate_graphs

    meta = read_triples(path=resource_dir("shapes") / "meta" / "shacl-shacl.ttl")
    report = validate_graphs(triples, meta)
    return [
        Finding(
            focus=str(r.focus),
            path=r.path_key(),
            constraint="shacl-shacl",
            value=None if r.value is None else str(r.value),
            message="not valid SHACL: "
            + ("; ".join(m.value for m in r.messages) or f"see SHACL-SHACL ({r.constraint_name})"),
        )
        for r in report.results
    ]


def builtin_overrides(triples: list[Triple]) -> list[Finding]:
    """Triples that would say more about a built-in shape (``ol:NoSecrets sh:deactivated
    true``, a lower severity, an ignored property): the shipped rules cannot be switched off
    or softened from the schema graph. Extensions add shapes of their own instead."""
    from ontoloom.schema import builtin_triples

    _, shapes = builtin_triples()
    declare = NamedNode(SH + "declare")
    # Shapes and components (said so with SHACL terms), not the ontology IRI that merely
    # declares prefixes for their queries.
    builtin = {
        t.subject
        for t in shapes
        if isinstance(t.subject, NamedNode)
        and t.predicate != declare
        and (t.predicate.value.startswith(SH) or node(t.object).value.startswith(SH))
    }
    return [
        Finding(
            focus=str(t.subject),
            path=str(t.predicate),
            constraint="builtin-shape",
            value=None,
            message=(
                f"{subject(t.subject).value} is a built-in shape: the schema graph cannot change it "
                f"(here {t.predicate.value}); add a shape of your own instead"
            ),
        )
        for t in triples
        if t.subject in builtin
    ]


def describe_schema(graph: Session) -> dict[str, Any]:
    return {
        "types": [t.to_json() for t in sorted(graph.schema.types.values(), key=lambda t: t.name)],
        "relations": [r.to_json() for r in graph.schema.relations.values()],
    }


def show_type(graph: Session, name: str) -> dict[str, Any]:
    spec = graph.schema.types.get(name)
    if spec is None:
        from ontoloom.errors import NotFound

        raise NotFound(f"{graph.schema.unknown_type(name)} (`ontoloom schema list` shows them)")
    rules = []
    for shape in graph.schema.shapes.targeted():
        if any(
            t.kind == "targetClass" and t.term in graph.schema.hierarchy.superclasses_of([spec.iri])
            for t in shape.targets
        ):
            rules.append(
                {
                    "shape": shape.node.value
                    if isinstance(shape.node, NamedNode)
                    else str(shape.node),
                    "path": shape.path.sparql() if shape.path else None,
                    "constraints": [c.short_name for c in shape.constraints],
                    "message": "; ".join(
                        m.value
                        for m in shape.messages
                        or [m for c in shape.constraints for m in c.default_messages]
                    ),
                }
            )
    relations = graph.schema.relations.values()
    return {
        **spec.to_json(),
        "description": spec.comment,
        "relations_from": [r.name for r in relations if name in r.from_types],
        "relations_to": [r.name for r in relations if name in r.to_types],
        "rules": rules,
    }
