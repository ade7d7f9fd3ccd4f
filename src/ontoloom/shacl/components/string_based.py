"""String-based constraint components: sh:minLength, sh:maxLength, sh:pattern,
sh:languageIn, sh:uniqueLang. Blank nodes always violate the length and pattern checks."""

from __future__ import annotations

from ontoloom.shacl.compiler import Compiler, Source, Violation, is_true
from ontoloom.shacl.components import Constraint, sh_ints, sh_values
from ontoloom.shacl.shapes import Shape, ShapeSet
from ontoloom.store.terms import Literal


def _quoted(text: str) -> str:
    return str(Literal(text))


class _Length(Constraint):
    parameter = ""
    op = ""

    def __init__(self, n: int) -> None:
        self.n = n

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        return [cls(n) for n in sh_ints(shapes.graph, shape, cls.parameter)]

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        test = f"isBlank({v}) || !COALESCE(STRLEN(STR({v})) {self.op} {self.n}, false)"
        return Violation(f"{values} FILTER({test})", value=v)


class MinLengthConstraintComponent(_Length):
    component, name, parameter, op = "MinLengthConstraintComponent", "minLength", "minLength", ">="


class MaxLengthConstraintComponent(_Length):
    component, name, parameter, op = "MaxLengthConstraintComponent", "maxLength", "maxLength", "<="


class PatternConstraintComponent(Constraint):
    component = "PatternConstraintComponent"
    name = "pattern"

    def __init__(self, regex: str, flags: str | None) -> None:
        self.regex, self.flags = regex, flags

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        flags = sh_values(shapes.graph, shape, "flags")
        flag = flags[0].value if flags else None
        return [cls(p.value, flag) for p in sh_values(shapes.graph, shape, "pattern")]

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        args = _quoted(self.regex) + (f", {_quoted(self.flags)}" if self.flags else "")
        test = f"isBlank({v}) || !COALESCE(REGEX(STR({v}), {args}), false)"
        return Violation(f"{values} FILTER({test})", value=v)


class LanguageInConstraintComponent(Constraint):
    component = "LanguageInConstraintComponent"
    name = "languageIn"

    def __init__(self, tags: list[str]) -> None:
        self.tags = tags

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        g = shapes.graph
        return [cls([t.value for t in g.items(h)]) for h in sh_values(g, shape, "languageIn")]

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        matches = " || ".join(f"langMatches(lang({v}), {_quoted(t)})" for t in self.tags) or "false"
        # A value without a language tag has no tag to match, whatever the ranges ("" too).
        test = f"!isLiteral({v}) || lang({v}) = '' || !COALESCE({matches}, false)"
        return Violation(f"{values} FILTER({test})", value=v)


class UniqueLangConstraintComponent(Constraint):
    component = "UniqueLangConstraintComponent"
    name = "uniqueLang"

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        if shape.path is None:
            return []
        return [cls() for t in sh_values(shapes.graph, shape, "uniqueLang") if is_true(t)]

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        assert shape.path is not None
        path = shape.path.sparql()
        a, b, lang = cx.fresh("a"), cx.fresh("b"), cx.fresh("lang")
        text = (
            f"{focus} {path} {a} . {focus} {path} {b} . "
            f"FILTER(!sameTerm({a}, {b}) && lang({a}) != '' && LCASE(lang({a})) = LCASE(lang({b}))) "
            f"BIND(LCASE(lang({a})) AS {lang})"
        )
        return Violation(text, distinct=(lang,))


COMPONENTS: list[type[Constraint]] = [
    MinLengthConstraintComponent,
    MaxLengthConstraintComponent,
    PatternConstraintComponent,
    LanguageInConstraintComponent,
    UniqueLangConstraintComponent,
]
