"""String-based constraint components: sh:minLength, sh:maxLength, sh:pattern,
sh:languageIn, sh:uniqueLang. Blank nodes always violate the length and pattern checks."""

from __future__ import annotations

from functools import lru_cache

from ontoloom.shacl.compiler import Compiler, Source, Violation
from ontoloom.shacl.components import Constraint
from ontoloom.shacl.components.params import Params
from ontoloom.shacl.paths import Path
from ontoloom.shacl.render import Renderer
from ontoloom.shacl.shapes import Shape, ShapeSet
from ontoloom.terms import Literal, NamedNode, Term
from ontoloom.vocab import XSD


def _quoted(text: str) -> str:
    return str(Literal(text))


class _Length(Constraint):
    per_value = True
    parameter = ""
    op = ""

    def __init__(self, n: int) -> None:
        self.n = n

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        n = Params(shapes, shape).length(cls.parameter)
        return [] if n is None else [cls(n)]

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        length = cx.as_written(
            v, lambda lexical, _: f"COALESCE(STRLEN({lexical}) {self.op} {self.n}, false)"
        )
        test = f"isBlank({v}) || !{length}"
        return Violation(f"{values} FILTER({test})", value=v)

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        n = Literal(str(self.n), datatype=NamedNode(XSD + "integer"))
        return f"String length not {self.op} {r.term(n)}"


class MinLengthConstraintComponent(_Length):
    component, name, parameter, op = "MinLengthConstraintComponent", "minLength", "minLength", ">="


class MaxLengthConstraintComponent(_Length):
    component, name, parameter, op = "MaxLengthConstraintComponent", "maxLength", "maxLength", "<="


class PatternConstraintComponent(Constraint):
    per_value = True
    component = "PatternConstraintComponent"
    name = "pattern"

    def __init__(self, regex: str, flags: str | None) -> None:
        self.regex, self.flags = regex, flags

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        params = Params(shapes, shape)
        flags_term = params.at_most_one("flags")
        if flags_term is not None and not isinstance(flags_term, Literal):
            raise params.error("flags", f"{flags_term} is not a literal", 'write flags such as "i"')
        flags = flags_term.value if isinstance(flags_term, Literal) else None
        out: list[Constraint] = []
        for pattern in params.literals("pattern"):
            if not _regex_ok(pattern.value, flags):
                raise params.error(
                    "pattern",
                    f"{_quoted(pattern.value)}"
                    + (f" with flags {_quoted(flags)}" if flags else "")
                    + " is not a valid regular expression",
                    "write an XPath/SPARQL regular expression (as SPARQL REGEX takes)",
                )
            out.append(cls(pattern.value, flags))
        return out

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        args = _quoted(self.regex) + (f", {_quoted(self.flags)}" if self.flags else "")
        matches = cx.as_written(v, lambda lexical, _: f"COALESCE(REGEX({lexical}, {args}), false)")
        test = f"isBlank({v}) || !{matches}"
        return Violation(f"{values} FILTER({test})", value=v)

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        return f"Value does not match pattern '{self.regex}'"


@lru_cache(maxsize=256)
def _regex_ok(regex: str, flags: str | None) -> bool:
    """Whether the engine that runs the check accepts the regular expression: an invalid
    one is an evaluation error that the violation test would read as "no match"."""
    from ontoloom.store import scratch

    args = _quoted(regex) + (f", {_quoted(flags)}" if flags else "")
    rows = scratch().select(f'SELECT (REGEX("", {args}) AS ?ok) WHERE {{}}')
    return any(row.get("ok") is not None for row in rows)


class LanguageInConstraintComponent(Constraint):
    per_value = True
    component = "LanguageInConstraintComponent"
    name = "languageIn"

    def __init__(self, tags: list[str]) -> None:
        self.tags = tags

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        params = Params(shapes, shape)
        params.at_most_one("languageIn")
        out: list[Constraint] = []
        for members in params.lists("languageIn"):
            for m in members:
                if not isinstance(m, Literal) or m.language:
                    raise params.error(
                        "languageIn",
                        f"holds {shapes.label(m)}, not a language range string",
                        'list plain strings such as ( "en" "fr" )',
                    )
            out.append(cls([m.value for m in members if isinstance(m, Literal)]))
        return out

    def pattern(self, cx: Compiler, shape: Shape, focus: str, source: Source | None) -> Violation:
        values, v = cx.value_nodes(shape, focus)
        matches = " || ".join(f"langMatches(lang({v}), {_quoted(t)})" for t in self.tags) or "false"
        # A value without a language tag has no tag to match, whatever the ranges ("" too).
        test = f"!isLiteral({v}) || lang({v}) = '' || !COALESCE({matches}, false)"
        return Violation(f"{values} FILTER({test})", value=v)

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        return f"String language is not in {r.list([Literal(t) for t in self.tags])}"


class UniqueLangConstraintComponent(Constraint):
    per_value = True
    component = "UniqueLangConstraintComponent"
    name = "uniqueLang"

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        params = Params(shapes, shape)
        unique = params.boolean("uniqueLang")
        params.property_shape_only("uniqueLang")
        return [cls()] if unique else []

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

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str:
        return "More than one String shares the same Language"


COMPONENTS: list[type[Constraint]] = [
    MinLengthConstraintComponent,
    MaxLengthConstraintComponent,
    PatternConstraintComponent,
    LanguageInConstraintComponent,
    UniqueLangConstraintComponent,
]
