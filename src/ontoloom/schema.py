"""The schema: the ontology (what things are) and the shapes (every rule), built in and
extended at run time. Types, relations, cardinality and acyclicity are read from the RDF,
never restated in Python.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from ontoloom.resources import resource_dir
from ontoloom.secret_text import NO_SECRETS_JUDGES
from ontoloom.shacl import ShapeSet, Validator
from ontoloom.shacl.components import Constraint
from ontoloom.shacl.hierarchy import Hierarchy
from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.shacl.shapes import Shape
from ontoloom.store.rdfio import read_triples
from ontoloom.suggest import did_you_mean
from ontoloom.terms import BlankNode, Literal, NamedNode, Term, Triple, named
from ontoloom.vocab import OL, OWL, RDF_TYPE, RDFS, SH

__all__ = ["RelationSpec", "Schema", "TypeSpec", "builtin_triples", "is_acyclic"]

SUBCLASS = NamedNode(RDFS + "subClassOf")
OBJECT = NamedNode(OL + "Object")
ENTITY = NamedNode(OL + "Entity")
ACYCLIC = NamedNode(OL + "acyclic")


def _sh(local: str) -> NamedNode:
    return NamedNode(SH + local)


@dataclass
class TypeSpec:
    name: str
    iri: NamedNode
    required: list[str] = field(default_factory=list)
    enums: dict[str, list[str]] = field(default_factory=dict)
    builtin: bool = True
    comment: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "type": self.name,
            "required": self.required,
            "enums": self.enums,
            "builtin": self.builtin,
        }


@dataclass
class RelationSpec:
    name: str
    iri: NamedNode
    from_types: list[str]
    to_types: list[str]
    cardinality: str = "many_to_many"  # many_to_one | one_to_many | one_to_one | many_to_many
    acyclic: bool = False
    symmetric: bool = False
    builtin: bool = True

    def to_json(self) -> dict[str, object]:
        return {
            "rel": self.name,
            "from_types": self.from_types,
            "to_types": self.to_types,
            "cardinality": self.cardinality,
            "acyclic": self.acyclic,
            "symmetric": self.symmetric,
            "builtin": self.builtin,
        }


def _files(kind: str) -> list[Triple]:
    triples: list[Triple] = []
    for path in sorted(resource_dir(kind).glob("*.ttl")):
        triples.extend(read_triples(path=path))
    return triples


def builtin_triples() -> tuple[list[Triple], list[Triple]]:
    """The shipped ontology and shapes."""
    return _files("ontology"), _files("shapes")


@lru_cache(maxsize=8)
def _load_cached(extensions: tuple[Triple, ...]) -> Schema:
    return Schema(*builtin_triples(), extensions)


def _local(term: Term) -> str:
    return (
        term.value[len(OL) :]
        if isinstance(term, NamedNode) and term.value.startswith(OL)
        else str(term)
    )


class Schema:
    """Ontology + shapes (built-in and extensions), and what follows from them."""

    def __init__(
        self,
        ontology: Iterable[Triple],
        shapes: Iterable[Triple],
        extensions: Iterable[Triple] = (),
    ) -> None:
        ontology = list(ontology)
        self.extensions = list(extensions)
        self.ontology = TripleIndex([*ontology, *self.extensions])
        self.shape_triples = [*shapes, *self.extensions]
        self.shapes = ShapeSet(self.shape_triples)
        self._builtin_subjects = {t.subject for t in ontology}

    @classmethod
    def load(cls, extensions: Iterable[Triple] = ()) -> Schema:
        """The shipped schema plus ``extensions`` (the store's schema graph).

        Cached: a schema never changes once built, so a long-lived process that reopens the
        store for every call (the MCP server) reuses its compiled validators.
        """
        return _load_cached(tuple(extensions))

    # -- class hierarchy -------------------------------------------------------------------
    @cached_property
    def hierarchy(self) -> Hierarchy:
        return Hierarchy(self.subclass_pairs)

    @cached_property
    def subclass_pairs(self) -> list[tuple[Term, Term]]:
        return [(s, o) for s, o in self.ontology.pairs(SUBCLASS) if isinstance(o, NamedNode)]

    def object_classes(self) -> list[NamedNode]:
        return [
            c for c in self.hierarchy.subclasses(OBJECT) if isinstance(c, NamedNode) and c != OBJECT
        ]

    # -- types ---------------------------------------------------------------------------
    @cached_property
    def types(self) -> dict[str, TypeSpec]:
        abstract = {OBJECT, ENTITY, NamedNode(OL + "Record")}
        out: dict[str, TypeSpec] = {}
        for cls in self.object_classes():
            if cls in abstract or not cls.value.startswith(OL):
                continue
            comment = self.ontology.value(cls, NamedNode(RDFS + "comment"))
            out[_local(cls)] = TypeSpec(
                _local(cls),
                cls,
                builtin=cls in self._builtin_subjects,
                comment=comment.value if isinstance(comment, Literal) else None,
            )
        for shape in self._class_targeted_property_shapes():
            assert shape.path is not None and shape.path.iri is not None
            prop = _local(shape.path.iri)
            for target in shape.targets:
                spec = out.get(_local(target.term))
                if spec is None or target.kind != "targetClass":
                    continue
                for c in shape.constraints:
                    if (
                        c.name == "minCount"
                        and getattr(c, "n", 0) >= 1
                        and prop not in spec.required
                    ):
                        spec.required.append(prop)
                    if c.name == "in":
                        spec.enums[prop] = [
                            str(getattr(t, "value", t)) for t in getattr(c, "allowed", [])
                        ]
        return out

    def _class_targeted_property_shapes(self) -> list[Shape]:
        return [
            s
            for s in self.shapes.targeted()
            if s.path is not None
            and s.path.is_predicate
            and any(t.kind == "targetClass" for t in s.targets)
        ]

    # -- relations -------------------------------------------------------------------------
    def _classes_of(self, node: Term | None) -> list[str]:
        if node is None:
            return []
        if isinstance(node, BlankNode):
            members: list[str] = []
            for key in ("unionOf",):
                for head in self.ontology.objects(node, NamedNode(OWL + key)):
                    members.extend(_local(m) for m in self.ontology.items(head))
            return members
        return [_local(node)]

    @cached_property
    def relations(self) -> dict[str, RelationSpec]:
        out: dict[str, RelationSpec] = {}
        for prop in self.ontology.subjects(RDF_TYPE, NamedNode(OWL + "ObjectProperty")):
            if not isinstance(prop, NamedNode) or not prop.value.startswith(OL):
                continue
            name = _local(prop)
            out[name] = RelationSpec(
                name=name,
                iri=prop,
                from_types=self._classes_of(self.ontology.value(prop, NamedNode(RDFS + "domain"))),
                to_types=self._classes_of(self.ontology.value(prop, NamedNode(RDFS + "range"))),
                symmetric=NamedNode(OWL + "SymmetricProperty")
                in self.ontology.objects(prop, RDF_TYPE),
                builtin=prop in self._builtin_subjects,
            )
        forward_max: set[str] = set()
        inverse_max: set[str] = set()
        for shape in self.shapes.targeted():
            path = shape.path
            if path is None:
                continue
            for c in shape.constraints:
                # a predicate path always names its IRI
                if (
                    path.is_predicate
                    and c.short_name == "acyclic"
                    and _local(named(path.iri)) in out
                ):
                    out[_local(named(path.iri))].acyclic = True
                if c.name == "maxCount" and getattr(c, "n", None) == 1:
                    if path.is_predicate:
                        forward_max.add(_local(named(path.iri)))
                    elif path.kind == "inverse" and path.parts[0].is_predicate:
                        inverse_max.add(_local(named(path.parts[0].iri)))
        for name, spec in out.items():
            many_to_one, one_to_many = name in forward_max, name in inverse_max
            spec.cardinality = (
                "one_to_one"
                if many_to_one and one_to_many
                else "many_to_one"
                if many_to_one
                else "one_to_many"
                if one_to_many
                else "many_to_many"
            )
        return dict(sorted(out.items()))

    # -- names it does not know ------------------------------------------------------------
    def unknown_type(self, name: str) -> str:
        """What to say of a type name the schema lacks: the name, the closest known, and all
        of them (each front end adds how to see or add one)."""
        known = sorted(self.types)
        return (
            f"unknown entity type {name!r}{did_you_mean(name, known)}; "
            f"known types: {', '.join(known)}"
        )

    def unknown_relation(self, name: str | None) -> str:
        """:meth:`unknown_type` for a relation name."""
        known = list(self.relations)
        return (
            f"unknown relation {name!r}{did_you_mean(name or '', known)}; "
            f"known relations: {', '.join(known)}"
        )

    @cached_property
    def datatype_properties(self) -> set[str]:
        """Names the ontology declares as properties (so no relation may take them)."""
        declared = self.ontology.subjects(RDF_TYPE, NamedNode(OWL + "DatatypeProperty"))
        return {_local(s) for s in declared if isinstance(s, NamedNode) and s.value.startswith(OL)}

    @cached_property
    def multi_valued(self) -> set[str]:
        return {
            _local(s)
            for s, o in self.ontology.pairs(NamedNode(OL + "multiValued"))
            if isinstance(o, Literal) and o.value == "true"
        }

    # -- validators ------------------------------------------------------------------------
    @cached_property
    def audit_validator(self) -> Validator:
        """Every shape, acyclicity included (``check``, ``validate``); ol:NoSecrets judged in
        Python only on literals the store keeps in another form than written."""
        return Validator(self.shapes, extra_classes=self.subclass_pairs, judges=NO_SECRETS_JUDGES)

    @cached_property
    def write_validator(self) -> Validator:
        """Every shape but acyclicity, which the write path checks with path queries; the
        filters of ol:NoSecrets evaluated in Python (:mod:`ontoloom.shacl.native`)."""
        return Validator(
            self.shapes,
            extra_classes=self.subclass_pairs,
            skip=is_acyclic,
            judges=NO_SECRETS_JUDGES,
        )


def is_acyclic(shape: Shape, constraint: Constraint) -> bool:
    return constraint.short_name == "acyclic"
