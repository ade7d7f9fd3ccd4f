"""Shapes as read from a shapes graph: targets, path, constraints, severity, messages."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ontoloom.shacl.hierarchy import Hierarchy
from ontoloom.shacl.paths import Path, PathError, parse_path
from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.terms import Literal, NamedNode, Statement, Term
from ontoloom.vocab import OWL, RDF_TYPE, RDFS, SH

if TYPE_CHECKING:
    from ontoloom.shacl.components import Constraint

__all__ = [
    "Shape",
    "ShapeSet",
    "ShapesError",
    "Target",
    "Unsupported",
    "UnsupportedFeatures",
    "ValidationFailure",
]


def sh(local: str) -> NamedNode:
    return NamedNode(SH + local)


RDFS_SUBCLASS = NamedNode(RDFS + "subClassOf")
VIOLATION = sh("Violation")
_TARGET_KINDS = ("targetClass", "targetNode", "targetSubjectsOf", "targetObjectsOf")
_SHAPE_REFERENCES = ("node", "not", "qualifiedValueShape", "property")
_SHAPE_LISTS = ("and", "or", "xone")


# Subclass axioms of the vocabularies themselves that a shapes graph need not repeat.
_SYSTEM_CLASSES = [
    (NamedNode(OWL + "Class"), NamedNode(RDFS + "Class")),
    (sh("SPARQLFunction"), sh("Function")),
    (sh("JSFunction"), sh("Function")),
    (sh("SPARQLTargetType"), sh("TargetType")),
    (sh("JSTargetType"), sh("TargetType")),
]


class ShapesError(ValueError):
    """The shapes graph is not well-formed SHACL."""


class ValidationFailure(ShapesError):
    """Validation could not be completed: a SHACL *failure*, not a validation result
    (e.g. a SPARQL constraint's solution binds ?failure to true)."""


class UnsupportedFeatures(ShapesError):
    """The shapes use features ontoloom does not evaluate, and the caller did not allow
    validating the rest (``allow_unsupported``)."""

    def __init__(self, items: list[Unsupported], describe: Callable[[Unsupported], str]) -> None:
        self.items, self.describe = items, describe
        lines = [describe(u) for u in items]
        super().__init__(
            "; ".join(f"{line}, which ontoloom does not evaluate" for line in lines)
            + "; pass --allow-unsupported to validate the rest"
        )


@dataclass(frozen=True)
class Target:
    """How a shape finds focus nodes.

    ``kind`` is targetClass, targetNode, targetSubjectsOf or targetObjectsOf (SHACL core;
    ``term`` is the value), or ``sparqlTarget`` (SHACL-AF: a sh:SPARQLTarget, or an
    instance of a sh:SPARQLTargetType with its parameters written in; ``term`` is the
    sh:target node, ``select`` the SELECT query whose ?this bindings are the focus nodes,
    ``prologue`` its PREFIX lines).
    """

    kind: str
    term: Term
    select: str | None = None
    prologue: str = ""


@dataclass(frozen=True)
class Unsupported:
    """A feature of a shape that ontoloom does not evaluate: refused, or reported by name."""

    shape: Term
    feature: str


@dataclass(eq=False)
class Shape:
    node: Term
    path: Path | None
    targets: list[Target] = field(default_factory=list)
    constraints: list[Constraint] = field(default_factory=list)
    properties: list[Term] = field(default_factory=list)  # sh:property values
    severity: NamedNode = VIOLATION
    messages: tuple[Literal, ...] = ()
    deactivated: bool = False
    unsupported: list[str] = field(default_factory=list)  # features not evaluated (targets)

    @property
    def is_property_shape(self) -> bool:
        return self.path is not None

    def __repr__(self) -> str:
        return f"<Shape {self.node}>"


class ShapeSet:
    """Every shape of a shapes graph, parsed on demand and cached."""

    def __init__(
        self,
        triples: Iterable[Statement],
        *,
        prefixes: Mapping[str, str] | None = None,
        inferred: bool = False,
    ) -> None:
        from ontoloom.shacl.components import custom_components

        # The data was expanded by inference (RDFS or OWL RL): every node is then an
        # rdfs:Resource, which closed shapes allow, as pySHACL's do.
        self.inferred = inferred
        self.graph = TripleIndex(triples)
        self.prefixes = dict(prefixes or {})  # to name shapes in errors as the file wrote them
        self._shapes: dict[Term, Shape] = {}
        self._parameters: dict[Term, dict[str, list[Term]]] = {}
        # The shapes graph's own class hierarchy: SHACL instances of rdfs:Class, sh:NodeShape…
        # OWL declares owl:Class a subclass of rdfs:Class; pySHACL assumes it too.
        self.classes = Hierarchy([*self.graph.pairs(RDFS_SUBCLASS), *_SYSTEM_CLASSES])
        self.custom = custom_components(self.graph)

    def describe(self, item: Unsupported) -> str:
        """``shape ex:S uses sh:js (…)``: an unsupported feature, as errors say it."""
        return f"shape {self.label(item.shape)} uses {item.feature}"

    def functions(self) -> set[str]:
        """IRIs of the SHACL functions (SHACL-AF sh:Function) the shapes graph declares."""
        return {f.value for f in self.instances(sh("Function")) if isinstance(f, NamedNode)}

    def label(self, node: Term) -> str:
        """A shape as errors name it: its IRI, or a blank one by its description."""
        from ontoloom.shacl.render import Renderer

        return Renderer(self.prefixes, self.graph).term(node)

    def instances(self, cls: Term) -> list[Term]:
        """SHACL instances of ``cls`` in the shapes graph (rdf:type/rdfs:subClassOf*)."""
        return [n for c in self.classes.subclasses(cls) for n in self.graph.subjects(RDF_TYPE, c)]

    def is_instance(self, node: Term, cls: Term) -> bool:
        kinds = set(self.classes.subclasses(cls))
        return any(t in kinds for t in self.graph.objects(node, RDF_TYPE))

    def parameters(self, node: Term) -> dict[str, list[Term]]:
        """The sh: properties of ``node`` by local name, each with its values in the order
        of the graph's triples: every component reads a shape's parameters from here (one
        pass over the shape's triples, not one lookup per component and parameter)."""
        found = self._parameters.get(node)
        if found is None:
            found = {}
            for t in self.graph.triples_of(node):
                iri = t.predicate.value
                if iri.startswith(SH):
                    found.setdefault(iri[len(SH) :], []).append(t.object)  # type: ignore[arg-type]
            self._parameters[node] = found
        return found

    def shape(self, node: Term) -> Shape:
        cached = self._shapes.get(node)
        if cached is not None:
            return cached
        from ontoloom.shacl.components import parse_constraints

        g = self.graph
        path_nodes = g.objects(node, sh("path"))
        if len(path_nodes) > 1:
            raise ShapesError(
                f"shape {self.label(node)} has {len(path_nodes)} values of sh:path; keep one"
            )
        try:
            path = parse_path(g, path_nodes[0]) if path_nodes else None
        except PathError as exc:
            raise ShapesError(f"shape {self.label(node)}: {exc}") from exc
        for prop in g.objects(node, sh("property")):
            if isinstance(prop, Literal) or g.value(prop, sh("path")) is None:
                raise ShapesError(
                    f"shape {self.label(node)}: sh:property {self.label(prop)} is not a "
                    "property shape (it has no sh:path); give it one, or use sh:node"
                )
        targets = [Target(kind, t) for kind in _TARGET_KINDS for t in g.objects(node, sh(kind))]
        if self.is_instance(node, NamedNode(RDFS + "Class")):  # an implicit class target
            targets.append(Target("targetClass", node))
        from ontoloom.shacl.targets import custom_targets

        advanced, unsupported = custom_targets(self, node)
        severity = g.value(node, sh("severity"))
        deactivated = g.value(node, sh("deactivated"))
        shape = Shape(
            node=node,
            path=path,
            targets=targets,
            properties=list(g.objects(node, sh("property"))),
            severity=severity if isinstance(severity, NamedNode) else VIOLATION,
            messages=tuple(m for m in g.objects(node, sh("message")) if isinstance(m, Literal)),
            deactivated=isinstance(deactivated, Literal) and deactivated.value in ("true", "1"),
            unsupported=unsupported,
        )
        shape.targets.extend(advanced)
        self._shapes[node] = shape
        shape.constraints = parse_constraints(self, shape)
        return shape

    def reached(self, roots: Iterable[Term]) -> Iterator[Shape]:
        """The shapes ``roots`` reach, each once: themselves, their property shapes and the
        shapes their constraints name (sh:node, sh:or…), at any depth."""
        seen: set[Term] = set()
        stack = list(roots)
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            shape = self.shape(node)
            yield shape
            for c in shape.constraints:
                stack += c.shape_refs()
            stack += shape.properties

    def all_shape_nodes(self) -> list[Term]:
        """Every node the shapes graph uses as a shape, in a stable order."""
        g = self.graph
        nodes: dict[Term, None] = {}
        for cls in ("NodeShape", "PropertyShape"):
            for s in self.instances(sh(cls)):
                nodes[s] = None
        # Subjects of sh:property and sh:node are shapes too, as pySHACL reads them (the
        # spec asks for a type or a target; a class with properties means to be a shape).
        for kind in (*_TARGET_KINDS, "target", "path", "property", "node"):
            for s, _ in g.pairs(sh(kind)):
                nodes[s] = None
        for ref in _SHAPE_REFERENCES:
            for _, o in g.pairs(sh(ref)):
                nodes[o] = None
        for ref in _SHAPE_LISTS:
            for _, head in g.pairs(sh(ref)):
                for member in g.items(head):
                    nodes[member] = None
        return sorted(nodes, key=str)

    def targeted(self) -> list[Shape]:
        """Shapes validated on their own: those with targets, not deactivated."""
        out = []
        for node in self.all_shape_nodes():
            shape = self.shape(node)
            if shape.targets and not shape.deactivated:
                out.append(shape)
        return out

    def parents(self, shape_node: Term) -> list[Term]:
        """Shapes that hold ``shape_node`` as one of their sh:property values."""
        return list(self.graph.subjects(sh("property"), shape_node))
