"""SHACL shapes compiled to SPARQL: each constraint becomes a pattern that matches the focus
nodes violating it, so validation runs inside the store.

A *violation pattern* for shape S and focus variable ?f matches (binding ?f) exactly when ?f
does not conform to S. Top-level constraints are run as SELECT queries that join the
shape's targets with the pattern; shapes referenced by sh:node, sh:not, sh:and, sh:or,
sh:xone and sh:qualifiedValueShape are inlined as nested EXISTS patterns, so no node ever
leaves the store to be checked in Python.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from ontoloom.shacl.hierarchy import Hierarchy
from ontoloom.shacl.native import digest
from ontoloom.shacl.paths import Path
from ontoloom.shacl.shapes import Shape, ShapeSet
from ontoloom.store.lexical import (
    DATATYPE,
    LEXICAL_FORM,
    RECORD_OBJECT,
    RECORD_PREDICATE,
    RECORD_SUBJECT,
    stored_form,
)
from ontoloom.terms import BlankNode, Literal, NamedNode, Term
from ontoloom.vocab import META, RDF, XSD

__all__ = ["CompileError", "Compiler", "Source", "Violation", "term_sparql"]

RDF_TYPE = f"<{RDF}type>"
_CHAINED_COUNT = 4  # up to how many values a nested count finds by chained EXISTS
Source = Callable[[str], str]


class CompileError(Exception):
    """The compiler cannot express a shape as SPARQL; the shape goes to the fallback engine."""


@dataclass
class Violation:
    """A pattern that matches when the focus violates a constraint."""

    text: str
    value: str | None = None  # variable holding sh:value
    path: str | None = None  # variable holding sh:resultPath (sh:closed, SPARQL constraints)
    # Variables that tell results apart beyond focus, path and value (one result per
    # language tag, per compared value, per parent focus…), as the spec counts them.
    distinct: tuple[str, ...] = ()
    sourced: bool = False  # the text already joins the focus source
    # A SPARQL constraint that must see $this pre-bound: ``text`` selects the focus nodes,
    # and this query runs once per focus node with $this substituted.
    per_focus: str | None = None
    value_is_focus: bool = False  # no ?value bound: sh:value is the focus (SPARQL, node shapes)


def _rewritable(term: Term) -> bool:
    """Whether ``term`` is a literal the store may keep in another form than written."""
    return isinstance(term, Literal) and not term.language and stored_form(term) != term


def same_term(var: str, term: Term) -> str:
    """An expression: ``var`` is ``term``, compared as terms (sh:in, sh:hasValue). A literal
    the store would keep in another form ("1.0"^^xsd:decimal) is compared by its lexical form
    and datatype, which no stored literal can match by accident."""
    if _rewritable(term):
        assert isinstance(term, Literal)
        lexical = Literal(term.value)
        return (
            f"(isLiteral({var}) && STR({var}) = {lexical} && "
            f"DATATYPE({var}) = {term_sparql(term.datatype)})"
        )
    return f"sameTerm({var}, {term_sparql(term)})"


def term_sparql(term: Term) -> str:
    """A term as SPARQL syntax; blank nodes from a shapes graph cannot be written."""
    if isinstance(term, BlankNode):
        raise CompileError("a blank node cannot be written into a query")
    return str(term)


class Compiler:
    """Compiles the constraints of one shapes graph for one data graph.

    ``written``: the predicates whose objects include literals the store keeps in another
    form than written (``"1000.50"`` kept as ``1000.5``, ``"5"^^xsd:int`` as an xsd:integer;
    :mod:`ontoloom.store.lexical`). A value node reached by such a predicate is joined with
    its record (:meth:`as_written`), so that what SHACL judges on the term itself — its
    datatype, lexical form, identity — is judged on the term as written, in the query, and
    results name it (:meth:`written_value`).
    """

    def __init__(
        self,
        shapes: ShapeSet,
        hierarchy: Hierarchy,
        shapes_graph: NamedNode | None = None,
        written: frozenset[Term] = frozenset(),
    ) -> None:
        self.shapes = shapes
        self.hierarchy = hierarchy
        self.shapes_graph = shapes_graph
        self.written = written
        # value variable → its triple's subject variable and predicate, where the triple
        # may have a record of the value as written
        self.lexical: dict[str, tuple[str, str]] = {}
        self._counter = 0
        self._active: list[Term] = []
        self.prologues: set[str] = set()  # PREFIX lines SPARQL-based constraints need
        self.target_prologues: set[str] = set()  # and those SPARQL-based targets need

    def union(self, branches: list[str], focus: str, source: Source | None) -> tuple[str, bool]:
        """UNION of patterns; at top level each branch joins the focus source itself, since
        SPARQL evaluates a branch before it sees the bindings outside it."""
        if source is None:
            return " UNION ".join(f"{{ {b} }}" for b in branches), False
        return " UNION ".join(f"{{ {source(focus)} {b} }}" for b in branches), True

    def fresh(self, stem: str = "v") -> str:
        self._counter += 1
        return f"?_o{stem}{self._counter}"

    # -- building blocks -------------------------------------------------------------------
    def value_nodes(self, shape: Shape, focus: str) -> tuple[str, str]:
        """A pattern binding the value nodes of ``focus`` for ``shape``, and their variable."""
        if shape.path is None:
            return "", focus
        value = self.fresh("val")
        pattern = f"{focus} {shape.path.sparql()} {value} ."
        path = shape.path
        if path.is_predicate and path.iri in self.written:
            assert path.iri is not None
            self.lexical[value] = (focus, term_sparql(path.iri))
        last = written_last_step(path, self.written)
        if last is not None:
            # A sequence ending in such a predicate: its last triple named, for the record.
            # (A literal ends a walk, so only the last step can reach one.)
            middle = self.fresh("mid")
            head = path.parts[:-1]
            before = head[0] if len(head) == 1 else Path("sequence", parts=head)
            pattern = f"{focus} {before.sparql()} {middle} . {middle} {term_sparql(last)} {value} ."
            self.lexical[value] = (middle, term_sparql(last))
        return pattern, value

    def _record(self, v: str, inner: Callable[[str], str] = lambda record: "") -> str:
        """An expression: the triple of ``v`` has a record (where ``inner`` of the record's
        variable holds). A chain of one-triple EXISTS, each bound by the one before: the
        store then looks each up by its bound terms at any depth of nesting, where it
        would join a pattern of several triples in an EXISTS with all records."""

        subject, predicate = self.lexical[v]
        record = self.fresh("rec")
        return (
            f"EXISTS {{ GRAPH {META} {{ {record} {RECORD_SUBJECT} {subject} }} "
            f"FILTER EXISTS {{ GRAPH {META} {{ {record} {RECORD_OBJECT} {v} }} }} "
            f"FILTER EXISTS {{ GRAPH {META} {{ {record} {RECORD_PREDICATE} {predicate} }} }}"
            f"{inner(record)} }}"
        )

    def as_written(self, v: str, test: Callable[[str, str], str], plain: str | None = None) -> str:
        """An expression: ``test`` of the lexical form and datatype ``v`` was written with.

        ``plain`` (default: ``test`` of STR and DATATYPE) holds where its triple has no
        record (the stored term is the written one).
        """
        if plain is None:
            plain = test(f"STR({v})", f"DATATYPE({v})")
        if v not in self.lexical:
            return plain

        lexical, datatype = self.fresh("lex"), self.fresh("dt")

        def judged(record: str) -> str:
            return (
                f" FILTER EXISTS {{ GRAPH {META} {{ {record} {DATATYPE} {datatype} }} "
                f"FILTER EXISTS {{ GRAPH {META} {{ {record} {LEXICAL_FORM} {lexical} }} "
                f"FILTER({test(lexical, datatype)}) }} }}"
            )

        return f"IF({self._record(v)}, {self._record(v, judged)}, {plain})"

    def written_value(self, v: str) -> tuple[str, tuple[str, str]] | None:
        """A pattern binding the lexical form and datatype ``v`` was written with where its
        triple has a record (for results to name the value as written), and their variables."""
        if v not in self.lexical:
            return None

        subject, predicate = self.lexical[v]
        record, lexical, datatype = self.fresh("rec"), self.fresh("lex"), self.fresh("dt")
        # at the top of a query the store joins this once with all records: fast there
        pattern = (
            f"OPTIONAL {{ GRAPH {META} {{ {record} {RECORD_SUBJECT} {subject} ; "
            f"{RECORD_PREDICATE} {predicate} ; {RECORD_OBJECT} {v} ; "
            f"{LEXICAL_FORM} {lexical} ; {DATATYPE} {datatype} }} }}"
        )
        return pattern, (lexical, datatype)

    def same_term(self, v: str, term: Term) -> str:
        """An expression: ``v``, as written, is ``term`` (sh:in, sh:hasValue)."""
        if (
            not isinstance(term, Literal)
            or term.language
            or not term.datatype.value.startswith(XSD)
        ):
            return same_term(v, term)  # no term of this kind has a record
        return self.as_written(
            v,
            lambda lexical, datatype: (
                f"{lexical} = {Literal(term.value)} && {datatype} = {term_sparql(term.datatype)}"
            ),
            plain=same_term(v, term),
        )

    def has_value(self, shape: Shape, focus: str, value: str) -> str:
        """A pattern that holds when ``value`` (bound) is a value node of ``focus``."""
        if shape.path is None:
            return f"FILTER(sameTerm({focus}, {value}))"
        return f"{focus} {shape.path.sparql()} {value} ."

    def instance_of(self, node: str, cls: Term) -> str:
        classes = self.hierarchy.subclasses(cls)
        if len(classes) == 1:
            return f"{node} {RDF_TYPE} {term_sparql(cls)} ."
        t = self.fresh("t")
        listed = " ".join(term_sparql(c) for c in classes if not isinstance(c, BlankNode))
        return f"{node} {RDF_TYPE} {t} . VALUES {t} {{ {listed} }}"

    def targets(self, shape: Shape, var: str, *, focused: bool = False) -> str:
        """A pattern binding ``var`` to each focus node of the shape's targets, once.

        ``focused``: the focus nodes are already bound (a write's few nodes), so targets
        are tested with EXISTS; otherwise they are enumerated, each node once (a subject
        of a predicate would otherwise come back once per triple).
        """
        branches: list[str] = []
        nodes = [t.term for t in shape.targets if t.kind == "targetNode"]
        if nodes:  # a blank node from the shapes graph cannot be written: CompileError
            branches.append(f"VALUES {var} {{ {' '.join(term_sparql(n) for n in nodes)} }}")
        for target in shape.targets:
            if target.kind == "sparqlTarget":
                assert target.select is not None
                self.target_prologues.add(target.prologue)
                query = target.select
                if var != "?this":  # its own ?this, renamed by projection, not by rewriting
                    query = f"SELECT (?this AS {var}) WHERE {{ {{ {query} }} }}"
                branches.append(
                    f"FILTER EXISTS {{ {{ {query} }} }}" if focused else f"{{ {query} }}"
                )
            elif target.kind == "targetClass":
                branches.append(self.instance_of(var, target.term))
            elif target.kind in ("targetSubjectsOf", "targetObjectsOf"):
                other = self.fresh("t")
                triple = (
                    f"{var} {term_sparql(target.term)} {other} ."
                    if target.kind == "targetSubjectsOf"
                    else f"{other} {term_sparql(target.term)} {var} ."
                )
                branches.append(f"FILTER EXISTS {{ {triple} }}" if focused else triple)
        if not branches:
            return "FILTER(false)"
        if focused:
            if len(branches) == 1:
                return branches[0]
            tests = [
                b.removeprefix("FILTER ") if b.startswith("FILTER EXISTS") else f"EXISTS {{ {b} }}"
                for b in branches
            ]
            return f"FILTER({' || '.join(tests)})"
        body = branches[0] if len(branches) == 1 else " UNION ".join(f"{{ {b} }}" for b in branches)
        if len(branches) == 1 and shape.targets[0].kind == "targetClass" and "VALUES" not in body:
            return body  # one class, one type triple: each node once already
        return f"{{ SELECT DISTINCT {var} WHERE {{ {body} }} }}"

    def count(
        self,
        focus: str,
        pairs: Callable[[str, str], str],
        op: str,
        n: int,
        source: Source | None,
    ) -> Violation:
        """Violated when the number of distinct values matched by ``pairs(focus, value)``
        compares to ``n`` by ``op`` (``<`` or ``>``)."""
        value = self.fresh("c")
        if source is not None and op == "<" and n == 1:
            return Violation(f"{source(focus)} MINUS {{ {pairs(focus, value)} }}", sourced=True)
        if source is not None and op == ">" and n == 1:
            # Two distinct values: a join the store streams, where a grouped count holds a
            # set of values per focus node (twice as slow at a million triples).
            other = self.fresh("c")
            return Violation(
                f"{source(focus)} {pairs(focus, value)} "
                f"FILTER EXISTS {{ {pairs(focus, other)} FILTER(!sameTerm({value}, {other})) }}",
                sourced=True,
            )
        if source is not None:
            counted = self.fresh("n")
            if op == "<":
                text = (
                    f"{{ SELECT {focus} (COUNT(DISTINCT {value}) AS {counted}) WHERE {{ "
                    f"{source(focus)} OPTIONAL {{ {pairs(focus, value)} }} }} GROUP BY {focus} }} "
                    f"FILTER({counted} < {n})"
                )
            else:
                text = (
                    f"{{ SELECT {focus} WHERE {{ {source(focus)} {pairs(focus, value)} }} "
                    f"GROUP BY {focus} HAVING (COUNT(DISTINCT {value}) > {n}) }}"
                )
            return Violation(text, sourced=True)
        # Nested: the focus is bound outside. A few values are found by a chain of EXISTS,
        # each looked up from the bound focus (an aggregate would be computed over the
        # whole graph at every evaluation of the EXISTS around it).
        wanted = n if op == "<" else n + 1
        if wanted <= _CHAINED_COUNT:
            found = self._at_least(focus, pairs, wanted)
            return Violation(f"FILTER NOT EXISTS {{ {found} }}" if op == "<" else found)
        # Many: an uncorrelated aggregate joined on the focus.
        if op == "<":
            if n == 1:
                return Violation(f"FILTER NOT EXISTS {{ {pairs(focus, value)} }}")
            text = (
                f"FILTER NOT EXISTS {{ {{ SELECT {focus} WHERE {{ {pairs(focus, value)} }} "
                f"GROUP BY {focus} HAVING (COUNT(DISTINCT {value}) >= {n}) }} }}"
            )
        else:
            text = (
                f"{{ SELECT {focus} WHERE {{ {pairs(focus, value)} }} "
                f"GROUP BY {focus} HAVING (COUNT(DISTINCT {value}) > {n}) }}"
            )
        return Violation(text)

    def _at_least(self, focus: str, pairs: Callable[[str, str], str], k: int) -> str:
        """A pattern matching when ``focus`` (bound) has at least ``k`` distinct values."""
        names = [self.fresh("c") for _ in range(k)]
        text = ""
        for i in reversed(range(k)):
            distinct = " && ".join(f"!sameTerm({names[i]}, {names[j]})" for j in range(i))
            text = (
                pairs(focus, names[i])
                + (f" FILTER({distinct})" if distinct else "")
                + (f" FILTER EXISTS {{ {text} }}" if text else "")
            )
        return text

    # -- nested shapes ----------------------------------------------------------------------
    def violation(self, shape: Shape, focus: str) -> str | None:
        """A pattern matching when ``focus`` (bound) does not conform to ``shape``;
        ``None`` when the shape cannot be violated."""
        if shape.deactivated:
            return None
        if shape.node in self._active:
            raise CompileError(f"recursive shape {shape.node}")
        self._active.append(shape.node)
        try:
            branches = []
            for constraint in shape.constraints:
                v = constraint.pattern(self, shape, focus, None)
                if v is not None:
                    branches.append(v.text)
            for prop in shape.properties:
                child = self.shapes.shape(prop)
                values, var = self.value_nodes(shape, focus)
                inner = self.violation(child, var)
                if inner is not None:
                    branches.append(f"{values} {inner}")
        finally:
            self._active.pop()
        if not branches:
            return None
        if len(branches) == 1:
            return branches[0]
        return " UNION ".join(f"{{ {b} }}" for b in branches)

    def fails(self, shape: Shape, value: str) -> str | None:
        """An expression: true when ``value`` does not conform to ``shape``."""
        inner = self.violation(shape, value)
        return None if inner is None else f"EXISTS {{ {inner} }}"


def written_last_step(path: Path, written: Collection[Term]) -> NamedNode | None:
    """The last predicate of a sequence path whose last step, a predicate no earlier step
    walks, has literals the store keeps in another form (None: not such a path)."""
    if path.kind != "sequence" or not path.parts[-1].is_predicate:
        return None
    last = path.parts[-1].iri
    earlier = {p for part in path.parts[:-1] for p, _ in part.predicates()}
    return last if last in written and last not in earlier else None


def literal_int(term: Term | None) -> int | None:
    if isinstance(term, Literal):
        try:
            return int(term.value)
        except ValueError:
            return None
    return None


def is_true(term: Term | None) -> bool:
    """SHACL's boolean parameters are switched on by ``true`` only (not ``"1"``)."""
    return isinstance(term, Literal) and term.value == "true"


def iri(term: Term) -> NamedNode:
    if not isinstance(term, NamedNode):
        raise CompileError(f"{term} must be an IRI")
    return term


def unjoined(
    shapes: ShapeSet, top: Shape, written: frozenset[Term], judged: Collection[str] = ()
) -> str | None:
    """Why the compiled queries of ``top`` cannot judge every literal as written, when the
    data holds literals under the ``written`` predicates that the store keeps in another
    form (``None``: they can). The value nodes of a predicate path are joined with their
    records (:meth:`Compiler.value_nodes`); what no query can join is said here. A SPARQL
    constraint with a judge (its SELECT's digest in ``judged``) is judged on the values as
    written (:mod:`ontoloom.shacl.native`)."""
    for target in top.targets:  # a literal of the shapes graph, whatever the data
        if target.kind == "targetNode" and _rewritable(target.term):
            return f"its target node {target.term} is kept in another form"
    if not written:
        return None
    for target in top.targets:
        if target.kind == "targetObjectsOf" and target.term in written:
            return f"its focus nodes are objects of {shapes.label(target.term)}"
    from ontoloom.shacl.components.property_pair import (
        DisjointConstraintComponent,
        EqualsConstraintComponent,
    )
    from ontoloom.shacl.components.sparql import SPARQLConstraintComponent

    written_text = {term_sparql(p) for p in written if not isinstance(p, BlankNode)}
    for shape in shapes.reached([top.node]):
        node = shape.node
        path = shape.path
        reached = path.predicates() if path is not None and not path.is_predicate else set()
        last = None if path is None else written_last_step(path, written)
        # A sequence's last step is joined with its record (Compiler.value_nodes); an
        # earlier step over such literals (walked back by an inverse step) is not.
        reached -= {(last, False)} if last is not None else set()
        if any(p in written for p, inverse in reached if not inverse):
            assert path is not None
            return f"the path {path.sparql()} of shape {shapes.label(node)} reaches them"
        # Which pre-bound variables may hold such a literal: $value, the values of a path
        # that walks a written predicate; $this, unless the shape's focus nodes are the
        # targeted shape's (or their property shapes'), which are never literals here.
        bound = set()
        if path is not None and any(
            p in written for p, inverse in path.predicates() if not inverse
        ):
            bound.add("value")
        if node != top.node and node not in top.properties:
            bound.add("this")
        for c in shape.constraints:
            if isinstance(c, EqualsConstraintComponent | DisjointConstraintComponent):
                other = getattr(c, "other", None)
                if other in written or (path is not None and path.iri in written):
                    return f"sh:{c.name} of shape {shapes.label(node)} compares them as terms"
            if isinstance(c, SPARQLConstraintComponent) and digest(c.select) in judged:
                continue
            try:
                queries = c.read_queries(shape)
            except CompileError:
                queries = []
            for query, _ in queries:
                reason = reads_terms(query, written_text, bound)
                if reason:
                    return f"the SPARQL query of shape {shapes.label(node)} {reason}"
    return None


def reads_terms(query: str, written: Collection[str], bound: Collection[str] = ()) -> str | None:
    """How a user's query judges, by its term, a literal the store keeps in another form
    than written (``None``: it never does, so the store's answer is the one on the terms as
    written). ``written``: the predicates (N-Triples) whose objects may be such literals;
    ``bound``: the pre-bound variables (``this``, ``value``) that may hold one.

    A variable may hold one when a triple pattern binds it as the object of such a
    predicate (or of any predicate: a variable or negated path), when it is pre-bound to
    one, or when it is assigned (BIND, AS, a subquery's aggregate) in a query where any
    variable may. Comparing such a variable by value (``=``, ``<``, ORDER BY, SUM) answers
    alike either way; reading its lexical form, datatype or identity does not.
    """
    from ontoloom.shacl.sparql_syntax import analyse, path_predicates

    facts = analyse(query)
    for lexical, datatype in facts.literals:  # a literal the query names, in another form
        named = Literal(lexical, datatype=NamedNode(datatype))
        if _rewritable(named):
            return f"names the literal {named}, which the store keeps as {stored_form(named)}"
    holds = set(bound)
    for edge in facts.edges:
        for predicate, inverse in path_predicates(edge.path):
            if predicate != "?" and predicate not in written:
                continue
            end = edge.subject if inverse else edge.object
            if end.startswith("?"):
                holds.add(end[1:])
            elif not end.startswith(("<", "_:")):
                return f"matches the literal {end} as a term"
    if not holds:
        return None
    holds |= facts.assigned
    for called, variables in facts.term_reads:
        held = sorted(holds.intersection(variables))
        if held:
            return f"calls {called.rsplit('#', 1)[-1]} on ?{held[0]}"
    for reason, variables in (
        ("keeps distinct values of", facts.distinct),
        ("groups by", facts.grouped),
        ("lists values of", facts.listed),
    ):
        held = sorted(holds.intersection(variables)) or (["*"] if "*" in variables else [])
        if held:
            return f"{reason} ?{held[0]}"
    objects: dict[str, int] = {}
    for edge in facts.edges:
        objects[edge.object] = objects.get(edge.object, 0) + 1
    subjects = {e.subject for e in facts.edges}
    joined = sorted(v for v, n in objects.items() if n > 1 and v[1:] in holds and v not in subjects)
    if joined:
        return f"joins on {joined[0]}"
    return None
