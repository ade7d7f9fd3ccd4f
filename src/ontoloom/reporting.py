"""SHACL results as findings (:mod:`ontoloom.findings`), in the graph's own words: inside a
store the focus is an entity id, a value the JSON value of a literal (or an id), a path a
property or relation name; without one (``validate``) every node in N-Triples syntax."""

from __future__ import annotations

from ontoloom.findings import Finding
from ontoloom.model import value_to_json
from ontoloom.shacl import Result, ShapeSet
from ontoloom.shacl.paths import Path
from ontoloom.shacl.render import Renderer
from ontoloom.terms import Literal, NamedNode, Term, named
from ontoloom.vocab import OL, IdSpace, vocab_name

__all__ = ["finding_from_result", "path_name", "term_json"]


def path_name(path: Path | Term | None) -> str | None:
    if path is None:
        return None
    if isinstance(path, Path):
        if path.is_predicate:
            return vocab_name(named(path.iri))
        if path.kind == "inverse" and path.parts[0].is_predicate:
            # A relation's cardinality seen from its target: name the relation itself.
            return vocab_name(named(path.parts[0].iri))
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
    constraint = result.constraint_name or _component_name(result)
    component = result.component.value
    severity = result.severity.value.rsplit("#", 1)[-1]
    if ids is None:
        return Finding(
            focus=str(result.focus),
            path=result.path_key(),
            value=None if result.value is None else str(result.value),
            source_shape=str(result.source_shape),
            constraint=constraint,
            component=component,
            severity=severity,
            message=message,
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
        constraint=constraint,
        component=component,
        severity=severity,
        message=message,
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
