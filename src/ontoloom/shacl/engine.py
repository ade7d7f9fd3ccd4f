"""Run compiled shapes against any backend and collect W3C-style validation results."""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from ontoloom.shacl.compiler import CompileError, Compiler, Violation, term_sparql, unjoined
from ontoloom.shacl.components import Constraint
from ontoloom.shacl.components.sparql import SPARQLConstraintComponent
from ontoloom.shacl.components.unsupported import NotEvaluated
from ontoloom.shacl.cycles import ACYCLIC, on_cycles
from ontoloom.shacl.direct import Around, Reader, judged_reader, reader
from ontoloom.shacl.hierarchy import Hierarchy
from ontoloom.shacl.native import PATTERN, Judge, digest, judged
from ontoloom.shacl.paths import Path
from ontoloom.shacl.render import Renderer
from ontoloom.shacl.shapes import (
    RDF_TYPE,
    Shape,
    ShapesError,
    ShapeSet,
    Unsupported,
    UnsupportedFeatures,
    ValidationFailure,
    sh,
)
from ontoloom.store.base import Backend, Row
from ontoloom.store.lexical import LEXICAL_FORM, RECORD_PREDICATE
from ontoloom.terms import BlankNode, Literal, NamedNode, Term, Triple
from ontoloom.vocab import META, OL, RDFS

__all__ = ["Report", "Result", "Validator"]

# Where the focus restriction of a write goes: "#FOCUS(?var)#" becomes "VALUES ?var { … }".
_FOCUS_MARK = re.compile(r"#FOCUS\((\?\w+)\)#")


@dataclass(frozen=True)
class Result:
    focus: Term
    path: Path | Term | None
    value: Term | None
    source_shape: Term
    component: NamedNode
    severity: NamedNode
    messages: tuple[Literal, ...] = ()
    source_constraint: Term | None = None
    constraint_name: str = ""
    # For a property shape nested under a targeted shape: the target's focus node whose
    # values were validated. Reports leave it out; it tells apart the same result reached
    # from two targets (so that a write path can say which of them a delta made).
    root: Term | None = None

    def path_key(self) -> str | None:
        if isinstance(self.path, Path):
            return self.path.sparql()
        return None if self.path is None else str(self.path)

    def key(self) -> tuple[str, ...]:
        return (
            str(self.focus),
            self.path_key() or "",
            "" if self.value is None else str(self.value),
            str(self.source_shape),
            str(self.component),
            str(self.severity),
        )


@dataclass
class Report:
    results: list[Result] = field(default_factory=list)
    # shape → "native" (read from the quads), "sparql" (its compiled queries) or "pyshacl"
    engines: dict[str, str] = field(default_factory=dict)
    # Features the shapes use that were not evaluated (only when the caller allowed it).
    unsupported: list[Unsupported] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what else was not done, said as warnings
    # Shapes whose results on some nodes pySHACL gave instead, on the terms as written
    # (those nodes read literals the store keeps by value): shape → how many nodes.
    as_written: dict[str, int] = field(default_factory=dict)
    # And why their queries could not (see :func:`~ontoloom.shacl.compiler.unjoined`).
    as_written_why: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)  # shape → time its queries took

    def explanation(self) -> dict[str, dict[str, object]]:
        """Per targeted shape: how it was evaluated, and how long that took."""
        out: dict[str, dict[str, object]] = {}
        for shape, engine in sorted(self.engines.items()):
            entry: dict[str, object] = {
                "engine": engine,
                "seconds": round(self.seconds.get(shape, 0.0), 4),
            }
            if shape in self.as_written:
                entry["pyshacl_nodes"] = self.as_written[shape]  # -1: every target
                entry["why"] = self.as_written_why.get(shape, "")
            out[shape] = entry
        return out

    @property
    def conforms(self) -> bool:
        return not self.results

    @property
    def violations(self) -> list[Result]:
        return [r for r in self.results if r.severity.value.endswith("#Violation")]


@dataclass
class Compiled:
    query: str
    violation: Violation
    parents: tuple[str, ...] = ()  # focus variables of the shapes above a nested property shape
    # A judged SPARQL constraint (:mod:`ontoloom.shacl.native`): its graph pattern, compiled
    # as this query is, and the Python function that evaluates the rest.
    native: tuple[Compiled, Judge] | None = None
    # The variables of the value's lexical form and datatype as written, where the store
    # may keep it in another form (see :class:`~ontoloom.shacl.compiler.Compiler`).
    written: tuple[str, str] | None = None


@dataclass
class Unit:
    """One compiled top-level check: a constraint of a shape, reached from a targeted shape,
    as a query over all targets (``full``) and one over a few given focus nodes."""

    top: Shape
    shape: Shape
    constraint: Constraint
    full: Compiled
    focused: Compiled
    # Its focused query's rows from the quads around the focus nodes (:mod:`.direct`).
    direct: Reader | None = None
    # The predicate of an acyclicity constraint (:mod:`.cycles`): over every target, its
    # focused query runs on the nodes that lie on a cycle of the predicate's edges only.
    cycles: NamedNode | None = None


