"""The pySHACL-style literal text (``Literal("1", datatype=xsd:integer)``) is written without
importing rdflib for strings, language strings and canonical integers: each must read as
pySHACL's own ``stringify_literal`` writes it."""

from __future__ import annotations

import rdflib
from hypothesis import given
from hypothesis import strategies as st
from pyshacl.rdfutil.stringify import stringify_literal

from ontoloom.shacl.render import Renderer
from ontoloom.terms import Literal, NamedNode

XSD = "http://www.w3.org/2001/XMLSchema#"
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
LITERALS = st.one_of(
    TEXT.map(Literal),
    st.tuples(TEXT, st.sampled_from(["en", "en-us", "de-ch"])).map(
        lambda t: Literal(t[0], language=t[1])
    ),
    st.integers(-(10**20), 10**20).map(
        lambda i: Literal(str(i), datatype=NamedNode(XSD + "integer"))
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
    ours = Renderer({"xsd": XSD}, None, pyshacl_style=True).pyshacl_literal(term)
    assert ours == stringify_literal(graph, theirs, graph.namespace_manager)
