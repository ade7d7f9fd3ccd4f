"""SPARQL-based constraints (sh:sparql) and SPARQL-based constraint components
(sh:ConstraintComponent with SELECT or ASK validators), per SHACL-SPARQL.

Pre-bound variables: ``$this`` is the focus variable itself (``$this`` and ``?this`` are the
same SPARQL variable), ``$PATH`` becomes the shape's path, parameters and
``$currentShape`` are written in as terms.
"""

from __future__ import annotations

import re
from typing import ClassVar

from ontoloom.shacl.compiler import CompileError, Compiler, Source, Violation, is_true
from ontoloom.shacl.components import Constraint, sh_values
from ontoloom.shacl.paths import Path
from ontoloom.shacl.prefixes import check_query, declared_prefixes, prologue
from ontoloom.shacl.render import Renderer
from ontoloom.shacl.shapes import Shape, ShapesError, ShapeSet, sh
from ontoloom.store.terms import BlankNode, Literal, NamedNode, Term
from ontoloom.vocab import RDFS

_PREFIX_LINE = re.compile(r"^\s*(PREFIX\s+[\w-]*:\s*<[^>]*>|BASE\s+<[^>]*>)\s*", re.IGNORECASE)
_FORBIDDEN = re.compile(r"\b(MINUS|SERVICE|VALUES)\b", re.IGNORECASE)
_STRINGS = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
)
_COMMENTS = re.compile(r"(?m)#[^\n>]*$")
_CALLS = re.compile(r"\b(FILTER|BIND)\s*\(", re.IGNORECASE)


def prefixes_of(shapes: ShapeSet, node: Term, where: str) -> str:
    """The PREFIX lines of ``node``'s query (see :mod:`ontoloom.shacl.prefixes`)."""
    return prologue(declared_prefixes(shapes.graph, node, where), shapes.prefixes)


def query_text(shapes: ShapeSet, node: Term, local: str, where: str) -> str | None:
    """The one sh:select / sh:ask / sh:construct string of ``node``, its prefixes checked.

    :raises ShapesError: more than one, not a string literal, or an undeclared prefix.
    """
    g = shapes.graph
    values = g.objects(node, sh(local))
    if not values:
        return None
    if len(values) > 1 or not isinstance(values[0], Literal) or values[0].language:
        raise ShapesError(
            f"{where}: sh:{local} must be exactly one string literal holding the query"
        )
    check_query(values[0].value, declared_prefixes(g, node, where), shapes.prefixes, where)
    return values[0].value


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


def solution_variables(select: str) -> list[str]:
    """The variables a SELECT's solutions may bind, beyond this, value and path. With
    ``SELECT *``, every variable the query mentions: one out of scope is simply unbound."""
    projection = _projection(select)
    text = code_of(select) if re.search(r"\*", projection) else projection
    names = dict.fromkeys(re.findall(r"[$?](\w+)", text))
    return [n for n in names if n not in ("this", "value", "path")]


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
    """Shared by sh:sparql constraints and SELECT validators of custom components: one
    result per solution, messages filled from the solution's variables (SHACL 5.3.2)."""

    fills_messages = True

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
        solution = tuple(f"?{name}" for name in solution_variables(body))
        if safe:
            cx.prologues.update((self.prologue, prologue))
            return Violation(
                f"{{ {body} }}",
                value=value,
                path=path,
                distinct=solution,
                value_is_focus=node_shape,
            )
        # Pre-binding by writing each focus node in: one run per focus node.
        query = "\n".join(p for p in (self.prologue, prologue) if p) + "\n" + body
        return Violation(
            source("?this"),
            value=value,
            path=path,
            distinct=solution,
            per_focus=query,
            value_is_focus=node_shape,
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
        from ontoloom.shacl.components.unsupported import NotEvaluated, function_calls

        for node in sh_values(g, shape, "sparql"):
            where = f"shape {shapes.label(shape.node)} (sh:sparql {shapes.label(node)})"
            if is_true(g.value(node, sh("deactivated"))):
                continue
            select = query_text(shapes, node, "select", where)
            if select is None:
                raise ShapesError(f"{where}: a SPARQL-based constraint needs a sh:select query")
            prologue = prefixes_of(shapes, node, where)
            feature = function_calls(shapes, f"{prologue}\n{select}")
            if feature is not None:
                out.append(NotEvaluated(cls.component, feature))
                continue
            c = cls(select, prologue, {})
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

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        return "Parameterised SHACL Query generated constraint validation reports."


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


COMPONENTS: list[type[Constraint]] = [SPARQLConstraintComponent]
