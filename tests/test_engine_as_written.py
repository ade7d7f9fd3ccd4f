"""The engine judges literals as written, in its own queries: no hand-off to pySHACL.

Data the way people write it — ``"1000.50"``, ``"007"``, ``"5"^^xsd:int`` beside xsd:integer,
a ``+`` sign — reaches sh:datatype, sh:in, sh:hasValue, sh:pattern and sh:minLength at the top
and nested under sh:node, sh:or and sh:not, with counts and a grouped sh:sparql join. Every
result (focus, path, value as written, shape, component, severity) is compared with pySHACL
on the same terms, and ``--explain`` must name no pySHACL hand-off.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ontoloom.shacl.components.sparql import joins_safely, split_prologue
from ontoloom.shacl.oracle import pyshacl_results
from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.shacl.sparql_syntax import analyse
from ontoloom.shacl.validate import validate_graphs
from ontoloom.store.rdfio import read_triples
from shacl_keys import result_keys

PREFIXES = """\
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix ex: <http://example.org/> .
"""

SHAPES = (
    PREFIXES
    + """
ex:OrderShape a sh:NodeShape ; sh:targetClass ex:Order ;
  sh:property [ sh:path ex:total ; sh:datatype xsd:decimal ; sh:maxCount 1 ;
                sh:pattern "^[0-9]+\\\\.[0-9]{2}$" ] ;
  sh:property [ sh:path ex:code ; sh:in ( 1.0 2 "three" ) ] ;
  sh:property [ sh:path ex:rank ; sh:hasValue 1.50 ] ;
  sh:property [ sh:path ex:note ; sh:minLength 4 ] ;
  sh:property [ sh:path ex:line ; sh:minCount 1 ; sh:node ex:LineShape ] ;
  sh:property [ sh:path ex:alt ; sh:or ( [ sh:datatype xsd:int ] [ sh:datatype xsd:string ] ) ] ;
  sh:property [ sh:path ex:neg ; sh:not [ sh:datatype xsd:integer ] ] ;
  sh:sparql [ sh:message "total below the lines" ; sh:select \"\"\"
    PREFIX ex: <http://example.org/>
    SELECT $this (?total AS ?value) WHERE {
      $this ex:total ?total .
      { SELECT $this (SUM(?price) AS ?sum) WHERE { $this ex:line ?l . ?l ex:price ?price }
        GROUP BY $this }
      FILTER (?total < ?sum) }\"\"\" ] .

ex:LineShape a sh:NodeShape ;
  sh:property [ sh:path ex:price ; sh:datatype xsd:decimal ; sh:minCount 1 ; sh:maxCount 1 ] ;
  sh:property [ sh:path ex:qty ; sh:datatype xsd:integer ; sh:minInclusive 1 ] .
"""
)

DATA = (
    PREFIXES
    + """
ex:good a ex:Order ; ex:total "30.50"^^xsd:decimal ; ex:code 1.0 ; ex:rank 1.50 ;
  ex:note "long enough" ; ex:alt "5"^^xsd:int ; ex:neg "5"^^xsd:int ;
  ex:line [ ex:price "10.00"^^xsd:decimal ; ex:qty "007"^^xsd:integer ] ,
          [ ex:price "+20.50"^^xsd:decimal ; ex:qty 2 ] .
ex:bad a ex:Order ;
  ex:total "30.5"^^xsd:decimal ;          # pattern: two decimals as written
  ex:code "1.00"^^xsd:decimal , "02"^^xsd:integer ;  # not the terms listed
  ex:rank "1.5"^^xsd:decimal ;            # the same value, another term
  ex:note "00001"^^xsd:integer ;          # long as written, "1" as stored
  ex:alt "5"^^xsd:integer ;               # neither xsd:int nor a string
  ex:neg "+5"^^xsd:integer ;              # an xsd:integer as written
  ex:line [ ex:price "5"^^xsd:int ; ex:qty "0"^^xsd:integer ] ,
          [ ex:price "40.00"^^xsd:decimal ; ex:qty "3"^^xsd:int ] .
"""
)


def _compare(data: str, shapes: str) -> None:
    data_triples = read_triples(data=data.encode(), format_name="turtle")
    shape_triples = read_triples(data=shapes.encode(), format_name="turtle")
    ours = validate_graphs(data_triples, shape_triples)
    _, theirs, _ = pyshacl_results(data_triples, shape_triples)
    index = TripleIndex(shape_triples)
    assert result_keys(ours.results, index) == result_keys(theirs, index)
    assert set(ours.engines.values()) == {"sparql"}
    assert ours.as_written == {}  # nothing was handed to pySHACL


def test_literals_as_written_are_judged_by_the_engine_alone() -> None:
    _compare(DATA, SHAPES)


def test_results_name_the_value_as_written() -> None:
    data_triples = read_triples(data=DATA.encode(), format_name="turtle")
    shape_triples = read_triples(data=SHAPES.encode(), format_name="turtle")
    report = validate_graphs(data_triples, shape_triples)
    values = {str(r.value) for r in report.results if r.value is not None}
    assert '"30.5"^^<http://www.w3.org/2001/XMLSchema#decimal>' in values  # sh:pattern
    assert '"1.00"^^<http://www.w3.org/2001/XMLSchema#decimal>' in values  # sh:in
    assert '"02"^^<http://www.w3.org/2001/XMLSchema#integer>' in values
    assert '"+5"^^<http://www.w3.org/2001/XMLSchema#integer>' in values  # sh:not
    assert '"30.5"^^<http://www.w3.org/2001/XMLSchema#decimal>' in {
        str(r.value) for r in report.results if r.constraint_name == "sparql"
    }  # a user's query bound the stored term: the result names the one written


def test_validate_explain_names_no_hand_off_and_times_each_shape(cli, tmp_path: Path) -> None:
    (tmp_path / "data.ttl").write_text(DATA, encoding="utf-8")
    (tmp_path / "shapes.ttl").write_text(SHAPES, encoding="utf-8")
    args = [str(tmp_path / "data.ttl"), "-s", str(tmp_path / "shapes.ttl")]
    shown = cli("validate", *args, "--explain")
    assert shown.exit_code == 1, shown.output
    assert "pyshacl" not in shown.output
    assert "s  http://example.org/OrderShape" in shown.output
    out = json.loads(cli("validate", *args, "--explain", "--json").output)
    assert out["explain"]["http://example.org/OrderShape"]["engine"] == "sparql"
    assert out["explain"]["http://example.org/OrderShape"]["seconds"] >= 0


# A SPARQL constraint that reads the lexical form (STR) of a literal the store keeps in
# another form cannot be answered by the store: it is handed over, and --explain says why.
READS_TERMS = (
    PREFIXES
    + """
ex:S a sh:NodeShape ; sh:targetClass ex:Order ;
  sh:sparql [ sh:select \"\"\"
    PREFIX ex: <http://example.org/>
    SELECT $this ?value WHERE { $this ex:total ?value FILTER(STRLEN(STR(?value)) > 3) }\"\"\" ] .
"""
)


def test_a_query_reading_lexical_forms_is_handed_over_by_name(cli, tmp_path: Path) -> None:
    data = PREFIXES + 'ex:o a ex:Order ; ex:total "1.50"^^xsd:decimal .\n'
    data_triples = read_triples(data=data.encode(), format_name="turtle")
    shape_triples = read_triples(data=READS_TERMS.encode(), format_name="turtle")
    report = validate_graphs(data_triples, shape_triples)
    # "1.50" is four characters as written ("1.5" as stored): pySHACL judges it so
    assert [str(r.value) for r in report.results] == [
        '"1.50"^^<http://www.w3.org/2001/XMLSchema#decimal>'
    ]
    assert "calls STRLEN on ?value" in report.as_written_why["http://example.org/S"]
    (tmp_path / "d.ttl").write_text(data, encoding="utf-8")
    (tmp_path / "s.ttl").write_text(READS_TERMS, encoding="utf-8")
    shown = cli("validate", str(tmp_path / "d.ttl"), "-s", str(tmp_path / "s.ttl"), "--explain")
    assert (
        "pyshacl  http://example.org/S" in shown.output and "calls STRLEN on ?value" in shown.output
    )


def test_records_of_an_older_store_still_judge_as_written(cli, tmp_path: Path) -> None:
    """A store whose records do not name their triple (made before they did) is judged as
    before: pySHACL on the terms as written, said by --explain."""
    import pyoxigraph

    from ontoloom.store import store_path

    assert cli("init").exit_code == 0
    shapes = PREFIXES + (
        "ex:S a sh:NodeShape ; sh:targetClass ex:Order ; "
        "sh:property [ sh:path ex:total ; sh:datatype xsd:decimal ; "
        'sh:pattern "^[0-9]+\\\\.[0-9]{2}$" ] .\n'
    )
    (tmp_path / "rules.ttl").write_text(shapes, encoding="utf-8")
    assert cli("schema", "add-shapes", str(tmp_path / "rules.ttl")).exit_code == 0
    data = PREFIXES + 'ex:o a ex:Order ; ex:total "1.50"^^xsd:decimal .\n'
    (tmp_path / "d.ttl").write_text(data, encoding="utf-8")
    assert cli("import", str(tmp_path / "d.ttl")).exit_code == 0
    assert "pyshacl" not in cli("check", "--explain").output
    # the store as an older version left it: records without the triple they belong to
    store = pyoxigraph.Store(str(store_path(cli.data_dir)))
    named = {"recordSubject", "recordPredicate", "recordObject"}
    old = [q for q in store if q.predicate.value.rsplit("#", 1)[-1] in named]
    assert len(old) == 3
    for quad in old:
        store.remove(quad)
    del store
    checked = cli("check", "--explain")
    assert checked.exit_code == 0, checked.output  # "1.50" matches as written
    assert "old form" in checked.output


@pytest.mark.parametrize(
    ("query", "batched"),
    [
        (
            "SELECT $this WHERE { $this ex:t ?t . { SELECT $this (SUM(?p) AS ?s) WHERE "
            "{ $this ex:l ?l . ?l ex:p ?p } GROUP BY $this } FILTER(?t < ?s) }",
            True,
        ),
        # an aggregate over every focus node at once is not the one of each: per focus
        (
            "SELECT $this WHERE { $this ex:t ?t . { SELECT (SUM(?p) AS ?s) WHERE "
            "{ ?x ex:p ?p } } FILTER(?t < ?s) }",
            False,
        ),
        (
            "SELECT $this WHERE { $this ex:t ?t . { SELECT (MAX(?p) AS ?s) WHERE "
            "{ $this ex:p ?p } } FILTER(?t < ?s) }",
            False,
        ),
        (
            "SELECT $this WHERE { $this ex:t ?t . { SELECT $this ?p WHERE "
            "{ $this ex:p ?p OPTIONAL { ?p ex:q ?q } } } }",
            False,
        ),
    ],
)
def test_which_subqueries_join_safely(query: str, batched: bool) -> None:
    text = "PREFIX ex: <http://example.org/>\n" + query
    assert joins_safely(split_prologue(text)[1], analyse(text)) is batched


BATCHED = (
    PREFIXES
    + """
ex:S a sh:NodeShape ; sh:targetClass ex:Order ;
  sh:sparql [ sh:select \"\"\"
    PREFIX ex: <http://example.org/>
    SELECT $this (?t AS ?value) WHERE { $this ex:t ?t .
      { SELECT $this (SUM(?p) AS ?s) WHERE { $this ex:l ?l . ?l ex:p ?p } GROUP BY $this }
      FILTER (?t < ?s) }\"\"\" ] .
"""
)


def test_a_grouped_subquery_answers_as_pre_binding_does() -> None:
    rows = []
    for i in range(30):
        rows.append(f"ex:o{i} a ex:Order ; ex:t {i} ; ex:l [ ex:p {i % 7} ] , [ ex:p {i % 5} ] .")
    rows.append("ex:lonely a ex:Order ; ex:t 0 .")  # no lines: the subquery has no row
    _compare(PREFIXES + "\n".join(rows) + "\n", BATCHED)


def test_a_closed_shape_names_the_value_as_written() -> None:
    shapes = PREFIXES + (
        "ex:S a sh:NodeShape ; sh:targetClass ex:Order ; sh:closed true ; "
        "sh:ignoredProperties ( <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> ) ; "
        "sh:property [ sh:path ex:total ] .\n"
    )
    data = PREFIXES + 'ex:o a ex:Order ; ex:total 1.0 ; ex:extra "2.50"^^xsd:decimal .\n'
    _compare(data, shapes)


# SPARQL constraints people write, over data with literals kept in another form
# ("1000.50", "007"): each reads lexical forms, distinct values or joins only of values the
# store keeps as written (names, codes, IRIs), or compares decimals by value — so the store
# answers them exactly, with no hand-off, and pySHACL agrees result for result.
TERM_READS_ELSEWHERE = (
    PREFIXES
    + """
ex:NameShape a sh:NodeShape ; sh:targetClass ex:Order ;
  sh:sparql [ sh:message "name not upper case" ; sh:select \"\"\"
    PREFIX ex: <http://example.org/>
    SELECT DISTINCT $this ?value WHERE {
      $this ex:name ?value FILTER(UCASE(STR(?value)) != STR(?value)) }\"\"\" ] ;
  sh:sparql [ sh:message "shares a code with another order" ; sh:select \"\"\"
    PREFIX ex: <http://example.org/>
    SELECT $this ?value WHERE {
      $this ex:code ?value . ?other ex:code ?value . FILTER(?other != $this) }\"\"\" ] ;
  sh:sparql [ sh:message "total over the limit" ; sh:select \"\"\"
    PREFIX ex: <http://example.org/>
    SELECT $this (?t AS ?value) WHERE { $this ex:total ?t FILTER(?t > 1000.00) }\"\"\" ] ;
  sh:sparql [ sh:message "customer of another region" ; sh:select \"\"\"
    PREFIX ex: <http://example.org/>
    SELECT DISTINCT $this ?value WHERE {
      $this ex:customer ?value . ?value ex:region ?r .
      FILTER(!STRSTARTS(STR(?r), "EU-")) }\"\"\" ] .
"""
)

ORDERS = (
    PREFIXES
    + """
ex:a a ex:Order ; ex:name "ACME" ; ex:code "X1" ; ex:total "1000.50"^^xsd:decimal ;
  ex:customer ex:c1 .
ex:b a ex:Order ; ex:name "Bolt" ; ex:code "X1" ; ex:total "0999.990"^^xsd:decimal ;
  ex:customer ex:c2 .
ex:c a ex:Order ; ex:name "CORE" ; ex:code "Y2" ; ex:total "12"^^xsd:decimal ;
  ex:customer ex:c1 .
ex:c1 ex:region "EU-West" ; ex:since "007"^^xsd:integer .
ex:c2 ex:region "US-East" ; ex:since "+7"^^xsd:integer .
"""
)


def test_queries_reading_other_terms_than_rewritten_literals_stay_in_the_store() -> None:
    _compare(ORDERS, TERM_READS_ELSEWHERE)


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        # term reads of a variable bound by a predicate whose literals are rewritten
        (
            "SELECT $this WHERE { $this ex:total ?t FILTER(STRLEN(STR(?t)) > 3) }",
            "calls STRLEN on ?t",
        ),
        (
            "SELECT $this WHERE { $this ex:total ?t FILTER(DATATYPE(?t) = xsd:int) }",
            "calls DATATYPE on ?t",
        ),
        (
            "SELECT $this WHERE { $this ex:total ?t BIND(STR(?t) AS ?s) FILTER(?s = 'x') }",
            "calls STR on ?t",
        ),
        (
            "SELECT $this WHERE { $this ex:total ?t BIND(?t AS ?u) FILTER(REGEX(?u, '0$')) }",
            "calls REGEX on ?u",
        ),
        ("SELECT DISTINCT ?t WHERE { ?s ex:total ?t }", "keeps distinct values of ?t"),
        (
            "SELECT (COUNT(DISTINCT ?t) AS ?n) WHERE { ?s ex:total ?t }",
            "keeps distinct values of ?t",
        ),
        ("SELECT ?t WHERE { ?s ex:total ?t } GROUP BY ?t", "groups by ?t"),
        ("SELECT ?s WHERE { ?s ex:total ?t VALUES ?t { 1.5 } }", "lists values of ?t"),
        ("SELECT ?s WHERE { ?s ex:total ?t . ?o ex:total ?t }", "joins on ?t"),
        ("SELECT ?s WHERE { ?s ex:total 1.50 }", "names the literal"),
        ("SELECT ?s WHERE { ?s ex:name ?n FILTER(sameTerm(?n, 1.50)) }", "names the literal"),
        ("SELECT ?s WHERE { ?s ex:total 1.5 }", "matches the literal"),
        ("SELECT ?s WHERE { ?s ?p ?o FILTER(STR(?o) = '1.50') }", "calls STR on ?o"),
        ("SELECT ?s WHERE { ?s ex:a/ex:total ?o FILTER(STR(?o) = '1.50') }", "calls STR on ?o"),
        # reads of what the store keeps as written, or comparisons by value: none
        ("SELECT $this WHERE { $this ex:name ?n FILTER(STRLEN(STR(?n)) > 3) }", None),
        ("SELECT DISTINCT $this ?n WHERE { $this ex:name ?n . ?x ex:name ?n }", None),
        ("SELECT $this WHERE { $this ex:total ?t FILTER(?t > 1000.00 && ?t = 1.5) }", None),
        ("SELECT $this (SUM(?t) AS ?s) WHERE { $this ex:total ?t } GROUP BY $this", None),
        ("SELECT $this WHERE { $this ex:total ?t } ORDER BY ?t", None),
    ],
)
def test_which_queries_read_rewritten_literals_by_their_terms(
    query: str, reason: str | None
) -> None:
    from ontoloom.shacl.compiler import reads_terms

    prologue = "PREFIX ex: <http://example.org/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
    found = reads_terms(prologue + query, {"<http://example.org/total>"})
    if reason is None:
        assert found is None
    else:
        assert found is not None and reason in found, found


def test_a_pre_bound_value_of_a_rewritten_predicate_is_read_by_its_term() -> None:
    from ontoloom.shacl.compiler import reads_terms

    query = "SELECT $this WHERE { FILTER(STRLEN(STR($value)) > 3) }"
    assert reads_terms(query, {"<http://example.org/total>"}) is None
    assert reads_terms(query, {"<http://example.org/total>"}, {"value"}) == "calls STRLEN on ?value"


# A sequence path whose last step reaches literals kept in another form is judged in the
# store, its last triple joined with its record; an inverse step back from such a literal
# is not, and is handed over by name.
SEQUENCE = (
    PREFIXES
    + """
ex:OrderShape a sh:NodeShape ; sh:targetClass ex:Order ;
  sh:property [ sh:path ( ex:line ex:price ) ; sh:datatype xsd:decimal ;
                sh:pattern "^[0-9]+\\\\.[0-9]{2}$" ; sh:in ( 10.00 20.5 "5"^^xsd:int ) ] .
"""
)
LINES = (
    PREFIXES
    + """
ex:a a ex:Order ; ex:line [ ex:price "10.00"^^xsd:decimal ] , [ ex:price "20.50"^^xsd:decimal ] .
ex:b a ex:Order ; ex:line [ ex:price "10.0"^^xsd:decimal ] , [ ex:price "5"^^xsd:int ] .
"""
)


def test_a_sequence_path_to_rewritten_literals_is_judged_in_the_store() -> None:
    _compare(LINES, SEQUENCE)


def test_an_inverse_step_back_from_a_rewritten_literal_is_handed_over_by_name() -> None:
    shapes = SEQUENCE.replace("( ex:line ex:price )", "( ex:price [ sh:inversePath ex:price ] )")
    data_triples = read_triples(data=LINES.encode(), format_name="turtle")
    shape_triples = read_triples(data=shapes.encode(), format_name="turtle")
    report = validate_graphs(data_triples, shape_triples)
    assert "reaches them" in report.as_written_why["http://example.org/OrderShape"]
