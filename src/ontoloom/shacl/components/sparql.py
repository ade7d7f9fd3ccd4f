"""SPARQL-based constraints (sh:sparql) and SPARQL-based constraint components
(sh:ConstraintComponent with SELECT or ASK validators), per SHACL-SPARQL.

Pre-bound variables: ``$this`` is the focus variable itself (``$this`` and ``?this`` are the
same SPARQL variable), ``$PATH`` becomes the shape's path, parameters and
``$currentShape`` are written in as terms.
"""

from __future__ import annotations

import itertools
import re
from typing import ClassVar

from ontoloom.shacl.compiler import CompileError, Compiler, Source, Violation, is_true
from ontoloom.shacl.components import Constraint, sh_values
from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.shacl.shapes import RDF_TYPE, Shape, ShapeSet, sh
from ontoloom.store.terms import BlankNode, Literal, NamedNode, Term
from ontoloom.vocab import RDFS

_PREFIX_LINE = re.compile(r"^\s*(PREFIX\s+[\w-]*:\s*<[^>]*>|BASE\s+<[^>]*>)\s*", re.IGNORECASE)
_FORBIDDEN = re.compile(r"\b(MINUS|SERVICE|VALUES)\b", re.IGNORECASE)


def prefixes_of(g: TripleIndex, node: Term) -> str:
    lines = []
    for ontology in g.objects(node, sh("prefixes")):
        for decl in g.objects(ontology, sh("declare")):
            prefix, namespace = g.value(decl, sh("prefix")), g.value(decl, sh("namespace"))
            if prefix is not None and namespace is not None:
                lines.append(f"PREFIX {prefix.value}: <{namespace.value}>")
    return "\n".join(sorted(set(lines)))


def split_prologue(query: str) -> tuple[str, str]:
    """Hoist PREFIX/BASE lines out of a query so that it can be used as a subquery."""
    prologue: list[str] = []
    while True:
        match = _PREFIX_LINE.match(query)
        if not match:
            return "\n".join(prologue), query
        prologue.append(match.group(1))
        query = query[match.end() :]


def substitute(query: str, name: str, text: str) -> str:
    return re.sub(rf"[$?]{re.escape(name)}\b", lambda _: text, query)


def bind_parameters(query: str, shape: Shape, bindings: dict[str, Term]) -> str:
    if "$PATH" in query:
        if shape.path is None:
            raise CompileError("$PATH used in a node shape")
        query = query.replace("$PATH", shape.path.sparql())
    if isinstance(shape.node, NamedNode):
        query = substitute(query, "currentShape", str(shape.node))
    for name, term in bindings.items():
        if isinstance(term, BlankNode):
            raise CompileError(f"parameter ${name} is a blank node")
        query = substitute(query, name, str(term))
    return query


def component_short_name(iri: NamedNode) -> str:
    """``ex:AcyclicConstraintComponent`` → ``acyclic``."""
    local = re.split(r"[#/]", iri.value)[-1]
    name = re.sub(r"ConstraintComponent$", "", local) or local
    return name[:1].lower() + name[1:]


def check_prebinding(query: str) -> None:
    if _FORBIDDEN.search(query):
        raise CompileError("the query uses MINUS, SERVICE or VALUES, which pre-binding forbids")


class _SelectBased(Constraint):
    """Shared by sh:sparql constraints and SELECT validators of custom components."""

    def __init__(self, select: str, prologue: str, bindings: dict[str, Term]) -> None:
        self.select, self.prologue, self.bindings = select, prologue, bindings

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        prologue, body = split_prologue(bind_parameters(self.select, shape, self.bindings))
        check_prebinding(body)
        cx.prologues.add(self.prologue)
        cx.prologues.add(prologue)
        if focus == "?this":
            return Violation(f"{{ {body} }}", value="?value", path="?path")
        return Violation(f"{{ SELECT ({'?this'} AS {focus}) WHERE {{ {{ {body} }} }} }}")


