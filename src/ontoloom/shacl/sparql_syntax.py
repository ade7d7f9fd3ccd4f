"""What a SPARQL query says, read with a real SPARQL parser (rdflib's), never regexes.

The facts a shapes compiler needs are small — the query form, the outer projection, every
triple pattern with its property path, which subquery scope it belongs to, and the
features of note (VALUES, MINUS, SERVICE, subqueries, aggregates, assignments) — so they
are kept as plain data and cached on disk by the query's hash: importing rdflib costs
~260 ms, which a CLI write must not pay for a query it has analysed before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = [
    "Edge",
    "QueryFacts",
    "SparqlSyntaxError",
    "analyse",
    "path_predicates",
    "service_endpoints",
]

_VERSION = "9"  # bump when the facts below change shape (or how they are read)
# A path in plain data: ("iri", "<…>") | ("var", "?p") | ("inv", p) | ("seq", (p, …)) |
# ("alt", (p, …)) | ("star" | "plus" | "opt", p) | ("neg", (p, …)) where negated members
# are "iri" or "inv" of an "iri".
PathData = tuple[Any, ...]


class SparqlSyntaxError(ValueError):
    """A query that does not parse. ``line``/``column`` are 1-based when known;
    ``prefix`` names an undeclared prefix."""

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        prefix: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message, self.line, self.column, self.prefix = message, line, column, prefix


@dataclass(frozen=True)
class Edge:
    """One triple pattern: terms are ``?name`` for variables (blank nodes of the query
    become variables too), N-Triples text for constants."""

    subject: str
    path: PathData
    object: str
    scope: int  # 0: the outer query; each subquery has its own number
    graph: str | None = None  # the GRAPH term around it, if any


@dataclass(frozen=True)
class QueryFacts:
    form: str  # SELECT | ASK | CONSTRUCT | DESCRIBE
    projection: tuple[str, ...]  # outer projected variable names, without "?"
    edges: tuple[Edge, ...]
    features: frozenset[
        str
    ]  # VALUES, MINUS, SERVICE, SUBQUERY, AGGREGATE, BIND, BIND_THIS, FROM, SLICE…
    assigned: frozenset[str]  # variables assigned by BIND, AS or VALUES, anywhere
    subquery_projections: tuple[tuple[str, ...], ...] = ()  # scope n → projection of scope n
    # The endpoint of every SERVICE, in the order written: N-Triples text for an IRI (prefixed
    # names and relative IRIs resolved), ``?name`` for a variable.
    services: tuple[str, ...] = ()
    # The IRIs called as functions (``ex:f(…)``; XSD casts included), in parse order.
    functions: tuple[str, ...] = ()
    # What judges a literal by its term rather than its value (a store that keeps literals
    # by value answers these otherwise than the terms as written): each call of a function
    # that reads a lexical form, datatype or identity, with the variables its arguments
    # read ("STR", ("x",)); the variables kept distinct (DISTINCT, REDUCED, COUNT(DISTINCT …);
    # "*" for all), grouped by, or listed in VALUES; and the typed literals the query
    # matches as terms (triple pattern objects, VALUES rows, sameTerm): lexical form, datatype.
    term_reads: tuple[tuple[str, tuple[str, ...]], ...] = ()
    distinct: tuple[str, ...] = ()
    grouped: tuple[str, ...] = ()
    listed: tuple[str, ...] = ()
    literals: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "form": self.form,
            "projection": list(self.projection),
            "edges": [[e.subject, e.path, e.object, e.scope, e.graph] for e in self.edges],
            "features": sorted(self.features),
            "assigned": sorted(self.assigned),
            "subquery_projections": [list(p) for p in self.subquery_projections],
            "services": list(self.services),
            "functions": list(self.functions),
            "term_reads": [[name, list(v)] for name, v in self.term_reads],
            "distinct": list(self.distinct),
            "grouped": list(self.grouped),
            "listed": list(self.listed),
            "literals": [list(pair) for pair in self.literals],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> QueryFacts:
        return cls(
            form=data["form"],
            projection=tuple(data["projection"]),
            edges=tuple(Edge(s, _tuple(p), o, n, g) for s, p, o, n, g in data["edges"]),
            features=frozenset(data["features"]),
            assigned=frozenset(data["assigned"]),
            subquery_projections=tuple(tuple(p) for p in data["subquery_projections"]),
            services=tuple(data["services"]),
            functions=tuple(data["functions"]),
            term_reads=tuple((name, tuple(v)) for name, v in data["term_reads"]),
            distinct=tuple(data["distinct"]),
            grouped=tuple(data["grouped"]),
            listed=tuple(data["listed"]),
            literals=tuple((lexical, datatype) for lexical, datatype in data["literals"]),
        )


def _tuple(value: Any) -> Any:
    return tuple(_tuple(v) for v in value) if isinstance(value, list) else value


def path_predicates(path: PathData, inverse: bool = False) -> set[tuple[str, bool]]:
    """Every predicate a path walks, with whether it walks it backwards; ``"?"`` stands
    for any predicate (a variable or a negated property set)."""
    kind = path[0]
    if kind == "iri":
        return {(path[1], inverse)}
    if kind == "var":
        return {("?", inverse)}
    if kind == "neg":
        # !(p) walks every other predicate forwards, !(^p) every other one backwards.
        return {("?", inverse != (member[0] == "inv")) for member in path[1]}
    if kind == "inv":
        return path_predicates(path[1], not inverse)
    parts = path[1] if kind in ("seq", "alt") else (path[1],)
    out: set[tuple[str, bool]] = set()
    for part in parts:
        out |= path_predicates(part, inverse)
    return out


# -- analysis ---------------------------------------------------------------------------------
def analyse(query: str) -> QueryFacts:
    """The facts of ``query``. :raises SparqlSyntaxError: when it does not parse."""
    key = hashlib.sha256(f"{_VERSION}\n{query}".encode()).hexdigest()
    return _analyse_cached(key, query)


@lru_cache(maxsize=512)
def _analyse_cached(key: str, query: str) -> QueryFacts:
    directory = _cache_dir()
    path = directory / f"{key}.json" if directory is not None else None
    if path is not None:
        known: SparqlSyntaxError | None = None
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            data = json.loads(path.read_text(encoding="utf-8"))
            if "error" not in data:
                return QueryFacts.from_json(data)
            known = SparqlSyntaxError(
                data["error"], line=data["line"], column=data["column"], prefix=data["prefix"]
            )
        if known is not None:  # (raised out here: it is a ValueError, which a bad file is)
            raise known
    try:
        facts = _Reader().read(query)
        record: dict[str, Any] = facts.to_json()
    except SparqlSyntaxError as exc:
        record = {"error": exc.message, "line": exc.line, "column": exc.column}
        record["prefix"] = exc.prefix
        if path is not None:
            _write(path, record)
        raise
    if path is not None:
        _write(path, record)
    return facts


def service_endpoints(query: str) -> tuple[str, ...]:
    """The endpoint of every SERVICE in ``query`` (see :attr:`QueryFacts.services`).

    A ``#`` comment ends at a carriage return as well as a line feed (SPARQL 1.1 §19.6, and
    Oxigraph reads it so); rdflib ends it at a line feed only, so what follows a lone CR
    would hide from rdflib a SERVICE that Oxigraph runs. Read with every CR as a LF: the
    structure is the same (a raw CR or LF is whitespace, or part of a long string), and an
    endpoint can hold neither.

    >>> service_endpoints("SELECT * WHERE { ?s ?p ?o # note\\rSERVICE <http://x/> { ?a ?b ?c }\\n}")
    ('<http://x/>',)

    :raises SparqlSyntaxError: when the query does not parse.
    """
    return analyse(query.replace("\r", "\n")).services


def _cache_dir() -> Path | None:
    base = os.environ.get("ONTOLOOM_CACHE") or os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base else Path.home() / ".cache"
    directory = root / "ontoloom" / "sparql"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # no writable cache: analyse every time, only slower
    return directory


def _write(path: Path, record: dict[str, Any]) -> None:
    import tempfile  # (imported where used: a plain validation never writes the cache)

    with contextlib.suppress(OSError):
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(record, f)
        os.replace(tmp, path)


class _Reader:
    """Walks rdflib's algebra (and the parse trees it leaves inside EXISTS)."""

    def __init__(self) -> None:
        self.edges: list[Edge] = []
        self.features: set[str] = set()
        self.assigned: set[str] = set()
        self.projections: list[tuple[str, ...]] = []
        self.services: list[str] = []
        self.functions: dict[str, None] = {}
        # rdflib projects a GROUP BY variable as (SAMPLE(?v) AS ?v): not an assignment.
        self.group_samples: set[tuple[str, str]] = set()
        self.term_reads: list[tuple[str, tuple[str, ...]]] = []
        self.distinct: set[str] = set()
        self.grouped: set[str] = set()
        self.listed: set[str] = set()
        self.literals: dict[tuple[str, str], None] = {}

    def read(self, query: str) -> QueryFacts:
        from pyparsing import ParseException
        from rdflib.plugins.sparql.algebra import translateQuery
        from rdflib.plugins.sparql.parser import parseQuery

        try:
            parsed = parseQuery(query)
        except ParseException as exc:
            raise SparqlSyntaxError(
                f"SPARQL syntax error at line {exc.lineno}, column {exc.col}: {exc.msg}",
                line=exc.lineno,
                column=exc.col,
            ) from None
        except RecursionError:
            # rdflib's grammar recurses per nesting level, and loops on some nestings (a
            # SERVICE inside FILTER EXISTS inside a SERVICE): unreadable, never a crash.
            raise SparqlSyntaxError("the query is nested too deeply for rdflib to read") from None
        try:
            translated = translateQuery(parsed)
        except RecursionError:
            raise SparqlSyntaxError("the query is nested too deeply for rdflib to read") from None
        except Exception as exc:  # rdflib raises bare Exception for unknown prefixes
            text = str(exc)
            if text.startswith("Unknown namespace prefix"):
                prefix = text.split(":", 1)[-1].strip()
                raise SparqlSyntaxError(
                    f"the prefix {prefix}: is not declared", prefix=prefix
                ) from None
            raise SparqlSyntaxError(f"SPARQL error: {text}") from None
        algebra = translated.algebra
        form = algebra.name.removesuffix("Query").upper()
        if _get(algebra, "datasetClause"):
            self.features.add("FROM")
        projection = tuple(str(v) for v in (_get(algebra, "PV") or []))
        self._find_group_samples(algebra)
        self._walk(algebra.p, 0, None, top=True)
        return QueryFacts(
            form=form,
            projection=projection if form == "SELECT" else (),
            edges=tuple(self.edges),
            features=frozenset(self.features),
            assigned=frozenset(self.assigned),
            subquery_projections=tuple(self.projections),
            services=tuple(self.services),
            functions=tuple(self.functions),
            term_reads=tuple(self.term_reads),
            distinct=tuple(sorted(self.distinct)),
            grouped=tuple(sorted(self.grouped)),
            listed=tuple(sorted(self.listed)),
            literals=tuple(self.literals),
        )

    def _find_group_samples(self, node: Any) -> None:
        from rdflib.plugins.sparql.parserutils import CompValue

        if isinstance(node, list | tuple):
            for item in node:
                self._find_group_samples(item)
        elif isinstance(node, CompValue):
            if node.name == "Aggregate_Sample":
                self.group_samples.add((str(_get(node, "res")), str(_get(node, "vars"))))
            for key, value in _items(node):
                if key != "_vars":
                    self._find_group_samples(value)

    def _new_scope(self, projection: list[Any]) -> int:
        self.features.add("SUBQUERY")
        self.projections.append(tuple(str(v) for v in projection))
        return len(self.projections)

    def _walk(self, node: Any, scope: int, graph: str | None, top: bool = False) -> None:
        from rdflib.plugins.sparql.parserutils import CompValue

        if isinstance(node, list | tuple):
            for item in node:
                self._walk(item, scope, graph)
            return
        if isinstance(node, dict) and not isinstance(node, CompValue):
            for item in node.values():
                self._walk(item, scope, graph)
            return
        if not isinstance(node, CompValue):
            return
        name = node.name
        if top and name in ("Distinct", "Reduced", "Slice"):
            # The outer query's modifiers wrap its Project: still the outer scope.
            if name == "Slice":
                self.features.add("SLICE")
            self._term_reads(node, name)
            self._walk(node.p, scope, graph, top=True)
            return
        if name == "Project" and not top:
            scope = self._new_scope(_get(node, "PV") or [])
        elif name == "SubSelect":  # inside EXISTS, rdflib keeps the parse tree
            scope = self._new_scope(_subselect_projection(node))
        if name in ("BGP", "TriplesBlock"):
            self._triples(_get(node, "triples") or [], scope, graph)
            return
        if name == "Graph" or name == "GraphGraphPattern":
            self.features.add("GRAPH")
            graph = _term(_get(node, "term"))
        if name in ("ServiceGraphPattern",) or name.startswith("Service"):
            self.features.add("SERVICE")
            self.services.append(_term(_get(node, "term")))
        if name == "Function" and _get(node, "iri") is not None:
            self.functions[str(_get(node, "iri"))] = None
        self._term_reads(node, name)
        if name in ("values", "InlineData", "ValuesClause"):
            self.features.add("VALUES")
            for row in _get(node, "res") or []:
                self.assigned.update(str(v) for v in row)
                self.listed.update(str(v) for v in row)
                if isinstance(row, dict):
                    self._typed_literals(list(row.values()))
            for var in _get(node, "var") or []:
                self.assigned.add(str(var))
                self.listed.add(str(var))
            self._typed_literals(_get(node, "value") or [])
        if name in ("Minus", "MinusGraphPattern"):
            self.features.add("MINUS")
        if name == "Slice" or (name == "SubSelect" and _get(node, "limitoffset") is not None):
            self.features.add("SLICE")
        if name in ("Extend", "Bind"):
            var, expr = _get(node, "var"), _get(node, "expr")
            if var is not None and (str(expr), str(var)) not in self.group_samples:
                self.features.add("BIND")
                self.assigned.add(str(var))
                if _mentions(expr, "this"):
                    self.features.add("BIND_THIS")
        if name in ("AggregateJoin", "Group") or name.startswith("Aggregate_"):
            self.features.add("AGGREGATE")
        if name in ("Builtin_EXISTS", "Builtin_NOTEXISTS"):
            self.features.add("EXISTS")
        if name == "vars" and _get(node, "evar") is not None:  # (expr AS ?v) in a parse tree
            self.assigned.add(str(_get(node, "evar")))
        for key, value in _items(node):
            if key == "_vars":
                continue
            self._walk(value, scope, graph)

    def _triples(self, triples: list[Any], scope: int, graph: str | None) -> None:
        rows: list[Any] = []
        for item in triples:
            if isinstance(item, list | tuple) and len(item) % 3 == 0 and len(item) > 0:
                rows.extend(tuple(item[i : i + 3]) for i in range(0, len(item), 3))
        for s, p, o in rows:
            self.edges.append(Edge(_term(s), _path(p), _term(o), scope, graph))
            self._typed_literals([s, o])

    def _term_reads(self, node: Any, name: str) -> None:
        """What of ``node`` judges a literal by its term (see :attr:`QueryFacts.term_reads`)."""
        if name in _TERM_FUNCTIONS or (name == "Function" and _get(node, "iri") is not None):
            called = str(_get(node, "iri")) if name == "Function" else _TERM_FUNCTIONS[name]
            self.term_reads.append((called, tuple(sorted(_variables(node)))))
            if name == "Builtin_sameTerm":
                self._typed_literals([_get(node, "arg1"), _get(node, "arg2")])
        if name.startswith("Aggregate") and _get(node, "distinct"):
            self.distinct.update(_variables(node))  # COUNT(DISTINCT ?v) counts terms
        if name in ("Distinct", "Reduced") or (name == "SubSelect" and _get(node, "modifier")):
            projected = _projected_below(node) if name != "SubSelect" else None
            if name == "SubSelect":
                projected = [str(v) for v in _subselect_projection(node)] or None
            self.distinct.update(projected if projected else ["*"])
        if name == "Group":
            self.grouped.update(_variables(_get(node, "expr") or []))
        if name == "GroupClause":
            self.grouped.update(_variables(_get(node, "condition") or []))

    def _typed_literals(self, terms: list[Any]) -> None:
        from rdflib import Literal as RdfLiteral

        for term in terms:
            if isinstance(term, RdfLiteral) and term.datatype is not None:
                self.literals[(str(term), str(term.datatype))] = None


