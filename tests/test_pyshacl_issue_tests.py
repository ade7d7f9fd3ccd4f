"""pySHACL's regression tests that write their graphs inline (its sdist's test/issues/*.py,
unpacked by `make pyshacl-suites`), replayed: each module is run as pySHACL's suite runs it,
with ``pyshacl.validate`` wrapped so that every call is recorded — its data, shapes and
ontology graph, its options, pySHACL's answer — and each call is then put to ``ontoloom
validate``'s library function with the same graphs and options. Conformance and every result
(focus, path, value, source shape, component, severity; tests/shacl_keys.py) must be
pySHACL's.

The network is closed while pySHACL's tests run. Where a call cannot be compared or the two
engines part, it is listed in ``KNOWN`` with the reason; the test fails when the list and
the replay disagree either way, so a difference that goes away is noticed too.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ontoloom.errors import OntoloomError
from ontoloom.shacl.oracle import from_rdflib, results_from_report
from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.validation import Source, validate_files
from pyshacl_suites import SUITES, missing
from shacl_keys import result_keys

ISSUES = SUITES / "issues" if SUITES else None
# Modules not run, and why.
NOT_RUN = {
    "__init__.py": "no tests",
    "bad_test_070.py": "reads its shapes from the web",
    "test_098.py": "follows owl:imports to the web",
    "test_154.py": "reads its shapes from the web",
    "test_319.py": "follows owl:imports to the web",
    "test_304.py": "runs pySHACL in child processes (its output alike across hash seeds)",
}
# pySHACL's options that `ontoloom validate` has no counterpart for: such calls are not compared.
NOT_COMPARABLE = {"focus_nodes", "use_shapes", "js", "sparql_mode", "max_validation_depth"}

SAME, DIFFERS, REFUSED, SKIPPED = "same", "differs", "refused", "not compared"
# Calls (module::test#n) that are not `same`, with what they are and why.
KNOWN = {
    "issue_102.py::test_102#0": (
        REFUSED,
        "its SPARQL constraints call qb:hasZeroOrMore, a function neither the engine nor the "
        "shapes graph defines: each call an evaluation error, so the constraint could never "
        "report; ontoloom refuses it by name, pySHACL reports nothing",
    ),
    "test_036.py::test_036_jsonld#0": (
        REFUSED,
        "its data is the JSON document {}, no RDF at all: ontoloom refuses it as bad input, "
        "pySHACL validates an empty graph",
    ),
    "test_062.py::test_062#0": (SKIPPED, "its data is a BytesIO stream"),
    "test_071.py::test_071_positive#0": (
        DIFFERS,
        "sh:datatype rdfs:Literal / rdfs:Datatype: pySHACL lets every literal (with a "
        "datatype) match them; SHACL 4.1.2 asks for the literal's datatype IRI itself, as "
        "ontoloom does",
    ),
    "test_108.py::test_108#0": (SKIPPED, "SHACL-JS (js=True)"),
    "test_286.py::test_286_a#0": (
        DIFFERS,
        'sh:in ("EPL-2.0") and the value "EPL-2.0"^^xsd:string: one term in RDF 1.1, which '
        "ontoloom (pyoxigraph) keeps to; rdflib, and so pySHACL, tells them apart",
    ),
    "test_298.py::test_298#0": (SKIPPED, "use_shapes"),
}
# pySHACL's own tests that fail with this pySHACL, and why.
PYSHACL_FAILS: dict[str, str] = {}


@dataclass
class Call:
    test: str
    data: tuple[str, str] | None  # (format or "path", text or path)
    shapes: tuple[str, str] | None
    ontology: tuple[str, str] | None
    options: dict[str, Any]
    answer: tuple[Any, ...]
    unreadable: str = ""


def _as_input(graph: Any, fmt: str | None) -> tuple[str, str] | None:
    """A graph pySHACL was given, as a file's text (or path) for ``ontoloom validate``."""
    import rdflib

    if graph is None:
        return None
    if isinstance(graph, rdflib.Graph) and type(graph) is rdflib.Graph:
        return "turtle", graph.serialize(format="turtle")
    if isinstance(graph, (str, bytes)):
        text = graph.decode("utf-8") if isinstance(graph, bytes) else graph
        name = text.removeprefix("file:")
        if "\n" not in name and len(name) < 1000 and os.path.exists(name):
            return "path", str(Path(name).resolve())
        return fmt or "turtle", text
    raise TypeError(f"a {type(graph).__name__}")


@contextmanager
def _offline() -> Iterator[None]:
    def closed(*_: object, **__: object) -> None:
        raise OSError("the network is closed while pySHACL's tests run")

    connect = socket.socket.connect
    socket.socket.connect = closed  # type: ignore[method-assign]
    try:
        yield
    finally:
        socket.socket.connect = connect  # type: ignore[method-assign]