class Validator:
    """Validates data in any :class:`~ontoloom.store.base.Backend` against a shapes graph.

    ``extra_classes`` adds rdfs:subClassOf pairs that the data graph itself does not hold
    (an ontology kept outside the store); ``skip`` leaves chosen constraints out.
    """

    def __init__(
        self,
        shapes: ShapeSet | Iterable[Triple],
        *,
        extra_classes: Iterable[tuple[Term, Term]] = (),
        skip: Callable[[Shape, Constraint], bool] | None = None,
        shapes_graph: NamedNode | None = None,
        prefixes: Mapping[str, str] | None = None,
        entailments: Iterable[Term] = (),
        judges: Mapping[str, Judge] | None = None,
        pyshacl_style: bool = False,
    ) -> None:
        if not isinstance(shapes, ShapeSet):
            shapes = ShapeSet(shapes, prefixes=prefixes)
        self.shapes = shapes
        self.extra_classes = list(extra_classes)
        self.skip = skip
        self.shapes_graph = shapes_graph  # where $shapesGraph points, when the data has it
        # How generated messages write terms: these prefixes, and the shapes graph's blanks.
        self.renderer = Renderer(prefixes, self.shapes.graph, pyshacl_style=pyshacl_style)
        # Entailment regimes the caller applied to the data (sh:Rules, after running rules):
        # any other sh:entailment is a feature not evaluated (SHACL: signal a failure).
        self.entailments = set(entailments)
        # sh:select digest → judge: focused runs of that constraint filter in Python
        self.judges = dict(judges or {})
        self._unsupported: dict[frozenset[Term] | None, list[Unsupported]] = {}
        self._plans: dict[object, tuple[list[Unit], list[Shape]]] = {}
        self._selections: dict[object, _Selection] = {}

    # -- compilation ---------------------------------------------------------------------
    def hierarchy(self, data: Backend) -> Hierarchy:
        rows = data.select(f"SELECT ?s ?o WHERE {{ ?s <{RDFS}subClassOf> ?o }}")
        pairs = [(r["s"], r["o"]) for r in rows if r["s"] is not None and r["o"] is not None]
        return Hierarchy([*pairs, *self.extra_classes])

    def plan(
        self, hierarchy: Hierarchy, written: frozenset[Term] = frozenset()
    ) -> tuple[list[Unit], list[Shape]]:
        """Compiled units, and the targeted shapes the compiler had to leave to pySHACL;
        ``written``: the predicates of the literals the store keeps in another form."""
        key = (hierarchy.key(), written)
        cached = self._plans.get(key)
        if cached is not None:
            return cached
        units: list[Unit] = []
        fallback: list[Shape] = []
        for top in self.shapes.targeted():
            compiler = Compiler(self.shapes, hierarchy, self.shapes_graph, written)
            try:
                full = self._compile_shape(
                    compiler, top, top, self._top_source(compiler, top, False)
                )
                focused = self._compile_shape(
                    compiler, top, top, self._top_source(compiler, top, True)
                )
                units.extend(
                    Unit(
                        top,
                        shape,
                        constraint,
                        a,
                        b,
                        self._reader(top, shape, constraint, b, hierarchy),
                        _cycles(shape, constraint, b),
                    )
                    for (shape, constraint, a), (_, _, b) in zip(full, focused, strict=True)
                )
            except CompileError:
                fallback.append(top)
            except ShapesError:
                raise
        self._plans[key] = (units, fallback)
        return units, fallback

    def _selected(
        self, hierarchy: Hierarchy, only: Collection[Term] | None, written: frozenset[Term]
    ) -> _Selection:
        """The plan's units and fallback shapes of the targeted shapes ``only`` names (all
        when None): made once per plan and selection — a write validates the same few."""
        key = (hierarchy.key(), None if only is None else frozenset(only), written)
        found = self._selections.get(key)
        if found is None:
            units, fallback = self.plan(hierarchy, written)
            if only is not None:
                units = [u for u in units if u.top.node in only]
                fallback = [s for s in fallback if s.node in only]
            if len(self._selections) >= _SELECTIONS_KEPT:
                self._selections.clear()
            found = self._selections[key] = _Selection(units, fallback)
            found.as_written = {
                top.node: reason
                for top in found.tops
                if (reason := unjoined(self.shapes, top, written, set(self.judges))) is not None
            }
        return found

    def _top_source(self, cx: Compiler, top: Shape, focused: bool) -> Callable[[str], str]:
        cx.targets(top, "?this", focused=focused)  # fails early: CompileError → fallback
        return lambda var: f"#FOCUS({var})# {cx.targets(top, var, focused=focused)}"

    def _compile_shape(
        self,
        cx: Compiler,
        top: Shape,
        shape: Shape,
        source: Callable[[str], str],
        parents: tuple[str, ...] = (),
    ) -> list[tuple[Shape, Constraint, Compiled]]:
        if shape.deactivated:
            return []
        units = []
        for constraint in shape.constraints:
            if self.skip is not None and self.skip(shape, constraint):
                continue
            cx.prologues = set()
            violation = constraint.pattern(cx, shape, "?this", source)
            if violation is None:
                continue
            # the value as written, for the result to name: asked at the top only
            written = cx.written_value(violation.value) if violation.value else None
            compiled = Compiled(
                _select(cx, violation, source, parents, written), violation, parents
            )
            compiled.written = None if written is None else written[1]
            compiled.native = self._native(cx, shape, constraint, source, parents)
            units.append((shape, constraint, compiled))
        for prop in shape.properties:
            child = self.shapes.shape(prop)
            child_parents = parents
            if shape.path is None:
                child_source = source
            else:
                parent = cx.fresh("parent")  # each parent focus validates its values anew
                child_parents = (*parents, parent)
                child_source = _values_of(source, parent, shape.path.sparql())

            units.extend(self._compile_shape(cx, top, child, child_source, child_parents))
        return units

    @staticmethod
    def _reader(
        top: Shape, shape: Shape, constraint: Constraint, focused: Compiled, hierarchy: Hierarchy
    ) -> Reader | None:
        if focused.native is None:
            return reader(
                top, shape, constraint, focused.violation, bool(focused.parents), hierarchy
            )
        if shape is not top or shape.path is not None:
            return None  # a judged query's pattern is read for a node shape's focus nodes only
        return judged_reader(top, focused.native[1], hierarchy)

    def _native(
        self,
        cx: Compiler,
        shape: Shape,
        constraint: Constraint,
        source: Callable[[str], str],
        parents: tuple[str, ...],
    ) -> tuple[Compiled, Judge] | None:
        if not isinstance(constraint, SPARQLConstraintComponent):
            return None
        judge = self.judges.get(digest(constraint.select))
        if judge is None:
            return None
        stand_in = copy.copy(constraint)
        stand_in.select = PATTERN
        cx.prologues = set()
        violation = stand_in.pattern(cx, shape, "?this", source)
        compiled = Compiled(_select(cx, violation, source, parents), violation, parents)
        if cx.written:
            # The same solutions where the value's triple has a record, the value as written
            # beside it: the judge decides those, exactly, and the SELECT all others.
            cx.lexical["?value"] = ("?this", "?path")
            joined = cx.written_value("?value")
            assert joined is not None
            pattern, names = joined
            required = pattern.removeprefix("OPTIONAL ")
            joined_pattern = Compiled(
                _select(cx, violation, source, parents, (required, names)), violation, parents
            )
            joined_pattern.written = names
            compiled.native = (joined_pattern, judge)
        return compiled, judge

    def explain(self, data: Backend) -> dict[str, str]:
        """Which engine validates each targeted shape: ``sparql`` or ``pyshacl``."""
        _, fallback = self.plan(self.hierarchy(data))
        fallen = {s.node for s in fallback}
        return {
            _shape_label(s.node): ("pyshacl" if s.node in fallen else "sparql")
            for s in self.shapes.targeted()
        }

    def unsupported(self, only: Collection[Term] | None = None) -> list[Unsupported]:
        """Every feature of the validated shapes (those targeted, and every shape they
        reach) that ontoloom does not evaluate."""
        key = None if only is None else frozenset(only)
        cached = self._unsupported.get(key)
        if cached is not None:
            return cached
        shapes = self.shapes
        out: list[Unsupported] = []
        # Targeted shapes, and those whose only targets are ones ontoloom cannot run.
        roots = [
            n
            for n in shapes.all_shape_nodes()
            if (shapes.shape(n).targets or shapes.shape(n).unsupported)
            and not shapes.shape(n).deactivated
            and (only is None or n in only)
        ]
        for shape in shapes.reached(roots):
            out += [Unsupported(shape.node, feature) for feature in shape.unsupported]
            out += [
                Unsupported(shape.node, c.feature)
                for c in shape.constraints
                if isinstance(c, NotEvaluated)
            ]
        for subject, regime in shapes.graph.pairs(sh("entailment")):
            if regime not in self.entailments:
                out.append(Unsupported(subject, f"sh:entailment {shapes.label(regime)}"))
        out = list(dict.fromkeys(out))
        self._unsupported[key] = out
        return out

    # -- validation ----------------------------------------------------------------------
    def validate(
        self,
        data: Backend,
        focus: Iterable[Term] | None = None,
        *,
        hierarchy: Hierarchy | None = None,
        only: Collection[Term] | None = None,
        allow_unsupported: bool = False,
        whole: Around | None = None,
    ) -> Report:
        """Validate ``data``; with ``focus``, only those nodes (as focus nodes of their targets);
        with ``only``, only those targeted shapes. ``whole``: every quad of ``data``, as
        written (a graph validated whole, held in memory): the shapes whose every unit can
        be read from it are decided there, and ``data`` is asked only for the others.

        :raises UnsupportedFeatures: when the shapes use a feature ontoloom does not
            evaluate, unless ``allow_unsupported`` (then the report lists them).
        """
        unsupported = self.unsupported(only)
        if unsupported and not allow_unsupported:
            raise UnsupportedFeatures(unsupported, self.shapes.describe)
        report = Report(unsupported=unsupported)
        if whole is not None and focus is None:
            hierarchy = hierarchy or Hierarchy([*whole.subclass_pairs(), *self.extra_classes])
            only = self._read_whole(report, whole, hierarchy, only)
            if not only:
                return report
        hierarchy = hierarchy or self.hierarchy(data)
        written, complete = _written_predicates(data)
        selection = self._selected(hierarchy, only, written if complete else frozenset())
        units, fallback = selection.units, selection.fallback
        focus_list = None if focus is None else list(dict.fromkeys(focus))
        if focus_list is not None and not focus_list:
            return report
        restriction, blanks = _restriction(focus_list)
        profile = (
            None
            if focus_list is None
            else _Profile.of(data, focus_list, hierarchy, selection.objects_of)
        )
        run = _Run(data, focus_list, restriction, blanks, profile, written)
        if profile is not None:
            targetable = profile.targetable(selection)
            run.targetable = {top.node: top.node in targetable for top in selection.tops}
        report.engines.update(dict.fromkeys(selection.labels, "sparql"))
        # A user's SPARQL query binds ?value to the stored term: name the written one.
        resolve = _WrittenValues(data) if written and complete else None
        for unit in units:
            if run.skips(unit):
                continue
            started = time.perf_counter()
            self._collect(report, unit, run.batches(unit), resolve)
            label = _shape_label(unit.top.node)
            report.seconds[label] = report.seconds.get(label, 0.0) + (time.perf_counter() - started)
        if fallback:
            from ontoloom.shacl.oracle import in_our_words, validate_shapes_with_pyshacl

            targeted: dict[Term, list[Term]] = {}
            for shape in fallback:
                report.engines[_shape_label(shape.node)] = "pyshacl"
                if focus_list is not None:
                    nodes = self._targeted(data, shape, focus_list, hierarchy)
                    if nodes is not None:
                        targeted[shape.node] = nodes
            report.results.extend(
                in_our_words(
                    validate_shapes_with_pyshacl(
                        data, self.shapes, fallback, focus_list, self.extra_classes, targeted
                    ),
                    self.shapes,
                    self.renderer,
                )
            )
        # Shapes whose queries cannot judge every literal as written: pySHACL judges them.
        handed = (
            [t for t in selection.tops if t.node in selection.as_written]
            if complete
            else selection.tops
        )
        for shape in handed:
            why = selection.as_written.get(shape.node, "the store's records are of an old form")
            report.as_written_why[_shape_label(shape.node)] = why
        if not handed:
            return report
        from ontoloom.shacl.faithful import judge_as_written

        return judge_as_written(
            report,
            self.shapes,
            data,
            focus_list,
            hierarchy,
            handed,
            self.skip,
            lambda shape, nodes: self._targeted(data, shape, nodes, hierarchy),
            self.renderer,
        )

    def _read_whole(
        self, report: Report, whole: Around, hierarchy: Hierarchy, only: Collection[Term] | None
    ) -> list[Term]:
        """Decide from a whole graph's quads the targeted shapes whose every unit has a
        reader (``native`` in the report); the targeted shapes left for the store."""
        selection = self._selected(hierarchy, only, frozenset())
        by_top: dict[Term, list[Unit]] = {}
        for unit in selection.units:
            by_top.setdefault(unit.top.node, []).append(unit)
        left = [shape.node for shape in selection.fallback]
        for top in selection.tops:
            units = by_top[top.node]
            if any(unit.direct is None for unit in units) or any(
                t.kind == "targetObjectsOf" and not whole.objects_kept_as_written(t.term)
                for t in top.targets
            ):
                left.append(top.node)
                continue
            label = _shape_label(top.node)
            report.engines[label] = "native"
            started = time.perf_counter()
            for unit in units:
                assert unit.direct is not None
                self._collect(report, unit, [(unit.focused, unit.direct(whole))], None)
            report.seconds[label] = time.perf_counter() - started
        return left

    def _collect(
        self,
        report: Report,
        unit: Unit,
        batches: list[tuple[Compiled, Iterable[Row]]],
        resolve: _WrittenValues | None,
    ) -> None:
        """The unit's results, one per distinct row (as the spec counts them)."""
        seen: set[tuple[object, ...]] = set()
        for compiled, rows in batches:
            extra = [*compiled.violation.distinct, *compiled.parents]
            for row in rows:
                result = _result(
                    unit,
                    compiled,
                    row,
                    self.renderer,
                    resolve if unit.constraint.fills_messages else None,
                )
                key = (result.key(), *(str(row.get(v.lstrip("?"))) for v in extra))
                if key not in seen:
                    seen.add(key)
                    report.results.append(result)

    def _targeted(
        self, data: Backend, shape: Shape, focus: list[Term], hierarchy: Hierarchy
    ) -> list[Term] | None:
        """Which of ``focus`` the shape targets, asked of the store; ``None`` when its
        targets cannot be written as SPARQL (pySHACL then finds them itself)."""
        named = [f for f in focus if not isinstance(f, BlankNode)]
        if len(named) < len(focus):
            return None
        cx = Compiler(self.shapes, hierarchy, self.shapes_graph)
        try:
            pattern = cx.targets(shape, "?this", focused=True)
        except CompileError:
            return None
        listed = " ".join(term_sparql(f) for f in named)
        prologue = "\n".join(sorted(p for p in cx.target_prologues if p))
        query = (
            f"{prologue}\nSELECT DISTINCT ?this WHERE {{ VALUES ?this {{ {listed} }} {pattern} }}"
        )
        return [row["this"] for row in data.select(query)]


