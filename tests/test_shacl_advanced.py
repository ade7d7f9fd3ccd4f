"""SHACL-AF through `ontoloom validate`: rules with -a (checked against pySHACL with
advanced features), and the features ontoloom does not evaluate, which are refused (exit 2)
or, with --allow-unsupported, named on stderr and in --json — never skipped silently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ontoloom.cli import main
from ontoloom.shacl.oracle import pyshacl_results
from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.shacl.validate import validate_graphs
from ontoloom.store.rdfio import read_triples
from shacl_keys import result_keys

PREFIXES = """
@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ex: <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
"""
# A shape ontoloom evaluates, beside whatever a test adds: ex:a lacks ex:name.
BASE = "ex:Named a sh:NodeShape ; sh:targetNode ex:a ; sh:property [ sh:path ex:name ; sh:minCount 1 ] .\n"


def run(tmp_path: Path, shapes: str, *args: str):
    path = tmp_path / "graph.ttl"
    path.write_text(PREFIXES + BASE + shapes, encoding="utf-8")
    return CliRunner().invoke(main, ["validate", str(path), "-s", str(path), *args])


# A node expression ontoloom does not evaluate: a call of a function the shapes graph lacks.
EXPRESSION = "ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:expression [ ex:f ( sh:this ) ] ."
NOT_EVALUATED = (
    "sh:expression with the function ex:f (no SHACL function declared in the shapes graph)"
)

# sh:expression, every form of node expression: each value node whose outputs are not just
# `true` is a result (pySHACL's reading; an empty output fails too).
EXPRESSIONS = """
ex:a ex:ok true ; ex:n 3 ; ex:child ex:c1, ex:c2 .
ex:b ex:ok false ; ex:n 10 ; ex:child ex:c1 .
ex:c ex:n 5 .
ex:d ex:ok true, false .
ex:c1 ex:ok true ; ex:n 1 . ex:c2 ex:ok false .
ex:small a sh:SPARQLFunction ; sh:parameter [ sh:path ex:x ] ; sh:returnType xsd:boolean ;
  sh:ask "ASK { FILTER(?x < 5) }" .
ex:below a sh:SPARQLFunction ; sh:parameter [ sh:path ex:x ] ; sh:parameter [ sh:path ex:y ] ;
  sh:returnType xsd:boolean ; sh:select "SELECT ?r WHERE { BIND(?x < ?y AS ?r) }" .
ex:HasN a sh:NodeShape ; sh:property [ sh:path ex:n ; sh:minCount 1 ] .
ex:Path a sh:NodeShape ; sh:targetNode ex:a, ex:b, ex:c, ex:d ; sh:expression [ sh:path ex:ok ] .
ex:This a sh:NodeShape ; sh:targetNode true, false, 1 ; sh:expression sh:this .
ex:Constant a sh:NodeShape ; sh:targetNode ex:a ; sh:expression true .
ex:Union a sh:NodeShape ; sh:targetNode ex:a, ex:b ; sh:expression [ sh:union ( [ sh:path ex:ok ] true ) ] .
ex:Intersection a sh:NodeShape ; sh:targetNode ex:a, ex:b, ex:d ;
  sh:expression [ sh:intersection ( [ sh:path ex:ok ] true ) ] .
ex:Filter a sh:NodeShape ; sh:targetNode ex:a ;
  sh:expression [ sh:path ex:ok ; sh:nodes [ sh:filterShape ex:HasN ; sh:nodes [ sh:path ex:child ] ] ] .
ex:Ask a sh:NodeShape ; sh:targetNode ex:a, ex:b ; sh:expression [ ex:small ( [ sh:path ex:n ] ) ] .
ex:Select a sh:NodeShape ; sh:targetNode ex:a, ex:b ; sh:expression [ ex:below ( [ sh:path ex:n ] 5 ) ] .
ex:Property a sh:NodeShape ; sh:targetNode ex:a ;
  sh:property [ sh:path ex:child ; sh:expression [ sh:path ex:ok ; sh:message "not ok" ] ] .