def replay(module: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Call], dict[str, str]]:
    """Run the module's tests with pySHACL's validate recorded: the calls, and the tests
    that failed with why."""
    import pyshacl

    real = pyshacl.validate
    calls: list[Call] = []
    current = [""]

    def recorded(data_graph: Any, *args: Any, **kwargs: Any) -> Any:
        call = Call(current[0], None, None, None, dict(kwargs), ())
        try:
            call.data = _as_input(data_graph, kwargs.get("data_graph_format"))
            call.shapes = _as_input(kwargs.get("shacl_graph"), kwargs.get("shacl_graph_format"))
            call.ontology = _as_input(kwargs.get("ont_graph"), kwargs.get("ont_graph_format"))
        except TypeError as exc:
            call.unreadable = f"its input is {exc}"
        call.answer = real(data_graph, *args, **kwargs)
        calls.append(call)
        return call.answer

    assert ISSUES is not None
    failed: dict[str, str] = {}
    # recorded only here: ontoloom may call pySHACL itself (a shape handed to it) later
    with monkeypatch.context() as patched, _offline():
        patched.setattr(pyshacl, "validate", recorded)
        patched.chdir(ISSUES.parent.parent)  # its tests name their files from there
        spec = importlib.util.spec_from_file_location(f"pyshacl_{module.stem}", module)
        assert spec is not None and spec.loader is not None
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
        for name, test in vars(loaded).items():
            if name.startswith("test") and callable(test):
                if inspect.signature(test).parameters:
                    continue  # a pytest fixture's test: none among the issues
                current[0] = name
                try:
                    test()
                except Exception as exc:  # its own assertion, or an error pySHACL raised
                    failed[name] = f"{type(exc).__name__}: {exc}"[:200]
    return calls, failed


def compare(call: Call, tmp: Path) -> tuple[str, str]:
    """(SAME | DIFFERS | REFUSED | SKIPPED, detail) for one recorded call."""
    import rdflib

    options = {k: v for k, v in call.options.items() if v}
    not_comparable = sorted(set(options) & NOT_COMPARABLE)
    if call.unreadable or not_comparable:
        return SKIPPED, call.unreadable or ", ".join(not_comparable)
    conforms, graph = call.answer[0], call.answer[1]
    if not isinstance(graph, rdflib.Graph):
        return SKIPPED, f"pySHACL gave no report: {graph}"
    report = from_rdflib(graph)
    theirs = result_keys(results_from_report(report), TripleIndex(report))

    def sources(given: tuple[str, str] | None, option: str) -> list[Source]:
        if given is None:
            return []
        kind, text = given
        if kind == "path":
            return [Source(text, option)]
        path = tmp / f"{option.strip('-')}.{kind}"
        path.write_text(text, encoding="utf-8")
        return [Source(str(path), option, kind)]

    try:
        outcome = validate_files(
            sources(call.data, "-df"),
            sources(call.shapes, "-sf"),
            ontology=sources(call.ontology, "-ef"),
            inference=options.get("inference") or "none",
            advanced=bool(options.get("advanced")),
            metashacl=bool(options.get("meta_shacl")),
            imports=bool(options.get("do_owl_imports")),
            allow_warnings=bool(options.get("allow_warnings")),
            allow_infos=bool(options.get("allow_infos")),
            abort=bool(options.get("abort_on_first")),
        )
    except OntoloomError as exc:
        return REFUSED, str(exc)[:300]
    ours = result_keys(outcome.report.results, outcome.shapes.graph)
    if options.get("abort_on_first"):  # which shape comes first is either engine's choice
        ours, theirs = ours[:0], theirs[:0]
    if (outcome.conforms, ours) == (bool(conforms), theirs):
        return SAME, ""
    return DIFFERS, f"conforms {outcome.conforms} / pySHACL {conforms}: {ours} / {theirs}"


def _modules() -> list:
    if ISSUES is None:
        return [pytest.param(None, id="suite-missing")]
    return [
        pytest.param(p, id=p.name) for p in sorted(ISSUES.glob("*.py")) if p.name not in NOT_RUN
    ]


@pytest.mark.parametrize("module", _modules())
def test_ontoloom_answers_as_pyshacl_on_its_issue_tests(
    module: Path | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if module is None:
        missing()
    calls, failed = replay(module, monkeypatch)
    counts: dict[str, int] = {}
    found: dict[str, tuple[str, str]] = {}
    for call in calls:
        n = counts[call.test] = counts.get(call.test, -1) + 1
        where = tmp_path / f"{call.test}-{n}"
        where.mkdir()
        kind, detail = compare(call, where)
        if kind != SAME:
            found[f"{module.name}::{call.test}#{n}"] = (kind, detail)
    known = {k: v[0] for k, v in KNOWN.items() if k.startswith(module.name + "::")}
    assert {k: v[0] for k, v in found.items()} == known, found
    tests_failed = {f"{module.name}::{t}" for t in failed}
    assert tests_failed == {k for k in PYSHACL_FAILS if k.startswith(module.name + "::")}, failed


def test_every_module_is_run_or_named() -> None:
    if ISSUES is None:
        missing()
    names = {p.name for p in ISSUES.glob("*.py")}
    assert set(NOT_RUN) <= names
    assert {k.split("::")[0] for k in [*KNOWN, *PYSHACL_FAILS]} <= names - set(NOT_RUN)