_SELECTIONS_KEPT = 64  # selections of units cached per validator (a write uses a few)


def _written_predicates(data: Backend) -> tuple[frozenset[Term], bool]:
    """The predicates of the literals the store keeps in another form than written, and
    whether every record names its triple (records made before that do not)."""
    if data.keeps_literals_as_written():
        return frozenset(), True
    rows = data.select(
        f"SELECT DISTINCT ?p WHERE {{ GRAPH {META} {{ ?r {RECORD_PREDICATE} ?p }} }}"
    )
    predicates = frozenset(r["p"] for r in rows if r["p"] is not None)
    old = data.select(
        f"SELECT ?r WHERE {{ GRAPH {META} {{ ?r {LEXICAL_FORM} ?l "
        f"FILTER NOT EXISTS {{ ?r {RECORD_PREDICATE} ?p }} }} }} LIMIT 1"
    )
    if next(iter(old), None) is not None:
        return predicates or frozenset([_ANY]), False
    return predicates, True


@dataclass
class _Selection:
    units: list[Unit]
    fallback: list[Shape]
    # targeted shape → why its queries cannot judge every literal as written
    as_written: dict[Term, str] = field(default_factory=dict)
    tops: list[Shape] = field(init=False)  # the units' targeted shapes, in order
    labels: list[str] = field(init=False)
    objects_of: list[Term] = field(init=False)  # the predicates of their objects-of targets
    by_target: dict[tuple[str, Term], list[Term]] = field(init=False)  # (kind, term) → tops
    by_kind: dict[str, list[Term]] = field(init=False)  # target kind → tops

    def __post_init__(self) -> None:
        self.tops = list({u.top.node: u.top for u in self.units}.values())
        self.labels = [_shape_label(top.node) for top in self.tops]
        targets = [t for top in self.tops for t in top.targets]
        self.objects_of = sorted({t.term for t in targets if t.kind == "targetObjectsOf"}, key=str)
        # the tops by what they target (_Profile.targetable): a write's few focus nodes look
        # up their types and predicates here, instead of every top being asked of them
        self.by_target = {}
        for top in self.tops:
            for t in top.targets:
                self.by_target.setdefault((t.kind, t.term), []).append(top.node)
        self.by_kind = {}
        for top in self.tops:
            for t in top.targets:
                self.by_kind.setdefault(t.kind, []).append(top.node)


