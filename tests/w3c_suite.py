"""The W3C SHACL test suite (tests/w3c): manifests read into runnable test cases."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ontoloom.shacl.rdfgraph import TripleIndex
from ontoloom.store.rdfio import read_triples
from ontoloom.terms import NamedNode, Term, Triple

ROOT = Path(__file__).parent / "w3c"
BASE = "http://datashapes.org/sh/tests/"
MF = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#"
SHT = "http://www.w3.org/ns/shacl-test#"


@dataclass
class W3CTest:
    name: str  # e.g. core/property/minCount-001
    data: list[Triple]
    shapes: list[Triple]
    expected: Term | None  # the expected sh:ValidationReport node, None for sht:Failure
    graph: TripleIndex  # everything parsed, to read the expected report from


def _parse(path: Path) -> list[Triple]:
    rel = path.relative_to(ROOT).as_posix()
    return read_triples(path=path, base_iri=BASE + rel)


def load(suite: str) -> list[W3CTest]:
    tests: list[W3CTest] = []
    seen: set[Path] = set()
    _walk(ROOT / suite / "manifest.ttl", tests, seen)
    # A test file the manifests forget (sparql/component/nodeValidator-001) still counts.
    for path in sorted((ROOT / suite).rglob("*.ttl")):
        if path not in seen and "sht:Validate" in path.read_text(encoding="utf-8"):
            _walk(path, tests, seen)
    return tests


def _walk(manifest: Path, out: list[W3CTest], seen: set[Path]) -> None:
    if manifest in seen:
        return
    seen.add(manifest)
    triples = _parse(manifest)
    g = TripleIndex(triples)
    for _, included in g.pairs(NamedNode(MF + "include")):
        _walk(_file_of(included), out, seen)
    for _, head in g.pairs(NamedNode(MF + "entries")):
        for entry in g.items(head):
            action = g.value(entry, NamedNode(MF + "action"))
            data_ref = g.value(action, NamedNode(SHT + "dataGraph"))
            shapes_ref = g.value(action, NamedNode(SHT + "shapesGraph"))
            data = _graph(data_ref, manifest, triples)
            shapes = _graph(shapes_ref, manifest, triples)
            result = g.value(entry, NamedNode(MF + "result"))
            expected = None if result == NamedNode(SHT + "Failure") else result
            name = _file_of(entry).relative_to(ROOT).as_posix().removesuffix(".ttl")
            out.append(W3CTest(name, data, shapes, expected, g))


def _file_of(term: Term) -> Path:
    return ROOT / term.value.removeprefix(BASE).split("#")[0]


def _graph(ref: Term, manifest: Path, manifest_triples: list[Triple]) -> list[Triple]:
    path = _file_of(ref)
    if path == manifest or path.with_suffix(".ttl") == manifest:
        return manifest_triples
    return _parse(path if path.suffix else path.with_suffix(".ttl"))
