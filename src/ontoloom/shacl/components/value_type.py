"""Value type constraint components: sh:class, sh:datatype, sh:nodeKind."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import TYPE_CHECKING

from ontoloom.shacl.compiler import Compiler, Source, Violation
from ontoloom.shacl.components import Constraint, QuadCheck
from ontoloom.shacl.components.params import Params
from ontoloom.shacl.hierarchy import Hierarchy
from ontoloom.shacl.paths import Path
from ontoloom.shacl.render import Renderer
from ontoloom.shacl.shapes import RDF_TYPE, Shape, ShapeSet
from ontoloom.terms import BlankNode, Literal, NamedNode, Term
from ontoloom.vocab import RDF, SH, XSD

if TYPE_CHECKING:
    from ontoloom.shacl.direct import Around

_TYPE = RDF_TYPE.value
_UNTYPED: dict[str, tuple[Term, ...]] = {}  # the quads of a node that has none


def _each_value(
    bad: Callable[[Term], bool],
) -> QuadCheck:
    """A check of each value node on its own: the violating ones, in a stable order."""

    def check(
        nodes: list[tuple[Term, Collection[Term]]], around: Around
    ) -> Iterator[tuple[Term, Term | None]]:
        return _in_order([(node, v) for node, values in nodes for v in values if bad(v)])

    return check


def _in_order(found: list[tuple[Term, Term]]) -> Iterator[tuple[Term, Term | None]]:
    """Violating (focus node, value) pairs, found in the focus nodes' order (each node's
    together), with each node's values in a stable order. One comprehension over every
    value, not one per focus node: most units find nothing, and a call per node was most
    of their time."""
    start = 0
    while start < len(found):
        node = found[start][0]
        end = start + 1
        while end < len(found) and found[end][0] is node:
            end += 1
        yield from sorted(found[start:end], key=lambda pair: str(pair[1]))
        start = end


class ClassConstraintComponent(Constraint):
    per_value = True
    component = "ClassConstraintComponent"
    name = "class"

    def __init__(self, cls: Term) -> None:
        self.cls = cls

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        return [cls(c) for c in Params(shapes, shape).iris("class")]

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        return f"Value does not have class {r.term(self.cls)}"

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        if values and source is not None:
            # At the top, MINUS on the value variable bound here: an anti-join, faster per
            # row. Nested in an EXISTS the store would evaluate its right side in full at
            # every evaluation: FILTER NOT EXISTS looks each value up instead.
            return Violation(f"{values} MINUS {{ {cx.instance_of(v, self.cls)} }}", value=v)
        # nested (the focus bound outside), each value node of the path is looked up
        return Violation(f"{values} FILTER NOT EXISTS {{ {cx.instance_of(v, self.cls)} }}", value=v)

    reads_value_quads = True  # the value nodes' types

    def quad_check(self, hierarchy: Hierarchy) -> QuadCheck | None:
        if isinstance(self.cls, BlankNode):
            return None  # the query cannot name it (the shape is not compiled)
        # the classes the query lists: the class and its subclasses, blank ones aside
        classes = {c for c in hierarchy.subclasses(self.cls) if not isinstance(c, BlankNode)}

        key = ("instances of", frozenset(classes))

        def check(
            nodes: list[tuple[Term, Collection[Term]]], around: Around
        ) -> Iterator[tuple[Term, Term | None]]:
            if around.focus is None:  # a whole graph: the instances, found once
                typed = around.memo_set(key, lambda: around.instances_of(classes))
                return _in_order([(n, v) for n, vs in nodes for v in vs if v not in typed])
            out = around.out
            return _in_order(
                [
                    (n, v)
                    for n, vs in nodes
                    for v in vs
                    if classes.isdisjoint(out.get(v, _UNTYPED).get(_TYPE, ()))
                ]
            )

        return check


# Datatypes whose lexical space SPARQL casts can check (ill-formed literals violate sh:datatype).
_CASTABLE = {
    XSD + t
    for t in (
        "integer",
        "decimal",
        "float",
        "double",
        "boolean",
        "date",
        "dateTime",
        "time",
        "string",
        "duration",
        "dayTimeDuration",
        "yearMonthDuration",
    )
}
# Lexical spaces no cast checks, as XML Schema writes them (XPath regular expressions).
_B64 = "[A-Za-z0-9+/]"
_PATTERNS = {
    XSD + "hexBinary": "^([0-9a-fA-F]{2})*$",
    XSD + "base64Binary": (
        f"^(({_B64} ?){{4}})*(({_B64} ?){{3}}{_B64}|({_B64} ?){{2}}[AEIMQUYcgkosw048] ?=|"
        f"{_B64} ?[AQgw] ?= ?=)?$"
    ),
}
_INTEGER_RANGES = {
    XSD + "nonNegativeInteger": ">= 0",
    XSD + "positiveInteger": ">= 1",
    XSD + "nonPositiveInteger": "<= 0",
    XSD + "negativeInteger": "<= -1",
}
_BOUNDED = {
    XSD + "byte": (-128, 127),
    XSD + "short": (-32768, 32767),
    XSD + "int": (-2147483648, 2147483647),
    XSD + "long": (-9223372036854775808, 9223372036854775807),
    XSD + "unsignedByte": (0, 255),
    XSD + "unsignedShort": (0, 65535),
    XSD + "unsignedInt": (0, 4294967295),
    XSD + "unsignedLong": (0, 18446744073709551615),
}


class DatatypeConstraintComponent(Constraint):
    per_value = True
    component = "DatatypeConstraintComponent"
    name = "datatype"

    def __init__(self, datatype: NamedNode) -> None:
        self.datatype = datatype

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        params = Params(shapes, shape)
        params.at_most_one("datatype")
        return [cls(d) for d in params.iris("datatype")]

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        return f"Value is not Literal with datatype {r.term(self.datatype)}"

    def well_formed(self, lexical: str) -> str:
        """An expression: the lexical form ``lexical`` is in the datatype's lexical space."""
        dt = self.datatype.value
        if dt in _CASTABLE:
            return f"COALESCE(isLiteral(<{dt}>({lexical})), false)"
        as_int = f"<{XSD}integer>({lexical})"
        if dt in _INTEGER_RANGES:
            return f"COALESCE({as_int} {_INTEGER_RANGES[dt]}, false)"
        if dt == XSD + "unsignedLong":
            # Past 2^63 the store's integers end (its cast fails there): forms of digits alone
            # are compared as decimals instead, which reach 2^64.
            digits = f'COALESCE(REGEX({lexical}, "^[+]?[0-9]+$") && <{XSD}decimal>({lexical})'
            return f"(COALESCE({as_int} >= 0, false) || {digits} <= 18446744073709551615.0, false))"
        if dt in _BOUNDED:
            low, high = _BOUNDED[dt]
            # -2^63 written as a sum: the number itself is past the store's integers
            floor = "(-9223372036854775807 - 1)" if low == -(2**63) else str(low)
            return f"COALESCE({as_int} >= {floor} && {as_int} <= {high}, false)"
        if dt in _PATTERNS:
            return f'REGEX({lexical}, "{_PATTERNS[dt]}")'
        return "true"

    def quad_check(self, hierarchy: Hierarchy) -> QuadCheck:
        datatype = self.datatype
        if datatype.value == RDF + "langString":
            return _each_value(lambda v: not (isinstance(v, Literal) and v.language))
        expression = self.well_formed("?l")
        # (every lexical form casts to xsd:string: no query asked for it, on every write)
        if expression == "true" or datatype.value == XSD + "string":
            return _each_value(
                lambda v: not (isinstance(v, Literal) and not v.language and v.datatype == datatype)
            )

        def check(
            nodes: list[tuple[Term, Collection[Term]]], around: Around
        ) -> Iterator[tuple[Term, Term | None]]:
            typed = [
                v.value
                for _, values in nodes
                for v in values
                if isinstance(v, Literal) and not v.language and v.datatype == datatype
            ]
            formed = well_formed(datatype, expression, typed)
            return _each_value(
                lambda v: (
                    not (
                        isinstance(v, Literal)
                        and not v.language
                        and v.datatype == datatype
                        and formed[v.value]
                    )
                )
            )(nodes, around)

        return check

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        if self.datatype.value == RDF + "langString":
            ok = f"isLiteral({v}) && lang({v}) != ''"
        else:
            written = cx.as_written(
                v, lambda lexical, dt: f"{dt} = {self.datatype} && {self.well_formed(lexical)}"
            )
            ok = f"isLiteral({v}) && lang({v}) = '' && {written}"
        return Violation(f"{values} FILTER(!({ok}))", value=v)