@dataclass
class _Profile:
    """What the focus nodes look like, to skip shapes that cannot target any of them."""

    nodes: set[Term]
    classes: set[Term]  # the focus nodes' types and all their superclasses
    out: set[Term]
    into: set[Term]

    around: Around | None = None  # the quads themselves, when units may be read from them

    @classmethod
    def of(
        cls, data: Backend, focus: list[Term], hierarchy: Hierarchy, objects_of: list[Term]
    ) -> _Profile:
        """``objects_of``: the predicates of the objects-of targets of the shapes in play."""
        if any(isinstance(f, BlankNode) for f in focus):  # cannot profile blank nodes cheaply
            return cls(set(focus), {_ANY}, {_ANY}, {_ANY})
        around = Around.read(data, focus, objects_of)
        out: set[Term] = {NamedNode(p) for values in around.out.values() for p in values}
        types = {t for node in focus for t in around.values(node, RDF_TYPE)}
        into = {p for _, p in around.incoming}
        usable = around if around.exact else None
        return cls(set(focus), hierarchy.superclasses_of(types), out, into, usable)

    def has_no_values(self, unit: Unit) -> bool:
        """Whether no focus node has a value for the unit's constraint to judge: a
        per-value constraint of a property shape on the focus nodes themselves whose
        predicate none of them has."""
        path = unit.shape.path
        return (
            unit.constraint.per_value
            and not unit.focused.parents
            and path is not None
            and path.is_predicate
            and path.iri not in self.out
            and _ANY not in self.out
        )

    def targetable(self, selection: _Selection) -> set[Term]:
        """The selection's tops that may target a focus node: those :meth:`may_target` says
        so of, found by their targets' terms (the same answers, one lookup per term)."""
        found: set[Term] = set(selection.by_kind.get("sparqlTarget", ()))
        by_target, by_kind = selection.by_target, selection.by_kind
        for kind, terms in (
            ("targetNode", self.nodes),
            ("targetClass", self.classes),
            ("targetSubjectsOf", self.out),
            ("targetObjectsOf", self.into),
        ):
            if _ANY in terms and kind != "targetNode":
                found.update(by_kind.get(kind, ()))
                continue
            for term in terms:
                found.update(by_target.get((kind, term), ()))
        return found

    def may_target(self, shape: Shape) -> bool:
        for t in shape.targets:
            if t.kind == "targetNode" and t.term in self.nodes:
                return True
            if t.kind == "targetClass" and (t.term in self.classes or _ANY in self.classes):
                return True
            if t.kind == "targetSubjectsOf" and (t.term in self.out or _ANY in self.out):
                return True
            if t.kind == "targetObjectsOf" and (t.term in self.into or _ANY in self.into):
                return True
            if t.kind == "sparqlTarget":  # its query decides: run it
                return True
        return False


