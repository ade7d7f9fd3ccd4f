"""Comparable keys for SHACL results, from any engine or from an expected report."""

from __future__ import annotations

from ontoloom.shacl import Result
from ontoloom.shacl.paths import parse_path
from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.terms import BlankNode, NamedNode, Term
from ontoloom.vocab import SH

SH_PATH = NamedNode(SH + "path")


def term_key(term: Term | None) -> str:
    if term is None:
        return ""
    if isinstance(term, BlankNode):
        return "_:blank"
    return str(term)


def shape_key(shape: Term, shapes: TripleIndex) -> str:
    if not isinstance(shape, BlankNode):
        return str(shape)
    path = shapes.value(shape, SH_PATH)
    return "_:shape " + (parse_path(shapes, path).sparql() if path is not None else "(node shape)")


def result_keys(
    results: list[Result], shapes: TripleIndex, *, messages: bool = False
) -> list[tuple[str, ...]]:
    """One key per result (so duplicates count); ``messages`` adds the result's messages."""
    return sorted(
        (
            term_key(r.focus),
            r.path_key() or "",
            term_key(r.value),
            shape_key(r.source_shape, shapes),
            str(r.component),
            str(r.severity),
            *((" | ".join(sorted(m.value for m in r.messages)),) if messages else ()),
        )
        for r in results
    )