# rdflib's names of the functions that read a literal's lexical form, datatype or
# identity, and how the query wrote them.
_TERM_FUNCTIONS = {
    f"Builtin_{n}": n
    for n in [
        "STR",
        "LANG",
        "LANGMATCHES",
        "DATATYPE",
        "sameTerm",
        "REGEX",
        "STRLEN",
        "SUBSTR",
        "UCASE",
        "LCASE",
        "STRSTARTS",
        "STRENDS",
        "CONTAINS",
        "STRBEFORE",
        "STRAFTER",
        "ENCODE_FOR_URI",
        "CONCAT",
        "REPLACE",
        "MD5",
        "SHA1",
        "SHA256",
        "SHA384",
        "SHA512",
        "STRDT",
        "STRLANG",
        "isNUMERIC",
    ]
} | {"Aggregate_GroupConcat": "GROUP_CONCAT"}


def _variables(expr: Any) -> set[str]:
    """Every variable an expression (of the algebra or the parse tree) reads."""
    from rdflib import Variable
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(expr, Variable):
        return {str(expr)}
    out: set[str] = set()
    if isinstance(expr, CompValue):
        for key, value in _items(expr):
            if key != "_vars":
                out |= _variables(value)
    elif isinstance(expr, dict):
        for key, value in expr.items():
            if key != "_vars":
                out |= _variables(value)
    elif isinstance(expr, list | tuple):
        for value in expr:
            out |= _variables(value)
    return out