@dataclass
class _Run:
    """One validation: its focus nodes (None: every target) and how each unit is evaluated
    over them. A unit is read from the quads around the focus nodes where its component
    offers a reader (a write's few nodes), else its compiled SPARQL runs — over every
    target, over the focus nodes listed in VALUES, or once per blank focus node bound to
    ``$this`` — and a judged SPARQL constraint (:mod:`.native`) has its pattern's rows
    judged in Python."""

    data: Backend
    focus: list[Term] | None
    restriction: Callable[[str], str] | None
    blanks: list[BlankNode]
    profile: _Profile | None
    written: frozenset[Term]
    # rows of a judged pattern, shared by the units that ask the same query
    matched: dict[tuple[str, tuple[tuple[str, Term], ...]], list[Row]] = field(default_factory=dict)
    targetable: dict[Term, bool] = field(default_factory=dict)  # per top shape
    cyclic: dict[NamedNode, list[Term]] = field(default_factory=dict)  # per predicate

    def on_cycle(self, predicate: NamedNode) -> list[Term]:
        """The nodes on a cycle of ``predicate``'s edges, as the queries see the data."""
        found = self.cyclic.get(predicate)
        if found is None:
            rows = self.data.select(f"SELECT ?a ?b WHERE {{ ?a {predicate} ?b }}")
            edges = ((r["a"], r["b"]) for r in rows if r["a"] is not None and r["b"] is not None)
            found = self.cyclic[predicate] = sorted(on_cycles(edges), key=str)
        return found

    def skips(self, unit: Unit) -> bool:
        """Whether the unit cannot find anything on these focus nodes."""
        profile = self.profile
        if profile is None:
            return False
        top = unit.top.node
        if top not in self.targetable:
            self.targetable[top] = profile.may_target(unit.top)
        return not self.targetable[top] or profile.has_no_values(unit)

    def batches(self, unit: Unit) -> list[tuple[Compiled, Iterable[Row]]]:
        """The unit's rows, each batch with the compiled query whose variables it binds."""
        data, focus_list, blanks = self.data, self.focus, self.blanks
        restriction, profile, written = self.restriction, self.profile, self.written
        batches: list[tuple[Compiled, Iterable[Row]]] = []
        if focus_list is None and unit.cycles is not None:
            # Over every target, only a node on a cycle can reach itself: the focused query
            # runs on those (none where the predicate has no cycle).
            focus_list = self.on_cycle(unit.cycles)
            if not focus_list:
                return batches
            restriction, blanks = _restriction(focus_list)
        runs: list[tuple[Compiled, str, dict[str, Term] | None]] = []
        native = (unit.full if focus_list is None else unit.focused).native
        # Literals the store keeps in another form: the judge decides their solutions
        # on the terms as written, the SELECT all the others.
        rewritten = native[0].native if native is not None and written else None
        if native is not None and blanks and "#FOCUS(?this)#" not in native[0].query:
            native = None  # its runs would read every target: the SELECT itself is better
        if (
            profile is not None
            and profile.around is not None
            and unit.direct is not None
            and not unit.direct.whole_only
            and _stored_terms_decide(unit, written)
        ):
            batches.append((unit.focused, unit.direct(profile.around)))
        elif focus_list is None:
            whole = unit.full if native is None else native[0]
            runs.append((unit.full, _FOCUS_MARK.sub("", whole.query), None))
        else:
            query = (unit.focused if native is None else native[0]).query
            if restriction:
                restricted = _FOCUS_MARK.sub(lambda m: restriction(m.group(1)), query)
                runs.append((unit.focused, restricted, None))
            if blanks and "#FOCUS(?this)#" not in query:
                # a nested focus cannot be bound to a blank node: check every target
                runs.append((unit.full, _FOCUS_MARK.sub("", unit.full.query), None))
            else:
                bare = _FOCUS_MARK.sub("", query)
                runs.extend((unit.focused, bare, {"this": b}) for b in blanks)
        drop: set[tuple[Term | None, ...]] = set()
        if rewritten is not None:
            pattern, judge = rewritten
            texts: list[tuple[str, dict[str, Term] | None]]
            texts = [(_FOCUS_MARK.sub("", pattern.query), None)]
            if focus_list is not None:
                texts = (
                    [(_FOCUS_MARK.sub(lambda m: restriction(m.group(1)), pattern.query), None)]
                    if restriction
                    else []
                )
                texts += [(_FOCUS_MARK.sub("", pattern.query), {"this": b}) for b in blanks]
            found = _written_rows(unit, data, pattern, texts)
            drop = {(r["this"], r["path"], r["stored"]) for r in found}
            batches.append((unit.focused if focus_list else unit.full, judged(found, judge)))
        for compiled, text, bindings in runs:
            if native is None:
                solutions = _checked(unit, _rows(data, compiled, text, bindings))
                batches.append((compiled, _without(solutions, drop)))
                continue
            asked = (text, tuple(sorted((bindings or {}).items())))
            if asked not in self.matched:
                self.matched[asked] = list(_checked(unit, _rows(data, native[0], text, bindings)))
            batches.append((compiled, judged(_without(self.matched[asked], drop), native[1])))
        return batches


