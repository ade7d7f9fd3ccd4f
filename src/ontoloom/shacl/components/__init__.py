"""SHACL constraint components, one module per family as in the SHACL spec (and pySHACL).

Each component class is named after its spec IRI and turns its parameters into a
:class:`~ontoloom.shacl.compiler.Violation` pattern.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from typing import TYPE_CHECKING, ClassVar

from ontoloom.terms import Literal, NamedNode, Term
from ontoloom.vocab import SH

if TYPE_CHECKING:
    from ontoloom.shacl.compiler import Compiler, Source, Violation
    from ontoloom.shacl.direct import Around
    from ontoloom.shacl.hierarchy import Hierarchy
    from ontoloom.shacl.paths import Path
    from ontoloom.shacl.rdfgraph import TripleIndex
    from ontoloom.shacl.render import Renderer
    from ontoloom.shacl.shapes import Shape, ShapeSet

__all__ = ["Constraint", "QuadCheck", "custom_components", "parse_constraints"]

#: A constraint decided over quads as written: the focus nodes, each with its value nodes,
#: and the quads around them → the violations, each (focus node, value node or None when
#: the focus node itself violates). The same semantics as the compiled query it stands for.
QuadCheck = Callable[
    [list[tuple[Term, Collection[Term]]], "Around"], Iterator[tuple[Term, Term | None]]
]


class Constraint:
    """One use of a constraint component by one shape."""

    component: ClassVar[str] = ""  # local name under sh:, or a full IRI for custom ones
    name: ClassVar[str] = ""  # the short name agents see ("minCount", "class", …)
    parameters: ClassVar[tuple[str, ...]] = ()  # sh: local names that trigger parsing

    source_constraint: Term | None = None
    # Messages the shapes graph declares for the constraint itself (SPARQL-based ones).
    default_messages: tuple[Literal, ...] = ()
    # SPARQL-based: messages are filled from the solution, and a ?message binding wins.
    fills_messages: ClassVar[bool] = False
    # Holds trivially for a focus node whose path has no value (SHACL states each of these
    # "for each value node", or as a most): a focused run skips it where no focus node has
    # the property shape's predicate.
    per_value: ClassVar[bool] = False
    # Whether what it decides depends on the value terms themselves, not only on how many
    # there are: a count decides alike on the terms as the store keeps them (two written
    # forms of one stored term are refused at the door), so its quad reader stays in use
    # where the store keeps some literals in another form than written.
    reads_terms: ClassVar[bool] = True
    parameter_bindings: dict[str, Term] = {}  # noqa: RUF012 — custom components' parameters
    # Whether its quad check reads quads of the value nodes (their types), beyond the focus
    # nodes' own: only a run holding every quad of the data (whole validation) may use it.
    reads_value_quads: ClassVar[bool] = False

    @property
    def component_iri(self) -> NamedNode:
        return NamedNode(self.component if ":" in self.component else SH + self.component)

    @property
    def short_name(self) -> str:
        return self.name

    @classmethod
    def from_shape(cls, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        raise NotImplementedError

    def pattern(
        self, cx: Compiler, shape: Shape, focus: str, source: Source | None
    ) -> Violation | None:
        """The violation pattern; ``source`` is given at top level (focus not yet bound)."""
        raise NotImplementedError

    def quad_check(self, hierarchy: Hierarchy) -> QuadCheck | None:
        """The constraint decided over the quads (:mod:`ontoloom.shacl.direct`) instead of
        by its compiled query, with the query's semantics on the terms as written; None
        when only the query decides it."""
        return None

    def shape_refs(self) -> list[Term]:
        """Shapes this constraint validates value nodes against (for reach analysis)."""
        return []

    def read_queries(self, shape: Shape) -> list[tuple[str, bool]]:
        """The SPARQL queries this constraint runs for ``shape``, as run (prefixes declared,
        parameters and $PATH written in), each with whether ``$value`` is pre-bound to the
        value nodes; ``$this`` is always the focus. Core components run none of their own.

        :raises CompileError: when a query cannot be written for this shape.
        """
        return []

    def message(
        self, r: Renderer, focus: Term, value: Term | None, path: Path | Term | None
    ) -> str | None:
        """The result message when the shapes graph declares none (SHACL lets processors
        generate one), worded as pySHACL words it."""
        return None


def sh_values(g: TripleIndex, shape: Shape, local: str) -> list[Term]:
    return g.objects(shape.node, NamedNode(SH + local))


def core_components() -> list[type[Constraint]]:
    from ontoloom.shacl.components import (
        cardinality,
        expression,
        logical,
        other,
        property_pair,
        shape_based,
        sparql,
        string_based,
        unsupported,
        value_range,
        value_type,
    )

    modules = (
        value_type,
        cardinality,
        value_range,
        string_based,
        property_pair,
        logical,
        shape_based,
        other,
        sparql,
        expression,
        unsupported,
    )
    return [c for m in modules for c in m.COMPONENTS]


def parse_constraints(shapes: ShapeSet, shape: Shape) -> list[Constraint]:
    out: list[Constraint] = []
    for component in core_components():
        out.extend(component.from_shape(shapes, shape))
    for custom in shapes.custom:
        out.extend(custom.instantiate(shapes, shape))
    return out


def custom_components(g: TripleIndex) -> list:
    from ontoloom.shacl.components.custom import CustomComponentDefinition

    return CustomComponentDefinition.all_in(g)
