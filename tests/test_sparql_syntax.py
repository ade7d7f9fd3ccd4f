"""The SPARQL facts the shapes compiler relies on come from a real parser."""

from __future__ import annotations

import pytest

from ontoloom.shacl.sparql_syntax import SparqlSyntaxError, analyse, path_predicates

EX = "PREFIX ex: <http://ex/>\n"


def test_every_triple_pattern_is_found_with_its_path_and_scope() -> None:
    facts = analyse(
        EX + "SELECT $this ?v WHERE { $this ex:p+/^ex:q ?v . "
        "FILTER NOT EXISTS { ?v ex:r ?w } "
        "{ SELECT ?v (COUNT(?z) AS ?n) WHERE { ?v ex:s ?z } GROUP BY ?v } }"
    )
    assert facts.form == "SELECT" and facts.projection == ("this", "v")
    by_path = {e.path: e for e in facts.edges}
    walk = ("seq", (("plus", ("iri", "<http://ex/p>")), ("inv", ("iri", "<http://ex/q>"))))
    assert by_path[walk].subject == "?this" and by_path[walk].scope == 0
    assert by_path[("iri", "<http://ex/r>")].scope == 0  # EXISTS shares the outer scope
    assert by_path[("iri", "<http://ex/s>")].scope == 1
    assert facts.subquery_projections == (("v", "n"),)
    assert {"SUBQUERY", "AGGREGATE", "EXISTS"} <= facts.features
    assert facts.assigned == {"n"}  # the GROUP BY variable is not an assignment


def test_path_predicates_give_each_predicate_with_its_direction() -> None:
    path = ("seq", (("plus", ("iri", "<a>")), ("inv", ("alt", (("iri", "<b>"), ("var", "?p"))))))
    assert path_predicates(path) == {("<a>", False), ("<b>", True), ("?", True)}


def test_negated_sets_walk_any_predicate() -> None:
    facts = analyse("ASK { ?a !(<http://a>|^<http://b>) ?c }")
    assert path_predicates(facts.edges[0].path) == {("?", False), ("?", True)}


def test_features_of_note_are_named() -> None:
    facts = analyse("SELECT * { VALUES ?x { 1 } ?x <p> ?y MINUS { ?y <q> ?z } BIND(2 AS ?b) }")
    assert {"VALUES", "MINUS", "BIND"} <= facts.features
    assert {"x", "b"} <= facts.assigned


def test_an_undeclared_prefix_is_named() -> None:
    with pytest.raises(SparqlSyntaxError) as caught:
        analyse("SELECT * { ?s nope:p ?o }")
    assert caught.value.prefix == "nope"


def test_a_syntax_error_has_its_line_and_column() -> None:
    with pytest.raises(SparqlSyntaxError) as caught:
        analyse("SELECT * WHERE {\n ?s ?p ?o FILTER(?o > ) }")
    assert caught.value.line == 2 and caught.value.column is not None


def test_facts_come_back_the_same_from_the_disk_cache(tmp_path, monkeypatch) -> None:
    from ontoloom.shacl import sparql_syntax

    monkeypatch.setenv("ONTOLOOM_CACHE", str(tmp_path))
    query = "SELECT ?x WHERE { ?x <http://cached/p>* ?y }"
    first = sparql_syntax.analyse(query)
    # Private on purpose: the in-process memo answers first; emptying it (as a new process
    # starts) is what makes the next analyse() read the disk cache.
    sparql_syntax._analyse_cached.cache_clear()
    assert list((tmp_path / "ontoloom" / "sparql").glob("*.json"))
    assert sparql_syntax.analyse(query) == first


def test_a_syntax_error_comes_back_from_the_disk_cache_without_parsing_again(
    tmp_path, monkeypatch
) -> None:
    from ontoloom.shacl import sparql_syntax

    monkeypatch.setenv("ONTOLOOM_CACHE", str(tmp_path))
    query = "SELECT * WHERE {\n ?s <http://cached/error> ?o FILTER(?o > ) }"
    with pytest.raises(SparqlSyntaxError) as first:
        sparql_syntax.analyse(query)
    sparql_syntax._analyse_cached.cache_clear()  # as a new process starts (see above)

    def parse_again(self, text):  # the cached error must answer: rdflib is never asked
        raise AssertionError("parsed again")

    monkeypatch.setattr(sparql_syntax._Reader, "read", parse_again)
    with pytest.raises(SparqlSyntaxError) as again:
        sparql_syntax.analyse(query)
    assert (again.value.message, again.value.line, again.value.column) == (
        first.value.message,
        first.value.line,
        first.value.column,
    )


@pytest.mark.parametrize(
    "query",
    [
        "SELECT DISTINCT ?s WHERE { ?s <http://p> ?o }",
        "SELECT REDUCED ?s WHERE { ?s <http://p> ?o } ORDER BY ?s",
        "SELECT ?s WHERE { ?s <http://p> ?o } LIMIT 3",
    ],
)
def test_distinct_reduced_and_limit_on_the_outer_query_make_no_subquery(query: str) -> None:
    facts = analyse(query)
    assert facts.subquery_projections == ()
    assert [e.scope for e in facts.edges] == [0]
    assert "SUBQUERY" not in facts.features and facts.projection == ("s",)


def test_a_bind_reading_this_is_told_apart_from_one_that_does_not() -> None:
    # Joining a query with the focus nodes equals pre-binding $this unless a BIND reads it.
    reads = analyse("SELECT ?this WHERE { ?this ?p ?o . BIND (STR(?this) AS ?s) }")
    not_reads = analyse("SELECT ?this WHERE { ?this ?p ?o . BIND (STR(?p) AS ?s) }")
    assert {"BIND", "BIND_THIS"} <= reads.features
    assert "BIND" in not_reads.features and "BIND_THIS" not in not_reads.features


def test_a_filter_inside_exists_is_read_with_all_it_holds() -> None:
    """rdflib's algebra keeps the translated pattern of (NOT) EXISTS as an attribute over a
    parse tree it took the FILTERs out of: what a FILTER inside EXISTS holds — patterns,
    calls, SERVICE — must still be found (the reach of a shape, the SERVICE gate)."""
    facts = analyse(
        EX + "SELECT $this WHERE { $this ex:p ?x FILTER EXISTS { ?x ex:q ?y "
        "FILTER NOT EXISTS { ?y ex:r ?z FILTER(ex:f(?z)) "
        "FILTER EXISTS { SERVICE <http://far/sparql> { ?z ex:s ?w } } } } }"
    )
    paths = {e.path for e in facts.edges}
    assert {("iri", f"<http://ex/{p}>") for p in "pqrs"} <= paths
    assert facts.functions == ("http://ex/f",)
    assert facts.services == ("<http://far/sparql>",)
    assert "SERVICE" in facts.features
