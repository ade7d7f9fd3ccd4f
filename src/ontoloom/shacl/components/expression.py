"""The SHACL-AF expression constraint component (sh:expression), compiled to SPARQL.

A value node conforms when the node expression, evaluated with the value node as focus
node, gives ``true`` and nothing else; otherwise there is one result, the value node as
sh:value and the expression as sh:sourceConstraint (as pySHACL reports it).

Every form the rules evaluate (:mod:`ontoloom.shacl.expressions`) is written as a graph
pattern binding the expression's output nodes: sh:this, constants, path expressions (with
sh:nodes), filter shapes, intersections, unions, and calls of sh:SPARQLFunction — the
function's body written in with its parameters joined to the arguments' outputs (each
combination of them, as a call per combination would give). A function whose body cannot
be written in (a subquery, an aggregate, solution modifiers) and every other kind of
expression is reported as not evaluated, by shape and feature, never skipped.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ontoloom.shacl.compiler import CompileError, Compiler, Source, Violation, term_sparql
from ontoloom.shacl.components import Constraint
from ontoloom.shacl.components.unsupported import NotEvaluated
from ontoloom.shacl.expressions import Expressions, NotEvaluable
from ontoloom.shacl.paths import parse_path
from ontoloom.shacl.shapes import Shape, ShapeSet, sh
from ontoloom.terms import BlankNode, Literal, Term, spo

if TYPE_CHECKING:
    from ontoloom.shacl.paths import Path
    from ontoloom.shacl.render import Renderer

COMPONENT = "ExpressionConstraintComponent"
# What a function's body may not hold to be written into another pattern.
_NOT_INLINED = {"SUBQUERY", "AGGREGATE", "SLICE", "FROM", "SERVICE"}
_HEAD = re.compile(r"(?is)^\s*(?:SELECT\s+(?P<projection>.*?)|ASK\s*)(?:WHERE\s*)?\{")
_PROJECTED_AS = re.compile(r"(?is)^\(\s*(?P<expr>.+)\s+AS\s+[?$](?P<var>\w+)\s*\)$")
_VARIABLES = re.compile(r"[$?](\w+)")


class ExpressionConstraintComponent(Constraint):
    component, name = COMPONENT, "expression"
    per_value = True

    def __init__(self, shapes: ShapeSet, expression: Term) -> None:
        self.shapes, self.expression = shapes, expression
        self.source_constraint = expression
        # the expression's own sh:message, as pySHACL reads it (the first one)
        messages = shapes.graph.objects(expression, sh("message"))
        self.default_messages = tuple(m for m in messages[:1] if isinstance(m, Literal))
        self.functions = Expressions(shapes, _no_filter_shapes)

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        out: list[Constraint] = []
        for expression in shapes.graph.objects(shape.node, sh("expression")):
            constraint = cls(shapes, expression)
            try:
                constraint.check(expression, f"shape {shapes.label(shape.node)}")
            except NotEvaluable as exc:
                out.append(NotEvaluated(COMPONENT, f"sh:expression with {exc.feature}"))
                continue
            out.append(constraint)
        return out

    def check(self, expr: Term, where: str) -> None:
        """:raises NotEvaluable: a form, or a function body, this component cannot write."""
        self.functions.check(expr, where)  # the forms, and each function it calls is one
        g = self.shapes.graph
        for _, p, o in map(spo, g.triples_of(expr) if isinstance(expr, BlankNode) else []):
            if p == sh("message"):
                continue
            if not p.value.startswith(sh("").value):
                _Body.of(self.functions, p, where)  # :raises NotEvaluable
                for inner in g.items(o):
                    self.check(inner, where)
            elif p == sh("nodes"):
                self.check(o, where)
            elif p in (sh("intersection"), sh("union")):
                for inner in g.items(o):
                    self.check(inner, where)

    def shape_refs(self) -> list[Term]:
        g = self.shapes.graph
        out: list[Term] = []
        stack = [self.expression]
        while stack:
            expr = stack.pop()
            if isinstance(expr, BlankNode):
                for _, p, o in map(spo, g.triples_of(expr)):
                    if p == sh("filterShape"):
                        out.append(o)
                    elif p == sh("nodes"):
                        stack.append(o)
                    elif p not in (sh("path"), sh("message")):
                        stack.extend(g.items(o))
        return out

    def read_queries(self, shape: Shape) -> list[tuple[str, bool]]:
        """What evaluating the expression reads from a value node (``$value``), for the
        write path's reach: a filter shape's reads start where its nodes are, which this
        query cannot say, so an expression with one is not read (its shape is validated
        against the whole store on a write)."""
        outputs, _ = self._compile(_Writer(None), self.expression, "?value")
        return [(f"SELECT $value WHERE {{ {outputs} }}", True)]

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        # evaluated inside EXISTS, where the value node is bound: each part can read it
        outputs, o = self._compile(_Writer(cx), self.expression, v)
        is_true = f"sameTerm({o}, true)"
        return Violation(
            f"{values} FILTER(NOT EXISTS {{ {outputs} FILTER({is_true}) }} || "
            f"EXISTS {{ {outputs} FILTER(!{is_true}) }})",
            value=v,
        )

    def _compile(self, cx: _Writer, expr: Term, focus: str) -> tuple[str, str]:
        """A pattern binding the output nodes of ``expr`` for ``focus``, and their variable."""
        g = self.shapes.graph
        if expr == sh("this"):
            return "", focus
        out = cx.fresh("expr")
        if not isinstance(expr, BlankNode):
            return f"BIND({term_sparql(expr)} AS {out})", out
        nodes, start = "", focus
        for inner in g.objects(expr, sh("nodes")):
            nodes, start = self._compile(cx, inner, focus)
        if g.objects(expr, sh("path")):
            path = parse_path(g, g.objects(expr, sh("path"))[0])
            return f"{nodes} {start} {path.sparql()} {out} .", out
        if g.objects(expr, sh("filterShape")):
            fails = cx.fails(g.objects(expr, sh("filterShape"))[0], start)
            keep = "" if fails is None else f"FILTER(!({fails}))"
            return f"{nodes} {keep} BIND({start} AS {out})", out
        for head in g.objects(expr, sh("union")):
            branches = []
            for inner in g.items(head):
                pattern, o = self._compile(cx, inner, focus)
                branches.append(f"{{ {pattern} BIND({o} AS {out}) }}")
            return " UNION ".join(branches) or "FILTER(false)", out
        for head in g.objects(expr, sh("intersection")):
            parts = [self._compile(cx, inner, focus) for inner in g.items(head)]
            if not parts:
                return "FILTER(false)", out
            (first, o), rest = parts[0], parts[1:]
            also = "".join(f" FILTER EXISTS {{ {p} FILTER(sameTerm({r}, {o})) }}" for p, r in rest)
            return f"{first}{also} BIND({o} AS {out})", out
        (fn,) = {t.predicate for t in g.triples_of(expr)} - {sh("message")}
        body = _Body.of(self.functions, fn, "")
        args = [self._compile(cx, inner, focus) for inner in g.items(g.objects(expr, fn)[0])]
        return " ".join(p for p, _ in args) + " " + body.written(cx, [o for _, o in args], out), out

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        return "Expression evaluation generated constraint did not return true."


class _Body:
    """A SPARQL function's query, ready to be written into a pattern: its WHERE group, the
    variable it returns (or, for an ASK, none), its parameters in call order."""

    def __init__(self, group: str, result: str | None, bind: str | None) -> None:
        self.group, self.result, self.bind = group, result, bind
        self.parameters: list[str] = []
        self.mandatory = 0

    @classmethod
    def of(cls, expressions: Expressions, iri: Term, where: str) -> _Body:
        """:raises NotEvaluable: a function whose body cannot be written in."""
        from ontoloom.shacl.components.functions import written_out
        from ontoloom.shacl.components.sparql import split_prologue
        from ontoloom.shacl.sparql_syntax import analyse

        function = expressions.function(iri, where)
        label = expressions.shapes.label(iri)
        prologue, query = split_prologue(function.query.strip())
        head, end = _HEAD.match(query), query.rstrip().rfind("}")
        features = analyse(function.query).features
        if head is None or end < head.end() or query[end + 1 :].strip() or features & _NOT_INLINED:
            raise NotEvaluable(
                f"the function {label}, whose query is not one graph pattern with its answer"
            )
        # its prefixed names written out: the query it goes into may declare them otherwise
        group = written_out(query[head.end() : end], prologue)
        result, bind = None, None
        if not function.ask:
            projection = (head.group("projection") or "").strip()
            projection = re.sub(r"(?i)^(DISTINCT|REDUCED)\s+", "", projection)
            computed = _PROJECTED_AS.match(projection)
            names = [n for n in _VARIABLES.findall(projection) if n not in function.parameters]
            if computed is not None:
                result, bind = computed.group("var"), written_out(computed.group("expr"), prologue)
            elif len(names) == 1 and re.fullmatch(r"[$?]\w+(\s+[$?]\w+)*", projection):
                result = names[0]
            else:
                raise NotEvaluable(f"the function {label}, whose query returns no one variable")
        body = cls(group, result, bind)
        body.parameters = function.parameters
        body.mandatory = len([p for p in function.parameters if p not in function.optional])
        return body

    def written(self, cx: _Writer, args: list[str], out: str) -> str:
        """The body with its parameters joined to ``args`` and its answer bound to ``out``;
        every other variable of it renamed, apart from the pattern around it."""
        from ontoloom.shacl.components.sparql import code_of, substitute

        if len(args) < self.mandatory:
            return "FILTER(false)"  # a call missing a mandatory argument has no value
        group, bind = self.group, self.bind
        names = dict(zip(self.parameters, args, strict=False))
        for name in sorted(set(_VARIABLES.findall(code_of(group + " " + (bind or ""))))):
            if name not in names:
                names[name] = cx.fresh("fn")
        for name, var in names.items():
            group = substitute(group, name, var)
            bind = substitute(bind, name, var) if bind is not None else None
        if self.result is None:  # an ASK: true or false
            return f"BIND(EXISTS {{ {group} }} AS {out})"
        if bind is not None:
            return f"{group} BIND(({bind}) AS {out})"
        return f"{group} BIND({names[self.result]} AS {out})"


class _Writer:
    """Fresh variables and filter shapes for writing an expression: through the compiler
    when validating; on its own for :meth:`read_queries`, which has none."""

    def __init__(self, cx: Compiler | None) -> None:
        self.cx, self.counter = cx, 0

    def fresh(self, stem: str) -> str:
        if self.cx is not None:
            return self.cx.fresh(stem)
        self.counter += 1
        return f"?_r{stem}{self.counter}"

    def fails(self, shape: Term, value: str) -> str | None:
        if self.cx is None:
            raise CompileError("a filter shape reads from its nodes, wherever they are")
        return self.cx.fails(self.cx.shapes.shape(shape), value)


def _no_filter_shapes(*_: object) -> bool:
    raise AssertionError("filter shapes are compiled, never asked of the evaluator")


COMPONENTS: list[type[Constraint]] = [ExpressionConstraintComponent]
