"""``ontoloom validate``: any RDF files against any shapes, with no store."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ontoloom.errors import BadInput, OntoloomError
from ontoloom.shacl import Report, ShapeSet
from ontoloom.shacl.redact import redacted
from ontoloom.shacl.report import report_turtle
from ontoloom.shacl.shapes import ShapesError, UnsupportedFeatures, ValidationFailure
from ontoloom.shacl.validate import validate_graphs
from ontoloom.store.rdfio import read_triples
from ontoloom.store.terms import NamedNode, Term, Triple
from ontoloom.vocab import RDF, SH

__all__ = ["Outcome", "validate_files"]

_SHAPE_TYPES = {NamedNode(SH + "NodeShape"), NamedNode(SH + "PropertyShape")}


@dataclass
class Outcome:
    report: Report
    shapes: ShapeSet

    @property
    def warnings(self) -> list[str]:
        """What was not evaluated or not run, for stderr: never silent."""
        return [
            f"{self.shapes.describe(u)}, which ontoloom did not evaluate"
            for u in self.report.unsupported
        ] + self.report.notes

    def to_json(self) -> dict[str, Any]:
        return {
            "conforms": self.report.conforms,
            "unsupported": [
                {"shape": _show(u.shape), "feature": u.feature} for u in self.report.unsupported
            ],
            "results": [
                {
                    "focus": _show(r.focus),
                    "path": r.path_key(),
                    "value": None if r.value is None else _show(r.value),
                    "source_shape": _show(r.source_shape),
                    "component": r.component.value,
                    "severity": r.severity.value.rsplit("#", 1)[-1],
                    "message": "; ".join(m.value for m in r.messages) or None,
                }
                for r in self.report.results
            ],
        }

    def text(self) -> str:
        if self.report.conforms:
            return "Conforms: True"
        lines = [f"Conforms: False ({len(self.report.results)} result(s))"]
        by_focus: dict[str, list] = {}
        for r in self.report.results:
            by_focus.setdefault(_show(r.focus), []).append(r)
        for focus, results in by_focus.items():
            lines.append(focus)
            for r in results:
                component = r.component.value.rsplit("#", 1)[-1].removesuffix("ConstraintComponent")
                path = f" {r.path_key()}" if r.path is not None else ""
                value = f" = {_show(r.value)}" if r.value is not None else ""
                severity = r.severity.value.rsplit("#", 1)[-1]
                lines.append(
                    f"  {severity}:{path} [{component}]{value} (shape {_show(r.source_shape)})"
                )
                for m in r.messages:
                    lines.append(f"      {m.value}")
        return "\n".join(lines)

    def turtle(self) -> str:
        return report_turtle(self.report, self.shapes)


def _show(term: Term) -> str:
    return str(term)


def _base(path: Path) -> str:
    """Relative IRIs (``<>``) resolve against the file itself, as in pySHACL."""
    return path.resolve().as_uri()


def validate_files(
    data: list[Path],
    shapes: list[Path],
    data_format: str | None = None,
    *,
    advanced: bool = False,
    allow_unsupported: bool = False,
) -> Outcome:
    """Load the files and validate. Shapes default to ontoloom's own, or to the data's own
    shapes when a data file holds some (as pySHACL does). ``advanced`` runs SHACL-AF rules
    first; ``allow_unsupported`` validates the rest when shapes use features ontoloom does
    not evaluate (the outcome's warnings name them).

    :raises BadInput: on unreadable files, syntax errors (file:line:column), ill-formed
        shapes, or features ontoloom does not evaluate (unless allowed).
    """
    data_triples: list[Triple] = []
    prefixes: dict[str, str] = {}  # as the files declare them, to write terms in messages
    for path in data:
        data_triples += read_triples(
            path=path, format_name=data_format, base_iri=_base(path), prefixes=prefixes
        )
    extra_classes: list[tuple[Term, Term]] = []
    if shapes:
        shape_triples: list[Triple] = []
        for path in shapes:
            shape_triples += read_triples(path=path, base_iri=_base(path), prefixes=prefixes)
    elif any(t.predicate.value == RDF + "type" and t.object in _SHAPE_TYPES for t in data_triples):
        shape_triples = data_triples
    else:
        from ontoloom.schema import Schema

        schema = Schema.load()
        shape_triples, extra_classes = schema.shape_triples, schema.subclass_pairs
    try:
        report = validate_graphs(
            data_triples,
            shape_triples,
            extra_classes=extra_classes,
            prefixes=prefixes,
            advanced=advanced,
            allow_unsupported=allow_unsupported,
        )
    except UnsupportedFeatures as exc:
        raise BadInput(str(exc)) from None
    except ValidationFailure as exc:
        raise BadInput(f"validation failed: {exc}") from None
    except ShapesError as exc:
        raise BadInput(f"the shapes graph is not well-formed: {exc}") from None
    except OntoloomError:
        raise
    shape_set = ShapeSet(shape_triples, prefixes=prefixes)
    report.results = redacted(report.results, shape_set)  # values of secret rules: never shown
    return Outcome(report, shape_set)
