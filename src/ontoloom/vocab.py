"""Namespaces and the fixed IRIs ontoloom uses: vocabulary, named graphs, bookkeeping."""

from __future__ import annotations

import hashlib
from urllib.parse import quote, unquote

from ontoloom.terms import BlankNode, NamedNode, Term

OL = "https://ontoloom.dev/ns#"
GRAPH_BASE = "https://ontoloom.dev/graph/"
DEFAULT_ID_BASE = "https://ontoloom.dev/id/"

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
XSD = "http://www.w3.org/2001/XMLSchema#"
SH = "http://www.w3.org/ns/shacl#"
PROV = "http://www.w3.org/ns/prov#"
DCTERMS = "http://purl.org/dc/terms/"
SCHEMA = "https://schema.org/"
# xsd:integer and the datatypes derived from it (XML Schema 1.1 part 2, 3.4.13–3.4.25)
XSD_INTEGER_TYPES = frozenset(
    XSD + name
    for name in (
        "integer",
        "long",
        "int",
        "short",
        "byte",
        "nonNegativeInteger",
        "positiveInteger",
        "nonPositiveInteger",
        "negativeInteger",
        "unsignedLong",
        "unsignedInt",
        "unsignedShort",
        "unsignedByte",
    )
)

PREFIXES = {
    "ol": OL,
    "rdf": RDF,
    "rdfs": RDFS,
    "owl": OWL,
    "xsd": XSD,
    "sh": SH,
    "prov": PROV,
    "dcterms": DCTERMS,
    "schema": SCHEMA,
}


def sparql_prefixes() -> str:
    return "".join(f"PREFIX {p}: <{iri}>\n" for p, iri in PREFIXES.items())


def compact(iri: str) -> str:
    """``https://schema.org/name`` → ``schema:name``; unknown namespaces stay whole."""
    for prefix, namespace in PREFIXES.items():
        if iri.startswith(namespace):
            return f"{prefix}:{iri[len(namespace) :]}"
    return iri


def ol(local: str) -> NamedNode:
    return NamedNode(OL + local)


RDF_TYPE = NamedNode(RDF + "type")
RDFS_SUBCLASSOF = NamedNode(RDFS + "subClassOf")
PROV_GENERATED = NamedNode(PROV + "generatedAtTime")
DCTERMS_MODIFIED = NamedNode(DCTERMS + "modified")

# Named graphs. Trusted data: facts, one graph per record, confirmed. Bookkeeping: meta.
# Schema extensions live in the schema graph; proposals are reified in theirs.
FACTS = NamedNode(GRAPH_BASE + "facts")
CONFIRMED = NamedNode(GRAPH_BASE + "confirmed")
SCHEMA_GRAPH = NamedNode(GRAPH_BASE + "schema")
PROPOSALS = NamedNode(GRAPH_BASE + "proposals")
# Every version of every direct fact, reified, with when it held and when it was recorded
# (ontoloom.history); the current facts stay plain triples in FACTS.
HISTORY = NamedNode(GRAPH_BASE + "history")
META = NamedNode(GRAPH_BASE + "meta")
RECORD_GRAPH_PREFIX = GRAPH_BASE + "record/"
# One graph per failure class, derived by rebuild from the occurrences that name it.
CLASS_GRAPH_PREFIX = GRAPH_BASE + "record-class/"
# Derived by `ontoloom infer` and kept beside the store (never in it, never validated).
INFERRED = NamedNode(GRAPH_BASE + "inferred")
# Reified proposals are named under their own base (never an instance IRI).
PROPOSAL_BASE = "https://ontoloom.dev/proposal/"
# Fact versions are named under theirs.
VERSION_BASE = "https://ontoloom.dev/version/"
# What a version states (ontoloom.history): the statement reified, and its two times.
RDF_STATEMENT = NamedNode(RDF + "Statement")
RDF_SUBJECT = NamedNode(RDF + "subject")
RDF_PREDICATE = NamedNode(RDF + "predicate")
RDF_OBJECT = NamedNode(RDF + "object")
VALID_FROM = NamedNode(SCHEMA + "validFrom")
VALID_THROUGH = NamedNode(SCHEMA + "validThrough")
RETIRED = NamedNode(PROV + "invalidatedAtTime")
VERSION_PREDICATES = frozenset(
    {RDF_TYPE, RDF_SUBJECT, RDF_PREDICATE, RDF_OBJECT, VALID_FROM, VALID_THROUGH}
    | {PROV_GENERATED, RETIRED}
)

STORE_NODE = ol("store")
GENERATION = ol("generation")
LAST_CHANGE = ol("lastChange")
# The generation of the last commit that changed the schema graph: a write validated under
# an older schema is validated again (see WritePath.commit).
SCHEMA_GENERATION = ol("schemaGeneration")


