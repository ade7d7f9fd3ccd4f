"""SHACL results as the findings agents and people read: ids instead of IRIs, names
instead of vocabulary IRIs, JSON values instead of literals."""

from __future__ import annotations

from ontoloom.model import Finding, IdSpace, value_to_json, vocab_name
from ontoloom.shacl import Result, ShapeSet
from ontoloom.shacl.paths import Path
from ontoloom.store.terms import Literal, NamedNode, Term
from ontoloom.vocab import OL

__all__ = ["finding_from_result", "path_name", "term_json"]


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


def finding_from_result(result: Result, ids: IdSpace, shapes: ShapeSet | None = None) -> Finding:
    path = path_name(result.path)
    if path is None and shapes is not None:
        # A relation's domain shape targets the subjects of the relation: name it.
        shape = shapes.shape(result.source_shape)
        for target in shape.targets:
            if target.kind == "targetSubjectsOf":
                path = vocab_name(target.term)
    message = "; ".join(m.value for m in result.messages) or _default_message(result)
    return Finding(
        focus=ids.id_of(result.focus)
        if not isinstance(result.focus, Literal)
        else result.focus.value,
        path=path,
        constraint=result.constraint_name or vocab_name(result.component),
        value=term_json(result.value, ids),
        message=message,
        severity=result.severity.value.rsplit("#", 1)[-1],
    )


def _default_message(result: Result) -> str:
    component = result.component.value.rsplit("#", 1)[-1].removesuffix("ConstraintComponent")
    return f"violates {component}"
