"""Validation results as a W3C ``sh:ValidationReport`` graph (Turtle out)."""

from __future__ import annotations

from collections.abc import Iterable
from io import BytesIO

from ontoloom.shacl.engine import Report, Result
from ontoloom.shacl.paths import Path
from ontoloom.shacl.shapes import ShapeSet
from ontoloom.terms import BlankNode, Literal, NamedNode, RdfFormat, Term, Triple, serialize
from ontoloom.vocab import RDF, SH, XSD

__all__ = ["report_triples", "report_turtle"]


def _sh(local: str) -> NamedNode:
    return NamedNode(SH + local)


def report_triples(
    results: Iterable[Result],
    shapes: ShapeSet | None = None,
    *,
    conforms: bool | None = None,
    share_paths: bool = False,
) -> list[Triple]:
    """The report graph: one sh:ValidationResult per result. It stands on its own: a path is
    written out as a fresh structure per result (as the W3C test suite compares them), and
    a blank source shape or source constraint is described by its triples in the shapes
    graph, once, as pySHACL does. ``share_paths``: one structure per distinct path, which
    every result on it points at, as pySHACL's own report graph does. ``conforms`` defaults
    to "no results"; pySHACL's allow-warnings mode reports true beside results of the
    allowed severities."""
    results = list(results)
    described: dict[Term, None] = {}
    paths: dict[str, Term] = {}
    report = BlankNode()
    out = [
        Triple(report, NamedNode(RDF + "type"), _sh("ValidationReport")),
        Triple(
            report,
            _sh("conforms"),
            Literal(
                "true" if (not results if conforms is None else conforms) else "false",
                datatype=NamedNode(XSD + "boolean"),
            ),
        ),
    ]
    for r in results:
        node = BlankNode()
        out += [
            Triple(report, _sh("result"), node),
            Triple(node, NamedNode(RDF + "type"), _sh("ValidationResult")),
            Triple(node, _sh("focusNode"), r.focus),
            Triple(node, _sh("resultSeverity"), r.severity),
            Triple(node, _sh("sourceConstraintComponent"), r.component),
            Triple(node, _sh("sourceShape"), r.source_shape),
        ]
        if r.path is not None:
            key = r.path_key() or ""
            if share_paths and key in paths:
                out.append(Triple(node, _sh("resultPath"), paths[key]))
            else:
                head, triples = path_triples(r.path, shapes)
                paths[key] = head
                out += [Triple(node, _sh("resultPath"), head), *triples]
        if r.value is not None:
            out.append(Triple(node, _sh("value"), r.value))
        if r.source_constraint is not None:
            out.append(Triple(node, _sh("sourceConstraint"), r.source_constraint))
        out += [Triple(node, _sh("resultMessage"), m) for m in r.messages]
        for term in (r.source_shape, r.source_constraint):
            if isinstance(term, BlankNode):
                described[term] = None
    if shapes is not None:
        for term in described:
            out += list(shapes.graph.describe(term))
    return out


def path_triples(path: Path | Term, shapes: ShapeSet | None = None) -> tuple[Term, list[Triple]]:
    """A path as a node and the triples of a fresh blank structure describing it."""
    if not isinstance(path, Path):
        if isinstance(path, BlankNode) and shapes is not None:
            return path, list(shapes.graph.describe(path))
        return path, []
    if path.is_predicate:
        assert path.iri is not None
        return path.iri, []
    node = BlankNode()
    out: list[Triple] = []
    parts = [path_triples(p) for p in path.parts]
    for _, triples in parts:
        out += triples
    if path.kind in ("sequence", "alternative"):
        head = _list(out, [n for n, _ in parts])
        if path.kind == "sequence":
            return head, out
        out.append(Triple(node, _sh("alternativePath"), head))
    else:
        out.append(Triple(node, _sh(path.kind + "Path"), parts[0][0]))
    return node, out


def _list(out: list[Triple], members: list[Term]) -> Term:
    head: Term = NamedNode(RDF + "nil")
    for member in reversed(members):
        cell = BlankNode()
        out += [
            Triple(cell, NamedNode(RDF + "first"), member),
            Triple(cell, NamedNode(RDF + "rest"), head),
        ]
        head = cell
    return head


def report_turtle(
    report: Report, shapes: ShapeSet | None = None, *, conforms: bool | None = None
) -> str:
    buffer = BytesIO()
    serialize(
        report_triples(report.results, shapes, conforms=conforms),
        buffer,
        RdfFormat.TURTLE,
        prefixes={"sh": SH, "xsd": XSD, "ol": "https://ontoloom.dev/ns#"},
    )
    return buffer.getvalue().decode("utf-8")