# Open relations: a relation an agent named in its own words, which the schema does not
# declare (or whose rules its ends do not meet). Its predicate is ``ol:open/`` + the words
# percent-encoded (``"works at"`` → ``<https://ontoloom.dev/ns#open/works%20at>``), declared
# once as ``ol:OpenRelation`` with the words verbatim as its ``rdfs:label``. Its own namespace
# keeps it apart from a declared relation of the same name, so no shape of that relation
# applies to it; its name reads back exactly as written.
OPEN_RELATION_PREFIX = OL + "open/"
OPEN_RELATION_CLASS = ol("OpenRelation")
RDFS_LABEL = NamedNode(RDFS + "label")


def open_relation_iri(label: str) -> NamedNode:
    """The predicate of the open relation ``label`` (kept verbatim, percent-encoded).

    >>> open_relation_iri("works at").value
    'https://ontoloom.dev/ns#open/works%20at'
    """
    return NamedNode(OPEN_RELATION_PREFIX + quote(label, safe=""))


WORDING_PREFIX = OL + "wording/"


def wording_iri(s: NamedNode, p: NamedNode, o: NamedNode) -> NamedNode:
    """Where the agent's words for the typed relation ``s p o`` are kept, when they differ
    from the declared name: an ``rdf:Statement`` about that triple whose ``rdfs:label`` is
    the words (``"member of"`` for ``ol:member_of``)."""
    key = hashlib.sha256(f"{s.value} {p.value} {o.value}".encode()).hexdigest()[:24]
    return NamedNode(f"{WORDING_PREFIX}{key}")


def is_open_relation(term: Term) -> bool:
    return isinstance(term, NamedNode) and term.value.startswith(OPEN_RELATION_PREFIX)


def vocab_name(term: Term) -> str:
    """``ol:title`` → ``title``, an open relation → its words; other IRIs stay whole.

    >>> vocab_name(open_relation_iri("works at"))
    'works at'
    """
    if is_open_relation(term):
        return unquote(term.value[len(OPEN_RELATION_PREFIX) :])
    if isinstance(term, NamedNode) and term.value.startswith(OL):
        return term.value[len(OL) :]
    return term.value if isinstance(term, NamedNode) else str(term)


# Namespaces whose IRIs are vocabulary or ontoloom's own bookkeeping, never an object's.
_NOT_OBJECTS = ("https://ontoloom.dev/", "urn:ontoloom:", RDF, RDFS, OWL, XSD, SH)


def _foreign(value: str) -> bool:
    """An absolute IRI of someone else's (``http://example.org/x1``, ``urn:isbn:…``): an
    object imported under its own name keeps that name as its id."""
    return ("://" in value or value.startswith("urn:")) and not value.startswith(_NOT_OBJECTS)


class IdSpace:
    """Maps ids to instance IRIs (percent-encoded under one base) and back. An object
    imported under an IRI of its own keeps it: its id is that IRI, both ways.

    >>> ids = IdSpace()
    >>> ids.iri("doc:billing/tax-summary").value
    'https://ontoloom.dev/id/doc%3Abilling%2Ftax-summary'
    >>> ids.id_of(ids.iri("doc:billing/tax-summary"))
    'doc:billing/tax-summary'
    >>> ids.iri(ids.id_of(NamedNode("http://example.org/x1"))).value
    'http://example.org/x1'
    """

    def __init__(self, base: str = DEFAULT_ID_BASE) -> None:
        self.base = base

    def iri(self, entity_id: str) -> NamedNode:
        try:
            if _foreign(entity_id) and not entity_id.startswith(self.base):
                return NamedNode(entity_id)
            return NamedNode(self.base + quote(entity_id, safe=""))
        except UnicodeEncodeError:  # a lone surrogate: bytes in argv that are not UTF-8
            from ontoloom.errors import BadInput

            raise BadInput(f"id {entity_id!r} is not valid Unicode (a lone surrogate)") from None
        except ValueError:  # given as an IRI of its own, and not one
            from ontoloom.errors import BadInput

            raise BadInput(f"id {entity_id!r} is not a valid IRI") from None

    def id_of(self, term: Term) -> str:
        if isinstance(term, NamedNode) and term.value.startswith(self.base):
            return unquote(term.value[len(self.base) :])
        if isinstance(term, BlankNode):
            return f"_:{term.value}"
        return term.value if isinstance(term, NamedNode) else str(term)

    def is_instance(self, term: Term) -> bool:
        """Whether the term names an object: an IRI under the base, or someone else's
        absolute IRI (not a vocabulary's)."""
        return isinstance(term, NamedNode) and (
            term.value.startswith(self.base) or _foreign(term.value)
        )