_ANY = NamedNode("urn:ontoloom:any")


def _cycles(shape: Shape, constraint: Constraint, focused: Compiled) -> NamedNode | None:
    """The predicate of an acyclicity constraint whose focused query can stand for its run
    over every target (see :mod:`.cycles`): ``ol:AcyclicValidator``'s query, by its text, on
    a shape's predicate path, with the focus nodes written in (not nested, not judged)."""
    path = shape.path
    select = getattr(constraint, "select", None)
    if (
        select is None
        or digest(select) != ACYCLIC
        or path is None
        or not path.is_predicate
        or not isinstance(path.iri, NamedNode)
        or focused.parents
        or focused.native is not None
        or "#FOCUS(?this)#" not in focused.query
    ):
        return None
    return path.iri


def _stored_terms_decide(unit: Unit, written: frozenset[Term]) -> bool:
    """Whether a unit's quad reader, which reads the terms as the store keeps them, decides
    as its query would on the terms as written: always for a constraint that only counts,
    else where no value it reads is kept in another form (a predicate path without them)."""
    if not written or not unit.constraint.reads_terms:
        return True
    path = unit.shape.path
    return (
        path is not None and path.is_predicate and path.iri not in written and _ANY not in written
    )


def _rows(data: Backend, compiled: Compiled, query: str, bindings: dict[str, Term] | None):
    per_focus = compiled.violation.per_focus
    if per_focus is None:
        yield from data.select(query, bindings)
        return
    from ontoloom.shacl.components.sparql import prebind_this

    for focus_row in data.select(query, bindings):
        focus = focus_row["this"]
        if isinstance(focus, BlankNode):  # cannot be written in: bind it instead
            yield from data.select(per_focus, {"this": focus})
        else:
            for row in data.select(prebind_this(per_focus, focus)):
                yield {**row, "this": focus}


