"""Terms as people read them in messages and errors: Turtle syntax, prefixed names where a
prefix is known, blank nodes of the shapes graph by what they say."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ontoloom.shacl.paths import Path
from ontoloom.shacl.rdfgraph import RDF_FIRST, TripleIndex
from ontoloom.terms import BlankNode, Literal, NamedNode, Term, spo
from ontoloom.vocab import OWL, RDF, RDFS, SH, XSD, XSD_INTEGER_TYPES

__all__ = ["WELL_KNOWN", "Renderer"]

# The vocabularies every shapes graph is written in.
WELL_KNOWN = {"rdf": RDF, "rdfs": RDFS, "owl": OWL, "xsd": XSD, "sh": SH}
_LOCAL = re.compile(r"[A-Za-z_][\w\-]*")
_BARE = {XSD + "integer", XSD + "decimal", XSD + "boolean"}


class Renderer:
    """Renders terms with ``prefixes`` (name → namespace) and blank nodes of ``graph``."""

    def __init__(
        self,
        prefixes: Mapping[str, str] | None = None,
        graph: TripleIndex | None = None,
        *,
        pyshacl_style: bool = False,
    ) -> None:
        merged = {**WELL_KNOWN, **(prefixes or {})}
        # Longest namespace first, so the most specific prefix wins.
        self.prefixes = sorted(merged.items(), key=lambda kv: -len(kv[1]))
        self.graph = graph
        # terms as pySHACL writes them in its messages and its text report (`validate` is its
        # drop-in): `Literal("1", datatype=xsd:integer)` for Turtle's `1`, blank nodes and
        # paths as its `stringify` functions write them
        self.pyshacl_style = pyshacl_style

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
            if self.pyshacl_style:
                return self.pyshacl_literal(term)
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
        if self.pyshacl_style:
            return self.pyshacl_blank(node, depth)
        if g is None or depth > 2 or not g.triples_of(node):
            return str(node)
        if g.value(node, RDF_FIRST) is not None:
            return self.list(g.items(node), depth + 1)
        parts = [
            f"{self.term(p)} {self.term(o, depth + 1)}" for _, p, o in map(spo, g.triples_of(node))
        ]
        return "[ " + " ; ".join(sorted(parts)) + " ]"

    def pyshacl_blank(self, node: BlankNode, depth: int = 0) -> str:
        """pySHACL's ``stringify_blank_node``: the objects of one predicate sorted and joined
        by commas, the predicates sorted, twelve levels deep; a node it holds nothing of is
        ``[ ]``."""
        g = self.graph
        if depth >= 12:
            return "<http://recursion.too.deep>"
        triples = list(map(spo, g.triples_of(node))) if g is not None else []
        if not triples:
            return "[ ]"
        if g is not None and g.value(node, RDF_FIRST) is not None:
            return "( " + " ".join(self.term(m, depth + 1) for m in g.items(node)) + " )"
        by_predicate: dict[str, list[str]] = {}
        for _, p, o in triples:
            by_predicate.setdefault(self.term(p), []).append(self.term(o, depth + 1))
        parts = [f"{p} {', '.join(sorted(os))}" for p, os in sorted(by_predicate.items())]
        return "[ " + " ; ".join(parts) + " ]"

    def path_node(self, path: Path) -> str:
        """A path as pySHACL writes it: the RDF that states it (``[ sh:inversePath ex:p ]``,
        a sequence as the list ``( ex:p ex:q )``)."""
        if path.kind == "predicate":
            assert path.iri is not None
            return self.iri(path.iri.value)
        parts = [self.path_node(p) for p in path.parts]
        if path.kind == "sequence":
            return "( " + " ".join(parts) + " )"
        if path.kind == "alternative":
            return f"[ sh:alternativePath ( {' '.join(parts)} ) ]"
        return f"[ sh:{path.kind}Path {parts[0]} ]"

    def pyshacl_literal(self, term: Literal) -> str:
        """pySHACL's ``stringify_literal``: the lexical form, its value where rdflib reads
        another one (``"01" = 1``), the language or the datatype (none for xsd:string, as
        rdflib keeps a plain literal)."""
        datatype = term.datatype.value
        # The commonest forms, written without importing rdflib (a quarter second of a small
        # file's run): rdflib reads no other value from a string; an integer type's canonical
        # form is its value's text, in range or not (out of range, rdflib reads no value and
        # keeps the form); a hexBinary form that is not pairs of hex digits has no value.
        if term.language:
            return f'Literal("{term.value}", lang={term.language})'
        if datatype == XSD + "string":
            return f'Literal("{term.value}")'
        if (datatype in XSD_INTEGER_TYPES and _CANONICAL_INTEGER.fullmatch(term.value)) or (
            datatype == XSD + "hexBinary" and not _HEX_PAIRS.fullmatch(term.value)
        ):
            return f'Literal("{term.value}", datatype={self.iri(datatype)})'
        import warnings

        import rdflib

        with warnings.catch_warnings():  # rdflib warns of ill-typed lexical forms
            warnings.simplefilter("ignore")
            if term.language:
                node = rdflib.Literal(term.value, lang=term.language)
            elif datatype == XSD + "string":
                node = rdflib.Literal(term.value)
            else:
                node = rdflib.Literal(term.value, datatype=rdflib.URIRef(datatype))
            value = node.value
        lexical = str(node)  # rdflib's lexical form: normalised where it reads a value
        shown = None if value is None else str(value)
        if shown is not None and " object at 0x" in shown:
            shown = shown[: shown.find(" object at 0x")]
        text = (
            f'"{lexical}" = {shown}' if shown is not None and shown != lexical else f'"{lexical}"'
        )
        if node.language:
            text += f", lang={node.language}"
        if node.datatype:
            text += f", datatype={self.iri(str(node.datatype))}"
        return f"Literal({text})"

    def list(self, members: list[Term], depth: int = 0) -> str:
        return "( " + " ".join(self.term(m, depth) for m in members) + " )"

    def path(self, path: Path) -> str:
        if path.kind == "predicate":
            assert path.iri is not None
            return self.iri(path.iri.value)
        if self.pyshacl_style:
            return self.path_node(path)
        if path.kind == "inverse":
            return "^" + self.path(path.parts[0])
        if path.kind in ("sequence", "alternative"):
            joiner = "/" if path.kind == "sequence" else "|"
            return "(" + joiner.join(self.path(p) for p in path.parts) + ")"
        suffix = {"zeroOrMore": "*", "oneOrMore": "+", "zeroOrOne": "?"}[path.kind]
        return f"({self.path(path.parts[0])}){suffix}"


_CANONICAL_INTEGER = re.compile(r"0|-?[1-9][0-9]*")
_HEX_PAIRS = re.compile(r"(?:[0-9a-fA-F]{2})*")


def _quoted(text: str) -> str:
    return str(Literal(text))
