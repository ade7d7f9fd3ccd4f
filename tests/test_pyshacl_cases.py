"""pySHACL's own data-driven test cases (its sdist's test/issues/test_NNN folders and
test/resources/cmdline_tests, unpacked by `make pyshacl-suites`), run through ``ontoloom
validate``'s library function with the options pySHACL's tests give, and compared with
pySHACL's own answer on the same files and options: conformance, and every result as (focus,
path, value, source shape, component, severity) — blank nodes by kind, blank source shapes by
their path (tests/shacl_keys.py).

Each case also names what pySHACL's own test asserts (``conforms``); where pySHACL fails its
own test, the case is listed in ``PYSHACL_FAILS`` (none in 0.40.1). pySHACL's tests that
write their graphs inline in Python are replayed by tests/test_pyshacl_issue_tests.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from ontoloom.errors import BadInput
from ontoloom.shacl.oracle import from_rdflib, results_from_report
from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.validation import Source, validate_files
from pyshacl_suites import SUITES, missing, peers
from shacl_keys import result_keys

CMDLINE = "resources/cmdline_tests"


@dataclass(frozen=True)
class Case:
    name: str
    data: str  # paths under pySHACL's test/
    shapes: str
    conforms: bool | None  # what pySHACL's own test asserts (None: nothing about it)
    ontology: str | None = None
    inference: str = "none"
    imports: bool = False
    advanced: bool = False
    data_format: str | None = None


def _issue(n: str, data: str, shapes: str, conforms: bool, **options: object) -> Case:
    at = f"issues/test_{n.split('_')[0]}"
    ontology = options.pop("ontology", None)
    return Case(
        f"issue {n}",
        f"{at}/{data}",
        f"{at}/{shapes}",
        conforms,
        ontology=f"{at}/{ontology}" if ontology else None,
        **options,  # type: ignore[arg-type]
    )


CASES = [
    _issue("029", "simpleData.ttl", "simpleOnto.ttl", False, ontology="simpleOnto.ttl"),
    _issue(
        "040", "sample-network.ttl", "03-Network.ttl", True, ontology="03-Network.ttl",
        inference="rdfs",
    ),
    _issue(
        "220_1", "kb-REPRODUCTION-1.ttl", "sh-REPRODUCTION-1.ttl", True,
        ontology="owl-REPRODUCTION.ttl",
    ),
    _issue(
        "220_2", "kb-REPRODUCTION-2.ttl", "sh-REPRODUCTION-2.ttl", False,
        ontology="owl-REPRODUCTION.ttl",
    ),
    # its shapes owl:import a file beside them (a relative IRI)
    _issue("281", "data.ttl", "policies.ttl", False, imports=True),
    # test_cmdline.py's graphs, with its options
    Case("cmdline", f"{CMDLINE}/d1.ttl", f"{CMDLINE}/s1.ttl", True, f"{CMDLINE}/o1.ttl", "rdfs"),
    Case("cmdline fail", f"{CMDLINE}/d2.ttl", f"{CMDLINE}/s1.ttl", False, f"{CMDLINE}/o1.ttl", "rdfs"),
    Case("cmdline table", f"{CMDLINE}/d1.ttl", f"{CMDLINE}/s1.ttl", False),
    Case(
        "cmdline jsonld", f"{CMDLINE}/d1.jsonld", f"{CMDLINE}/s1.ttl", True, f"{CMDLINE}/o1.ttl",
        "rdfs", data_format="json-ld",
    ),
    # test_cmdline_rules.py's graphs (it runs pySHACL's rules runner on them): validated -a
    Case("cmdline rules", f"{CMDLINE}/rules_d.ttl", f"{CMDLINE}/rules_s.ttl", None,
         inference="rdfs", advanced=True),
]  # fmt: skip

# Cases whose own pySHACL test fails with this pySHACL, and why (ontoloom answers as pySHACL
# does on them all the same).
PYSHACL_FAILS: dict[str, str] = {}
# Cases where ontoloom does not answer as pySHACL does, and why (strict xfails).
OURS_FAIL: dict[str, str] = {}


def _params() -> list:
    if SUITES is None:
        return [pytest.param(None, id="suite-missing")]
    return [
        pytest.param(
            c,
            id=c.name,
            marks=[pytest.mark.xfail(strict=True, raises=BadInput, reason=OURS_FAIL[c.name])]
            if c.name in OURS_FAIL
            else [],
        )
        for c in CASES
    ]


@pytest.mark.parametrize("case", _params())
def test_ontoloom_answers_as_pyshacl(case: Case | None) -> None:
    if case is None:
        missing()
    import pyshacl

    assert SUITES is not None
    at = SUITES.as_posix() + "/"
    conforms, graph, _ = pyshacl.validate(
        at + case.data,
        shacl_graph=at + case.shapes,
        ont_graph=at + case.ontology if case.ontology else None,
        inference=case.inference,
        do_owl_imports=case.imports,
        advanced=case.advanced,
        data_graph_format=case.data_format,
    )
    if case.conforms is not None:
        assert (conforms == case.conforms) == (case.name not in PYSHACL_FAILS), case.name
    report = from_rdflib(graph)
    theirs = result_keys(results_from_report(report), TripleIndex(report))

    outcome = validate_files(
        [Source(at + case.data, "-df", case.data_format)],
        [Source(at + case.shapes, "-sf")],
        ontology=[Source(at + case.ontology, "-ef")] if case.ontology else [],
        inference=case.inference,
        imports=case.imports,
        advanced=case.advanced,
    )
    ours = result_keys(outcome.report.results, outcome.shapes.graph)
    assert (outcome.conforms, ours) == (conforms, theirs)


def test_the_cases_are_there() -> None:
    if SUITES is None:
        missing()
    for case in CASES:
        for name in (case.data, case.shapes, case.ontology):
            assert name is None or (SUITES / name).is_file(), name
    assert set(PYSHACL_FAILS) | set(OURS_FAIL) <= {c.name for c in CASES}
    assert Path(SUITES / "issues").is_dir()


def test_a_suite_not_fetched_yet_is_named_with_the_command_that_fetches_it(tmp_path: Path) -> None:
    with pytest.raises(peers.Unavailable, match=r"not unpacked under .* \(`make pyshacl-suites`\)"):
        peers.pyshacl_suites(tmp_path, install=False)
    assert not any(tmp_path.iterdir())  # looking never downloads
