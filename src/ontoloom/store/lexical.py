"""Literals kept as written, behind a store that keeps them by value.

Oxigraph stores a literal by its value: ``"007"^^xsd:integer`` comes back as ``"7"``,
``"5"^^xsd:int`` as ``"5"^^xsd:integer``, ``"1.0"^^xsd:decimal`` as ``"1"`` (oxigraph#526),
and other SPARQL stores do the same. The encoding at the storage seam:

* the store holds the literal as it keeps it (its *stored* form), so SPARQL compares,
  filters and orders by value;
* for a literal whose stored form differs from what was written, a *record* in the
  bookkeeping graph keeps the lexical form and datatype as written, keyed by the stored
  quad: ``<urn:ontoloom:lexical:{sha256 of the stored quad}> ol:lexicalForm "007" ;
  ol:datatype xsd:integer``, with the stored triple it belongs to (``ol:recordSubject``,
  ``ol:recordPredicate``, ``ol:recordObject``: the validation engine joins a value node
  with its written form in SPARQL). Plain triples, so any SPARQL store can hold them;
* reads that return quads (export, dumps, validation copies) give them back as written;
* two literals written for one subject, predicate and graph that the store would keep as
  one value are refused: the store could keep only one of them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

import pyoxigraph

from ontoloom.terms import BlankNode, Literal, NamedNode, Quad, literal, subject
from ontoloom.vocab import META, OL, XSD

__all__ = [
    "DATATYPE",
    "LEXICAL_FORM",
    "RECORD_OBJECT",
    "RECORD_PREDICATE",
    "RECORD_SUBJECT",
    "record_iri",
    "record_key",
    "record_quads",
    "split_kept",
    "stored_form",
    "stored_quads",
    "written_literal",
]

LEXICAL_FORM = NamedNode(OL + "lexicalForm")
DATATYPE = NamedNode(OL + "datatype")
# The stored triple a record belongs to (records made before these were kept lack them).
RECORD_SUBJECT = NamedNode(OL + "recordSubject")
RECORD_PREDICATE = NamedNode(OL + "recordPredicate")
RECORD_OBJECT = NamedNode(OL + "recordObject")
_RECORD = "urn:ontoloom:lexical:"
_XSD_STRING = NamedNode(XSD + "string")
_PROBE = NamedNode("urn:ontoloom:probe")


_cache: dict[Literal, Literal] = {}
_CACHE_MAX = 65536


# Lexical forms the store keeps as they are, known without asking it (ontoloom's own
# literals, and most of anyone's): tests/test_lexical.py checks each against Oxigraph.
_KEPT = {
    XSD + "integer": re.compile(r"0|-?[1-9][0-9]{0,17}"),
    XSD + "boolean": re.compile(r"true|false"),
    XSD + "date": re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}"),
    # hours to 23 (24:00:00 is kept as the next day's 00:00:00); a fraction of a second as
    # ontoloom writes its times (every commit's: no trailing zero)
    XSD + "dateTime": re.compile(
        r"[0-9]{4}-[0-9]{2}-[0-9]{2}T([01][0-9]|2[0-3]):[0-9]{2}:[0-9]{2}(\.[0-9]{0,17}[1-9])?Z?"
    ),
    XSD + "decimal": re.compile(
        r"(0|-?[1-9][0-9]{0,17})(\.[0-9]{0,17}[1-9])?|-0\.[0-9]{0,17}[1-9]"
    ),
}


def _by_value(literal: Literal) -> bool:
    """Whether the store keeps ``literal`` by a value (an XSD datatype other than
    xsd:string): only such a literal can come back in another form, or have a record."""
    datatype = literal.datatype
    return not literal.language and datatype != _XSD_STRING and datatype.value.startswith(XSD)


def _normalised(literal: Literal) -> bool:
    """Whether the store may keep ``literal`` in another form (its lexical form aside)."""
    if not _by_value(literal):
        return False
    datatype = literal.datatype
    kept = _KEPT.get(datatype.value)
    return kept is None or kept.fullmatch(literal.value) is None


def split_kept(quads: Iterable[Quad]) -> tuple[list[Quad], list[Quad]]:
    """The quads the store keeps as written, known without asking it (no literal, a string,
    a canonical number or date: most of anyone's data), and the others, whose literal it
    may keep in another form."""
    kept: list[Quad] = []
    others: list[Quad] = []
    for quad in quads:
        value = quad.object
        if isinstance(value, Literal) and _normalised(value):
            others.append(quad)
        else:
            kept.append(quad)
    return kept, others


def stored_forms(literals: Iterable[Literal]) -> dict[Literal, Literal]:
    """Each literal as the store keeps it, found by storing them all in a scratch store."""
    out: dict[Literal, Literal] = {}
    todo: list[Literal] = []
    for written in literals:
        if not _normalised(written):
            out[written] = written
        elif written in _cache:
            out[written] = _cache[written]
        else:
            todo.append(written)
    if todo:
        if len(_cache) > _CACHE_MAX:
            _cache.clear()
        for written, stored in _stored_by_the_store(todo).items():
            out[written] = _cache[written] = stored
    return out


def _stored_by_the_store(literals: list[Literal]) -> dict[Literal, Literal]:
    """Ask the store itself: store them all in a scratch store and read them back."""
    literals = list(dict.fromkeys(literals))
    store = pyoxigraph.Store()
    store.extend(pyoxigraph.Quad(BlankNode(f"l{i}"), _PROBE, lit) for i, lit in enumerate(literals))
    return {
        literals[int(subject(quad.subject).value[1:])]: literal(quad.object)
        for quad in store.quads_for_pattern(None, _PROBE, None, None)
    }


def stored_form(literal: Literal) -> Literal:
    """The literal as the store keeps it (itself when the store keeps it as written)."""
    return stored_forms([literal])[literal]


def stored_quads(quads: Iterable[Quad]) -> dict[Quad, Quad]:
    """Each quad as the store keeps it."""
    quads = list(quads)
    forms = stored_forms(q.object for q in quads if isinstance(q.object, Literal))
    out = {}
    for quad in quads:
        stored = forms.get(quad.object) if isinstance(quad.object, Literal) else None
        out[quad] = (
            quad
            if stored is None or stored == quad.object
            else Quad(quad.subject, quad.predicate, stored, quad.graph_name)
        )
    return out


def record_key(stored: Quad) -> NamedNode | None:
    """The record a stored quad may have, or None when it cannot have one (no literal, or one
    the store keeps as written): reads and removals hash only the quads that can."""
    value = stored.object
    return record_iri(stored) if isinstance(value, Literal) and _by_value(value) else None


def record_iri(stored: Quad) -> NamedNode:
    return NamedNode(_RECORD + hashlib.sha256(str(stored).encode()).hexdigest())


def record_quads(written: Quad, stored: Quad) -> list[Quad]:
    """The record that keeps ``written``'s literal beside its ``stored`` form."""
    assert isinstance(written.object, Literal)
    node = record_iri(stored)
    return [
        Quad(node, LEXICAL_FORM, Literal(written.object.value), META),
        Quad(node, DATATYPE, written.object.datatype, META),
        Quad(node, RECORD_SUBJECT, stored.subject, META),
        Quad(node, RECORD_PREDICATE, stored.predicate, META),
        Quad(node, RECORD_OBJECT, stored.object, META),
    ]


def written_literal(lexical: object, datatype: object) -> Literal:
    assert isinstance(lexical, Literal) and isinstance(datatype, NamedNode)
    return Literal(lexical.value, datatype=datatype)
