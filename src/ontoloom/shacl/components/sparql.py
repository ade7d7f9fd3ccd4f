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
from ontoloom.shacl.shapes import RDF_TYPE, Shape, ShapesError, ShapeSet, sh
from ontoloom.store.terms import BlankNode, Literal, NamedNode, Term
from ontoloom.vocab import OWL, RDFS

_PREFIX_LINE = re.compile(r"^\s*(PREFIX\s+[\w-]*:\s*<[^>]*>|BASE\s+<[^>]*>)\s*", re.IGNORECASE)
_FORBIDDEN = re.compile(r"\b(MINUS|SERVICE|VALUES)\b", re.IGNORECASE)
_STRINGS = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
)
_COMMENTS = re.compile(r"(?m)#[^\n>]*$")
_CALLS = re.compile(r"\b(FILTER|BIND)\s*\(", re.IGNORECASE)


def prefixes_of(g: TripleIndex, node: Term) -> str:
    """PREFIX lines from the sh:declare of sh:prefixes values, following owl:imports."""
    lines = []
    stack, seen = list(g.objects(node, sh("prefixes"))), set()
    while stack:
        ontology = stack.pop()
        if ontology in seen:
            continue
        seen.add(ontology)
        stack.extend(g.objects(ontology, NamedNode(OWL + "imports")))
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


def _projection(select: str) -> str:
    return re.split(r"(?i)\bWHERE\b|\{", code_of(select), maxsplit=1)[0]


def substitute(query: str, name: str, text: str) -> str:
    return re.sub(rf"[$?]{re.escape(name)}\b", lambda _: text, query)


def bind_parameters(
    query: str, shape: Shape, bindings: dict[str, Term], shapes_graph: NamedNode | None = None
) -> str:
    """Pre-bind $PATH, $currentShape, $shapesGraph and parameters by writing them in."""
    check_prebinding(query, [*bindings, "this", "value", "currentShape", "shapesGraph"])
    if "$PATH" in query:
        if shape.path is None:
            raise CompileError("$PATH used in a node shape")
        query = query.replace("$PATH", shape.path.sparql())
    query = always_bound(query, "currentShape", "shapesGraph")
    if isinstance(shape.node, NamedNode):
        query = substitute(query, "currentShape", str(shape.node))
    elif re.search(r"[$?]currentShape\b", query):
        raise CompileError("$currentShape is a blank node")
    if re.search(r"[$?]shapesGraph\b", query):
        if shapes_graph is None:
            raise CompileError("$shapesGraph is not available against this store")
        query = substitute(query, "shapesGraph", str(shapes_graph))
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


def always_bound(query: str, *names: str) -> str:
    """Pre-bound variables are always bound: ``bound($x)`` holds."""
    alternatives = "|".join(names)
    return re.sub(rf"(?i)\bbound\s*\(\s*[$?]({alternatives})\s*\)", "(true)", query)


def prebind_this(query: str, focus: Term) -> str:
    """Write the focus node in for $this, as SHACL's pre-binding defines it. The outer
    projection keeps a ?this column bound to the focus; subqueries drop it."""
    query = always_bound(query, "this")
    out, last, first = [], 0, True
    for match in re.finditer(r"(?is)\bSELECT\b(.*?)(\bWHERE\b|\{)", query):
        out.append(substitute(query[last : match.start()], "this", str(focus)))
        if first:
            projection = substitute(match.group(1), "this", f"({focus} AS ?this)")
        else:
            projection = re.sub(r"[$?]this\b", "", match.group(1))
            if not re.search(r"[$?]\w|\*", projection):
                projection = " * "
        out.append("SELECT" + projection + match.group(2))
        last, first = match.end(), False
    out.append(substitute(query[last:], "this", str(focus)))
    return "".join(out)


def code_of(query: str) -> str:
    """The query with string literals and comments blanked out, for syntactic checks."""
    return _COMMENTS.sub("", _STRINGS.sub('""', query))


def check_prebinding(query: str, prebound: list[str]) -> None:
    """SHACL-SPARQL's restrictions on queries with pre-bound variables (spec 5.2.1).

    :raises ShapesError: the shapes graph is ill-formed.
    """
    code = code_of(query)
    if _FORBIDDEN.search(code):
        raise ShapesError("a SPARQL constraint may not use MINUS, SERVICE or VALUES (pre-binding)")
    names = "|".join(re.escape(n) for n in prebound)
    if re.search(rf"(?i)\bAS\s+[$?]({names})\b", code):
        raise ShapesError("a SPARQL constraint may not assign a pre-bound variable with AS")
    selects = [m.end() for m in re.finditer(r"(?i)\bSELECT\b", code)]
    nested = selects[1:] if re.match(r"(?is)\s*(PREFIX[^<]*<[^>]*>\s*)*SELECT\b", code) else selects
    for start in nested:
        projection, _, rest = re.split(r"(?i)(\bWHERE\b|\{)", code[start:], maxsplit=1)
        if re.search(r"[$?]this\b", projection):
            continue
        # SELECT * projects $this only when the subquery binds it itself.
        if "*" not in projection or not _binds_this(
            "{" + rest.split("{", 1)[-1] if "{" in rest else rest
        ):
            raise ShapesError("a subquery of a SPARQL constraint must project $this (pre-binding)")


