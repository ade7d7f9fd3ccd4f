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
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
"""


PREFIX_MAP: dict[str, str] = {}
read_triples(data=PREFIXES, format_name="turtle", prefixes=PREFIX_MAP)


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


# Malformed shapes: (name, shape triples, what the error must say, does pySHACL refuse it too).
# Every error names the shape, the parameter and the fix.
MALFORMED = [
    (
        "minCount-not-integer",
        'sh:property [ sh:path ex:p ; sh:minCount "x" ]',
        r'shape \[ sh:minCount "x" ; sh:path ex:p \]: sh:minCount "x" is not an xsd:integer; write',
        True,
    ),
    (
        "minCount-negative",
        "sh:property [ sh:path ex:p ; sh:minCount -1 ]",
        r"sh:minCount -1 is not an integer >= 0; write",
        True,
    ),
    (
        "minCount-twice",
        "sh:property [ sh:path ex:p ; sh:minCount 1, 2 ]",
        r"sh:minCount has 2 values \(1, 2\); keep one",
        True,
    ),
    (
        "minCount-on-node-shape",
        "sh:minCount 1",
        r"shape ex:S: sh:minCount is used on a node shape; move it to a property shape",
        True,
    ),
    (
        "maxLength-string",
        'sh:property [ sh:path ex:p ; sh:maxLength "3" ]',
        r'sh:maxLength "3" is not an integer; write',
        True,
    ),
    (
        "pattern-invalid-regex",
        'sh:property [ sh:path ex:p ; sh:pattern "a(" ]',
        r'sh:pattern "a\(" is not a valid regular expression; write',
        True,
    ),
    (
        "pattern-not-literal",
        "sh:property [ sh:path ex:p ; sh:pattern ex:regex ]",
        r"sh:pattern ex:regex is not a literal; write",
        True,
    ),
    (
        "datatype-twice",
        "sh:property [ sh:path ex:p ; sh:datatype xsd:string, xsd:integer ]",
        r"sh:datatype has 2 values",
        True,
    ),
    (
        "uniqueLang-not-boolean",
        'sh:property [ sh:path ex:p ; sh:uniqueLang "yes" ]',
        r'sh:uniqueLang "yes" is not a boolean; write true or false',
        True,
    ),
    (
        "ignoredProperties-not-closed",
        "sh:ignoredProperties ( rdf:type )",
        r"sh:ignoredProperties is used on a shape that is not closed; add sh:closed true",
        True,
    ),
    (
        "qualified-without-count",
        "sh:property [ sh:path ex:p ; sh:qualifiedValueShape ex:S ]",
        r"sh:qualifiedValueShape has no sh:qualifiedMinCount nor sh:qualifiedMaxCount; add",
        True,
    ),
    (
        "lessThan-on-node-shape",
        "sh:lessThan ex:q",
        r"shape ex:S: sh:lessThan is used on a node shape",
        True,
    ),
    (
        "class-not-iri",
        'sh:property [ sh:path ex:p ; sh:class "Person" ]',
        r'sh:class "Person" is not an IRI; name the class',
        False,
    ),
    (
        "in-not-a-list",
        "sh:property [ sh:path ex:p ; sh:in ex:colours ]",
        r"sh:in ex:colours is not a well-formed list; write the value as a Turtle list",
        False,
    ),
    (
        "nodeKind-unknown",
        "sh:property [ sh:path ex:p ; sh:nodeKind ex:Thing ]",
        r"sh:nodeKind ex:Thing is not a node kind; use one of sh:BlankNode",
        False,
    ),
    (
        "minExclusive-not-literal",
        "sh:property [ sh:path ex:p ; sh:minExclusive ex:zero ]",
        r"sh:minExclusive ex:zero is not a literal",
        True,
    ),
    (
        "languageIn-not-strings",
        "sh:property [ sh:path ex:p ; sh:languageIn ( ex:en ) ]",
        r"sh:languageIn holds ex:en, not a language range string",
        True,
    ),
    (
        "property-without-path",
        "sh:property [ sh:minCount 1 ]",
        r"shape ex:S: sh:property \[ sh:minCount 1 \] is not a property shape \(it has no sh:path\)",
        True,
    ),
    ("and-not-a-list", "sh:and ex:S", r"sh:and ex:S is not a well-formed list", True),
    (
        "select-twice",
        'sh:sparql [ sh:select "SELECT $this WHERE {}", "SELECT $this WHERE { }" ]',
        r"sh:select must be exactly one string literal",
        True,
    ),
    (
        "query-does-not-parse",
        'sh:sparql [ sh:select """SELECT $this\nWHERE { $this ?p }""" ]',
        r"the SPARQL query does not parse at line 2: SPARQL syntax error",
        True,
    ),
    (
        "values-in-query",
        'sh:sparql [ sh:select "SELECT $this WHERE { VALUES ?x { 1 } $this ?p ?x }" ]',
        r"a SHACL-SPARQL query may not use VALUES \(pre-binding, SHACL 5.2.1\)",
        True,
    ),
    (
        "undeclared-prefix",
        'sh:sparql [ sh:select "SELECT $this WHERE { $this foo:p ?o }" ]',
        r"the SPARQL query uses the undeclared prefix foo:; declare it with sh:prefixes / sh:declare",
        True,
    ),
]


@pytest.mark.parametrize(
    ("shape", "message", "pyshacl_refuses"),
    [pytest.param(shape, message, refuses, id=name) for name, shape, message, refuses in MALFORMED],
)
def test_a_malformed_shape_parameter_is_refused_naming_shape_parameter_and_fix(
    shape: str, message: str, pyshacl_refuses: bool
) -> None:
    from ontoloom.shacl.oracle import pyshacl_results
    from ontoloom.shacl.shapes import ShapesError

    g = graph(f"ex:S a sh:NodeShape ; sh:targetNode ex:a ; {shape} . ex:a ex:p 1 .")
    with pytest.raises(ShapesError, match=message):
        validate_graphs(g, g, prefixes=PREFIX_MAP)
    if pyshacl_refuses:  # the oracle refuses it at load time too
        with pytest.raises(Exception):  # noqa: B017 — pySHACL raises several kinds
            pyshacl_results(g, g)
    else:  # pySHACL accepts it; the spec's syntax rules (SHACL-SHACL) do not
        pyshacl_results(g, g)


def test_validate_exits_2_with_one_line_naming_the_undeclared_prefix(tmp_path) -> None:
    from click.testing import CliRunner

    from ontoloom.cli import main

    path = tmp_path / "shapes.ttl"
    path.write_text(
        PREFIXES + 'ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:sparql [ sh:select """'
        'SELECT $this WHERE { $this foo:p ?o }""" ] . ex:a ex:p 1 .',
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["validate", str(path), "-s", str(path)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert "shape ex:S" in lines[0] and "undeclared prefix foo:" in lines[0], lines[0]
    assert "declare it with sh:prefixes / sh:declare" in lines[0]


def test_a_prefix_the_shapes_file_declares_resolves_in_its_queries(tmp_path) -> None:
    """As TopBraid and pySHACL read them (SHACL asks for sh:prefixes; both also take the
    files' own @prefix lines)."""
    from click.testing import CliRunner

    from ontoloom.cli import main

    path = tmp_path / "shapes.ttl"
    path.write_text(
        PREFIXES + 'ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:sparql [ sh:select """'
        'SELECT $this ?value WHERE { $this ex:p ?value }""" ] . ex:a ex:p 1 .',
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["validate", str(path), "-s", str(path), "-f", "text"])
    assert result.exit_code == 1, result.output
    assert "\nex:a\n  Violation: [SPARQL] = 1 (shape ex:S)\n" in result.output


def test_a_function_the_engine_does_not_implement_is_named_as_unsupported() -> None:
    from ontoloom.shacl.shapes import UnsupportedFeatures

    g = graph("""
    ex:S a sh:NodeShape ; sh:targetNode ex:a ;
      sh:sparql [ sh:select "SELECT $this WHERE { FILTER(<http://example.org/nope>(1)) }" ] .
    ex:a ex:p 1 .
    """)
    with pytest.raises(
        UnsupportedFeatures,
        match=r"shape <http://example.org/S> uses the function <http://example.org/nope>",
    ):
        validate_graphs(g, g)
    assert validate_graphs(g, g, allow_unsupported=True).conforms
