"""SHACL-AF rules (sh:rule: sh:SPARQLRule, sh:TripleRule), run the way pySHACL runs them
with ``-a``: before validation, on the copy of the data graph being validated, shapes in
sh:order, each shape's rules in sh:order on its focus nodes that conform to the rule's
sh:condition shapes, the inferred triples added at once; then again, until no rule infers
anything new (a fixpoint, at most ``MAX_ROUNDS`` rounds).

A rule ontoloom cannot run (SHACL-JS, an unknown rule type, a node expression or function
it does not evaluate) is reported by shape and feature, never skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from ontoloom.shacl.compiler import CompileError, Compiler
from ontoloom.shacl.expressions import Expressions, NotEvaluable
from ontoloom.shacl.hierarchy import Hierarchy
from ontoloom.shacl.prefixes import functions_called
from ontoloom.shacl.shapes import Shape, ShapesError, ShapeSet, Unsupported, ValidationFailure, sh
from ontoloom.store import Backend, scratch
from ontoloom.terms import DefaultGraph, Literal, NamedNode, Quad, Term, Triple

__all__ = ["MAX_ROUNDS", "RuleSet"]

MAX_ROUNDS = 100  # as pySHACL's iteration limit


@dataclass
class Rule:
    node: Term
    order: Decimal
    conditions: list[Term]
    construct: str | None = None  # a SPARQL rule: its CONSTRUCT query, prologue included
    triple: tuple[Term, Term, Term] | None = None  # a triple rule: its node expressions


@dataclass
class _ShapeRules:
    shape: Shape
    order: Decimal
    rules: list[Rule] = field(default_factory=list)


class RuleSet:
    """The rules of a shapes graph, read and checked; :meth:`run` infers their triples."""

    def __init__(self, shapes: ShapeSet) -> None:
        self.shapes = shapes
        self.expressions = Expressions(shapes, self._conforms)
        self.unsupported: list[Unsupported] = []
        by_shape: dict[Term, _ShapeRules] = {}
        g = shapes.graph
        for subject, node in g.pairs(sh("rule")):
            shape = shapes.shape(subject)
            if shape.deactivated or _true(g.value(node, sh("deactivated"))):
                continue
            entry = by_shape.get(subject)
            if entry is None:
                entry = by_shape[subject] = _ShapeRules(shape, _order(shapes, subject))
            rule = self._read(shape, node)
            if rule is not None:
                entry.rules.append(rule)
        self._plan = sorted(by_shape.values(), key=lambda e: (e.order, str(e.shape.node)))
        self._conditions: dict[tuple[Term, frozenset], str | None] = {}
        self._hierarchy = Hierarchy()

    @staticmethod
    def shapes_with_rules(shapes: ShapeSet) -> list[Term]:
        """Shapes that hold rules, read or not (without -a, rules are not even read)."""
        return list(dict.fromkeys(s for s, _ in shapes.graph.pairs(sh("rule"))))

    def _read(self, shape: Shape, node: Term) -> Rule | None:
        from ontoloom.shacl.components.sparql import query_text

        shapes, g = self.shapes, self.shapes.graph
        where = f"shape {shapes.label(shape.node)}: sh:rule {shapes.label(node)}"
        sparql = shapes.is_instance(node, sh("SPARQLRule"))
        triple = shapes.is_instance(node, sh("TripleRule"))
        if sparql and triple:
            raise ShapesError(f"{where} is both a sh:SPARQLRule and a sh:TripleRule; keep one")
        conditions = [
            c
            for value in g.objects(node, sh("condition"))
            for c in (g.items(value) if g.items(value) else [value])
        ]
        rule = Rule(node, _order(shapes, node), conditions)
        if sparql:
            construct = query_text(shapes, node, "construct", where, prebound=())
            if construct is None:
                raise ShapesError(f"{where}: a SPARQL rule needs one sh:construct query")
            from ontoloom.shacl.components.sparql import prefixes_of

            rule.construct = prefixes_of(shapes, node, where) + "\n" + construct
            called = functions_called(rule.construct) & shapes.functions()
            if called:
                self._not_run(shape, f"the SHACL function <{sorted(called)[0]}> in sh:rule")
                return None
            return rule
        if triple:
            parts = []
            for local in ("subject", "predicate", "object"):
                values = g.objects(node, sh(local))
                if len(values) != 1:
                    raise ShapesError(f"{where}: a triple rule needs exactly one sh:{local}")
                try:
                    self.expressions.check(values[0], where)
                except NotEvaluable as exc:
                    self._not_run(shape, f"{exc.feature} in sh:rule")
                    return None
                parts.append(values[0])
            rule.triple = (parts[0], parts[1], parts[2])
            return rule
        kinds = ", ".join(shapes.label(t) for t in g.objects(node, sh("type"))) or "no type"
        js = shapes.is_instance(node, sh("JSRule"))
        self._not_run(
            shape,
            f"sh:rule {shapes.label(node)} ("
            + ("a SHACL-JS rule" if js else f"of {kinds}, not a SPARQL or triple rule")
            + ")",
        )
        return None

    def _not_run(self, shape: Shape, feature: str) -> None:
        self.unsupported.append(Unsupported(shape.node, feature))

    # -- running ---------------------------------------------------------------------------------
    def run(self, data: Backend, hierarchy: Hierarchy) -> Backend:
        """The data with every inferred triple in its default graph, once nothing new comes.
        Each rule sees what the rules before it inferred (as in pySHACL): a copy is made
        whenever a rule infers something (``data`` itself is never written to).

        :raises ValidationFailure: when the rules do not settle within ``MAX_ROUNDS``.
        """
        self._hierarchy = hierarchy
        for _ in range(MAX_ROUNDS):
            added = False
            for entry in self._plan:
                for rule in sorted(entry.rules, key=lambda r: (r.order, str(r.node))):
                    focus = self._focus_nodes(data, entry.shape, rule)
                    new = {
                        Quad(t.subject, t.predicate, t.object, DefaultGraph())
                        for t in self._infer(data, rule, focus)
                    }
                    if new - set(data.quads()):
                        data = scratch([*data.quads(), *new], union=data.union)
                        added = True
            if not added:
                return data
        raise ValidationFailure(f"the rules still inferred new triples after {MAX_ROUNDS} rounds")

    def _infer(self, data: Backend, rule: Rule, focus: list[Term]) -> set[Triple]:
        out: set[Triple] = set()
        for node in focus:
            if rule.construct is not None:
                out.update(data.construct(rule.construct, {"this": node}))
            elif rule.triple is not None:
                s, p, o = (self.expressions.evaluate(data, e, node) for e in rule.triple)
                for subject in s:
                    for predicate in p:
                        for obj in o:
                            inferred = _inferred(subject, predicate, obj)
                            if inferred is not None:
                                out.add(inferred)
        return out

    def _focus_nodes(self, data: Backend, shape: Shape, rule: Rule) -> list[Term]:
        key = (shape.node, frozenset(rule.conditions))
        if key not in self._conditions:
            self._conditions[key] = self._focus_query(shape, rule.conditions)
        query = self._conditions[key]
        return [] if query is None else [r["this"] for r in data.select(query)]

    def _focus_query(self, shape: Shape, conditions: list[Term]) -> str:
        cx = Compiler(self.shapes, self._hierarchy)
        try:
            text = cx.targets(shape, "?this")
            for condition in conditions:
                violated = cx.violation(self.shapes.shape(condition), "?this")
                if violated is not None:
                    text += f" FILTER NOT EXISTS {{ {violated} }}"
        except CompileError as exc:
            raise ShapesError(
                f"shape {self.shapes.label(shape.node)}: the focus nodes of its rules cannot "
                f"be computed ({exc})"
            ) from None
        prologue = "\n".join(sorted(p for p in cx.prologues | cx.target_prologues if p))
        return f"{prologue}\nSELECT DISTINCT ?this WHERE {{ {text} }}"

    def _conforms(self, data, node: Term, shape: Term) -> bool:
        cx = Compiler(self.shapes, self._hierarchy)
        try:
            violated = cx.violation(self.shapes.shape(shape), "?n")
        except CompileError as exc:
            raise ShapesError(
                f"the filter shape {self.shapes.label(shape)} cannot be evaluated ({exc})"
            ) from None
        if violated is None:
            return True
        prologue = "\n".join(sorted(p for p in cx.prologues if p))
        query = f"{prologue}\nSELECT ?n WHERE {{ {violated} }} LIMIT 1"
        return next(iter(data.select(query, {"n": node})), None) is None


def _inferred(subject: Term, predicate: Term, obj: Term) -> Triple | None:
    """The inferred triple, or None: it needs an IRI or blank subject and an IRI predicate."""
    if isinstance(subject, Literal) or not isinstance(predicate, NamedNode):
        return None
    return Triple(subject, predicate, obj)


def _true(term: Term | None) -> bool:
    return isinstance(term, Literal) and term.value == "true"


def _order(shapes: ShapeSet, node: Term) -> Decimal:
    values = shapes.graph.objects(node, sh("order"))
    if not values:
        return Decimal(0)
    if len(values) > 1 or not isinstance(values[0], Literal):
        raise ShapesError(f"{shapes.label(node)}: sh:order needs one number")
    try:
        return Decimal(values[0].value)
    except InvalidOperation:
        raise ShapesError(f"{shapes.label(node)}: sh:order {values[0]} is not a number") from None
