"""SPARQL-based constraints (sh:sparql) and SPARQL-based constraint components
(sh:ConstraintComponent with SELECT or ASK validators), per SHACL-SPARQL.

Pre-bound variables: ``$this`` is the focus variable itself (``$this`` and ``?this`` are the
same SPARQL variable), ``$PATH`` becomes the shape's path, parameters and
``$currentShape`` are written in as terms.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import ClassVar

from ontoloom.shacl.compiler import CompileError, Compiler, Source, Violation, is_true
from ontoloom.shacl.components import Constraint, sh_values
from ontoloom.shacl.paths import Path
from ontoloom.shacl.prefixes import declared_prefixes, prologue
from ontoloom.shacl.render import Renderer
from ontoloom.shacl.shapes import Shape, ShapesError, ShapeSet, sh
from ontoloom.shacl.sparql_syntax import QueryFacts, SparqlSyntaxError, analyse
from ontoloom.terms import BlankNode, Literal, NamedNode, Term
from ontoloom.vocab import RDFS

_PREFIX_LINE = re.compile(r"^\s*(PREFIX\s+[\w-]*:\s*<[^>]*>|BASE\s+<[^>]*>)\s*", re.IGNORECASE)
_STRINGS = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
)
_COMMENTS = re.compile(r"(?m)#[^\n>]*$")
_SELECT_STAR = re.compile(r"(?i)\bSELECT\s+(?:(?:DISTINCT|REDUCED)\s+)?\*")
_OUTER_STAR = re.compile(
    r"(?is)\s*(?:(?:PREFIX\s+[\w.-]*:\s*<[^>]*>|BASE\s+<[^>]*>)\s*)*"
    r"SELECT\s+(?:(?:DISTINCT|REDUCED)\s+)?\*"
)


def prefixes_of(shapes: ShapeSet, node: Term, where: str) -> str:
    """The PREFIX lines of ``node``'s query (see :mod:`ontoloom.shacl.prefixes`)."""
    return prologue(declared_prefixes(shapes.graph, node, where), shapes.prefixes)


def query_text(
    shapes: ShapeSet,
    node: Term,
    local: str,
    where: str,
    prebound: Iterable[str] | None = None,
) -> str | None:
    """The one sh:select / sh:ask / sh:construct string of ``node``, read with a SPARQL
    parser (prefixes declared as :mod:`ontoloom.shacl.prefixes` says); with ``prebound``,
    checked against SHACL's restrictions on queries with pre-bound variables.

    :raises ShapesError: more than one, not a string literal, an undeclared prefix, a
        query that does not parse, or one pre-binding forbids — each naming the shape.
    """
    g = shapes.graph
    values = g.objects(node, sh(local))
    if not values:
        return None
    if len(values) > 1 or not isinstance(values[0], Literal) or values[0].language:
        raise ShapesError(
            f"{where}: sh:{local} must be exactly one string literal holding the query"
        )
    text = values[0].value
    facts = parse(prefixes_of(shapes, node, where), text, where)
    if prebound is not None:
        check_prebinding(facts, prebound, where)
        # SELECT * in a subquery returns only the variables its pattern binds, never a
        # pre-bound one it merely mentions (SHACL issue 84, W3C pre-binding-006); the
        # parser does not tell * apart from the variables it stands for, the tokens do.
        if len(_SELECT_STAR.findall(code_of(text))) > (
            1 if _OUTER_STAR.match(code_of(text)) else 0
        ):
            raise ShapesError(
                f"{where}: a subquery written SELECT * does not return the pre-bound "
                "variables; list them (e.g. SELECT $this …) (pre-binding, SHACL 5.2.1)"
            )
    return text


def parse(prologue: str, query: str, where: str) -> QueryFacts:
    """The facts of a shape's query, from a real SPARQL parser (cached on disk).

    :raises ShapesError: an undeclared prefix, or a query that does not parse.
    """
    try:
        # $PATH stands for the shape's path, written in later (a predicate, so an IRI here).
        return analyse(f"{prologue}\n{query.replace('$PATH', f'<{PATH_PLACEHOLDER}>')}")
    except SparqlSyntaxError as exc:
        if exc.prefix is not None:
            raise ShapesError(
                f"{where}: the SPARQL query uses the undeclared prefix {exc.prefix}:; declare "
                'it with sh:prefixes / sh:declare (sh:declare [ sh:prefix "…" ; '
                'sh:namespace "…"^^xsd:anyURI ])'
            ) from None
        lines = prologue.count("\n") + 1  # report lines of the query as written
        at = f" at line {exc.line - lines}" if exc.line is not None and exc.line > lines else ""
        raise ShapesError(f"{where}: the SPARQL query does not parse{at}: {exc.message}") from None