"""


# A path expression from the output of another (sh:nodes): pySHACL 0.40 reads the path from
# the focus node and ignores sh:nodes, so this one is checked against SHACL-AF (2.3.3.2: the
# values of the path from each node sh:nodes gives) instead: ex:a's children are ex:c1 (ok)
# and ex:c2 (not ok), ex:b's only ex:c1; the filter keeps ex:a's children that have ex:n.
NODES = """
ex:Nodes a sh:NodeShape ; sh:targetNode ex:a, ex:b ;
  sh:expression [ sh:path ex:ok ; sh:nodes [ sh:path ex:child ] ] .
ex:Filtered a sh:NodeShape ; sh:targetNode ex:a ;
  sh:expression [ sh:path ex:ok ; sh:nodes [ sh:filterShape ex:HasN ; sh:nodes [ sh:path ex:child ] ] ] .
"""


def test_sh_expression_reads_a_path_from_the_nodes_sh_nodes_gives() -> None:
    triples = read_triples(data=(PREFIXES + EXPRESSIONS + NODES).encode(), format_name="turtle")
    report = validate_graphs(triples, triples, advanced=True)
    failing = {(r.source_shape.value, r.focus.value) for r in report.results}
    assert ("http://example.org/Nodes", "http://example.org/a") in failing
    assert ("http://example.org/Nodes", "http://example.org/b") not in failing
    assert ("http://example.org/Filtered", "http://example.org/a") not in failing


def test_sh_expression_gives_pyshacls_results() -> None:
    triples = read_triples(data=(PREFIXES + EXPRESSIONS).encode(), format_name="turtle")
    conforms, theirs, report = pyshacl_results(triples, triples, advanced=True)
    ours = validate_graphs(triples, triples, advanced=True)
    assert not ours.unsupported
    assert result_keys(ours.results, TripleIndex(triples), messages=True) == result_keys(
        theirs, TripleIndex(report), messages=True
    )
    assert (ours.conforms, len(ours.results)) == (conforms, 10)


def test_a_shape_using_sh_expression_is_refused_naming_shape_and_feature(tmp_path) -> None:
    result = run(tmp_path, EXPRESSION)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"error: shape ex:S uses {NOT_EVALUATED}, which ontoloom "
        "does not evaluate; pass --allow-unsupported to validate the rest"
    )


def test_allow_unsupported_validates_the_rest_and_names_what_it_did_not_evaluate(
    tmp_path,
) -> None:
    result = run(tmp_path, EXPRESSION, "--allow-unsupported")
    assert result.exit_code == 1  # ex:a still lacks a name
    assert "in MinCountConstraintComponent" in result.stdout
    assert result.stderr.strip() == (
        f"warning: shape ex:S uses {NOT_EVALUATED}, which ontoloom did not evaluate"
    )
    data = json.loads(run(tmp_path, EXPRESSION, "--allow-unsupported", "--json").stdout)
    assert data["unsupported"] == [{"shape": "<http://example.org/S>", "feature": NOT_EVALUATED}]


UNSUPPORTED = [
    (
        "js-constraint",
        'ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:js [ sh:jsFunctionName "f" ] .',
        "sh:js (SHACL-JS JavaScript constraints)",
    ),
    (
        "js-validator",
        'ex:C a sh:ConstraintComponent ; sh:parameter [ sh:path ex:p ] ; sh:validator [ a sh:JSValidator ; sh:jsFunctionName "f" ] .'
        " ex:S a sh:NodeShape ; sh:targetNode ex:a ; ex:p 1 .",
        "the constraint component http://example.org/C (a JavaScript validator, SHACL-JS)",
    ),
    (
        "js-target",
        'ex:S a sh:NodeShape ; sh:target [ a sh:JSTarget ; sh:jsFunctionName "f" ] .',
        "(a SHACL-JS target)",
    ),
    (
        "unknown-target",
        "ex:S a sh:NodeShape ; sh:target [ a ex:Mystery ] .",
        "(a custom target of ex:Mystery, not a SPARQL-based target or target type)",
    ),
    (
        "function-in-sparql",
        # a body that reads the graph (no one expression to write in)
        'ex:f a sh:SPARQLFunction ; sh:select "SELECT ?r WHERE { ?s ?p ?r }" .'
        ' ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:sparql [ sh:select "SELECT $this WHERE { FILTER(ex:f() = 1) }" ] .',
        "the SHACL function <http://example.org/f> (SHACL-AF) in a SPARQL query",
    ),
    (
        "result-annotation",
        "ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:sparql [ sh:select"
        ' "SELECT $this WHERE { $this ex:p ?o }" ; sh:resultAnnotation'
        ' [ sh:annotationProperty ex:note ; sh:annotationVarName "o" ] ] .',
        "sh:resultAnnotation (SHACL-AF annotation properties on results)",
    ),
    (
        "entailment",
        "<http://example.org/shapes> sh:entailment ex:SomeRegime .",
        "sh:entailment ex:SomeRegime",
    ),
]


@pytest.mark.parametrize(
    ("shapes", "feature"), [pytest.param(s, f, id=n) for n, s, f in UNSUPPORTED]
)
def test_every_feature_ontoloom_does_not_evaluate_is_refused_by_name(
    tmp_path, shapes: str, feature: str
) -> None:
    refused = run(tmp_path, shapes)
    assert refused.exit_code == 2, refused.output
    assert feature in refused.stderr and "pass --allow-unsupported" in refused.stderr
    allowed = run(tmp_path, shapes, "--allow-unsupported")
    assert allowed.exit_code == 1, allowed.output
    assert feature in allowed.stderr and "did not evaluate" in allowed.stderr


RULES = """
ex:RectangleShape a sh:NodeShape ; sh:targetClass ex:Rectangle ;
  sh:rule [ a sh:SPARQLRule ; sh:order 1 ;
    sh:construct "CONSTRUCT { $this <http://example.org/wide> true } WHERE { $this <http://example.org/w> ?w FILTER(?w > 3) }" ] ;
  sh:rule [ a sh:TripleRule ; sh:order 2 ;
    sh:condition [ sh:property [ sh:path ex:w ; sh:equals ex:h ] ] ;
    sh:subject sh:this ; sh:predicate rdf:type ; sh:object ex:Square ] .
