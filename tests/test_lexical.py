"""Literals are kept as written: lexical form, datatype and language tag survive store →
export → import, for every XSD datatype and non-canonical form, while SPARQL still compares
them by value. The store keeps a literal by value (oxigraph#526); the seam keeps the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import Cli, quads_of
from ontoloom.store import lexical
from ontoloom.store.base import Delta
from ontoloom.store.embedded import EmbeddedBackend
from ontoloom.store.rdfio import read_quads
from ontoloom.terms import Literal, NamedNode, Quad
from ontoloom.vocab import XSD

X = XSD
# Non-canonical and derived forms the store rewrites, and forms it keeps.
WRITTEN = [
    ("007", "integer"),
    ("+5", "integer"),
    ("-0", "integer"),
    ("5", "int"),
    ("5", "long"),
    ("01", "byte"),
    ("5", "nonNegativeInteger"),
    ("1.0", "decimal"),
    ("1.50", "decimal"),
    ("1.0E0", "double"),
    ("0.50", "double"),
    ("1e0", "float"),
    ("1", "boolean"),
    ("2020-01-01T00:00:00Z", "dateTimeStamp"),
    ("2026-11-02T09:00:00.000Z", "dateTime"),
    ("2026-11-02T09:00:00+00:00", "dateTime"),
    ("PT36H", "dayTimeDuration"),
    ("P1D", "duration"),
    ("12:00:00", "time"),
    ("2020", "gYear"),
    ("abc", "integer"),  # ill-typed: kept, and sh:datatype must say so
    ("2026-02-30", "date"),
    ("42", "integer"),
    ("true", "boolean"),
]


def _literal(lexical_form: str, local: str) -> Literal:
    return Literal(lexical_form, datatype=NamedNode(X + local))


def test_literals_come_back_from_the_store_as_written() -> None:
    backend = EmbeddedBackend.memory()
    s, g = NamedNode("http://s"), NamedNode("http://g")
    quads = {
        Quad(s, NamedNode(f"http://p{i}"), _literal(v, d), g) for i, (v, d) in enumerate(WRITTEN)
    }
    quads.add(Quad(s, NamedNode("http://lang"), Literal("Hallo", language="de-at"), g))
    backend.apply(Delta(adds=quads))
    assert set(backend.quads(g)) == quads


def test_sparql_still_compares_and_orders_by_value() -> None:
    backend = EmbeddedBackend.memory()
    p, g = NamedNode("http://p"), NamedNode("http://g")
    forms = [("007", "integer"), ("5", "int"), ("1.50", "decimal"), ("+12", "integer")]
    backend.apply(
        Delta(
            adds={Quad(NamedNode(f"http://s{i}"), p, _literal(*f), g) for i, f in enumerate(forms)}
        )
    )
    rows = backend.select("SELECT ?s WHERE { ?s <http://p> ?o FILTER(?o > 4) } ORDER BY ?o")
    assert [r["s"].value for r in rows] == ["http://s1", "http://s0", "http://s3"]


def test_two_literals_the_store_would_keep_as_one_value_are_refused_and_nothing_changes() -> None:
    backend = EmbeddedBackend.memory()
    s, p, g = NamedNode("http://s"), NamedNode("http://p"), NamedNode("http://g")
    backend.apply(Delta(adds={Quad(s, p, _literal("007", "integer"), g)}))
    before = set(backend.quads())
    with pytest.raises(Exception, match="one value") as caught:
        backend.apply(Delta(adds={Quad(s, p, _literal("7", "integer"), g)}))
    assert "007" in str(caught.value) and set(backend.quads()) == before
    with pytest.raises(Exception, match="one value"):
        backend.apply(
            Delta(adds={Quad(s, p, _literal("5", "int"), g), Quad(s, p, _literal("5", "long"), g)})
        )


def test_a_literal_removed_in_either_form_takes_its_record_with_it() -> None:
    backend = EmbeddedBackend.memory()
    s, p, g = NamedNode("http://s"), NamedNode("http://p"), NamedNode("http://g")
    backend.apply(Delta(adds={Quad(s, p, _literal("007", "integer"), g)}))
    backend.apply(Delta(removes={Quad(s, p, _literal("7", "integer"), g)}))
    backend.apply(Delta(adds={Quad(s, p, _literal("7", "integer"), g)}))
    assert set(backend.quads(g)) == {Quad(s, p, _literal("7", "integer"), g)}


def test_import_then_export_keeps_every_literal_as_written(cli: Cli, tmp_path: Path) -> None:
    lines = [
        f'<http://ex/s> <http://ex/p{i}> "{v}"^^<{X}{d}> .' for i, (v, d) in enumerate(WRITTEN)
    ]
    source = tmp_path / "data.nt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert cli("init").exit_code == 0
    result = cli("import", str(source))
    assert result.exit_code == 0, result.output
    for fmt, suffix in (("nquads", "nq"), ("turtle", "ttl"), ("trig", "trig")):
        out = tmp_path / f"out.{suffix}"
        assert cli("export", "--format", fmt, "--graph", "facts", "-o", str(out)).exit_code == 0
        exported = {q.triple for q in read_quads(path=out)}
        assert exported == {q.triple for q in read_quads(path=source)}, fmt
    assert len(quads_of(cli.data_dir)) == len(WRITTEN)


# -- the seam's fast path: forms it knows are kept without asking the store -------------------
lexical_forms = st.text(alphabet="0123456789+-.eETZ:", max_size=22)


@settings(max_examples=400, deadline=None)
@given(
    value=lexical_forms,
    local=st.sampled_from(["integer", "decimal", "dateTime", "date", "boolean"]),
)
def test_forms_known_to_be_kept_are_kept_by_the_store(value: str, local: str) -> None:
    literal = _literal(value, local)
    assert lexical.stored_form(literal) == _kept_by_oxigraph(literal)


# date-times shaped as ontoloom writes them (a commit's time: a fraction without trailing
# zeros) and near them: hour 24, trailing zeros, long fractions, no zone
_date_times = st.builds(
    lambda y, mo, d, h, mi, sec, frac, zone: (
        f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{sec:02d}{frac}{zone}"
    ),
    st.integers(0, 9999),
    st.integers(0, 13),
    st.integers(0, 32),
    st.integers(0, 25),
    st.integers(0, 60),
    st.integers(0, 61),
    st.one_of(st.just(""), st.text(alphabet="0123456789", max_size=20).map(lambda f: "." + f)),
    st.sampled_from(["", "Z", "+00:00"]),
)


@settings(max_examples=400, deadline=None)
@given(value=_date_times)
@example("2026-12-07T24:00:00Z")  # kept as 2026-12-08T00:00:00Z
@example("2026-12-07T23:25:04.10Z")  # kept without the trailing zero
@example("2026-12-07T23:25:04.000000000000000001Z")
def test_date_times_known_to_be_kept_are_kept_by_the_store(value: str) -> None:
    literal = _literal(value, "dateTime")
    assert lexical.stored_form(literal) == _kept_by_oxigraph(literal)


def test_a_commit_time_is_known_to_be_kept_without_asking_the_store() -> None:
    kept, others = lexical.split_kept(
        [
            Quad(NamedNode("urn:s"), NamedNode("urn:p"), _literal(v, "dateTime"))
            for v in ("2026-12-07T23:25:04.461744Z", "2026-12-07T24:00:00Z")
        ]
    )
    assert [q.object.value for q in kept] == ["2026-12-07T23:25:04.461744Z"]
    assert [q.object.value for q in others] == ["2026-12-07T24:00:00Z"]


def _kept_by_oxigraph(literal: Literal) -> Literal:
    """The literal as Oxigraph keeps it: stored in a store of its own and read back."""
    store = pyoxigraph.Store()
    p = NamedNode("urn:test:p")
    store.add(pyoxigraph.Quad(p, p, literal))
    [quad] = store.quads_for_pattern(None, p, None, None)
    assert isinstance(quad.object, Literal)
    return quad.object


def test_a_literal_the_store_keeps_costs_no_record(cli: Cli) -> None:
    assert cli("init").exit_code == 0
    assert (
        cli("create", "Event", "-p", "title=E", "-p", "start=2026-11-02T09:00:00Z").exit_code == 0
    )
    from ontoloom.store import open_backend
    from ontoloom.vocab import META

    with open_backend(cli.data_dir, write=False) as backend:
        records = [q for q in backend.quads(META) if q.predicate == lexical.LEXICAL_FORM]
    assert records == []
    assert json.loads(cli.json("list", "--type", "Event").output)[0]["properties"]["start"]


# -- validation judges the terms as written ---------------------------------------------------
SHAPES = """@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ex: <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:S a sh:NodeShape ; sh:targetSubjectsOf ex:n, ex:d, ex:z, ex:h ;
  sh:property [ sh:path ex:n ; sh:datatype xsd:int ] ;
  sh:property [ sh:path ex:d ; sh:in ( "1.0"^^xsd:decimal ) ] ;
  sh:property [ sh:path ex:h ; sh:hasValue "0.50"^^xsd:double ] ;
  sh:property [ sh:path ex:z ; sh:pattern "^0" ; sh:minLength 3 ] .