def split_prologue(query: str) -> tuple[str, str]:
    """Hoist PREFIX/BASE lines out of a query so that it can be used as a subquery."""
    prologue: list[str] = []
    while True:
        match = _PREFIX_LINE.match(query)
        if not match:
            return "\n".join(prologue), query
        prologue.append(match.group(1))
        query = query[match.end() :]


# What pre-binding steps over (strings, comments, IRIs), the solution modifiers where a term
# stands only in parentheses, what ends them, and variables.
_PREBINDING_TOKENS = re.compile(
    r"(?P<skip>" + _STRINGS.pattern + r"|#[^\n]*|<[^<>\"{}|^`\\\s]*>)"
    r"|(?P<modifier>\b(?:GROUP|ORDER)\s+BY\b)"
    r"|(?P<end>\b(?:HAVING|LIMIT|OFFSET|VALUES)\b|[{}])"
    r"|[$?](?P<var>\w+)",
    re.IGNORECASE,
)


def substitute(query: str, name: str, text: str) -> str:
    """Write ``text`` (a term) in for the variable ``name`` wherever the query uses it — in
    parentheses in GROUP BY and ORDER BY, where a bare IRI or literal does not parse — and
    never inside a string, a comment or an IRI."""
    out, last, modifier = [], 0, False
    for match in _PREBINDING_TOKENS.finditer(query):
        if match.group("modifier"):
            modifier = True
        elif match.group("end"):
            modifier = False
        elif match.group("var") == name:
            out += [query[last : match.start()], f"({text})" if modifier else text]
            last = match.end()
    out.append(query[last:])
    return "".join(out)


def bind_parameters(
    query: str, shape: Shape, bindings: dict[str, Term], shapes_graph: NamedNode | None = None
) -> str:
    """Pre-bind $PATH, $currentShape, $shapesGraph and parameters by writing them in (the
    query's pre-binding restrictions are checked when it is read, :func:`query_text`)."""
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


def check_prebinding(facts: QueryFacts, prebound: Iterable[str], where: str) -> None:
    """SHACL-SPARQL's restrictions on queries with pre-bound variables (SHACL 5.2.1): no
    MINUS, SERVICE or VALUES; no ``AS ?v`` for a potentially pre-bound variable; every
    subquery returns every potentially pre-bound variable but $shapesGraph/$currentShape.

    :raises ShapesError: the shapes graph is ill-formed.
    """
    names = {*prebound, "this", "currentShape", "shapesGraph"}
    forbidden = sorted(facts.features & {"MINUS", "SERVICE", "VALUES"})
    if forbidden:
        raise ShapesError(
            f"{where}: a SHACL-SPARQL query may not use {', '.join(forbidden)} "
            "(pre-binding, SHACL 5.2.1)"
        )
    assigned = sorted(facts.assigned & names)
    if assigned:
        raise ShapesError(
            f"{where}: the query assigns the pre-bound variable ?{assigned[0]} with AS "
            "(pre-binding, SHACL 5.2.1)"
        )
    required = names - {"currentShape", "shapesGraph"}
    for projection in facts.subquery_projections:
        missing = sorted(required - set(projection))
        if missing:
            raise ShapesError(
                f"{where}: a subquery must return the pre-bound variables; it does not "
                f"return {', '.join('$' + m for m in missing)} (pre-binding, SHACL 5.2.1)"
            )


# Features after which joining the query with the focus nodes may differ from pre-binding.
_UNSAFE = {"SUBQUERY", "EXISTS", "MINUS", "VALUES", "SERVICE", "GRAPH", "AGGREGATE", "SLICE"}