def _checked(unit: Unit, rows: Iterable[Row]) -> Iterator[Row]:
    """Rows of a unit's query; an evaluation error of the store (an unknown function, …)
    becomes one error naming the shape, not a crash."""
    try:
        yield from rows
    except RuntimeError as exc:
        raise ShapesError(
            f"shape {_shape_label(unit.shape.node)}: its query cannot be evaluated ({exc})"
        ) from None


def _select(
    cx: Compiler,
    violation: Violation,
    source: Callable[[str], str],
    parents: tuple[str, ...],
    written: tuple[str, tuple[str, str]] | None = None,
) -> str:
    """The SELECT of a violation; ``written``: a pattern binding the value as written, and
    its variables (lexical form, datatype)."""
    names = ["?this"] + [
        v
        for v in (violation.value, violation.path, *violation.distinct, *parents)
        if v and v != "?this"
    ]
    joined = ""
    if written is not None:
        joined, variables = written
        names += variables
    prologue = "\n".join(sorted(p for p in cx.prologues | cx.target_prologues if p))
    if violation.per_focus is not None:
        return f"{prologue}\nSELECT DISTINCT ?this WHERE {{ {violation.text} }}"
    where = violation.text if violation.sourced else f"{source('?this')} {violation.text}"
    where += f" {joined}" if joined else ""
    return f"{prologue}\nSELECT DISTINCT {' '.join(dict.fromkeys(names))} WHERE {{ {where} }}"


def _written_rows(
    unit: Unit, data: Backend, pattern: Compiled, texts: list[tuple[str, dict[str, Term] | None]]
) -> list[Row]:
    """The solutions of a judged unit's pattern whose value's triple has a record: the
    value as written, and as stored (``stored``)."""
    assert pattern.written is not None
    lexical, datatype = (name.lstrip("?") for name in pattern.written)
    out: list[Row] = []
    for text, bindings in texts:
        for row in _checked(unit, _rows(data, pattern, text, bindings)):
            form, dt = row.get(lexical), row.get(datatype)
            if isinstance(form, Literal) and isinstance(dt, NamedNode):
                value = Literal(form.value, datatype=dt)
                out.append({**row, "stored": row.get("value"), "value": value})
    return out


