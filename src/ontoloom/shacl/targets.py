"""SHACL-AF custom targets (sh:target): SPARQL-based targets and SPARQL-based target types,
read into :class:`~ontoloom.shacl.shapes.Target` objects whose query the compiler joins
like any other target. A custom target ontoloom cannot run (SHACL-JS, or of no known type)
is reported by name, never dropped."""

from __future__ import annotations

import re

from ontoloom.shacl.shapes import RDF_TYPE, ShapesError, ShapeSet, Target, sh
from ontoloom.terms import BlankNode, NamedNode, Term

__all__ = ["custom_targets"]


def custom_targets(shapes: ShapeSet, node: Term) -> tuple[list[Target], list[str]]:
    """The targets of ``node``'s sh:target values, and the ones it cannot run, as features."""
    from ontoloom.shacl.components.custom import local_name, read_parameters
    from ontoloom.shacl.components.functions import inline_functions
    from ontoloom.shacl.components.sparql import prefixes_of, query_text, substitute
    from ontoloom.shacl.components.unsupported import function_calls

    g = shapes.graph
    targets: list[Target] = []
    unsupported: list[str] = []
    for target in g.objects(node, sh("target")):
        where = f"shape {shapes.label(node)}: sh:target {shapes.label(target)}"
        if shapes.is_instance(target, sh("SPARQLTarget")):
            select = query_text(shapes, target, "select", where)
            if select is None:
                raise ShapesError(f"{where}: a SPARQL-based target needs one sh:select query")
            _check_projects_this(select, where)
            prologue = prefixes_of(shapes, target, where)
            select = inline_functions(shapes, prologue, select)
            feature = function_calls(shapes, f"{prologue}\n{select}")
            if feature is not None:
                unsupported.append(f"{feature} of sh:target {shapes.label(target)}")
                continue
            targets.append(Target("sparqlTarget", target, select, prologue))
            continue
        kinds = [t for t in g.objects(target, RDF_TYPE) if isinstance(t, NamedNode)]
        types = [k for k in kinds if shapes.is_instance(k, sh("SPARQLTargetType"))]
        if not types:
            js = any(shapes.is_instance(target, sh(c)) for c in ("JSTarget",)) or any(
                shapes.is_instance(k, sh("JSTargetType")) for k in kinds
            )
            named = ", ".join(shapes.label(k) for k in kinds) or "no type"
            unsupported.append(
                f"sh:target {shapes.label(target)} (a SHACL-JS target)"
                if js
                else f"sh:target {shapes.label(target)} (a custom target of {named}, "
                "not a SPARQL-based target or target type)"
            )
            continue
        kind = types[0]
        type_where = f"{where} (target type {shapes.label(kind)})"
        names = [local_name(p) for p, _ in read_parameters(g, kind, type_where)]
        select = query_text(shapes, kind, "select", type_where, prebound=names)
        if select is None:
            raise ShapesError(f"{type_where}: a SPARQL-based target type needs one sh:select")
        _check_projects_this(select, type_where)
        bindings: dict[str, Term] = {}
        missing = False
        for path, optional in read_parameters(g, kind, type_where):
            values = g.objects(target, path)
            if len(values) > 1 or any(isinstance(v, BlankNode) for v in values):
                raise ShapesError(
                    f"{where}: the parameter {shapes.label(path)} needs one value that is not "
                    "a blank node"
                )
            if values:
                bindings[local_name(path)] = values[0]
            elif not optional:
                missing = True  # SHACL-AF: a target lacking a mandatory parameter has no nodes
        if missing:
            continue
        for name, term in bindings.items():
            select = substitute(select, name, str(term))
        prologue = prefixes_of(shapes, kind, type_where)
        select = inline_functions(shapes, prologue, select)
        feature = function_calls(shapes, f"{prologue}\n{select}")
        if feature is not None:
            unsupported.append(f"{feature} of sh:target {shapes.label(target)}")
            continue
        targets.append(Target("sparqlTarget", target, select, prologue))
    return targets, unsupported


def _check_projects_this(select: str, where: str) -> None:
    head = re.split(r"(?i)\bWHERE\b|\{", select, maxsplit=1)[0]
    if not re.search(r"(?i)\bSELECT\b", head) or not re.search(r"[?$]this\b|\*", head):
        raise ShapesError(f"{where}: the target's query must be a SELECT of ?this")
