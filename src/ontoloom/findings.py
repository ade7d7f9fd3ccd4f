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
from dataclasses import dataclass
from typing import Any

from ontoloom.secret_text import redact

__all__ = ["FINDING_KEYS", "SCHEMA", "Finding", "finding_json", "refusal_json", "report_json"]

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


@dataclass(frozen=True)
class Finding:
    """One broken rule, as agents and people see it."""

    focus: str
    path: str | None
    constraint: str
    value: Any
    message: str
    severity: str = "Violation"
    kind: str = "shape"  # shape | cycle | orphan
    cycle: tuple[str, ...] | None = None  # the ids around a cycle, first one repeated last
    step: int | None = None  # the plan step (1-based) it is blamed on
    component: str | None = None  # the SHACL constraint component's IRI (shape findings)
    source_shape: str | None = None  # the shape that found it (shape findings)

    def __post_init__(self) -> None:
        # What a finding quotes of the input passes the one redaction (secret_text.redact):
        # a rule that refuses a value for another reason must not print the secret in it.
        for name in ("focus", "path", "message", "value"):
            text = getattr(self, name)
            if isinstance(text, str):
                object.__setattr__(self, name, redact(text))

    def to_json(self) -> dict[str, Any]:
        """The one findings shape."""
        return finding_json(self)

    def describe(self) -> str:
        where = (
            (f"step {self.step}: " if self.step else "")
            + self.focus
            + (f" · {self.path}" if self.path else "")
        )
        value = "" if self.value is None else f" (value: {self.value!r})"
        return f"{where} [{self.constraint}]{value}: {self.message}"