def _without(rows: Iterable[Row], drop: set[tuple[Term | None, ...]]) -> Iterator[Row]:
    """``rows`` but those on the triples in ``drop`` (this, path, value)."""
    if not drop:
        yield from rows
        return
    for row in rows:
        if (row.get("this"), row.get("path"), row.get("value")) not in drop:
            yield row


def _values_of(source: Callable[[str], str], parent: str, path: str) -> Callable[[str], str]:
    """A focus source for nested property shapes: the values of the parent's focus nodes."""
    return lambda var: f"{source(parent)} {parent} {path} {var} ."


def _restriction(focus: list[Term] | None) -> tuple[Callable[[str], str] | None, list[BlankNode]]:
    if not focus:
        return None, []
    blanks = [f for f in focus if isinstance(f, BlankNode)]
    listed = " ".join(term_sparql(f) for f in focus if not isinstance(f, BlankNode))
    if not listed:
        return None, blanks
    return (lambda var: f"VALUES {var} {{ {listed} }}"), blanks


def _result(
    unit: Unit,
    compiled: Compiled,
    row: Row,
    renderer: Renderer,
    resolve: _WrittenValues | None = None,
) -> Result:
    v = compiled.violation
    focus = row["this"]
    value = row.get(v.value.lstrip("?")) if v.value else None
    if v.value == "?this" or (value is None and v.value_is_focus):
        value = focus
    if compiled.written is not None:
        lexical, datatype = (row.get(name.lstrip("?")) for name in compiled.written)
        if isinstance(lexical, Literal) and isinstance(datatype, NamedNode):
            value = Literal(lexical.value, datatype=datatype)  # the value node as written
    elif resolve is not None and isinstance(value, Literal):
        value = resolve(focus, value)
    path: Path | Term | None = unit.shape.path
    if v.path:
        found = row.get(v.path.lstrip("?"))
        if isinstance(found, NamedNode):  # sh:resultPath takes ?path only when an IRI
            path = found
    constraint = unit.constraint
    messages = unit.shape.messages or constraint.default_messages
    if constraint.fills_messages:
        if _is_true(row.get("failure")):
            raise ValidationFailure(
                f"the SPARQL query of shape {_shape_label(unit.shape.node)} reported a failure "
                f"(?failure true) for focus node {focus}"
            )
        bound = row.get("message")
        if isinstance(bound, Literal):  # SHACL 5.3.2: a ?message binding comes first
            messages = (bound,)
        names = {k: t for k, t in row.items() if t is not None and not k.startswith("_o")}
        names.update({"this": focus, "value": value, "path": path})
        names.update(getattr(constraint, "parameter_bindings", {}))
        messages = tuple(_fill(m, names) for m in messages)
    if not messages:
        generated = constraint.message(renderer, focus, value, path)
        messages = (Literal(generated),) if generated else ()
    return Result(
        focus=focus,
        path=path,
        value=value,
        source_shape=unit.shape.node,
        component=constraint.component_iri,
        severity=unit.shape.severity,
        messages=messages,
        source_constraint=constraint.source_constraint,
        constraint_name=constraint.short_name,
        root=row.get(compiled.parents[0].lstrip("?")) if compiled.parents else None,
    )


class _WrittenValues:
    """A literal a user's SPARQL query bound as ?value, as written: the written form of the
    focus node's triple that holds it. A literal the query computed, or read from another
    node's triple, stays as the store keeps it."""

    def __init__(self, data: Backend) -> None:
        self._data = data
        self._found: dict[tuple[Term, Literal], Literal] = {}

    def __call__(self, focus: Term, value: Literal) -> Literal:
        key = (focus, value)
        if key not in self._found:
            forms = self._forms("ol:recordSubject $this ; ", {"this": focus, "value": value})
            self._found[key] = forms[0] if len(forms) == 1 else value
        return self._found[key]

    def _forms(self, subject: str, bindings: dict[str, Term]) -> list[Literal]:
        query = (
            f"PREFIX ol: <{OL}>\nSELECT DISTINCT {' '.join('$' + n for n in bindings)} ?l ?d WHERE {{ GRAPH {META} {{ ?r {subject}"
            f"ol:recordObject $value ; ol:lexicalForm ?l ; ol:datatype ?d }} }} LIMIT 2"
        )
        return [
            Literal(r["l"].value, datatype=r["d"])
            for r in self._data.select(query, bindings)
            if isinstance(r["l"], Literal) and isinstance(r["d"], NamedNode)
        ]


def _is_true(term: Term | None) -> bool:
    return isinstance(term, Literal) and term.value in ("true", "1")


def _fill(message: Literal, names: dict[str, object]) -> Literal:
    """Fill ``{?var}`` and ``{$var}`` in a message from a solution and the parameters."""

    def fill(match: re.Match[str]) -> str:
        term = names.get(match.group(1))
        if term is None:
            return match.group(0)
        if isinstance(term, Path):
            return term.sparql()
        return str(getattr(term, "value", term))

    text = re.sub(r"\{[$?](\w+)\}", fill, message.value)
    return Literal(text, language=message.language) if message.language else Literal(text)


def _shape_label(node: Term) -> str:
    return node.value if isinstance(node, NamedNode) else str(node)
