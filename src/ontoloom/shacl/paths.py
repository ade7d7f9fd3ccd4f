"""SHACL property paths: parsed from a shapes graph, written as SPARQL property paths."""

from __future__ import annotations

from dataclasses import dataclass, field

from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.terms import BlankNode, NamedNode, Term
from ontoloom.vocab import SH

__all__ = ["Path", "parse_path"]

_KINDS = {
    SH + "inversePath": "inverse",
    SH + "alternativePath": "alternative",
    SH + "zeroOrMorePath": "zeroOrMore",
    SH + "oneOrMorePath": "oneOrMore",
    SH + "zeroOrOnePath": "zeroOrOne",
}
_SUFFIX = {"zeroOrMore": "*", "oneOrMore": "+", "zeroOrOne": "?"}


class PathError(ValueError):
    pass


@dataclass(frozen=True)
class Path:
    """``kind`` is predicate, inverse, sequence, alternative, zeroOrMore, oneOrMore, zeroOrOne."""

    kind: str
    iri: NamedNode | None = None
    parts: tuple[Path, ...] = ()
    # The path's node in the shapes graph, for reports; two paths that walk alike are equal
    # wherever they were read from (a report's copy of a shape's path included).
    node: Term | None = field(default=None, compare=False)

    def sparql(self) -> str:
        if self.kind == "predicate":
            return str(self.iri)
        if self.kind == "inverse":
            return f"^({self.parts[0].sparql()})"
        if self.kind == "sequence":
            return "(" + "/".join(p.sparql() for p in self.parts) + ")"
        if self.kind == "alternative":
            return "(" + "|".join(p.sparql() for p in self.parts) + ")"
        return f"({self.parts[0].sparql()}){_SUFFIX[self.kind]}"

    @property
    def is_predicate(self) -> bool:
        return self.kind == "predicate"

    def depth(self) -> int | None:
        """How many edges the path walks at most; ``None`` when unbounded."""
        if self.kind == "predicate":
            return 1
        if self.kind in ("inverse", "zeroOrOne"):
            return self.parts[0].depth()
        if self.kind in ("zeroOrMore", "oneOrMore"):
            return None
        depths = [p.depth() for p in self.parts]
        known = [d for d in depths if d is not None]
        if len(known) < len(depths):
            return None
        return sum(known) if self.kind == "sequence" else max(known)

    def predicates(self, inverse: bool = False) -> set[tuple[NamedNode, bool]]:
        """Every predicate the path walks, with the direction it walks it in."""
        if self.kind == "predicate":
            assert self.iri is not None
            return {(self.iri, inverse)}
        flip = inverse != (self.kind == "inverse")
        out: set[tuple[NamedNode, bool]] = set()
        for part in self.parts:
            out |= part.predicates(flip)
        return out


def parse_path(g: TripleIndex, node: Term, _depth: int = 0) -> Path:
    """Read a SHACL path expression rooted at ``node``.

    :raises PathError: on a malformed or absurdly deep path.
    """
    if _depth > 50:
        raise PathError("path nesting too deep")
    if isinstance(node, NamedNode):
        return Path("predicate", iri=node, node=node)
    if not isinstance(node, BlankNode):
        raise PathError(f"a path cannot be the literal {node}")
    members = g.items(node)
    if members:
        return Path(
            "sequence", parts=tuple(parse_path(g, m, _depth + 1) for m in members), node=node
        )
    for kind_iri, kind in _KINDS.items():
        target = g.value(node, NamedNode(kind_iri))
        if target is None:
            continue
        if kind == "alternative":
            alts = tuple(parse_path(g, m, _depth + 1) for m in g.items(target))
            if not alts:
                raise PathError("sh:alternativePath needs a non-empty list")
            return Path("alternative", parts=alts, node=node)
        return Path(kind, parts=(parse_path(g, target, _depth + 1),), node=node)
    raise PathError(f"{node} is not a SHACL path")
