"""Validation results as a W3C ``sh:ValidationReport`` graph (Turtle out)."""

from __future__ import annotations

from collections.abc import Iterable
from io import BytesIO

from ontoloom.shacl.engine import Report, Result
from ontoloom.shacl.paths import Path
from ontoloom.shacl.shapes import ShapeSet
from ontoloom.store.terms import BlankNode, Literal, NamedNode, RdfFormat, Term, Triple, serialize
from ontoloom.vocab import RDF, SH, XSD

__all__ = ["report_triples", "report_turtle"]


def _sh(local: str) -> NamedNode:
    return NamedNode(SH + local)


def report_triples(results: Iterable[Result], shapes: ShapeSet | None = None) -> list[Triple]:
    """The report graph: one sh:ValidationResult per result, paths written out in full."""
    results = list(results)
    described: set[Term] = set()
    report = BlankNode()
    out = [
        Triple(report, NamedNode(RDF + "type"), _sh("ValidationReport")),
        Triple(
            report,
            _sh("conforms"),
            Literal("true" if not results else "false", datatype=NamedNode(XSD + "boolean")),
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
            out += _path_triples(node, r.path, shapes)
        if r.value is not None:
            out.append(Triple(node, _sh("value"), r.value))
        if r.source_constraint is not None:
            out.append(Triple(node, _sh("sourceConstraint"), r.source_constraint))
            if isinstance(r.source_constraint, BlankNode) and shapes is not None:
                described.add(r.source_constraint)
        out += [Triple(node, _sh("resultMessage"), m) for m in r.messages]
    # A blank source constraint is written out, so the report stands on its own.
    for constraint in sorted(described, key=str):
        out += list(shapes.graph.describe(constraint))
    return out


def _path_triples(node: Term, path: Path | Term, shapes: ShapeSet | None) -> list[Triple]:
    if not isinstance(path, Path):
        return [Triple(node, _sh("resultPath"), path)]
    if path.is_predicate:
        return [Triple(node, _sh("resultPath"), path.iri)]
    triples = [Triple(node, _sh("resultPath"), path.node)]
    if shapes is not None and path.node is not None:
        triples += list(shapes.graph.describe(path.node))
    return triples


def report_turtle(report: Report, shapes: ShapeSet | None = None) -> str:
    buffer = BytesIO()
    serialize(
        report_triples(report.results, shapes),
        buffer,
        RdfFormat.TURTLE,
        prefixes={"sh": SH, "xsd": XSD, "ol": "https://ontoloom.dev/ns#"},
    )
    return buffer.getvalue().decode("utf-8")
