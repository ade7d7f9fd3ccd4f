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
from ontoloom.terms import Literal, NamedNode, Quad, Term, Triple, node, subject
from ontoloom.vocab import RDF_TYPE, RDFS

if TYPE_CHECKING:
    from ontoloom.shacl.components import Constraint
    from ontoloom.shacl.engine import Report, Result
    from ontoloom.shacl.render import Renderer
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
    renderer: Renderer,
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
    from ontoloom.shacl.oracle import in_our_words, isolated_shapes_graph, pyshacl_results

    changed = Changed.of(Delta(adds=set(written)))
    walker = Walker(data)
    ontology = [Triple(subject(s), NamedNode(RDFS + "subClassOf"), o) for s, o in hierarchy.pairs]
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
            if wanted is not None:  # the caller may name a literal by its stored form
                stored = {_as_stored(n) for n in wanted}
                affected = {n for n in affected if n in wanted or _as_stored(n) in stored}
        literal_targets = own[top.node]
        if affected is not None and not affected and not literal_targets:
            continue
        if affected is None or not getattr(data, "union", True):
            quads: list[Quad] = list(data.data_quads())
        else:
            quads = list(walker.neighbourhood(reach, affected))
        targets: list[Term] | None = None
        if affected is not None:
            # Only the nodes the shape targets, as written: pySHACL validates each node given.
            targets = _targets_as_written(top, affected, quads, hierarchy)
            if targets is None:  # a SPARQL-based target: ask the store
                found = targeted(top, sorted(affected, key=str)) or []
                targets = sorted((n for n in affected if _as_stored(n) in set(found)), key=str)
            targets += literal_targets
            if not targets:
                continue
        label = top.node.value if isinstance(top.node, NamedNode) else str(top.node)
        report.as_written[label] = len(targets) if targets is not None else -1
        isolated = isolated_shapes_graph(shapes, top.node, targets=targets)
        try:
            _, judged, _ = pyshacl_results([q.triple for q in quads], isolated, ontology=ontology)
        except Exception as exc:  # pySHACL refuses some inputs the spec defines (a blank
            # node under sh:lessThan): keep the by-value results, and say so
            del report.as_written[label]
            report.notes.append(
                f"shape {label}: results on nodes that read literals the store keeps by value "
                f"compare those literals by value (pySHACL could not judge them: {exc})"
            )
            continue
        tree = _tree(shapes, top)
        # The fast path named literal focus nodes by their stored forms: drop those results.
        redone = (
            None
            if affected is None
            else {*affected, *map(_as_stored, affected), *map(stored_form, literal_targets)}
        )
        results = [r for r in results if not _replaced(r, tree, redone)]
        results += [
            r
            for r in in_our_words(judged, shapes, renderer)
            if r.source_shape in tree
            and (r.source_shape, r.component) not in skipped
            and (wanted is None or affected is not None or r.focus in wanted)
        ]
    report.results = results
    return report


def _targets_as_written(
    top: Shape, nodes: set[Term], quads: list[Quad], hierarchy: Hierarchy
) -> list[Term] | None:
    """Which of ``nodes`` the shape targets in ``quads`` (the terms as written); ``None``
    when a target is not one SHACL Core defines."""
    found: set[Term] = set()
    for target in top.targets:
        if target.kind == "targetNode":
            found |= {target.term} & nodes
        elif target.kind == "targetClass":
            classes = set(hierarchy.subclasses(target.term))
            found |= {
                node(q.subject)
                for q in quads
                if q.predicate == RDF_TYPE and q.object in classes and q.subject in nodes
            }
        elif target.kind == "targetSubjectsOf":
            found |= {
                node(q.subject) for q in quads if q.predicate == target.term and q.subject in nodes
            }
        elif target.kind == "targetObjectsOf":
            found |= {
                node(q.object) for q in quads if q.predicate == target.term and q.object in nodes
            }
        else:
            return None
    return sorted(found, key=str)


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