def joins_safely(body: str) -> bool:
    """True when joining the query with the focus nodes equals pre-binding $this: a flat
    group in which $this occurs in a triple pattern (not only in FILTER or BIND)."""
    code = code_of(body)
    start, end = code.find("{"), code.rfind("}")
    inner = code[start + 1 : end]
    if "{" in inner or "}" in inner:
        return False
    return _binds_this(inner)


def _binds_this(inner: str) -> bool:
    """Whether $this occurs in ``inner`` outside FILTER and BIND expressions."""
    while (match := _CALLS.search(inner)) is not None:
        depth, i = 1, match.end()
        while i < len(inner) and depth:
            depth += {"(": 1, ")": -1}.get(inner[i], 0)
            i += 1
        inner = inner[: match.start()] + inner[i:]
    return re.search(r"[$?]this\b", inner) is not None


# Stands for $shapesGraph in queries read for their reach: the shapes graph is not data.
READ_SHAPES_GRAPH = NamedNode("urn:ontoloom:shapes-graph-read")


class _SelectBased(Constraint):
    """Shared by sh:sparql constraints and SELECT validators of custom components."""

    def __init__(self, select: str, prologue: str, bindings: dict[str, Term]) -> None:
        self.select, self.prologue, self.bindings = select, prologue, bindings

    def read_queries(self, shape: Shape) -> list[tuple[str, bool]]:
        text = bind_parameters(self.select, shape, self.bindings, READ_SHAPES_GRAPH)
        return [(f"{self.prologue}\n{text}", False)]

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        text = bind_parameters(self.select, shape, self.bindings, cx.shapes_graph)
        prologue, body = split_prologue(text)
        safe = joins_safely(body)
        if focus != "?this" or source is None:
            if not safe:
                raise CompileError("a nested SPARQL constraint needs pre-binding")
            cx.prologues.update((self.prologue, prologue))
            return Violation(f"{{ SELECT (?this AS {focus}) WHERE {{ {{ {body} }} }} }}")
        value = "?value" if re.search(r"[$?]value\b", _projection(body)) else None
        path = "?path" if re.search(r"[$?]path\b", _projection(body)) else None
        node_shape = shape.path is None
        if safe:
            cx.prologues.update((self.prologue, prologue))
            return Violation(f"{{ {body} }}", value=value, path=path, value_is_focus=node_shape)
        # Pre-binding by writing each focus node in: one run per focus node.
        query = "\n".join(p for p in (self.prologue, prologue) if p) + "\n" + body
        return Violation(
            source("?this"), value=value, path=path, per_focus=query, value_is_focus=node_shape
        )


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


class _Custom:
    """A constraint of a user-declared component: named by its IRI, and built from the
    component's declaration rather than found on shapes by a parameter of its own."""

    iri: NamedNode

    @property
    def component_iri(self) -> NamedNode:
        return self.iri

    @property
    def short_name(self) -> str:
        return component_short_name(self.iri)

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        return []


class CustomSelectConstraint(_Custom, _SelectBased):
    component: ClassVar[str] = ""

    def __init__(
        self, iri: NamedNode, select: str, prologue: str, bindings: dict[str, Term]
    ) -> None:
        super().__init__(select, prologue, bindings)
        self.iri = iri


class CustomAskConstraint(_Custom, Constraint):
    def __init__(self, iri: NamedNode, ask: str, prologue: str, bindings: dict[str, Term]) -> None:
        self.iri, self.ask, self.prologue, self.bindings = iri, ask, prologue, bindings

    def read_queries(self, shape: Shape) -> list[tuple[str, bool]]:
        text = bind_parameters(self.ask, shape, self.bindings, READ_SHAPES_GRAPH)
        return [(f"{self.prologue}\n{text}", True)]

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        prologue, query = split_prologue(
            bind_parameters(self.ask, shape, self.bindings, cx.shapes_graph)
        )
        start, end = query.find("{"), query.rfind("}")
        if start < 0 or end < start:
            raise CompileError("an ASK validator needs a { … } body")
        values, v = cx.value_nodes(shape, focus)
        body = substitute(substitute(query[start + 1 : end], "this", focus), "value", v)
        cx.prologues.update((self.prologue, prologue))
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
        from ontoloom.shacl.hierarchy import Hierarchy

        # Components may be typed with a subclass of sh:ConstraintComponent.
        subclass = NamedNode(RDFS + "subClassOf")
        classes = Hierarchy(g.pairs(subclass)).subclasses(sh("ConstraintComponent"))
        nodes = {n for c in classes for n in g.subjects(RDF_TYPE, c) if isinstance(n, NamedNode)}
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