# Squares (inferred by the triple rule) must not be wide (inferred by the SPARQL rule).
ex:SquareShape a sh:NodeShape ; sh:targetClass ex:Square ;
  sh:property [ sh:path ex:wide ; sh:maxCount 0 ] .
ex:r1 a ex:Rectangle ; ex:w 2 ; ex:h 3 .
ex:r2 a ex:Rectangle ; ex:w 4 ; ex:h 4 .
ex:r3 a ex:Rectangle ; ex:w 1 ; ex:h 1 .
ex:a ex:name "a" .
"""


def test_rules_run_with_a_before_validation_as_pyshacl_runs_them() -> None:
    graph = read_triples(data=PREFIXES + BASE + RULES, format_name="turtle")
    ours = validate_graphs(graph, graph, advanced=True)
    _, theirs, _ = pyshacl_results(graph, graph, advanced=True)
    index = TripleIndex(graph)
    assert result_keys(ours.results, index) == result_keys(theirs, index)
    # ex:r2 is a wide square: the only violation.
    assert [(str(r.focus), r.constraint_name) for r in ours.results] == [
        ("<http://example.org/r2>", "maxCount")
    ]


def test_without_a_rules_are_not_run_and_stderr_says_so(tmp_path) -> None:
    result = run(tmp_path, RULES)
    assert result.exit_code == 0, result.output  # nothing inferred: no squares
    assert "warning: rules of shape ex:RectangleShape were not run (pass -a)" in result.stderr
    assert run(tmp_path, RULES, "-a").exit_code == 1


def test_rules_that_never_settle_are_a_failure(tmp_path) -> None:
    endless = (
        "ex:S a sh:NodeShape ; sh:targetNode ex:a ; "
        'sh:rule [ a sh:SPARQLRule ; sh:construct "CONSTRUCT { $this <http://example.org/p> [] } WHERE { }" ] .'
    )
    result = run(tmp_path, endless, "-a")
    assert result.exit_code == 2
    assert "the rules still inferred new triples after 100 rounds" in result.stderr


def test_a_rule_ontoloom_cannot_run_is_refused_with_a(tmp_path) -> None:
    js = 'ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:rule [ a sh:JSRule ; sh:jsFunctionName "f" ] .'
    result = run(tmp_path, js, "-a")
    assert result.exit_code == 2
    assert "shape ex:S uses sh:rule" in result.stderr and "(a SHACL-JS rule)" in result.stderr


def test_a_schema_extension_using_an_unsupported_feature_is_refused(tmp_path) -> None:
    """The store never holds shapes it would not evaluate: `check` stays exact."""
    shapes = tmp_path / "expr.ttl"
    shapes.write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ol: <https://ontoloom.dev/ns#> .\n"
        "ol:TaskExpr a sh:NodeShape ; sh:targetClass ol:Task ; sh:expression [ ol:f ( sh:this ) ] .",
        encoding="utf-8",
    )
    data_dir = str(tmp_path / ".ontoloom")
    runner = CliRunner()
    assert runner.invoke(main, ["--data-dir", data_dir, "init"]).exit_code == 0
    added = runner.invoke(main, ["--data-dir", data_dir, "schema", "add-shapes", str(shapes)])
    assert added.exit_code == 2
    assert "uses sh:expression with the function <https://ontoloom.dev/ns#f>" in added.stderr
    checked = runner.invoke(main, ["--data-dir", data_dir, "check", "--allow-unsupported"])
    assert checked.exit_code == 0 and checked.stderr == ""


def test_a_schema_extension_with_rules_is_refused_the_store_never_runs_them(tmp_path) -> None:
    shapes = tmp_path / "rule.ttl"
    shapes.write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ol: <https://ontoloom.dev/ns#> .\n"
        "ol:Flag a sh:NodeShape ; sh:targetClass ol:Task ; sh:rule [ a sh:TripleRule ;"
        ' sh:subject sh:this ; sh:predicate ol:flag ; sh:object "x" ] .',
        encoding="utf-8",
    )
    data_dir = str(tmp_path / ".ontoloom")
    runner = CliRunner()
    assert runner.invoke(main, ["--data-dir", data_dir, "init"]).exit_code == 0
    added = runner.invoke(main, ["--data-dir", data_dir, "schema", "add-shapes", str(shapes)])
    assert added.exit_code == 2
    assert "has sh:rule: the store never runs SHACL rules" in added.stderr
    listed = runner.invoke(main, ["--data-dir", data_dir, "export", "--graph", "schema"])
    assert "Flag" not in listed.output


def test_a_shacl_function_called_through_a_namespace_ending_in_hash_is_found(tmp_path) -> None:
    shapes = (
        "@prefix h: <http://example.org/fn#> .\n"
        'h:f a sh:SPARQLFunction ; sh:select "SELECT ?r WHERE { ?s ?p ?r }" .\n'
        "ex:S a sh:NodeShape ; sh:targetNode ex:a ;"
        ' sh:sparql [ sh:select "SELECT $this WHERE { FILTER(h:f() = 1) }" ] .'
    )
    result = run(tmp_path, shapes)
    assert result.exit_code == 2
    assert "the SHACL function <http://example.org/fn#f> (SHACL-AF)" in result.stderr