def joins_safely(body: str, facts: QueryFacts) -> bool:
    """True when joining the query with the focus nodes equals pre-binding $this: one
    group (the parser finds no EXISTS, MINUS, VALUES…, and the text no nested braces — the
    parser does not yet tell OPTIONAL or UNION apart) in which $this is the subject or
    object of a triple pattern, and no BIND that reads $this (it would read it before the
    join binds it) or assigns it. Subqueries of one group may stand in it where each that
    mentions $this projects it and aggregates, if at all, only by it (``{ SELECT $this
    (SUM(?x) AS ?sum) WHERE { … } GROUP BY $this }``): evaluated once for all focus nodes,
    such a subquery answers for each what it answers with $this pre-bound."""
    allowed = {"SUBQUERY", "AGGREGATE"}
    if (facts.features - allowed) & (_UNSAFE | {"BIND_THIS"}) or "this" in facts.assigned:
        return False
    if not any("?this" in (e.subject, e.object) and e.scope == 0 for e in facts.edges):
        return False
    code = code_of(body)
    start, end = code.find("{"), code.rfind("}")
    rest, subqueries = _split_subqueries(code[start + 1 : end])
    if "{" in rest or "}" in rest or len(subqueries) != len(facts.subquery_projections):
        return False
    if "AGGREGATE" in facts.features and not subqueries:
        return False  # the outer query aggregates: per focus node
    for scope, text in enumerate(subqueries, start=1):
        mentions = any("?this" in (e.subject, e.object) for e in facts.edges if e.scope == scope)
        if mentions and "this" not in facts.subquery_projections[scope - 1]:
            return False
        select = text[1:-1]  # the block's own braces aside
        where = select[select.find("{") + 1 : select.rfind("}")]
        if "{" in where or "}" in where:
            return False  # one group inside too
        if _AGGREGATES.search(text) and not (mentions and _grouped_by_this(text)):
            return False
    return True


_AGGREGATES = re.compile(r"\b(COUNT|SUM|AVG|MIN|MAX|SAMPLE|GROUP_CONCAT)\s*\(", re.IGNORECASE)
_SUBSELECT = re.compile(r"\{\s*SELECT\b", re.IGNORECASE)


def _split_subqueries(code: str) -> tuple[str, list[str]]:
    """``code`` without its ``{ SELECT … }`` blocks, and those blocks, in order."""
    rest, blocks, at = [], [], 0
    while (found := _SUBSELECT.search(code, at)) is not None:
        depth, end = 0, len(code)
        for i in range(found.start(), len(code)):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            if depth == 0:
                end = i + 1
                break
        rest.append(code[at : found.start()])
        blocks.append(code[found.start() : end])
        at = end
    rest.append(code[at:])
    return " ".join(rest), blocks


def _grouped_by_this(text: str) -> bool:
    groups = re.findall(r"\bGROUP\s+BY\s+((?:[?$]\w+\s*)+)", text, re.IGNORECASE)
    return len(groups) == 1 and set(groups[0].split()) <= {"$this", "?this"}


ANNOTATIONS = "sh:resultAnnotation (SHACL-AF annotation properties on results)"
PATH_PLACEHOLDER = "urn:ontoloom:PATH"  # $PATH, where a query is parsed before a shape uses it

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

    @property
    def facts(self) -> QueryFacts:
        """What the SELECT says, from a real SPARQL parser (checked when it was read)."""
        return parse(self.prologue, self.select, "a SPARQL constraint")

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        text = bind_parameters(self.select, shape, self.bindings, cx.shapes_graph)
        prologue, body = split_prologue(text)
        facts = self.facts
        safe = joins_safely(body, facts)
        if focus != "?this" or source is None:
            if not safe:
                raise CompileError("a nested SPARQL constraint needs pre-binding")
            cx.prologues.update((self.prologue, prologue))
            return Violation(f"{{ SELECT (?this AS {focus}) WHERE {{ {{ {body} }} }} }}")
        value = "?value" if "value" in facts.projection else None
        path = "?path" if "path" in facts.projection else None
        node_shape = shape.path is None
        # One result per solution: every projected variable tells solutions apart.
        solution = tuple(f"?{n}" for n in facts.projection if n not in ("this", "value", "path"))
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
        from ontoloom.shacl.components.functions import inline_functions
        from ontoloom.shacl.components.unsupported import NotEvaluated, function_calls

        for node in sh_values(g, shape, "sparql"):
            where = f"shape {shapes.label(shape.node)} (sh:sparql {shapes.label(node)})"
            if is_true(g.value(node, sh("deactivated"))):
                continue
            select = query_text(shapes, node, "select", where, prebound=())
            if select is None:
                raise ShapesError(f"{where}: a SPARQL-based constraint needs a sh:select query")
            prologue = prefixes_of(shapes, node, where)
            select = inline_functions(shapes, prologue, select)
            feature = function_calls(shapes, f"{prologue}\n{select}")
            if feature is not None:
                out.append(NotEvaluated(cls.component, feature))
                continue
            if g.objects(node, sh("resultAnnotation")):  # results, but not their annotations
                shape.unsupported.append(ANNOTATIONS)
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
    # {$this}, {$value} and the parameters in its messages are filled (SHACL 5.3.2): the
    # pre-bound variables, all an ASK has
    fills_messages = True

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
