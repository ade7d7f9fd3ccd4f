"""Findings: the one JSON shape every front end reports broken rules in.

``check``, ``validate``, a refused write (CLI, Python API, MCP tools, HTTP) and a refused plan
all say what broke with the same objects, built here and nowhere else:

* a **finding** has exactly the keys of :data:`FINDING_KEYS` (absent facts are ``null``);
* a **report** (``check``, ``validate``) is ``{"conforms", "violations", "warnings", "infos",
  "unsupported", "results"}``;
* a **refusal** is a report that does not conform, with ``"error": "validation"`` and the
  one-paragraph ``"message"`` the text front ends print.

:data:`SCHEMA` is that contract as a JSON Schema (tests hold every front end to it).

Inside a store, nodes are named as agents name them: the focus is an entity id, a value is
the JSON value of a literal (or an id), a path is a property or relation name. ``validate``
has no store and no ids: there, focus, value, path and source shape are written as RDF
terms in N-Triples syntax (``<http://…>``, ``_:b0``, ``"5"^^<…#integer>``), a path as a
SPARQL property path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ontoloom.model import Finding, IdSpace, value_to_json, vocab_name
from ontoloom.shacl import Result, ShapeSet
from ontoloom.shacl.paths import Path
from ontoloom.shacl.render import Renderer
from ontoloom.store.terms import Literal, NamedNode, Term
from ontoloom.vocab import OL

__all__ = [
    "FINDING_KEYS",
    "SCHEMA",
    "finding_from_result",
    "finding_json",
    "path_name",
    "refusal_json",
    "report_json",
    "term_json",
]

FINDING_KEYS = (
    "focus",
    "path",
    "value",
    "constraint",
    "component",
    "source_shape",
    "severity",
    "kind",
    "message",
    "cycle",
    "step",
)
REPORT_KEYS = ("conforms", "violations", "warnings", "infos", "unsupported", "results")

_NULLABLE_STRING = {"type": ["string", "null"]}
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://ontoloom.dev/schemas/findings.json",
    "title": "ontoloom findings report",
    "type": "object",
    "required": list(REPORT_KEYS),
    "properties": {
        "conforms": {"type": "boolean"},
        "violations": {"type": "integer", "minimum": 0},
        "warnings": {"type": "integer", "minimum": 0},
        "infos": {"type": "integer", "minimum": 0},
        "unsupported": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["shape", "feature"],
                "additionalProperties": False,
                "properties": {"shape": {"type": "string"}, "feature": {"type": "string"}},
            },
        },
        "results": {"type": "array", "items": {"$ref": "#/$defs/finding"}},
        "error": {"const": "validation"},
        "message": {"type": "string"},
    },
    "$defs": {
        "finding": {
            "type": "object",
            "required": list(FINDING_KEYS),
            "additionalProperties": False,
            "properties": {
                "focus": {"type": ["string", "number", "boolean"]},
                "path": _NULLABLE_STRING,
                "value": {},  # any JSON value, or null when the result has none
                "constraint": {"type": "string", "minLength": 1},
                "component": _NULLABLE_STRING,
                "source_shape": _NULLABLE_STRING,
                "severity": {"enum": ["Violation", "Warning", "Info"]},
                "kind": {"enum": ["shape", "cycle", "orphan"]},
                "message": {"type": "string", "minLength": 1},
                "cycle": {"type": ["array", "null"], "items": {"type": "string"}},
                "step": {"type": ["integer", "null"], "minimum": 1},
            },
        }
    },
}


def finding_json(f: Finding) -> dict[str, Any]:
    """One finding, every key of :data:`FINDING_KEYS` present."""
    return {
        "focus": f.focus,
        "path": f.path,
        "value": f.value,
        "constraint": f.constraint,
        "component": f.component,
        "source_shape": f.source_shape,
        "severity": f.severity,
        "kind": f.kind,
        "message": f.message,
        "cycle": list(f.cycle) if f.cycle is not None else None,
        "step": f.step,
    }


def report_json(
    findings: Iterable[Finding],
    *,
    conforms: bool | None = None,
    unsupported: Iterable[Mapping[str, str]] = (),
) -> dict[str, Any]:
    """A report; ``conforms`` defaults to "no violations" (warnings and infos never fail)."""
    findings = list(findings)
    counts = {"Violation": 0, "Warning": 0, "Info": 0}
    for f in findings:
        counts[f.severity] = counts.get(f.severity, 0) + 1
    return {
        "conforms": (not counts["Violation"]) if conforms is None else conforms,
        "violations": counts["Violation"],
        "warnings": counts["Warning"],
        "infos": counts["Info"],
        "unsupported": [dict(u) for u in unsupported],
        "results": [finding_json(f) for f in findings],
    }


def refusal_json(findings: Iterable[Finding], message: str) -> dict[str, Any]:
    """A refused write or plan: what broke, nothing stored."""
    return {"error": "validation", "message": message, **report_json(findings, conforms=False)}


# -- from SHACL results -------------------------------------------------------------------------
def path_name(path: Path | Term | None) -> str | None:
    if path is None:
        return None
    if isinstance(path, Path):
        if path.is_predicate:
            return vocab_name(path.iri)
        if path.kind == "inverse" and path.parts[0].is_predicate:
            # A relation's cardinality seen from its target: name the relation itself.
            return vocab_name(path.parts[0].iri)
        return path.sparql().replace(f"<{OL}", "ol:").replace(">", "")
    return vocab_name(path)


def term_json(term: Term | None, ids: IdSpace) -> object:
    if term is None:
        return None
    if isinstance(term, Literal):
        return value_to_json(term)
    if ids.is_instance(term):
        return ids.id_of(term)
    if isinstance(term, NamedNode):
        return vocab_name(term)
    return str(term)


def finding_from_result(
    result: Result, ids: IdSpace | None, shapes: ShapeSet | None = None
) -> Finding:
    """A SHACL result as a finding: in the store's words with ``ids``, else (``validate``,
    no store) with every node in N-Triples syntax."""
    message = "; ".join(m.value for m in result.messages) or _fallback_message(result, shapes)
    common = {
        "constraint": result.constraint_name or _component_name(result),
        "component": result.component.value,
        "severity": result.severity.value.rsplit("#", 1)[-1],
        "message": message,
    }
    if ids is None:
        return Finding(
            focus=str(result.focus),
            path=result.path_key(),
            value=None if result.value is None else str(result.value),
            source_shape=str(result.source_shape),
            **common,
        )
    path = path_name(result.path)
    if path is None and shapes is not None:
        # A relation's domain shape targets the subjects of the relation: name it.
        shape = shapes.shape(result.source_shape)
        for target in shape.targets:
            if target.kind == "targetSubjectsOf":
                path = vocab_name(target.term)
    return Finding(
        focus=ids.id_of(result.focus)
        if not isinstance(result.focus, Literal)
        else result.focus.value,
        path=path,
        value=term_json(result.value, ids),
        source_shape=vocab_name(result.source_shape),
        **common,
    )


def _component_name(result: Result) -> str:
    return result.component.value.rsplit("#", 1)[-1].removesuffix("ConstraintComponent")


def _fallback_message(result: Result, shapes: ShapeSet | None) -> str:
    """Every core constraint component words its own message (as pySHACL does); a SPARQL
    constraint declares its own or has none (pySHACL then reports none). The JSON never
    says ``null``: name the constraint and the shape instead."""
    if shapes is None:
        shape, focus = str(result.source_shape), str(result.focus)
    else:
        shape, focus = (
            shapes.label(result.source_shape),
            Renderer(shapes.prefixes).term(result.focus),
        )
    return f"Node {focus} does not conform to the {_component_name(result)} constraint of shape {shape}"
