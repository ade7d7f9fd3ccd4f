"""The pySHACL-style literal text (``Literal("1", datatype=xsd:integer)``) is written without
importing rdflib for strings, language strings, canonical forms of the integer types (in
their range or not) and ill-formed hexBinary: each must read as pySHACL's own
``stringify_literal`` writes it (and so must the forms rdflib is still asked about)."""

from __future__ import annotations

import warnings

import rdflib
from hypothesis import given
from hypothesis import strategies as st
from pyshacl.rdfutil.stringify import stringify_literal

from ontoloom.shacl.render import Renderer
from ontoloom.terms import Literal, NamedNode

XSD = "http://www.w3.org/2001/XMLSchema#"
INTEGER_TYPES = [
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
]
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
LITERALS = st.one_of(
    TEXT.map(Literal),
    st.tuples(TEXT, st.sampled_from(["en", "en-us", "de-ch"])).map(
        lambda t: Literal(t[0], language=t[1])
    ),
    st.tuples(
        st.one_of(
            st.integers(-(10**20), 10**20).map(str),
            st.from_regex(r"[+-]?0*[0-9]{1,4}", fullmatch=True),
        ),
        st.sampled_from(INTEGER_TYPES),
    ).map(lambda t: Literal(t[0], datatype=NamedNode(XSD + t[1]))),
    st.one_of(TEXT, st.from_regex(r"([0-9a-fA-F]{2}){0,4}", fullmatch=True)).map(
        lambda text: Literal(text, datatype=NamedNode(XSD + "hexBinary"))
    ),
)


@given(LITERALS)
def test_the_literal_reads_as_pyshacl_writes_it(term: Literal) -> None:
    graph = rdflib.Graph()
    graph.bind("xsd", XSD)
    if term.language:
        theirs = rdflib.Literal(term.value, lang=term.language)
    elif term.datatype.value == XSD + "string":
        theirs = rdflib.Literal(term.value)
    else:
        theirs = rdflib.Literal(term.value, datatype=rdflib.URIRef(term.datatype.value))
    with warnings.catch_warnings():  # rdflib warns of ill-typed forms
        warnings.simplefilter("ignore")
        ours = Renderer({"xsd": XSD}, None, pyshacl_style=True).pyshacl_literal(term)
        theirs_text = stringify_literal(graph, theirs, graph.namespace_manager)
    assert ours == theirs_text
