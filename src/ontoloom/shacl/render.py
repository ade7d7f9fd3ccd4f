"""Terms as people read them in messages and errors: Turtle syntax, prefixed names where a
prefix is known, blank nodes of the shapes graph by what they say."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ontoloom.shacl.paths import Path
from ontoloom.shacl.rdfgraph import RDF_FIRST, TripleIndex
from ontoloom.terms import BlankNode, Literal, NamedNode, Term, spo
from ontoloom.vocab import OWL, RDF, RDFS, SH, XSD

__all__ = ["WELL_KNOWN", "Renderer"]

# The vocabularies every shapes graph is written in.
WELL_KNOWN = {"rdf": RDF, "rdfs": RDFS, "owl": OWL, "xsd": XSD, "sh": SH}
_LOCAL = re.compile(r"[A-Za-z_][\w\-]*")
_BARE = {XSD + "integer", XSD + "decimal", XSD + "boolean"}


class Renderer:
    """Renders terms with ``prefixes`` (name → namespace) and blank nodes of ``graph``."""

    def __init__(
        self, prefixes: Mapping[str, str] | None = None, graph: TripleIndex | None = None
    ) -> None:
        merged = {**WELL_KNOWN, **(prefixes or {})}
        # Longest namespace first, so the most specific prefix wins.
        self.prefixes = sorted(merged.items(), key=lambda kv: -len(kv[1]))
        self.graph = graph

    def iri(self, iri: str) -> str:
        for name, namespace in self.prefixes:
            if namespace and iri.startswith(namespace):
                local = iri[len(namespace) :]
                if local == "" or _LOCAL.fullmatch(local):
                    return f"{name}:{local}"
        return f"<{iri}>"

    def term(self, term: Term | Path | None, depth: int = 0) -> str:
        if term is None:
            return ""
        if isinstance(term, Path):
            return self.path(term)
        if isinstance(term, NamedNode):
            return self.iri(term.value)
        if isinstance(term, Literal):
            if term.language:
                return f"{_quoted(term.value)}@{term.language}"
            if term.datatype.value in _BARE:
                return term.value
            if term.datatype.value == XSD + "string":
                return _quoted(term.value)
            return f"{_quoted(term.value)}^^{self.iri(term.datatype.value)}"
        return self.blank(term, depth)

    def blank(self, node: BlankNode, depth: int = 0) -> str:
        g = self.graph
        if g is None or depth > 2 or not g.triples_of(node):
            return str(node)
        if g.value(node, RDF_FIRST) is not None:
            return self.list(g.items(node), depth + 1)
        parts = [
            f"{self.term(p)} {self.term(o, depth + 1)}" for _, p, o in map(spo, g.triples_of(node))
        ]
        return "[ " + " ; ".join(sorted(parts)) + " ]"

    def list(self, members: list[Term], depth: int = 0) -> str:
        return "( " + " ".join(self.term(m, depth) for m in members) + " )"

    def path(self, path: Path) -> str:
        if path.kind == "predicate":
            assert path.iri is not None
            return self.iri(path.iri.value)
        if path.kind == "inverse":
            return "^" + self.path(path.parts[0])
        if path.kind in ("sequence", "alternative"):
            joiner = "/" if path.kind == "sequence" else "|"
            return "(" + joiner.join(self.path(p) for p in path.parts) + ")"
        suffix = {"zeroOrMore": "*", "oneOrMore": "+", "zeroOrOne": "?"}[path.kind]
        return f"({self.path(path.parts[0])}){suffix}"


def _quoted(text: str) -> str:
    return str(Literal(text))
