"""What a validation read, so that a commit's precondition can cover exactly that.

A store that many gateways write to at once (:mod:`ontoloom.store.endpoint`) commits a
delta only while nothing its validation read has changed since — not while nothing at all
has changed, which would make every two writers conflict. What a validation reads is named
by *keys*, each a version that every commit touching it moves in the same atomic update as
its delta:

* :func:`out_key` of a node: the quads it is the subject of (what ``around(node)`` reads),
  and of a node and a predicate, those of that predicate (``around(node, predicate)``);
* :func:`in_key` of a node or literal: the quads it is the object of (``around(node,
  incoming=True)``; a literal's also decides whether it is in the graph at all), and
  likewise per predicate;
* :func:`relation_key` of a predicate: every quad of it (what a property path over the
  relation reads: acyclicity, ``?a ol:blocks+ ?b``).

:class:`Recording` wraps a backend for the length of one validation and notes the keys of
what is read through it; a read that is not about named nodes (the whole store, a query)
makes the read set *whole*, and such a commit is guarded by the store's generation as
before (nothing else may have committed since). The schema generation is part of every
read set.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ontoloom.store.base import Delta
from ontoloom.store.lexical import stored_form
from ontoloom.terms import Literal, Quad, Term

__all__ = [
    "ALL_KEY",
    "KEY_BASE",
    "MANY_KEYS",
    "ReadSet",
    "Recording",
    "in_key",
    "out_key",
    "relation_key",
    "touched_keys",
]

KEY_BASE = "urn:ontoloom:v:"
# Moved instead of each key by a commit that touches more than MANY_KEYS (a bulk import): one
# triple, not thousands, in its update. Every read set includes it.
ALL_KEY = f"{KEY_BASE}all"
MANY_KEYS = 1000


def _key(kind: str, term: object, predicate: object = None) -> str:
    # A digest, not the term itself: any IRI (or skolemised blank node) gives a short, valid
    # one. A literal by the value the store keeps, in whatever form it was written or read.
    if isinstance(term, Literal):
        term = stored_form(term)
    text = str(term) if predicate is None else f"{term} {predicate}"
    digest = hashlib.blake2b(text.encode(), digest_size=12).hexdigest()
    return f"{KEY_BASE}{kind}:{digest}"


def out_key(node: object, predicate: object = None) -> str:
    """The version of the quads ``node`` is the subject of (of ``predicate`` only, if given)."""
    return _key("o", node) if predicate is None else _key("o", node, predicate)


def in_key(node: object, predicate: object = None) -> str:
    """The version of the quads ``node`` is the object of (of ``predicate`` only, if given)."""
    return _key("i", node) if predicate is None else _key("i", node, predicate)


def relation_key(predicate: object) -> str:
    """The version of every quad of ``predicate``."""
    return _key("r", predicate)


def touched_keys(delta: Delta, name: Any = None) -> set[str]:
    """The keys a commit of ``delta`` moves: the subject's outgoing and the object's incoming
    quads of each quad it adds or removes, and each predicate's relation. ``name`` maps a
    term to the form the store keeps (blank nodes skolemised) before it is keyed."""
    keys: set[str] = set()
    for quad in (*delta.adds, *delta.removes):
        if len(keys) > MANY_KEYS:
            return {ALL_KEY}
        s, o = (
            (quad.subject, quad.object) if name is None else (name(quad.subject), name(quad.object))
        )
        p = quad.predicate
        keys |= {out_key(s), out_key(s, p), in_key(o), in_key(o, p), relation_key(p)}
    return {ALL_KEY} if len(keys) > MANY_KEYS else keys


@dataclass
class ReadSet:
    """The keys one validation read, the schema generation it validated under, and whether it
    read beyond named keys (``whole``: then only an unchanged store generation will do)."""

    schema_at: int = 0
    keys: set[str] = field(default_factory=lambda: {ALL_KEY})
    whole: bool = False

    def nodes(self, nodes: Iterable[Term], *, incoming: bool, predicate: Term | None) -> None:
        for node in nodes:
            if incoming:
                self.keys.add(in_key(node, predicate))
            elif not isinstance(node, Literal):  # nothing starts at a literal, ever
                self.keys.add(out_key(node, predicate))


# Reads that are not about named nodes: the whole store, or a query whose reach is unknown.
_WHOLE = frozenset(
    {"quads", "data_quads", "select", "ask", "construct", "serialize_results", "named_graphs"}
)


class Recording:
    """``backend`` as seen by one validation, noting into ``reads`` what it read."""

    def __init__(self, backend: Any, reads: ReadSet, name: Any = None) -> None:
        self._backend = backend
        self.reads = reads
        self._name = name or (lambda t: t)

    def around(
        self, nodes: Iterable[Term], predicate: Term | None = None, *, incoming: bool = False
    ) -> Iterator[Quad]:
        nodes = list(nodes)
        self.reads.nodes(map(self._name, nodes), incoming=incoming, predicate=predicate)
        return self._backend.around(nodes, predicate, incoming=incoming)

    def mentioning(self, node: Term, limit: int) -> list[Quad]:
        """Read to know whether ``node`` is in the graph at all (a witness): what the answer
        depends on is that the quads found are still there — each guarded by its subject's
        key for its predicate, so that writes mentioning a shared node (a class, a common value) elsewhere do
        not conflict — and, when fewer than ``limit`` were found, that no other appeared."""
        found = list(self._backend.mentioning(node, limit))
        self.reads.keys |= {out_key(self._name(q.subject), q.predicate) for q in found}
        if len(found) < limit:
            named = self._name(node)
            self.reads.keys.add(in_key(named))
            if not isinstance(named, Literal):
                self.reads.keys.add(out_key(named))
        return found

    def __getattr__(self, name: str) -> Any:
        if name in _WHOLE:
            self.reads.whole = True
        return getattr(self._backend, name)
