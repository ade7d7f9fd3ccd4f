"""What validating one focus node against a shape can read.

A shape reads its focus node's own triples, and it *walks*: along its path, its nested
shapes' paths and the triple patterns of its SPARQL constraints, to value nodes whose triples
it reads in turn, down to the ``rdf:type`` of the last ones (``sh:class``). A :class:`Reach`
records the steps (predicate and direction) such a walk may take and how many levels deep it
goes — or that it has no bound (``*``/``+`` paths), or that it reads beyond any walk from the
focus (a SPARQL query with a pattern not joined to ``$this``, a SPARQL-based target): *global*.

The write path uses it both ways: forwards from the focus nodes, to copy exactly what their
validation reads; backwards from what a delta changes, to find every focus node whose
validation may read it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ontoloom.shacl.compiler import CompileError
from ontoloom.shacl.components import Constraint
from ontoloom.shacl.paths import Path
from ontoloom.shacl.shapes import Shape, ShapeSet
from ontoloom.shacl.sparql_syntax import Edge, SparqlSyntaxError, analyse, path_predicates
from ontoloom.terms import NamedNode, Term

__all__ = ["ANY", "BOUNDED", "GLOBAL", "UNBOUNDED", "Reach", "Step", "reach_of"]

# Stands for "any predicate" in a step (a variable predicate, a negated property set).
ANY = NamedNode("urn:ontoloom:any-predicate")
BOUNDED, UNBOUNDED, GLOBAL = "bounded", "unbounded", "global"
_TARGETS_READ_AT_FOCUS = ("targetClass", "targetNode", "targetSubjectsOf", "targetObjectsOf")
# Components that judge a value node by the term itself (or its type: sh:class), reading none
# of its other triples; shape-based ones are followed into the shapes they name.
# fmt: off
_TERM_ONLY = {
    f"http://www.w3.org/ns/shacl#{name}ConstraintComponent"
    for name in (
        "Class", "Datatype", "NodeKind", "MinExclusive", "MinInclusive", "MaxExclusive",
        "MaxInclusive", "MinLength", "MaxLength", "Pattern", "LanguageIn", "In", "HasValue",
        "Node", "Not", "And", "Or", "Xone", "QualifiedMinCount", "QualifiedMaxCount",
        "MinCount", "MaxCount", "UniqueLang", "SPARQL",
    )
}
# fmt: on


@dataclass(frozen=True)
class Step:
    predicate: NamedNode  # ANY for every predicate
    backwards: bool  # walked from object to subject


@dataclass(frozen=True)
class Reach:
    """``depth`` levels: a walk reads every outgoing triple of the nodes it reaches at
    levels ``0 … depth-1`` (and the incoming triples its backward steps take), and the types
    of the nodes at level ``depth``. ``None`` when unbounded."""

    steps: frozenset[Step] = frozenset()
    depth: int | None = 1
    is_global: bool = False
    focus_incoming: frozenset[NamedNode] = frozenset()  # read at the focus (targetObjectsOf)
    why: str = ""  # what makes it unbounded or global, for people

    @property
    def route(self) -> str:
        if self.is_global:
            return GLOBAL
        return UNBOUNDED if self.depth is None else BOUNDED

    def describe(self) -> str:
        if self.is_global:
            return f"global ({self.why}): checked on every write against the whole store"
        if self.depth is None:
            return (
                f"unbounded ({self.why}): checked on every write over the whole region the "
                "path reaches, never a truncated copy"
            )
        return f"bounded: checked on every write within {self.depth} edge(s) of what changed"


def merge(reaches: Iterable[Reach]) -> Reach:
    """One reach that reads at least what each of ``reaches`` reads."""
    reaches = list(reaches)
    if not reaches:
        return Reach()
    depths = [r.depth for r in reaches]
    return Reach(
        steps=frozenset().union(*(r.steps for r in reaches)),
        depth=None if None in depths else max(d for d in depths if d is not None),
        is_global=any(r.is_global for r in reaches),
        focus_incoming=frozenset().union(*(r.focus_incoming for r in reaches)),
        why="; ".join(dict.fromkeys(r.why for r in reaches if r.why)),
    )


@dataclass
class _Walk:
    """What one shape, met at some level of the walk, adds to it."""

    steps: set[Step] = field(default_factory=set)
    depth: int | None = 1
    is_global: bool = False
    why: list[str] = field(default_factory=list)

    def need(self, depth: int | None) -> None:
        if self.depth is not None:
            self.depth = None if depth is None else max(self.depth, depth)

    def unbounded(self, why: str) -> None:
        self.depth = None
        self.why.append(why)

    def globally(self, why: str) -> None:
        self.is_global = True
        self.why.append(why)


def reach_of(
    shapes: ShapeSet, top: Shape, skip: Callable[[Shape, Constraint], bool] | None = None
) -> Reach:
    """What validating a focus node of ``top`` can read (constraints ``skip`` selects are
    left out: they are checked some other way)."""
    walk = _Walk()
    incoming: set[NamedNode] = set()
    for target in top.targets:
        if target.kind == "sparqlTarget" and target.select is not None:
            # Whether a node is a target is read like a constraint's query: from the node out.
            _query(f"{target.prologue}\n{target.select}", {"?this": 0}, top, walk, "target")
        elif target.kind not in _TARGETS_READ_AT_FOCUS:
            walk.globally(f"its {target.kind} selects focus nodes in a way of its own")
        elif target.kind == "targetObjectsOf" and isinstance(target.term, NamedNode):
            incoming.add(target.term)
    _shape(shapes, top, 0, walk, (), skip)
    return Reach(
        steps=frozenset(walk.steps),
        depth=walk.depth,
        is_global=walk.is_global,
        focus_incoming=frozenset(incoming),
        why="; ".join(dict.fromkeys(walk.why)),
    )


def _shape(
    shapes: ShapeSet,
    shape: Shape,
    level: int | None,
    walk: _Walk,
    stack: tuple[Term, ...],
    skip: Callable[[Shape, Constraint], bool] | None,
) -> None:
    """Add what validating ``shape`` at a node ``level`` edges from the focus reads."""
    if shape.deactivated:
        return
    if shape.node in stack:
        walk.unbounded(f"shape {_label(shape.node)} refers to itself")
        return
    stack = (*stack, shape.node)
    walk.need(level)  # its type
    if shape.path is None and any(
        c.component_iri.value not in _TERM_ONLY for c in shape.constraints
    ):
        walk.need(_plus(level, 1))  # sh:closed, sh:equals…: the node's own triples
    values = level
    if shape.path is not None:
        values = _path(shape.path, level, walk)
        walk.need(values)  # the value nodes' types
    for constraint in shape.constraints:
        if skip is not None and skip(shape, constraint):
            continue
        for ref in constraint.shape_refs():
            _shape(shapes, shapes.shape(ref), values, walk, stack, skip)
        _sparql(constraint, shape, level, values, walk)
    for prop in shape.properties:
        _shape(shapes, shapes.shape(prop), values, walk, stack, skip)


def _path(path: Path, level: int | None, walk: _Walk) -> int | None:
    for predicate, backwards in path.predicates():
        walk.steps.add(Step(predicate, backwards))
    depth = path.depth()
    if depth is None:
        walk.unbounded(f"the path {path.sparql()} has no bound")
        return None
    return None if level is None else level + depth


def _sparql(
    constraint: Constraint, shape: Shape, level: int | None, values: int | None, walk: _Walk
) -> None:
    try:
        queries = constraint.read_queries(shape)
    except CompileError as exc:
        walk.globally(f"a SPARQL query of {_label(shape.node)} cannot be read ({exc})")
        return
    for text, value_bound in queries:
        anchors = {"?this": level}
        if value_bound:
            anchors["?value"] = values
        _query(text, anchors, shape, walk, "SPARQL query")


def _query(text: str, anchors: dict[str, int | None], shape: Shape, walk: _Walk, what: str) -> None:
    """Add what one SPARQL query, with ``anchors`` pre-bound, can read."""
    try:
        facts = analyse(text)
    except SparqlSyntaxError as exc:
        walk.globally(f"a {what} of {_label(shape.node)} does not parse ({exc})")
        return
    if facts.features & {"FROM", "SERVICE", "SLICE"}:
        walk.globally(f"a {what} of {_label(shape.node)} reads a dataset of its own")
        return
    _anchored(facts.edges, facts.subquery_projections, anchors, shape, walk)


def _anchored(
    edges: tuple[Edge, ...],
    projections: tuple[tuple[str, ...], ...],
    anchors: dict[str, int | None],
    shape: Shape,
    walk: _Walk,
) -> None:
    """Walk a query's triple patterns outwards from its pre-bound variables: every pattern
    must be reached (joined to ``$this``), each read from its nearer end."""

    def node(term: str, scope: int) -> str:
        if scope == 0 or not term.startswith("?") or term in ("?this", "?value"):
            return term
        if term[1:] in projections[scope - 1]:
            return term  # a projected variable joins the enclosing query's
        return f"{term}@{scope}"

    patterns = [
        (node(e.subject, e.scope), e.path, node(e.object, e.scope))
        for e in edges
        if e.graph != f"<{_shapes_graph()}>"  # the shapes graph is not data
    ]
    # The fewest levels at which the walk reaches each term (None: only through * or +).
    level: dict[str, int | None] = dict(anchors)
    changed = True
    while changed:
        changed = False
        for s, path, o in patterns:
            for a, b in ((s, o), (o, s)):
                if a in level:
                    candidate = _plus(level[a], _depth(path))
                    if b not in level or _less(candidate, level[b]):
                        level[b] = candidate
                        changed = True
    for s, path, o in patterns:
        if s not in level and o not in level:
            walk.globally(
                f"a SPARQL query of {_label(shape.node)} has a pattern not joined to $this "
                f"({s} … {o})"
            )
            return
        backwards = o in level and (s not in level or _less(level[o], level[s]))
        start = o if backwards else s
        depth = _sparql_path(path, backwards, walk)
        walk.need(_plus(level[start], depth))


def _sparql_path(path: tuple, backwards: bool, walk: _Walk) -> int | None:
    for predicate, inverse in path_predicates(path, backwards):
        iri = ANY if predicate == "?" else NamedNode(predicate[1:-1])
        walk.steps.add(Step(iri, inverse))
    depth = _depth(path)
    if depth is None:
        walk.unbounded("a SPARQL property path has no bound")
    return depth


def _depth(path: tuple) -> int | None:
    kind = path[0]
    if kind in ("iri", "var", "neg"):
        return 1
    if kind in ("inv", "opt"):
        return _depth(path[1])
    if kind in ("star", "plus"):
        return None
    depths = [_depth(p) for p in path[1]]
    if None in depths:
        return None
    known = [d for d in depths if d is not None]
    return sum(known) if kind == "seq" else max(known)


def _plus(level: int | None, depth: int | None) -> int | None:
    return None if level is None or depth is None else level + depth


def _less(a: int | None, b: int | None) -> bool:
    """``a < b`` where None stands for "only through an unbounded path" (infinitely far)."""
    return a is not None and (b is None or a < b)


def _shapes_graph() -> str:
    from ontoloom.shacl.components.sparql import READ_SHAPES_GRAPH

    return READ_SHAPES_GRAPH.value


def _label(node: Term) -> str:
    return node.value if isinstance(node, NamedNode) else str(node)
