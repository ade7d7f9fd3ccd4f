"""sh:datatype's lexical forms that Python decides without asking the store (xsd:hexBinary,
xsd:integer and its derived types: ``value_type._decided_here``) are decided as the store's
own expression decides them (``DatatypeConstraintComponent.well_formed``, the expression the
compiled query and the other forms run): on hand-picked edges and on generated forms."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ontoloom.shacl.components import value_type
from ontoloom.shacl.components.value_type import DatatypeConstraintComponent, _decided_here
from ontoloom.store import scratch
from ontoloom.terms import Literal, NamedNode

XSD = "http://www.w3.org/2001/XMLSchema#"
DATATYPES = [
    "hexBinary",
    "integer",
    "nonNegativeInteger",
    "positiveInteger",
    "nonPositiveInteger",
    "negativeInteger",
    "byte",
    "short",
    "int",
    "long",
    "unsignedByte",
    "unsignedShort",
    "unsignedInt",
    "unsignedLong",
]
EDGES = [
    "", "0", "00", "007", "1", "-0", "+0", "-1", "+1", " 1", "1 ", "1\n", "\t5", "1.0", "1e3",
    "127", "128", "-128", "-129", "255", "256", "32767", "32768", "65535", "65536",
    "2147483647", "2147483648", "4294967295", "4294967296",
    "999999999999999999", "9223372036854775807", "9223372036854775808",
    "18446744073709551615", "18446744073709551616", "0000000000000000001",
    "１２", "٣", "0aF1", "0A1b", "abc", "not-hex", "AB CD", "ab\n", "ffff", "FfFf",
]  # fmt: skip


def store_says(datatype: str, forms: list[str]) -> dict[str, bool]:
    """What the store's expression decides, form by form."""
    expression = DatatypeConstraintComponent(NamedNode(XSD + datatype)).well_formed("?l")
    listed = " ".join(str(Literal(f)) for f in forms)
    query = f"SELECT ?l WHERE {{ VALUES ?l {{ {listed} }} FILTER({expression}) }}"
    good = {row["l"].value for row in scratch().select(query) if row["l"] is not None}
    return {f: f in good for f in forms}


def check(datatype: str, forms: list[str]) -> int:
    here = _decided_here(XSD + datatype)
    assert here is not None
    expected = store_says(datatype, forms)
    decided = 0
    for form in forms:
        answer = here(form)
        if answer is not None:
            decided += 1
            assert answer == expected[form], (datatype, form)
    return decided


@pytest.mark.parametrize("datatype", DATATYPES)
def test_edges_are_decided_as_the_store_decides(datatype: str) -> None:
    # (and the fast path decides some of them: a test that cannot fail is no test)
    assert check(datatype, EDGES) > 0


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(DATATYPES),
    st.lists(st.text(alphabet="0123456789+- .aAfFgx\n", max_size=21), min_size=1, max_size=30),
)
def test_generated_forms_are_decided_as_the_store_decides(datatype: str, forms: list[str]) -> None:
    check(datatype, forms)


def test_the_whole_call_agrees_with_the_store() -> None:
    """well_formed as the quad check calls it: forms decided here and forms asked."""
    value_type._formed.clear()
    for datatype in ("hexBinary", "nonNegativeInteger", "byte"):
        dt = NamedNode(XSD + datatype)
        expression = DatatypeConstraintComponent(dt).well_formed("?l")
        assert value_type.well_formed(dt, expression, EDGES) == store_says(datatype, EDGES)


def test_other_datatypes_are_left_to_the_store() -> None:
    for datatype in ("decimal", "date", "dateTime", "boolean", "base64Binary", "string"):
        assert _decided_here(XSD + datatype) is None
