"""Validation judges the terms as written, also where the store keeps a literal by value.

The compiled queries see what the store holds: ``"5"^^xsd:int`` as ``"5"^^xsd:integer``,
``"1.0"^^xsd:decimal`` as ``"1"``. SHACL's sh:datatype, sh:in, sh:hasValue, sh:equals,
sh:pattern and sh:minLength look at the term itself, so for any focus node whose validation
reads such a literal (found by walking back from it along each shape's reach), the shape is
judged again by pySHACL on the triples as written — the reference, on exactly the terms the
input held — and its answer replaces the fast path's.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from ontoloom.shacl.hierarchy import Hierarchy
from ontoloom.shacl.neighbourhood import Changed, Walker
from ontoloom.shacl.reach import reach_of
from ontoloom.store.base import Backend, Delta
from ontoloom.store.lexical import stored_form
from ontoloom.store.terms import Literal, NamedNode, Quad, Term, Triple
from ontoloom.vocab import RDFS

if TYPE_CHECKING:
    from ontoloom.shacl.components import Constraint
    from ontoloom.shacl.engine import Report, Result
    from ontoloom.shacl.shapes import Shape, ShapeSet

__all__ = ["judge_as_written"]


def judge_as_written(
    report: Report,
    shapes: ShapeSet,
    data: Backend,
    focus: Collection[Term] | None,
    hierarchy: Hierarchy,
    tops: list[Shape],
    skip: Callable[[Shape, Constraint], bool] | None,
    targeted: Callable[[Shape, list[Term]], list[Term] | None],
) -> Report:
    """``report`` with the results of every (shape, focus node) that reads a literal the
    store rewrote replaced by pySHACL's on the terms as written. ``targeted`` says which of
    some nodes a shape targets (``None``: pySHACL is to find them)."""
    written = data.rewritten()
    # A target node written in the shapes that the store keeps in another form (sh:targetNode
    # "4.0"^^xsd:decimal) is a focus node the fast path can only name by its stored form.
    own = {top.node: _rewritten_targets(top, focus) for top in tops}
    if not written and not any(own.values()):
        return report
    from ontoloom.shacl.oracle import isolated_shapes_graph, pyshacl_results

    changed = Changed.of(Delta(adds=set(written)))
    walker = Walker(data)
    ontology = [Triple(s, NamedNode(RDFS + "subClassOf"), o) for s, o in hierarchy.pairs]
    skipped = {
        (shape.node, c.component_iri)
        for shape in map(shapes.shape, shapes.all_shape_nodes())
        for c in shape.constraints
        if skip is not None and skip(shape, c)
    }
    wanted = None if focus is None else set(focus)
    results = list(report.results)
    for top in tops:
        reach = reach_of(shapes, top, skip)
        affected: set[Term] | None = set()
        if written and reach.is_global:
            affected = None  # every target may read it
        elif written:
            affected = set(walker.focus_nodes(reach, changed))
            if wanted is not None:
                affected &= wanted
        literal_targets = own[top.node]
        if affected is not None and not affected and not literal_targets:
            continue
        targets: list[Term] | None = None
        if affected is not None:
            # Only the nodes the shape targets: pySHACL validates every node it is given.
            found = targeted(top, sorted(affected, key=str)) if affected else []
            if found is not None:  # the store answers with stored forms: give the written ones
                hits = set(found)
                found = sorted((n for n in affected if _as_stored(n) in hits), key=str)
            targets = None if found is None else [*found, *literal_targets]
            if targets == []:
                continue
        if affected is None or not getattr(data, "union", True):
            quads: list[Quad] = list(data.data_quads())
        else:
            quads = list(walker.neighbourhood(reach, affected))
        label = top.node.value if isinstance(top.node, NamedNode) else str(top.node)
        report.as_written[label] = len(targets) if targets is not None else -1
        isolated = isolated_shapes_graph(shapes, top.node, targets=targets)
        _, judged, _ = pyshacl_results([q.triple for q in quads], isolated, ontology=ontology)
        tree = _tree(shapes, top)
        redone = None if affected is None else affected | {stored_form(t) for t in literal_targets}
        results = [r for r in results if not _replaced(r, tree, redone)]
        results += [
            r
            for r in judged
            if r.source_shape in tree
            and (r.source_shape, r.component) not in skipped
            # pySHACL found the targets itself: only the affected nodes' results are whole
            and (
                targets is not None
                or redone is None
                or r.focus in redone
                or r.focus in literal_targets
            )
            and (wanted is None or affected is not None or r.focus in wanted)
        ]
    report.results = results
    return report


def _as_stored(term: Term) -> Term:
    return stored_form(term) if isinstance(term, Literal) else term


def _rewritten_targets(top: Shape, focus: Collection[Term] | None) -> list[Literal]:
    """The shape's literal target nodes that the store keeps in another form."""
    out = []
    for target in top.targets:
        term = target.term
        if target.kind == "targetNode" and isinstance(term, Literal):
            stored = stored_form(term)
            if stored != term and (focus is None or stored in focus or term in focus):
                out.append(term)
    return out


def _replaced(result: Result, tree: set[Term], affected: set[Term] | None) -> bool:
    """Whether pySHACL's judgment replaces ``result``: one of the shape's, on a node it judged."""
    if result.source_shape not in tree:
        return False
    top_focus = result.root if result.root is not None else result.focus
    return affected is None or top_focus in affected


def _tree(shapes: ShapeSet, top: Shape) -> set[Term]:
    """A shape and its property shapes, at any depth: whose results are ``top``'s."""
    tree: set[Term] = set()
    stack = [top.node]
    while stack:
        node = stack.pop()
        if node not in tree:
            tree.add(node)
            stack.extend(shapes.shape(node).properties)
    return tree