_formed: dict[tuple[NamedNode, str], bool] = {}

_HEX = re.compile("(?:[0-9a-fA-F]{2})*")
_DIGITS = re.compile("[0-9]{1,18}")  # no sign, no blank: any integer cast reads it, in range


def _decided_here(datatype: str) -> Callable[[str], bool | None] | None:
    """For the datatypes where Python decides a lexical form exactly as the store's
    expression (:meth:`DatatypeConstraintComponent.well_formed`) does, without asking the
    store: whether the form is well-formed, or None where the store must say. A DCAT
    catalogue's checksums and byte sizes are thousands of distinct forms, and the query
    judging them cost more than all the rest of their shapes.

    * xsd:hexBinary: the same regular expression, anchored at both ends (``fullmatch``, as
      SPARQL's ``^…$`` without flags is);
    * xsd:integer and the types derived from it: a form of 1 to 18 ASCII digits and nothing
      else is a non-negative integer below 2^63 that every integer cast reads; its value is
      compared with the type's bounds. Any other form (a sign, blanks, more digits, other
      characters) goes to the store.
    """
    if datatype == XSD + "hexBinary":
        return lambda lexical: _HEX.fullmatch(lexical) is not None
    low, high = _INTEGER_BOUNDS.get(datatype, (None, None))
    if datatype not in _INTEGER_BOUNDS:
        return None

    def integer(lexical: str) -> bool | None:
        if _DIGITS.fullmatch(lexical) is None:
            return None
        value = int(lexical)
        return (low is None or value >= low) and (high is None or value <= high)

    return integer


