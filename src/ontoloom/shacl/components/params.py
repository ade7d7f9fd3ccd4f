"""Reading a shape's parameters, refusing malformed ones as pySHACL does at load time (and
as SHACL-SHACL, the spec's shapes graph for shapes graphs, states them): each error names
the shape, the parameter and the fix. An ill-formed parameter is never ignored."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ontoloom.shacl.shapes import ShapesError
from ontoloom.terms import BlankNode, Literal, NamedNode, Term
from ontoloom.vocab import RDF, XSD

if TYPE_CHECKING:
    from ontoloom.shacl.shapes import Shape, ShapeSet

__all__ = ["Params"]

RDF_NIL = NamedNode(RDF + "nil")
# Integer datatypes pySHACL accepts for sh:minLength and sh:maxLength.
WHOLE = {
    XSD + t
    for t in (
        "integer",
        "int",
        "long",
        "short",
        "byte",
        "nonNegativeInteger",
        "positiveInteger",
        "unsignedLong",
        "unsignedInt",
        "unsignedShort",
        "unsignedByte",
    )
}


class Params:
    """The values of one shape's parameters, checked as they are read."""

    def __init__(self, shapes: ShapeSet, shape: Shape) -> None:
        self.shapes, self.shape, self.g = shapes, shape, shapes.graph
        self._values = shapes.parameters(shape.node)

    def error(self, local: str, problem: str, fix: str) -> ShapesError:
        return ShapesError(
            f"shape {self.shapes.label(self.shape.node)}: sh:{local} {problem}; {fix}"
        )

    def values(self, local: str) -> list[Term]:
        return self._values.get(local, [])

    def at_most_one(self, local: str) -> Term | None:
        values = self.values(local)
        if len(values) > 1:
            shown = ", ".join(self.shapes.label(v) for v in values)
            raise self.error(local, f"has {len(values)} values ({shown})", "keep one")
        return values[0] if values else None

    def property_shape_only(self, local: str) -> None:
        if self.values(local) and self.shape.path is None:
            raise self.error(
                local,
                "is used on a node shape",
                "move it to a property shape (one with sh:path)",
            )

    def count(self, local: str) -> int | None:
        """sh:minCount, sh:maxCount, sh:qualifiedMin/MaxCount: one xsd:integer >= 0."""
        value = self.at_most_one(local)
        if value is None:
            return None
        if not (isinstance(value, Literal) and value.datatype.value == XSD + "integer"):
            raise self.error(
                local,
                f"{self.shapes.label(value)} is not an xsd:integer",
                "write a whole number such as 1",
            )
        n = _integer(value)
        if n is None or n < 0:
            raise self.error(
                local,
                f"{self.shapes.label(value)} is not an integer >= 0",
                "write a whole number such as 1",
            )
        return n

    def length(self, local: str) -> int | None:
        """sh:minLength, sh:maxLength: one literal of an integer datatype, >= 0."""
        value = self.at_most_one(local)
        if value is None:
            return None
        n = _integer(value) if isinstance(value, Literal) else None
        if not isinstance(value, Literal) or value.datatype.value not in WHOLE or n is None:
            raise self.error(
                local,
                f"{self.shapes.label(value)} is not an integer",
                "write a whole number such as 3",
            )
        if n < 0:
            raise self.error(
                local, f"{self.shapes.label(value)} is negative", "write a number >= 0"
            )
        return n

    def boolean(self, local: str) -> bool | None:
        value = self.at_most_one(local)
        if value is None:
            return None
        if not (isinstance(value, Literal) and value.datatype.value == XSD + "boolean"):
            raise self.error(
                local, f"{self.shapes.label(value)} is not a boolean", "write true or false"
            )
        if value.value not in ("true", "false", "1", "0"):
            raise self.error(
                local, f"{self.shapes.label(value)} is not a boolean", "write true or false"
            )
        # Only true switches a parameter on: "1" is a boolean but not the one the spec names
        # (W3C test core/property/uniqueLang-002).
        return value.value == "true"

    def iris(self, local: str) -> list[NamedNode]:
        out = []
        for value in self.values(local):
            if not isinstance(value, NamedNode):
                raise self.error(
                    local,
                    f"{self.shapes.label(value)} is not an IRI",
                    "name the class or property by its IRI",
                )
            out.append(value)
        return out

    def literals(self, local: str) -> list[Literal]:
        out = []
        for value in self.values(local):
            if not isinstance(value, Literal):
                raise self.error(
                    local, f"{self.shapes.label(value)} is not a literal", "write a literal"
                )
            out.append(value)
        return out

    def shapes_referenced(self, local: str) -> list[Term]:
        """Values of a shape-expecting parameter: IRIs or blank nodes."""
        out: list[Term] = []
        for value in self.values(local):
            if isinstance(value, Literal):
                raise self.error(
                    local,
                    f"{self.shapes.label(value)} is a literal, not a shape",
                    "refer to a shape node",
                )
            out.append(value)
        return out

    def lists(self, local: str) -> list[list[Term]]:
        """Values that must be well-formed RDF lists (rdf:first/rdf:rest, ending in rdf:nil)."""
        return [self.members(local, head) for head in self.values(local)]

    def members(self, local: str, head: Term) -> list[Term]:
        fix = f"write the value as a Turtle list, e.g. sh:{local} ( … )"
        if head == RDF_NIL:
            return []
        if not isinstance(head, BlankNode | NamedNode):
            raise self.error(local, f"{self.shapes.label(head)} is not a list", fix)
        items = self.g.items(head)
        node: Term | None = head
        for _ in items:  # walk again, to see where the list ends
            node = self.g.value(node, NamedNode(RDF + "rest")) if node is not None else None
        if not items or node != RDF_NIL:
            raise self.error(local, f"{self.shapes.label(head)} is not a well-formed list", fix)
        return items


def _integer(value: Literal) -> int | None:
    try:
        return int(value.value)
    except ValueError:
        return None