def _projected_below(node: Any) -> list[str] | None:
    """The projection of the first Project under a Distinct (None: not found)."""
    from rdflib.plugins.sparql.parserutils import CompValue

    while isinstance(node, CompValue):
        if node.name == "Project":
            return [str(v) for v in (_get(node, "PV") or [])]
        node = _get(node, "p")
    return None


def _mentions(expr: Any, name: str) -> bool:
    """Whether an expression of the parse tree reads the variable ``name``."""
    from rdflib import Variable

    if isinstance(expr, Variable):
        return str(expr) == name
    if isinstance(expr, dict):
        return any(_mentions(v, name) for k, v in expr.items() if k != "_vars")
    if isinstance(expr, list | tuple):
        return any(_mentions(v, name) for v in expr)
    return False


def _get(node: Any, key: str) -> Any:
    """A key of an rdflib CompValue (see :func:`_items`), or None (its ``get`` returns the
    key when missing)."""
    if key in vars(node):
        return vars(node)[key]
    return node[key] if key in node else None  # noqa: SIM401


def _items(node: Any) -> list[tuple[str, Any]]:
    """The keys of an rdflib CompValue and their values, as its attributes give them:
    translating (NOT) EXISTS sets ``node.graph``, an attribute over the key, and leaves
    under the key the parse tree it took the FILTERs out of."""
    overrides = vars(node)
    return [(key, overrides.get(key, value)) for key, value in node.items()]


