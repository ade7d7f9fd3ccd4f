"""Validate standalone RDF graphs against a shapes graph, with no store: what
``ontoloom validate`` and the W3C test suite run."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

from ontoloom.shacl.direct import Around
from ontoloom.shacl.engine import Report, Validator
from ontoloom.shacl.rules import RuleSet
from ontoloom.shacl.shapes import ShapesError, ShapeSet, Unsupported, UnsupportedFeatures, sh
from ontoloom.store import Backend, scratch
from ontoloom.terms import DefaultGraph, GraphName, NamedNode, Quad, Statement, Term, Triple

__all__ = ["SHAPES_GRAPH", "ShapesGraphError", "infer_graphs", "no_collection", "validate_graphs"]


@contextmanager
def no_collection() -> Iterator[None]:
    """The cycle collector off while a graph is read, indexed and validated: it would walk
    the index's hundreds of thousands of objects again at every collection (half the time of
    indexing 60k quads, measured), and nothing made here needs it to be freed early."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# Where the shapes graph sits beside the data, for SPARQL constraints that use $shapesGraph.
SHAPES_GRAPH = NamedNode("urn:ontoloom:shapes-graph")

ShapesGraphError = ShapesError
RULES_ENTAILMENT = sh("Rules")  # the entailment regime running the rules applies


def validate_graphs(
    data: Iterable[Statement],
    shapes: Iterable[Statement],
    *,
    extra_classes: Iterable[tuple[Term, Term]] = (),
    prefixes: Mapping[str, str] | None = None,
    advanced: bool = False,
    allow_unsupported: bool = False,
    inferred: bool = False,
    shape_set: ShapeSet | None = None,
) -> Report:
    """Validate ``data`` against ``shapes``; ``prefixes`` name terms in messages and errors.
    Quads are read as triples (their graph aside), as parsers give them. ``shape_set``:
    ``shapes`` already parsed, as this would parse them (the caller keeps using it).

    ``advanced`` runs the SHACL-AF rules first (sh:rule, into the copy of the data being
    validated); without it, shapes' rules are not run and the report's notes say so.
    ``allow_unsupported`` validates the rest when the shapes use features ontoloom does not
    evaluate, and lists them in the report. ``inferred``: ``data`` was expanded by
    inference (see :class:`ShapeSet`).

    :raises ShapesGraphError: when the shapes graph is not well-formed (e.g. a SPARQL
        constraint that pre-binding forbids).
    :raises UnsupportedFeatures: when the shapes use a feature ontoloom does not evaluate
        and ``allow_unsupported`` is false.
    """
    with no_collection():
        shapes = list(shapes)
        if shape_set is None:
            shape_set = ShapeSet(shapes, prefixes=prefixes, inferred=inferred)
        return _validate(
            data, shapes, shape_set, extra_classes, prefixes, advanced, allow_unsupported
        )


def _validate(
    data: Iterable[Statement],
    shapes: list[Statement],
    shape_set: ShapeSet,
    extra_classes: Iterable[tuple[Term, Term]],
    prefixes: Mapping[str, str] | None,
    advanced: bool,
    allow_unsupported: bool,
) -> Report:
    data = data if isinstance(data, list) else list(data)

    def copy() -> Backend:
        quads = _in_graph(data, DefaultGraph())
        quads += _in_graph(shapes, SHAPES_GRAPH)
        return scratch(quads, union=False)

    backend = _when_asked(copy)
    notes: list[str] = []
    not_run: list[Unsupported] = []
    rules = None
    if advanced:
        rules = RuleSet(shape_set)
        not_run = rules.unsupported
    else:
        notes = [
            f"rules of shape {shape_set.label(node)} were not run (pass -a)"
            for node in RuleSet.shapes_with_rules(shape_set)
        ]
    validator = Validator(
        shape_set,
        extra_classes=extra_classes,
        shapes_graph=SHAPES_GRAPH,
        prefixes=prefixes,
        entailments=[RULES_ENTAILMENT] if advanced else [],
        pyshacl_style=True,  # the entry point of pySHACL's drop-in: its messages' words
    )
    unsupported = list(dict.fromkeys([*not_run, *validator.unsupported()]))
    if unsupported and not allow_unsupported:
        raise UnsupportedFeatures(unsupported, shape_set.describe)
    whole = None
    if rules is not None:
        backend = rules.run(backend, validator.hierarchy(backend))
    else:  # the data as written, in memory: what the shapes' quad checks read
        whole = Around.whole(data)
    report = validator.validate(backend, allow_unsupported=True, whole=whole)
    report.unsupported, report.notes = unsupported, notes
    return report


def infer_graphs(
    data: Iterable[Triple],
    shapes: Iterable[Triple],
    *,
    extra_classes: Iterable[tuple[Term, Term]] = (),
    allow_unsupported: bool = False,
) -> list[Triple]:
    """The data graph after the SHACL-AF rules of ``shapes`` ran (as ``validate -a`` sees it).

    :raises UnsupportedFeatures: a rule ontoloom cannot run, unless ``allow_unsupported``.
    """
    shapes = list(shapes)
    shape_set = ShapeSet(shapes)
    backend = scratch(
        [Quad(t.subject, t.predicate, t.object, DefaultGraph()) for t in data], union=False
    )
    rules = RuleSet(shape_set)
    if rules.unsupported and not allow_unsupported:
        raise UnsupportedFeatures(rules.unsupported, shape_set.describe)
    hierarchy = Validator(shape_set, extra_classes=extra_classes).hierarchy(backend)
    return [q.triple for q in rules.run(backend, hierarchy).quads()]


class _Deferred:
    """A backend made when first asked for anything: a graph whose every shape is decided
    from its quads in memory is never copied into a store."""

    def __init__(self, make: Callable[[], Backend]) -> None:
        self._make: Callable[[], Backend] | None = make
        self._backend: Backend | None = None

    def __getattr__(self, name: str) -> Any:
        if self._backend is None:
            assert self._make is not None
            self._backend, self._make = self._make(), None
        return getattr(self._backend, name)


def _when_asked(make: Callable[[], Backend]) -> Backend:
    return cast(Backend, _Deferred(make))


def _in_graph(statements: Iterable[Statement], graph: GraphName) -> list[Quad]:
    """The statements as quads of ``graph``; quads already there are taken as they are (a
    parsed file's: building 100k quads anew costs a second)."""
    out: list[Quad] = []
    for t in statements:
        if isinstance(t, Quad) and t.graph_name == graph:
            out.append(t)
        else:
            out.append(Quad(t.subject, t.predicate, t.object, graph))
    return out
