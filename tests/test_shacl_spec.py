"""SHACL behaviour that is not a validation report: failures and refusals the spec (or
pySHACL, the oracle) defines, each checked through the library and, where it matters,
through `ontoloom validate`."""

from __future__ import annotations

import pytest

from ontoloom.shacl.shapes import ValidationFailure
from ontoloom.shacl.validate import validate_graphs
from ontoloom.store.rdfio import read_triples

PREFIXES = """
@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ex: <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
"""


def graph(text: str):
    return read_triples(data=PREFIXES + text, format_name="turtle")


def test_a_solution_binding_failure_to_true_is_a_failure_not_a_result() -> None:
    g = graph("""
    ex:S a sh:NodeShape ; sh:targetNode ex:a ;
      sh:sparql [ sh:select "SELECT $this ?failure WHERE { $this <http://example.org/p> ?o . BIND(true AS ?failure) }" ] .
    ex:a ex:p 1 .
    """)
    with pytest.raises(ValidationFailure, match=r"shape http://example.org/S .*\?failure"):
        validate_graphs(g, g)