class SPARQLConstraintComponent(_SelectBased):
    component, name = "SPARQLConstraintComponent", "sparql"
    label: str | None = None

    @property
    def short_name(self) -> str:
        return self.label or self.name

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        g = shapes.graph
        out: list[Constraint] = []
        for node in sh_values(g, shape, "sparql"):
            if is_true(g.value(node, sh("deactivated"))):
                continue
            select = g.value(node, sh("select"))
            if not isinstance(select, Literal):
                continue
            c = cls(select.value, prefixes_of(g, node), {})
            c.source_constraint = node
            label = g.value(node, NamedNode(RDFS + "label"))
            c.label = label.value if isinstance(label, Literal) else None
            c.default_messages = tuple(
                m for m in g.objects(node, sh("message")) if isinstance(m, Literal)
            )
            out.append(c)
        return out


class CustomSelectConstraint(_SelectBased):
    component: ClassVar[str] = ""

    def __init__(
        self, iri: NamedNode, select: str, prologue: str, bindings: dict[str, Term]
    ) -> None:
        super().__init__(select, prologue, bindings)
        self.iri = iri

    @property
    def component_iri(self) -> NamedNode:
        return self.iri

    @property
    def short_name(self) -> str:
        return component_short_name(self.iri)

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        return []


class CustomAskConstraint(Constraint):
    def __init__(self, iri: NamedNode, ask: str, prologue: str, bindings: dict[str, Term]) -> None:
        self.iri, self.ask, self.prologue, self.bindings = iri, ask, prologue, bindings

    @property
    def component_iri(self) -> NamedNode:
        return self.iri

    @property
    def short_name(self) -> str:
        return component_short_name(self.iri)

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        return []

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        prologue, query = split_prologue(bind_parameters(self.ask, shape, self.bindings))
        check_prebinding(query)
        start, end = query.find("{"), query.rfind("}")
        if start < 0 or end < start:
            raise CompileError("an ASK validator needs a { … } body")
        values, v = cx.value_nodes(shape, focus)
        body = substitute(substitute(query[start + 1 : end], "this", focus), "value", v)
        cx.prologues.add(self.prologue)
        cx.prologues.add(prologue)
        return Violation(f"{values} FILTER NOT EXISTS {{ {body} }}", value=v)


class CustomComponentDefinition:
    """A sh:ConstraintComponent declared in the shapes graph."""

    def __init__(self, g: TripleIndex, node: NamedNode) -> None:
        self.node = node
        self.parameters: list[tuple[NamedNode, bool]] = []
        for param in g.objects(node, sh("parameter")):
            path = g.value(param, sh("path"))
            if isinstance(path, NamedNode):
                self.parameters.append((path, is_true(g.value(param, sh("optional")))))
        self.validator = g.value(node, sh("validator"))
        self.node_validator = g.value(node, sh("nodeValidator"))
        self.property_validator = g.value(node, sh("propertyValidator"))

    @classmethod
    def all_in(cls, g: TripleIndex) -> list[CustomComponentDefinition]:
        nodes = [
            n for n in g.subjects(RDF_TYPE, sh("ConstraintComponent")) if isinstance(n, NamedNode)
        ]
        return [cls(g, n) for n in sorted(nodes, key=str)]

    def instantiate(self, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        g = shapes.graph
        required = [p for p, optional in self.parameters if not optional]
        if not required or any(not g.objects(shape.node, p) for p in required):
            return []
        validator = (
            self.property_validator if shape.path is not None else self.node_validator
        ) or (self.validator)
        if validator is None:
            return []
        names = [p for p, _ in self.parameters if g.objects(shape.node, p)]
        choices = [g.objects(shape.node, p) for p in names]
        out: list[Constraint] = []
        for combo in itertools.product(*choices):
            bindings = {
                re.split(r"[#/]", p.value)[-1]: t for p, t in zip(names, combo, strict=True)
            }
            prologue = prefixes_of(g, validator)
            messages = tuple(
                m for m in g.objects(validator, sh("message")) if isinstance(m, Literal)
            )
            select, ask = g.value(validator, sh("select")), g.value(validator, sh("ask"))
            c: Constraint
            if isinstance(select, Literal):
                c = CustomSelectConstraint(self.node, select.value, prologue, bindings)
            elif isinstance(ask, Literal):
                c = CustomAskConstraint(self.node, ask.value, prologue, bindings)
            else:
                continue
            c.default_messages = messages
            c.parameter_bindings = bindings
            out.append(c)
        return out


COMPONENTS: list[type[Constraint]] = [SPARQLConstraintComponent]