def _subselect_projection(node: Any) -> list[Any]:
    out = []
    for item in _get(node, "projection") or []:
        var = _get(item, "var") if hasattr(item, "keys") else None
        evar = _get(item, "evar") if hasattr(item, "keys") else None
        if var is not None or evar is not None:
            out.append(var if var is not None else evar)
    return out


def _term(term: Any) -> str:
    from rdflib import BNode, Variable

    if term is None:
        return "?"
    if isinstance(term, Variable):
        return f"?{term}"
    if isinstance(term, BNode):  # a blank node in a pattern is a variable no one projects
        return f"?_:{term}"
    return str(term.n3())


def _path(p: Any) -> PathData:
    from rdflib import URIRef, Variable
    from rdflib.paths import AlternativePath, InvPath, MulPath, NegatedPath, SequencePath

    if isinstance(p, Variable):
        return ("var", f"?{p}")
    if isinstance(p, URIRef):
        return ("iri", p.n3())
    if isinstance(p, InvPath):
        return ("inv", _path(p.arg))
    if isinstance(p, SequencePath):
        return ("seq", tuple(_path(a) for a in p.args))
    if isinstance(p, AlternativePath):
        return ("alt", tuple(_path(a) for a in p.args))
    if isinstance(p, MulPath):
        return ({"*": "star", "+": "plus", "?": "opt"}[p.mod], _path(p.path))
    if isinstance(p, NegatedPath):
        return ("neg", tuple(_path(a) for a in p.args))
    if getattr(p, "name", None) == "InversePath":
        # rdflib drops the IRI of ^iri inside a negated set: any predicate, backwards.
        return ("inv", ("var", "?"))
    return ("var", "?")  # anything else: assume it may walk any predicate