"""
# As the SHACL spec reads them: sh:datatype checks the datatype IRI and the lexical form,
# sh:in and sh:hasValue compare terms, sh:pattern and sh:minLength the lexical form.
AS_WRITTEN = """@prefix ex: <http://example.org/> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:a ex:n "5"^^xsd:int ; ex:d "1.0"^^xsd:decimal ; ex:h "0.50"^^xsd:double ; ex:z "007"^^xsd:integer .
"""
CANONICAL = """@prefix ex: <http://example.org/> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:b ex:n "5"^^xsd:integer ; ex:d "1"^^xsd:decimal ; ex:h "0.5"^^xsd:double ; ex:z "7"^^xsd:integer .
"""
BROKEN = {"datatype", "in", "hasValue", "pattern", "minLength"}


def _validate(tmp_path: Path, data: str) -> set[str]:
    from click.testing import CliRunner

    from ontoloom.cli import main

    (tmp_path / "shapes.ttl").write_text(SHAPES, encoding="utf-8")
    (tmp_path / "data.ttl").write_text(data, encoding="utf-8")
    args = ["validate", str(tmp_path / "data.ttl"), "-s", str(tmp_path / "shapes.ttl"), "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output
    out = json.loads(result.output)
    return {
        r["component"].rsplit("#", 1)[-1].removesuffix("ConstraintComponent")
        for r in out["results"]
    }


def test_validate_judges_literals_as_written(tmp_path: Path) -> None:
    assert _validate(tmp_path, AS_WRITTEN) == set()
    broken = {c[:1].lower() + c[1:] for c in _validate(tmp_path, CANONICAL)}
    assert broken == BROKEN


def test_check_and_writes_judge_literals_as_written(cli: Cli, tmp_path: Path) -> None:
    assert cli("init").exit_code == 0
    (tmp_path / "rules.ttl").write_text(SHAPES, encoding="utf-8")
    assert cli("schema", "add-shapes", str(tmp_path / "rules.ttl")).exit_code == 0
    (tmp_path / "good.ttl").write_text(AS_WRITTEN, encoding="utf-8")
    assert cli("import", str(tmp_path / "good.ttl")).exit_code == 0
    explained = cli("check", "--explain")
    assert explained.exit_code == 0, explained.output
    # judged as written by the engine itself: nothing is handed to pySHACL
    assert "pyshacl" not in explained.output, explained.output
    (tmp_path / "bad.ttl").write_text(CANONICAL, encoding="utf-8")
    before = quads_of(cli.data_dir)
    refused = cli.json("import", str(tmp_path / "bad.ttl"))
    assert refused.exit_code == 1
    assert {r["constraint"] for r in json.loads(refused.output)["results"]} == BROKEN
    assert quads_of(cli.data_dir) == before
