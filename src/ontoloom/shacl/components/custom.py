"""SPARQL-based constraint components declared in a shapes graph (SHACL 6): parameters,
validators, and the constraints they give the shapes that use them.

Ill-formed declarations are refused as pySHACL refuses them; a component whose validator
ontoloom cannot run (JavaScript) gives a constraint that is reported as not evaluated.
"""

from __future__ import annotations

import itertools
import re

from ontoloom.shacl.compiler import is_true
from ontoloom.shacl.components import Constraint
from ontoloom.shacl.components.functions import inline_functions
from ontoloom.shacl.components.sparql import (
    ANNOTATIONS,
    CustomAskConstraint,
    CustomSelectConstraint,
    prefixes_of,
    query_text,
)
from ontoloom.shacl.components.unsupported import NotEvaluated, function_calls
from ontoloom.shacl.hierarchy import Hierarchy
from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.shacl.shapes import RDF_TYPE, Shape, ShapesError, ShapeSet, sh
from ontoloom.terms import Literal, NamedNode, Term
from ontoloom.vocab import RDFS

__all__ = ["CustomComponentDefinition", "local_name", "read_parameters"]

RESERVED = {"this", "shapesGraph", "currentShape", "path", "PATH", "value"}
_VARNAME = re.compile(r"[A-Za-z_][\w]*")


def local_name(iri: NamedNode) -> str:
    """The parameter name: the local name of the parameter's sh:path (SHACL 6.1)."""
    return re.split(r"[#/:]", iri.value)[-1]


def read_parameters(g: TripleIndex, node: Term, where: str) -> list[tuple[NamedNode, bool]]:
    """The sh:parameter declarations of a component or target type: (path, optional).

    :raises ShapesError: none declared, one without exactly one IRI sh:path, or a name a
        SPARQL variable cannot take or two parameters share.
    """
    out: list[tuple[NamedNode, bool]] = []
    params = g.objects(node, sh("parameter"))
    if not params:
        raise ShapesError(f"{where} declares no sh:parameter; declare at least one")
    for param in params:
        paths = g.objects(param, sh("path"))
        if len(paths) != 1 or not isinstance(paths[0], NamedNode):
            raise ShapesError(f"{where}: each sh:parameter needs exactly one sh:path, an IRI")
        name = local_name(paths[0])
        if name in RESERVED or not _VARNAME.fullmatch(name):
            raise ShapesError(
                f"{where}: the parameter {paths[0]} is named ${name}, which a SPARQL "
                f"query cannot take (reserved: {', '.join(sorted(RESERVED))}); rename it"
            )
        if any(local_name(p) == name for p, _ in out):
            raise ShapesError(f"{where}: two parameters are named ${name}; rename one")
        out.append((paths[0], is_true(g.value(param, sh("optional")))))
    return out


class CustomComponentDefinition:
    """A sh:ConstraintComponent declared in the shapes graph.

    :raises ShapesError: on an ill-formed declaration (no parameter, a parameter without
        one sh:path, no mandatory parameter, a reserved or repeated parameter name, a
        validator without a query).
    """

    def __init__(self, g: TripleIndex, node: NamedNode) -> None:
        self.node = node
        where = f"constraint component {node}"
        self.parameters = read_parameters(g, node, where)
        if all(optional for _, optional in self.parameters):
            raise ShapesError(f"{where}: every parameter is optional; make one mandatory")
        self.where = where
        self.validator = g.value(node, sh("validator"))
        self.node_validator = g.value(node, sh("nodeValidator"))
        self.property_validator = g.value(node, sh("propertyValidator"))

    @classmethod
    def all_in(cls, g: TripleIndex) -> list[CustomComponentDefinition]:
        # Components may be typed with a subclass of sh:ConstraintComponent.
        subclass = NamedNode(RDFS + "subClassOf")
        classes = Hierarchy(g.pairs(subclass)).subclasses(sh("ConstraintComponent"))
        nodes = {n for c in classes for n in g.subjects(RDF_TYPE, c) if isinstance(n, NamedNode)}
        return [cls(g, n) for n in sorted(nodes, key=str)]

    def instantiate(self, shapes: ShapeSet, shape: Shape) -> list[Constraint]:
        g = shapes.graph
        required = [p for p, optional in self.parameters if not optional]
        if any(not g.objects(shape.node, p) for p in required):
            return []
        # SHACL 6.2.3: no validator for this kind of shape — the spec ignores the constraint.
        validator = (
            self.property_validator if shape.path is not None else self.node_validator
        ) or self.validator
        if validator is None:
            return []
        names = [p for p, _ in self.parameters if g.objects(shape.node, p)]
        choices = [g.objects(shape.node, p) for p in names]
        out: list[Constraint] = []
        for combo in itertools.product(*choices):
            bindings = {local_name(p): t for p, t in zip(names, combo, strict=True)}
            out.append(self._constraint(shapes, shape, validator, bindings))
        return out

    def _constraint(
        self, shapes: ShapeSet, shape: Shape, validator: Term, bindings: dict[str, Term]
    ) -> Constraint:
        g = shapes.graph
        where = f"{self.where} (validator {validator})"
        params = list(bindings)
        select = query_text(shapes, validator, "select", where, prebound=params)
        ask = query_text(shapes, validator, "ask", where, prebound=[*params, "value"])
        c: Constraint
        prologue = prefixes_of(shapes, validator, where)
        select = inline_functions(shapes, prologue, select) if select is not None else None
        ask = inline_functions(shapes, prologue, ask) if ask is not None else None
        feature = function_calls(shapes, f"{prologue}\n{select or ask or ''}")
        if feature is not None:
            return NotEvaluated(self.node.value, feature)
        if select is not None:
            c = CustomSelectConstraint(
                self.node, select, prefixes_of(shapes, validator, where), bindings
            )
        elif ask is not None:
            c = CustomAskConstraint(self.node, ask, prefixes_of(shapes, validator, where), bindings)
        elif g.objects(validator, sh("jsFunctionName")) or sh("JSValidator") in g.objects(
            validator, RDF_TYPE
        ):
            return NotEvaluated(
                self.node.value,
                f"the constraint component {self.node.value} (a JavaScript validator, SHACL-JS)",
            )
        else:
            raise ShapesError(f"{where} has no sh:select or sh:ask query; give it one")
        if g.objects(validator, sh("resultAnnotation")):  # results, but not their annotations
            shape.unsupported.append(ANNOTATIONS)
        c.default_messages = tuple(
            m
            for m in g.objects(validator, sh("message")) or g.objects(self.node, sh("message"))
            if isinstance(m, Literal)
        )
        c.parameter_bindings = bindings
        return c