# Bounds of the integer types (None: unbounded on that side), as well_formed tests them.
_INTEGER_BOUNDS: dict[str, tuple[int | None, int | None]] = {
    XSD + "integer": (None, None),
    XSD + "nonNegativeInteger": (0, None),
    XSD + "positiveInteger": (1, None),
    XSD + "nonPositiveInteger": (None, 0),
    XSD + "negativeInteger": (None, -1),
    **{dt: (low, high) for dt, (low, high) in _BOUNDED.items()},
}


def well_formed(datatype: NamedNode, expression: str, lexicals: Iterable[str]) -> dict[str, bool]:
    """Whether each lexical form is in the datatype's lexical space, as the compiled query
    judges it: ``expression`` (of ``?l``, a plain literal of the lexical form) evaluated by
    the store's engine itself, once for all forms not judged before."""
    out: dict[str, bool] = {}
    todo: list[str] = []
    here = _decided_here(datatype.value)
    for lexical in lexicals:
        if here is not None and (decided := here(lexical)) is not None:
            out[lexical] = decided
            continue
        known = _formed.get((datatype, lexical))
        if known is None:
            todo.append(lexical)
        else:
            out[lexical] = known
    if todo:
        from ontoloom.store import scratch

        todo = list(dict.fromkeys(todo))
        listed = " ".join(str(Literal(lexical)) for lexical in todo)
        query = f"SELECT ?l WHERE {{ VALUES ?l {{ {listed} }} FILTER({expression}) }}"
        good = {row["l"].value for row in scratch().select(query) if row["l"] is not None}
        if len(_formed) > 65536:
            _formed.clear()
        for lexical in todo:
            out[lexical] = _formed[(datatype, lexical)] = lexical in good
    return out


_NODE_KINDS = {
    "BlankNode": "isBlank({v})",
    "IRI": "isIRI({v})",
    "Literal": "isLiteral({v})",
    "BlankNodeOrIRI": "!isLiteral({v})",
    "BlankNodeOrLiteral": "!isIRI({v})",
    "IRIOrLiteral": "!isBlank({v})",
}


# The kinds of term that fail each _NODE_KINDS test.
_WRONG_KINDS: dict[str, tuple[type, ...]] = {
    "BlankNode": (NamedNode, Literal),
    "IRI": (BlankNode, Literal),
    "Literal": (NamedNode, BlankNode),
    "BlankNodeOrIRI": (Literal,),
    "BlankNodeOrLiteral": (NamedNode,),
    "IRIOrLiteral": (BlankNode,),
}


class NodeKindConstraintComponent(Constraint):
    per_value = True
    component = "NodeKindConstraintComponent"
    name = "nodeKind"

    def __init__(self, kind: NamedNode) -> None:
        self.kind = kind
        self.test = _NODE_KINDS[kind.value[len(SH) :]]

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        params = Params(shapes, shape)
        kind = params.at_most_one("nodeKind")
        if kind is None:
            return []
        if not (isinstance(kind, NamedNode) and kind.value.removeprefix(SH) in _NODE_KINDS):
            raise params.error(
                "nodeKind",
                f"{shapes.label(kind)} is not a node kind",
                "use one of " + ", ".join(f"sh:{k}" for k in _NODE_KINDS),
            )
        return [cls(kind)]

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        return f"Value is not of Node Kind {r.term(self.kind)}"

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        return Violation(f"{values} FILTER(!({self.test.format(v=v)}))", value=v)

    def quad_check(self, hierarchy: Hierarchy) -> QuadCheck:
        wrong = _WRONG_KINDS[self.kind.value[len(SH) :]]

        def check(
            nodes: list[tuple[Term, Collection[Term]]], around: Around
        ) -> Iterator[tuple[Term, Term | None]]:
            return _in_order([(n, v) for n, vs in nodes for v in vs if isinstance(v, wrong)])

        return check


COMPONENTS: list[type[Constraint]] = [
    ClassConstraintComponent,
    DatatypeConstraintComponent,
    NodeKindConstraintComponent,
]
