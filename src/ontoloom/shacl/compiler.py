"""SHACL shapes compiled to SPARQL: each constraint becomes a pattern that matches the focus
nodes violating it, so validation runs inside the store.

A *violation pattern* for shape S and focus variable ?f matches (binding ?f) exactly when ?f
does not conform to S. Top-level constraints are run as SELECT queries that join the
shape's targets with the pattern; shapes referenced by sh:node, sh:not, sh:and, sh:or,
sh:xone and sh:qualifiedValueShape are inlined as nested EXISTS patterns, so no node ever
leaves the store to be checked in Python.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ontoloom.shacl.hierarchy import Hierarchy
from ontoloom.shacl.shapes import Shape, ShapeSet
from ontoloom.terms import BlankNode, Literal, NamedNode, Term
from ontoloom.vocab import RDF

__all__ = ["CompileError", "Compiler", "Source", "Violation", "term_sparql"]

RDF_TYPE = f"<{RDF}type>"
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


def same_term(var: str, term: Term) -> str:
    """An expression: ``var`` is ``term``, compared as terms (sh:in, sh:hasValue). A literal
    the store would keep in another form ("1.0"^^xsd:decimal) is compared by its lexical form
    and datatype, which no stored literal can match by accident."""
    if isinstance(term, Literal) and not term.language:
        from ontoloom.store.lexical import stored_form

        if stored_form(term) != term:
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
    def __init__(
        self, shapes: ShapeSet, hierarchy: Hierarchy, shapes_graph: NamedNode | None = None
    ) -> None:
        self.shapes = shapes
        self.hierarchy = hierarchy
        self.shapes_graph = shapes_graph
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
        return f"{focus} {shape.path.sparql()} {value} .", value

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
        # Nested: the focus is bound outside; an uncorrelated aggregate joined on it.
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
