"""SHACL functions (SHACL-AF sh:SPARQLFunction) called inside SPARQL queries — constraints,
validators, targets — written in as the expression they stand for.

The store knows no SHACL function, so a call is replaced by the function's body where that
body is one expression: ``SELECT (E AS ?r) WHERE {}``, ``SELECT ?r WHERE { BIND(E AS ?r) }``
or ``ASK { FILTER(E) }`` (true or false, as the ASK answers). Each parameter in ``E`` becomes
the call's argument (in parentheses), any other variable an unbound one of its own (as in the
function, where nothing binds it), and its prefixed names are written out with the
function's own prefixes. A call of any other function stays as written, and
:func:`~ontoloom.shacl.components.unsupported.function_calls` names it as not evaluated.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ontoloom.shacl.expressions import Expressions, NotEvaluable
from ontoloom.shacl.shapes import ShapesError, ShapeSet
from ontoloom.terms import NamedNode

__all__ = ["inline_functions", "written_out"]

_TOKENS = re.compile(
    r"(?P<skip>\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
    r"|#[^\n]*)"
    r"|(?P<iri><[^<>\"{}|^`\\\s]*>)"
    r"|(?P<var>[?$]\w+)"
    r"|(?P<pname>(?<![\w.-])(?:[A-Za-z][\w.-]*)?:(?:[\w-](?:[\w.-]*[\w-])?)?)"
    r"|(?P<open>\()|(?P<close>\))|(?P<comma>,)"
)
_PREFIX = re.compile(r"(?i)\bPREFIX\s+([\w.-]*):\s*<([^>]*)>")
_BODIES = (
    re.compile(
        r"(?is)^\s*SELECT\s+(?:DISTINCT\s+|REDUCED\s+)?\(\s*(?P<e>.+)\s+AS\s+[?$](?P<r>\w+)\s*\)"
        r"\s*(?:WHERE\s*)?\{\s*\}\s*$"
    ),
    re.compile(
        r"(?is)^\s*SELECT\s+(?:DISTINCT\s+|REDUCED\s+)?[?$](?P<r>\w+)\s*(?:WHERE\s*)?\{\s*"
        r"BIND\s*\(\s*(?P<e>.+)\s+AS\s+[?$](?P=r)\s*\)\s*\.?\s*\}\s*$"
    ),
    re.compile(r"(?is)^\s*ASK\s*(?:WHERE\s*)?\{\s*FILTER\s*\((?P<e>.+)\)\s*\.?\s*\}\s*$"),
)


def inline_functions(shapes: ShapeSet, prologue: str, query: str) -> str:
    """``query`` (``prologue``: the PREFIX lines it runs with) with every call of a SPARQL
    function of the shapes graph whose body is one expression written in; unchanged where
    there is none."""
    declared = shapes.functions()
    if not declared:
        return query
    prefixes = dict(_PREFIX.findall(prologue + "\n" + query))
    expressions = Expressions(shapes, lambda *_: False)
    return _Inliner(shapes, expressions, declared, prefixes).rewrite(query)


class _Inliner:
    def __init__(
        self, shapes: ShapeSet, expressions: Expressions, declared: set[str], prefixes: dict
    ) -> None:
        self.shapes, self.expressions, self.declared = shapes, expressions, declared
        self.prefixes = prefixes
        self.bodies: dict[str, tuple[str, list[str], dict[str, str]] | None] = {}

    def rewrite(self, text: str) -> str:
        out, last = [], 0
        tokens = list(_TOKENS.finditer(text))
        i = 0
        while i < len(tokens):
            token = tokens[i]
            iri = self._iri(token)
            body = self._body(iri) if iri is not None else None
            after = tokens[i + 1] if i + 1 < len(tokens) else None
            if (
                body is None
                or after is None
                or after.group("open") is None
                or text[token.end() : after.start()].strip()
            ):
                i += 1
                continue
            args, end_index = _arguments(text, tokens, i + 1)
            if end_index is None:
                break  # unbalanced: the parser has said where, when the query was read
            expression, parameters, own = body
            out += [text[last : token.start()], self._written(expression, parameters, own, args)]
            last = tokens[end_index].end()
            i = end_index + 1
        out.append(text[last:])
        return "".join(out)

    def _iri(self, token: re.Match[str]) -> str | None:
        if token.group("iri"):
            return token.group("iri")[1:-1]
        name = token.group("pname")
        if name:
            prefix, local = name.split(":", 1)
            if prefix in self.prefixes:
                return self.prefixes[prefix] + local
        return None

    def _body(self, iri: str) -> tuple[str, list[str], dict[str, str]] | None:
        """The function's expression, its parameters in call order and its own prefixes."""
        if iri not in self.declared:
            return None
        if iri not in self.bodies:
            self.bodies[iri] = None
            try:
                function = self.expressions.function(NamedNode(iri), f"the function <{iri}>")
            except (NotEvaluable, ShapesError):
                return None
            own = dict(_PREFIX.findall(function.query))
            query = _PREFIX.sub("", function.query)
            for pattern in _BODIES:
                match = pattern.match(query)
                if match is not None and _balanced(match.group("e")):
                    expression = match.group("e")
                    if function.ask:
                        expression = f"COALESCE(IF(({expression}), true, false), false)"
                    self.bodies[iri] = (expression, function.parameters, own)
                    break
        return self.bodies[iri]

    def _written(
        self, expression: str, parameters: list[str], own: dict[str, str], args: list[str]
    ) -> str:
        given = dict(zip(parameters, (self.rewrite(a) for a in args), strict=False))

        def variable(name: str) -> str:
            return f"({given[name]})" if name in given else f"?_ofnunbound_{name}"

        return f"({_rewritten(expression, own, variable)})"


def written_out(text: str, prologue: str) -> str:
    """``text`` (part of a query) with its prefixed names written out as full IRIs by the
    PREFIX lines of ``prologue``, so that it keeps its meaning inside another query."""
    return _rewritten(text, dict(_PREFIX.findall(prologue)), lambda name: f"?{name}")


def _rewritten(text: str, prefixes: dict[str, str], variable: Callable[[str], str]) -> str:
    out, last = [], 0
    for token in _TOKENS.finditer(text):
        if token.group("var"):
            written = variable(token.group("var")[1:])
        elif token.group("pname"):
            prefix, local = token.group("pname").split(":", 1)
            if prefix not in prefixes:
                continue
            written = f"<{prefixes[prefix]}{local}>"
        else:
            continue
        out += [text[last : token.start()], written]
        last = token.end()
    out.append(text[last:])
    return "".join(out)


def _arguments(
    text: str, tokens: list[re.Match[str]], open_index: int
) -> tuple[list[str], int | None]:
    """The argument texts of the call whose ``(`` is ``tokens[open_index]``, and the index
    of its ``)``."""
    depth, start = 0, tokens[open_index].end()
    args: list[str] = []
    for j in range(open_index, len(tokens)):
        t = tokens[j]
        if t.group("open"):
            depth += 1
        elif t.group("close"):
            depth -= 1
            if depth == 0:
                if text[start : t.start()].strip() or args:
                    args.append(text[start : t.start()])
                return args, j
        elif t.group("comma") and depth == 1:
            args.append(text[start : t.start()])
            start = t.end()
    return args, None


def _balanced(expression: str) -> bool:
    depth = 0
    for token in _TOKENS.finditer(expression):
        depth += 1 if token.group("open") else -1 if token.group("close") else 0
        if depth < 0:
            return False
    return depth == 0
