"""Run compiled shapes against any backend and collect W3C-style validation results."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from ontoloom.shacl.compiler import CompileError, Compiler, Violation, term_sparql
from ontoloom.shacl.components import Constraint
from ontoloom.shacl.components.sparql import SPARQLConstraintComponent
from ontoloom.shacl.components.unsupported import NotEvaluated
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
from ontoloom.terms import BlankNode, Literal, NamedNode, Term, Triple
from ontoloom.vocab import RDFS

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
    engines: dict[str, str] = field(default_factory=dict)  # shape → "sparql" | "pyshacl"
    # Features the shapes use that were not evaluated (only when the caller allowed it).
    unsupported: list[Unsupported] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what else was not done, said as warnings
    # Shapes whose results on some nodes pySHACL gave instead, on the terms as written
    # (those nodes read literals the store keeps by value): shape → how many nodes.
    as_written: dict[str, int] = field(default_factory=dict)

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
    ) -> None:
        if not isinstance(shapes, ShapeSet):
            shapes = ShapeSet(shapes, prefixes=prefixes)
        self.shapes = shapes
        self.extra_classes = list(extra_classes)
        self.skip = skip
        self.shapes_graph = shapes_graph  # where $shapesGraph points, when the data has it
        # How generated messages write terms: these prefixes, and the shapes graph's blanks.
        self.renderer = Renderer(prefixes, self.shapes.graph)
        # Entailment regimes the caller applied to the data (sh:Rules, after running rules):
        # any other sh:entailment is a feature not evaluated (SHACL: signal a failure).
        self.entailments = set(entailments)
        # sh:select digest → judge: focused runs of that constraint filter in Python
        self.judges = dict(judges or {})
        self._unsupported: dict[frozenset[Term] | None, list[Unsupported]] = {}
        self._plans: dict[frozenset[tuple[Term, Term]], tuple[list[Unit], list[Shape]]] = {}
        self._selections: dict[object, _Selection] = {}

    # -- compilation ---------------------------------------------------------------------
    def hierarchy(self, data: Backend) -> Hierarchy:
        rows = data.select(f"SELECT ?s ?o WHERE {{ ?s <{RDFS}subClassOf> ?o }}")
        pairs = [(r["s"], r["o"]) for r in rows if r["s"] is not None and r["o"] is not None]
        return Hierarchy([*pairs, *self.extra_classes])

    def plan(self, hierarchy: Hierarchy) -> tuple[list[Unit], list[Shape]]:
        """Compiled units, and the targeted shapes the compiler had to leave to pySHACL."""
        key = hierarchy.key()
        cached = self._plans.get(key)
        if cached is not None:
            return cached
        units: list[Unit] = []
        fallback: list[Shape] = []
        for top in self.shapes.targeted():
            compiler = Compiler(self.shapes, hierarchy, self.shapes_graph)
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
                    )
                    for (shape, constraint, a), (_, _, b) in zip(full, focused, strict=True)
                )
            except CompileError:
                fallback.append(top)
            except ShapesError:
                raise
        self._plans[key] = (units, fallback)
        return units, fallback

    def _selected(self, hierarchy: Hierarchy, only: Collection[Term] | None) -> _Selection:
        """The plan's units and fallback shapes of the targeted shapes ``only`` names (all
        when None): made once per plan and selection — a write validates the same few."""
        key = (hierarchy.key(), None if only is None else frozenset(only))
        found = self._selections.get(key)
        if found is None:
            units, fallback = self.plan(hierarchy)
            if only is not None:
                units = [u for u in units if u.top.node in only]
                fallback = [s for s in fallback if s.node in only]
            if len(self._selections) >= _SELECTIONS_KEPT:
                self._selections.clear()
            found = self._selections[key] = _Selection(units, fallback)
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
            compiled = Compiled(_select(cx, violation, source, parents), violation, parents)
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
        return Compiled(_select(cx, violation, source, parents), violation, parents), judge

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
        seen: set[Term] = set()
        # Targeted shapes, and those whose only targets are ones ontoloom cannot run.
        stack = [
            n
            for n in shapes.all_shape_nodes()
            if (shapes.shape(n).targets or shapes.shape(n).unsupported)
            and not shapes.shape(n).deactivated
            and (only is None or n in only)
        ]
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            shape = shapes.shape(node)
            out += [Unsupported(node, feature) for feature in shape.unsupported]
            for c in shape.constraints:
                if isinstance(c, NotEvaluated):
                    out.append(Unsupported(node, c.feature))
                stack += c.shape_refs()
            stack += shape.properties
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
    ) -> Report:
        """Validate ``data``; with ``focus``, only those nodes (as focus nodes of their targets);
        with ``only``, only those targeted shapes.

        :raises UnsupportedFeatures: when the shapes use a feature ontoloom does not
            evaluate, unless ``allow_unsupported`` (then the report lists them).
        """
        unsupported = self.unsupported(only)
        if unsupported and not allow_unsupported:
            raise UnsupportedFeatures(unsupported, self.shapes.describe)
        hierarchy = hierarchy or self.hierarchy(data)
        selection = self._selected(hierarchy, only)
        units, fallback = selection.units, selection.fallback
        report = Report(unsupported=unsupported)
        focus_list = None if focus is None else list(dict.fromkeys(focus))
        if focus_list is not None and not focus_list:
            return report
        restriction, blanks = _restriction(focus_list)
        profile = (
            None
            if focus_list is None
            else _Profile.of(data, focus_list, hierarchy, selection.objects_of)
        )
        matched: dict[
            tuple[str, tuple[tuple[str, Term], ...]], list[Row]
        ] = {}  # judged units share rows
        report.engines.update(dict.fromkeys(selection.labels, "sparql"))
        targetable: dict[Term, bool] = {}  # per top shape: whether it may target the focus
        for unit in units:
            if profile is not None:
                top = unit.top.node
                if top not in targetable:
                    targetable[top] = profile.may_target(unit.top)
                if not targetable[top] or profile.has_no_values(unit):
                    continue
            batches: list[tuple[Compiled, Iterable[Row]]] = []
            runs: list[tuple[Compiled, str, dict[str, Term] | None]] = []
            native = None if focus_list is None else unit.focused.native
            if native is not None and blanks and "#FOCUS(?this)#" not in native[0].query:
                native = None  # its runs would read every target: the SELECT itself is better
            if profile is not None and profile.around is not None and unit.direct is not None:
                batches.append((unit.focused, unit.direct(profile.around)))
            elif focus_list is None:
                runs.append((unit.full, _FOCUS_MARK.sub("", unit.full.query), None))
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
            for compiled, text, bindings in runs:
                if native is None:
                    batches.append(
                        (compiled, _checked(unit, _rows(data, compiled, text, bindings)))
                    )
                    continue
                asked = (text, tuple(sorted((bindings or {}).items())))
                if asked not in matched:
                    matched[asked] = list(_checked(unit, _rows(data, native[0], text, bindings)))
                batches.append((compiled, judged(matched[asked], native[1])))
            seen: set[tuple[object, ...]] = set()  # one result per distinct row, per unit
            for compiled, rows in batches:
                extra = [*compiled.violation.distinct, *compiled.parents]
                for row in rows:
                    result = _result(unit, compiled, row, self.renderer)
                    key = (result.key(), *(str(row.get(v.lstrip("?"))) for v in extra))
                    if key not in seen:
                        seen.add(key)
                        report.results.append(result)
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
        from ontoloom.shacl.faithful import judge_as_written

        return judge_as_written(
            report,
            self.shapes,
            data,
            focus_list,
            hierarchy,
            selection.tops,
            self.skip,
            lambda shape, nodes: self._targeted(data, shape, nodes, hierarchy),
            self.renderer,
        )

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


@dataclass
class _Selection:
    units: list[Unit]
    fallback: list[Shape]
    tops: list[Shape] = field(init=False)  # the units' targeted shapes, in order
    labels: list[str] = field(init=False)
    objects_of: list[Term] = field(init=False)  # the predicates of their objects-of targets

    def __post_init__(self) -> None:
        self.tops = list({u.top.node: u.top for u in self.units}.values())
        self.labels = [_shape_label(top.node) for top in self.tops]
        targets = [t for top in self.tops for t in top.targets]
        self.objects_of = sorted({t.term for t in targets if t.kind == "targetObjectsOf"}, key=str)


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
        out = {p for values in around.out.values() for p in values}
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


_ANY = NamedNode("urn:ontoloom:any")


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
    cx: Compiler, violation: Violation, source: Callable[[str], str], parents: tuple[str, ...]
) -> str:
    names = ["?this"] + [
        v
        for v in (violation.value, violation.path, *violation.distinct, *parents)
        if v and v != "?this"
    ]
    prologue = "\n".join(sorted(p for p in cx.prologues | cx.target_prologues if p))
    if violation.per_focus is not None:
        return f"{prologue}\nSELECT DISTINCT ?this WHERE {{ {violation.text} }}"
    where = violation.text if violation.sourced else f"{source('?this')} {violation.text}"
    return f"{prologue}\nSELECT DISTINCT {' '.join(dict.fromkeys(names))} WHERE {{ {where} }}"


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


def _result(unit: Unit, compiled: Compiled, row, renderer: Renderer) -> Result:
    v = compiled.violation
    focus = row["this"]
    value = row.get(v.value.lstrip("?")) if v.value else None
    if v.value == "?this" or (value is None and v.value_is_focus):
        value = focus
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
