"""SHACL-AF node expressions (as triple rules use them) and SPARQL-based functions, evaluated
against a data backend: focus node (sh:this), constants, path expressions (with sh:nodes),
filter shapes, intersections, unions and calls of sh:SPARQLFunction.

Expressions are checked when read; one of a kind ontoloom does not evaluate (a JavaScript
function, the later drafts' sh:count, sh:if…) is reported as such, never skipped.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from ontoloom.shacl.paths import PathError, parse_path
from ontoloom.shacl.shapes import ShapesError, ShapeSet, sh
from ontoloom.store.base import Backend
from ontoloom.terms import BlankNode, Literal, NamedNode, Term
from ontoloom.vocab import SH

__all__ = ["Expressions", "NotEvaluable"]

_FORMS = {"path", "nodes", "filterShape", "intersection", "union"}
# What an expression node may say beside its form: the message of a constraint it is the
# value of (sh:expression), no part of its evaluation.
_MESSAGE = NamedNode(SH + "message")


class NotEvaluable(Exception):
    """A node expression of a kind ontoloom does not evaluate; ``feature`` names it."""

    def __init__(self, feature: str) -> None:
        super().__init__(feature)
        self.feature = feature


@dataclass
class _Function:
    iri: NamedNode
    query: str  # prologue included
    ask: bool
    parameters: list[str]  # names, in call order
    optional: set[str]


class Expressions:
    """Evaluates node expressions of one shapes graph. ``conforms(node, shape)`` answers
    filter shapes (the rules engine compiles it)."""

    def __init__(self, shapes: ShapeSet, conforms: Callable[[Backend, Term, Term], bool]) -> None:
        self.shapes, self.conforms = shapes, conforms
        self._functions: dict[Term, _Function] = {}

    # -- reading -------------------------------------------------------------------------------
    def check(self, expr: Term, where: str) -> None:
        """:raises NotEvaluable: for a kind of expression ontoloom does not evaluate.
        :raises ShapesError: for an ill-formed one."""
        g = self.shapes.graph
        if not isinstance(expr, BlankNode):
            return  # sh:this or a constant
        predicates = {t.predicate for t in g.triples_of(expr)} - {_MESSAGE}
        names = {p.value.removeprefix(SH) for p in predicates if p.value.startswith(SH)}
        if predicates and all(p.value.startswith(SH) for p in predicates):
            if not names <= _FORMS:
                unknown = ", ".join(sorted(f"sh:{n}" for n in names - _FORMS))
                raise NotEvaluable(f"the node expression {self.shapes.label(expr)} ({unknown})")
            if "path" in names:
                try:
                    parse_path(g, g.objects(expr, sh("path"))[0])
                except PathError as exc:
                    raise ShapesError(f"{where}: {exc}") from exc
            for local in ("nodes",):
                for inner in g.objects(expr, sh(local)):
                    self.check(inner, where)
            for local in ("intersection", "union"):
                for head in g.objects(expr, sh(local)):
                    for inner in g.items(head):
                        self.check(inner, where)
            return
        if len(predicates) == 1:  # a function call: [ ex:f ( args ) ]
            (fn,) = predicates
            self.function(fn, where)
            for head in g.objects(expr, fn):
                for inner in g.items(head):
                    self.check(inner, where)
            return
        raise NotEvaluable(f"the node expression {self.shapes.label(expr)}")

    def function(self, iri: Term, where: str) -> _Function:
        """A SPARQL-based function of the shapes graph.

        :raises NotEvaluable: a SHACL function of another kind (JavaScript), or none at all.
        """
        from ontoloom.shacl.components.custom import local_name, read_parameters
        from ontoloom.shacl.components.sparql import prefixes_of, query_text

        cached = self._functions.get(iri)
        if cached is not None:
            return cached
        shapes = self.shapes
        if not isinstance(iri, NamedNode) or not shapes.is_instance(iri, sh("SPARQLFunction")):
            kind = (
                "a SHACL function ontoloom cannot run"
                if shapes.is_instance(iri, sh("Function"))
                else "no SHACL function declared in the shapes graph"
            )
            raise NotEvaluable(f"the function {shapes.label(iri)} ({kind})")
        fwhere = f"{where} (function {shapes.label(iri)})"
        declared = bool(shapes.graph.objects(iri, sh("parameter")))
        params = read_parameters(shapes.graph, iri, fwhere) if declared else []
        names = [local_name(p) for p, _ in params]
        select = query_text(shapes, iri, "select", fwhere, prebound=names)
        ask = query_text(shapes, iri, "ask", fwhere, prebound=names)
        if (select is None) == (ask is None):
            raise ShapesError(f"{fwhere}: a SPARQL-based function needs one sh:select or sh:ask")
        orders = {p: _order(shapes, iri, p) for p, _ in params}
        if any(o is not None for o in orders.values()):
            params.sort(key=lambda po: orders[po[0]] or Decimal(0))
        else:
            params.sort(key=lambda po: local_name(po[0]))
        function = _Function(
            iri,
            prefixes_of(shapes, iri, fwhere) + "\n" + (select or ask or ""),
            ask is not None,
            [local_name(p) for p, _ in params],
            {local_name(p) for p, optional in params if optional},
        )
        self._functions[iri] = function
        return function

    # -- evaluation ------------------------------------------------------------------------------
    def evaluate(self, data: Backend, expr: Term, focus: Term) -> list[Term]:
        g = self.shapes.graph
        if expr == sh("this"):
            return [focus]
        if not isinstance(expr, BlankNode):
            return [expr]
        if g.objects(expr, sh("path")):
            path = parse_path(g, g.objects(expr, sh("path"))[0])
            out: dict[Term, None] = {}
            for node in self._nodes(data, expr, focus):
                query = f"SELECT DISTINCT ?n ?v WHERE {{ ?n {path.sparql()} ?v }}"
                out.update(dict.fromkeys(r["v"] for r in data.select(query, {"n": node})))
            return list(out)
        if g.objects(expr, sh("filterShape")):
            shape = g.objects(expr, sh("filterShape"))[0]
            return [n for n in self._nodes(data, expr, focus) if self.conforms(data, n, shape)]
        for local, combine in (("intersection", _intersect), ("union", _union)):
            for head in g.objects(expr, sh(local)):
                return combine([self.evaluate(data, e, focus) for e in g.items(head)])
        (fn,) = {t.predicate for t in g.triples_of(expr)} - {_MESSAGE}
        function = self.function(fn, "")
        args = [self.evaluate(data, e, focus) for e in g.items(g.objects(expr, fn)[0])]
        results: dict[Term, None] = {}
        for combo in itertools.product(*args):
            value = self.call(data, function, list(combo))
            if value is not None:
                results[value] = None
        return list(results)

    def _nodes(self, data: Backend, expr: Term, focus: Term) -> list[Term]:
        inner = self.shapes.graph.objects(expr, sh("nodes"))
        return self.evaluate(data, inner[0], focus) if inner else [focus]

    def call(self, data: Backend, function: _Function, args: list[Term]) -> Term | None:
        """The function's value for ``args``, pre-bound to its parameters; ``None`` when
        unbound (a SPARQL error) or a mandatory argument is missing."""
        bindings = dict(zip(function.parameters, args, strict=False))
        if any(p not in bindings for p in function.parameters if p not in function.optional):
            return None
        # Oxigraph pre-binds (substitutes) only variables the query projects: project them.
        query = with_projected(function.query, list(bindings), ask=function.ask)
        rows = data.select(query, bindings)
        if function.ask:
            truth = next(iter(rows), None) is not None
            return Literal("true" if truth else "false", datatype=_XSD_BOOLEAN)
        for row in rows:
            values = [v for k, v in row.items() if k not in bindings]
            return values[0] if len(values) == 1 else None
        return None


_XSD_BOOLEAN = NamedNode("http://www.w3.org/2001/XMLSchema#boolean")
_SELECT = re.compile(r"(?i)\b(SELECT)(\s+(?:DISTINCT|REDUCED))?\b")
_ASK = re.compile(r"(?i)\bASK\b(\s*WHERE\b)?")


def with_projected(query: str, names: list[str], *, ask: bool = False) -> str:
    """``query`` with ``names`` added to its (first) projection, an ASK turned into a SELECT
    of them, so that Oxigraph can pre-bind them (it substitutes projected variables only)."""
    listed = " ".join(f"?{n}" for n in names)
    if ask:
        return _ASK.sub(lambda _: f"SELECT {listed} WHERE", query, count=1) + " LIMIT 1"
    return _SELECT.sub(lambda m: f"{m.group(0)} {listed}", query, count=1)


def _order(shapes: ShapeSet, function: Term, path: Term) -> Decimal | None:
    g = shapes.graph
    for param in g.objects(function, sh("parameter")):
        if g.value(param, sh("path")) == path:
            value = g.value(param, sh("order"))
            if isinstance(value, Literal):
                try:
                    return Decimal(value.value)
                except InvalidOperation:
                    raise ShapesError(f"sh:order {value.value!r} is not a number") from None
    return None


def _intersect(sets: list[list[Term]]) -> list[Term]:
    if not sets:
        return []
    rest = [set(s) for s in sets[1:]]
    return [n for n in sets[0] if all(n in s for s in rest)]


def _union(sets: list[list[Term]]) -> list[Term]:
    return list(dict.fromkeys(n for s in sets for n in s))
