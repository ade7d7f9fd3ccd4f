"""`make bench`: the figures behind ontoloom's performance targets.

Every row names the graph size. Figures are medians (p50) and p95 over repeated runs, and
ratios against a baseline measured in the same process, never absolute promises.

Targets: validated create/relate p50 at 100k entities ≤ 1.5 × p50 at 1k; full audit ≥ 10×
faster than pySHACL (pySHACL runs only up to --oracle-max triples: it needs ~50 s at 10k
triples and ~600 s at 128k on this schema); validated import ≥ 100k triples/s; the prompt
hook, as a fresh process, p50 ≤ 150 ms wall at 100k entities. Long work (``--only long``):
validated import ≥ 100k triples/s and ``infer`` ≤ 10 s at 123k quads, ``reindex`` of 25k
objects ≤ 2 s, each beside a baseline measured in the same run (raw pyoxigraph bulk load,
owlrl, a plain read of every quad).
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ontoloom.api import Graph
from ontoloom.store.base import Delta
from ontoloom.terms import Literal, NamedNode, Quad
from ontoloom.vocab import FACTS, OL, PROV_GENERATED, RDF_TYPE, XSD

STATUSES = ["open", "in_progress", "blocked", "done", "cancelled"]


def query_mix(rng: random.Random, entities: int, repeat: int) -> list[str]:
    """``repeat`` searches over a synthetic graph of ``entities`` (:func:`synthetic_quads`):
    titles by number, people, ids and project words, in fixed proportions."""
    people, projects = max(1, entities // 20), max(1, entities // 50)
    tasks = entities - people - projects
    queries = []
    for _ in range(repeat):
        kind = rng.random()
        if kind < 0.4:
            queries.append(f"task number {rng.randrange(tasks)}")
        elif kind < 0.6:
            queries.append(f"person {rng.randrange(people)}")
        elif kind < 0.8:
            queries.append(f"task_{rng.randrange(tasks):08x}")
        else:
            queries.append(f"project {rng.randrange(projects)} open")
    return queries


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def synthetic_quads(g: Graph, n: int) -> list[Quad]:
    """n entities (tasks, people, projects) with the relations a team graph has."""
    ol = lambda local: NamedNode(OL + local)  # noqa: E731
    stamp = Literal("2026-11-01T00:00:00Z", datatype=NamedNode(XSD + "dateTime"))
    quads: list[Quad] = []
    people = max(1, n // 20)
    projects = max(1, n // 50)
    for i in range(people):
        p = g.ids.iri(f"pers_{i:08x}")
        quads += [
            Quad(p, RDF_TYPE, ol("Person"), FACTS),
            Quad(p, ol("name"), Literal(f"Person {i}"), FACTS),
            Quad(p, PROV_GENERATED, stamp, FACTS),
        ]
    for i in range(projects):
        p = g.ids.iri(f"proj_{i:08x}")
        quads += [
            Quad(p, RDF_TYPE, ol("Project"), FACTS),
            Quad(p, ol("name"), Literal(f"Project {i}"), FACTS),
            Quad(p, ol("status"), Literal("active"), FACTS),
        ]
    for i in range(n - people - projects):
        t = g.ids.iri(f"task_{i:08x}")
        quads += [
            Quad(t, RDF_TYPE, ol("Task"), FACTS),
            Quad(t, ol("title"), Literal(f"Task number {i}"), FACTS),
            Quad(t, ol("status"), Literal(STATUSES[i % 5]), FACTS),
            Quad(t, PROV_GENERATED, stamp, FACTS),
            Quad(t, ol("assigned_to"), g.ids.iri(f"pers_{i % people:08x}"), FACTS),
            Quad(g.ids.iri(f"proj_{i % projects:08x}"), ol("has_task"), t, FACTS),
        ]
        if i % 3 and i > 0:  # blocking chains of length ~3
            quads.append(Quad(g.ids.iri(f"task_{i - 1:08x}"), ol("blocks"), t, FACTS))
    return quads


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def bench_writes(n: int, repeat: int, oracle_repeat: int) -> dict[str, list[float]]:
    with (
        tempfile.TemporaryDirectory() as tmp,
        Graph.open(Path(tmp) / "d", write=True, create=True) as g,
    ):
        quads = synthetic_quads(g, n)
        g.writes.commit(Delta(adds=set(quads)), trusted="bench: synthetic data")
        n_tasks = n - n // 20 - n // 50
        tasks = [f"task_{(i * 7919) % n_tasks:08x}" for i in range(repeat)]
        # Warm the compiled plans, as a long-lived process would have them.
        g.create("Task", {"title": "warm", "status": "open"}, id="task_warm")
        counter = iter(range(10**9))
        creates = timed(
            lambda: g.create(
                "Task",
                {"title": "New task", "status": "open", "priority": "high"},
                id=f"task_new{next(counter)}",
            ),
            repeat,
        )
        # Each new task blocks an existing one: type checks, cardinality and a cycle check.
        pairs = iter(zip([f"task_new{i}" for i in range(repeat)], tasks, strict=False))
        relates = timed(lambda: g.relate(*_pair(next(pairs))), repeat)
        raw_store = _raw_store_insert_cost(quads, repeat)
        oracle = _pyshacl_focus_cost(g, quads, oracle_repeat)
    return {"create": creates, "relate": relates, "raw insert": raw_store, "pyshacl focus": oracle}


USER_SHAPES = {
    "inverse path": """ol:BlockersHaveTitles a sh:NodeShape ; sh:targetClass ol:Task ;
        sh:property [ sh:path [ sh:inversePath ol:blocks ] ;
                      sh:node [ sh:property [ sh:path ol:title ; sh:minCount 1 ] ] ] .""",
    "unbounded path": """ol:DownstreamAreTasks a sh:NodeShape ; sh:targetClass ol:Task ;
        sh:property [ sh:path [ sh:oneOrMorePath ol:blocks ] ; sh:class ol:Task ] .""",
    "sparql, edges in": """ol:BlockersHaveStatus a sh:NodeShape ; sh:targetClass ol:Task ;
        sh:sparql [ sh:prefixes ol: ; sh:select \"\"\"SELECT $this WHERE {
            ?b ol:blocks $this . FILTER NOT EXISTS { ?b ol:status ?s } }\"\"\" ] .""",
    "sparql, global": """ol:OneUrgent a sh:NodeShape ; sh:targetClass ol:Task ;
        sh:sparql [ sh:prefixes ol: ; sh:select \"\"\"SELECT $this WHERE {
            $this ol:priority "urgent" . ?o ol:priority ?p .
            FILTER (?p = "urgent" && ?o != $this) }\"\"\" ] .""",
}
_SHAPES_PROLOGUE = """@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ol: <https://ontoloom.dev/ns#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ol: sh:declare [ sh:prefix "ol" ; sh:namespace "https://ontoloom.dev/ns#"^^xsd:anyURI ] .
"""


def bench_user_shapes(n: int, repeat: int) -> list[tuple[str, str, list[float]]]:
    """A validated update of a task (its priority) with the built-in shapes, then with one
    user shape of each kind added: how writes check it, and what that costs."""
    from ontoloom.extensions import add_shapes

    rows = []
    n_tasks = n - n // 20 - n // 50
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in [("built-in shapes", None), *USER_SHAPES.items()]:
            with Graph.open(Path(tmp) / name.replace(" ", "-"), write=True, create=True) as g:
                g.writes.commit(
                    Delta(adds=set(synthetic_quads(g, n))), trusted="bench: synthetic data"
                )
                route = "bounded"
                if text is not None:
                    path = Path(tmp) / "shapes.ttl"
                    path.write_text(_SHAPES_PROLOGUE + text, encoding="utf-8")
                    route = add_shapes(g, path)["checks"][0]["route"]
                g.update(f"task_{0:08x}", {"priority": "low"})  # warm the compiled plans
                samples = timed(
                    _updates(g, n_tasks), repeat if route != "global" else max(3, repeat // 20)
                )
                rows.append((name, route, samples))
    return rows


def _updates(g: Graph, n_tasks: int) -> Callable[[], object]:
    """One validated update after another, each of another task."""
    counter = iter(range(10**9))
    return lambda: g.update(f"task_{(next(counter) * 7919) % n_tasks:08x}", {"priority": "high"})


def _pair(pair: tuple[str, str]) -> tuple[str, str, str]:
    return pair[0], "blocks", pair[1]


def _raw_store_insert_cost(quads: list[Quad], repeat: int) -> list[float]:
    """The same single-entity insert straight into pyoxigraph, no validation."""
    from ontoloom.store.embedded import EmbeddedBackend

    backend = EmbeddedBackend.scratch(quads)
    ol = lambda local: NamedNode(OL + local)  # noqa: E731
    counter = iter(range(10**9))

    def insert() -> None:
        node = NamedNode(f"https://ontoloom.dev/id/task_raw{next(counter)}")
        backend.apply(
            Delta(
                adds={
                    Quad(node, RDF_TYPE, ol("Task"), FACTS),
                    Quad(node, ol("title"), Literal("New"), FACTS),
                    Quad(node, ol("status"), Literal("open"), FACTS),
                }
            )
        )

    return timed(insert, repeat)


def _pyshacl_focus_cost(g: Graph, quads: list[Quad], repeat: int) -> list[float]:
    """pySHACL validating only the new node (focus_nodes), the way an after-the-fact
    validator would check one write: it still needs the whole data graph in rdflib."""
    import pyshacl

    from ontoloom.schema import builtin_triples
    from ontoloom.shacl.oracle import to_rdflib, to_rdflib_term

    ontology, shapes = builtin_triples()
    data = to_rdflib(q.triple for q in quads)
    shacl = to_rdflib(shapes)
    ont = to_rdflib(ontology)
    ol = lambda local: NamedNode(OL + local)  # noqa: E731
    counter = iter(range(10**9))

    def validate() -> None:
        node = NamedNode(f"https://ontoloom.dev/id/task_py{next(counter)}")
        for s, p, o in [
            (node, RDF_TYPE, ol("Task")),
            (node, ol("title"), Literal("New")),
            (node, ol("status"), Literal("open")),
        ]:
            data.add((to_rdflib_term(s), to_rdflib_term(p), to_rdflib_term(o)))
        pyshacl.validate(
            data,
            shacl_graph=shacl,
            ont_graph=ont,
            inference="none",
            focus_nodes=[to_rdflib_term(node)],
        )

    return timed(validate, repeat)


def entities_for(triples: int) -> int:
    """The synthetic graph has about 6.4 triples per entity."""
    return max(50, round(triples / 6.4))


def bench_audit(triples: int, oracle_max: int) -> list[tuple[str, int, float, float]]:
    """Full audit: the compiled fast path inside the store vs pySHACL on rdflib."""
    from ontoloom.audit import audit

    rows = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        Graph.open(Path(tmp) / "d", write=True, create=True) as g,
    ):
        quads = synthetic_quads(g, entities_for(triples))
        g.writes.commit(Delta(adds=set(quads)), trusted="bench: synthetic data")
        size = len(quads)
        samples = timed(lambda: audit(g), 3)
        rows.append(("audit (ontoloom)", size, statistics.median(samples), max(samples)))
        if size <= oracle_max:
            rows.append(("audit (pyshacl)", size, *_pyshacl_full(g, quads)))
    return rows


def _pyshacl_full(g: Graph, quads: list[Quad]) -> tuple[float, float]:
    import pyshacl

    from ontoloom.schema import builtin_triples
    from ontoloom.shacl.oracle import to_rdflib

    ontology, shapes = builtin_triples()
    data, shacl, ont = to_rdflib(q.triple for q in quads), to_rdflib(shapes), to_rdflib(ontology)
    samples = timed(
        lambda: pyshacl.validate(data, shacl_graph=shacl, ont_graph=ont, inference="none"), 1
    )
    return samples[0], samples[0]


def cycle_quads(g: Graph, edges: int, cycles: int = 10) -> list[Quad]:
    """One ``blocks`` chain of ``edges`` links over bare task nodes, and ``cycles`` links
    back along it, each closing a cycle of ~edges / cycles tasks."""
    task = [g.ids.iri(f"task_{i:08x}") for i in range(edges - cycles + 1)]
    blocks = NamedNode(OL + "blocks")
    quads = [Quad(a, blocks, b, FACTS) for a, b in itertools.pairwise(task)]
    step = len(task) // cycles
    quads += [
        Quad(task[i + step - 1], blocks, task[i], FACTS) for i in range(0, step * cycles, step)
    ]
    return quads


def bench_cycles(edges: int) -> tuple[int, int, float, float]:
    """`check`'s cycle detection over one acyclic relation: (edges, cycles, median, max)."""
    from ontoloom.audit import find_cycles

    with (
        tempfile.TemporaryDirectory() as tmp,
        Graph.open(Path(tmp) / "d", write=True, create=True) as g,
    ):
        quads = cycle_quads(g, edges)
        g.writes.commit(Delta(adds=set(quads)), trusted="bench: synthetic cycles")
        spec = g.schema.relations["blocks"]
        found = find_cycles(g, spec)
        samples = timed(lambda: find_cycles(g, spec), 3)
    return len(quads), len(found), statistics.median(samples), max(samples)


def bench_import(triples: int) -> tuple[int, float]:
    """Validated import of an N-Triples file into an empty store (triples per second)."""
    from ontoloom.interchange import import_file
    from ontoloom.terms import RdfFormat, serialize

    with tempfile.TemporaryDirectory() as tmp:
        with Graph.open(Path(tmp) / "src", write=True, create=True) as g:
            quads = synthetic_quads(g, entities_for(triples))
        path = Path(tmp) / "data.nt"
        with path.open("wb") as out:
            serialize([q.triple for q in quads], out, RdfFormat.N_TRIPLES)
        with Graph.open(Path(tmp) / "d", write=True, create=True) as g:
            start = time.perf_counter()
            result = import_file(g, path)
            elapsed = time.perf_counter() - start
    return result.quads, elapsed


def _median_of(fn: Callable[[], object], repeat: int) -> float:
    return statistics.median(timed(fn, repeat))


def bench_long(quads_wanted: int, repeat: int, owlrl_max: int) -> list[tuple[str, int, float, str]]:
    """Import, infer and reindex on the synthetic team graph of ``quads_wanted`` quads (the
    same generator as every other row: 19,219 entities make 123k quads), each with its
    baseline: (row, quads, median s, what it is compared with)."""
    import pyoxigraph

    from ontoloom.infer import compute_owlrl, infer
    from ontoloom.interchange import import_file
    from ontoloom.terms import RdfFormat, serialize

    rows: list[tuple[str, int, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        with Graph.open(Path(tmp) / "src", write=True, create=True) as g:
            quads = synthetic_quads(g, entities_for(quads_wanted))
        n = len(quads)
        path = Path(tmp) / "data.nq"
        with path.open("wb") as out:
            serialize(quads, out, RdfFormat.N_QUADS)
        # 1M quads are 144 MiB of N-Quads, above the default input limit (64 MiB)
        os.environ["ONTOLOOM_MAX_INPUT_BYTES"] = str(max(path.stat().st_size, 64 << 20))
        runs = iter(range(10**6))

        def raw() -> None:
            store = pyoxigraph.Store(str(Path(tmp) / f"raw{next(runs)}"))
            store.bulk_load(path=str(path), format=pyoxigraph.RdfFormat.N_QUADS)
            store.flush()

        base = _median_of(raw, repeat)
        rows.append(("raw pyoxigraph bulk load", n, base, "baseline"))

        def imported() -> None:
            with Graph.open(Path(tmp) / f"imp{next(runs)}", write=True, create=True) as g:
                import_file(g, path)

        took = _median_of(imported, repeat)
        rows.append(
            ("validated import", n, took, f"{n / took:,.0f} triples/s, {took / base:.1f}x raw")
        )
        with Graph.open(Path(tmp) / "infer", write=True, create=True) as g:
            g.writes.commit(Delta(adds=set(quads)), trusted="bench: synthetic data")
            read = _median_of(lambda: sum(1 for _ in g.backend.quads()), repeat)
            rows.append(("read every quad", n, read, "baseline"))
            took = _median_of(lambda: infer(g), repeat)
            note = f"{took / read:.1f}x read"
            if n <= owlrl_max:
                oracle = _median_of(lambda: compute_owlrl(g), 1)
                rows.append(("infer (owlrl)", n, oracle, "baseline"))
                note += f", {oracle / took:.0f}x faster than owlrl"
            rows.append(("infer", n, took, note))
            took = _median_of(g.reindex, repeat)
            objects = entities_for(quads_wanted)
            rows.append(("reindex", n, took, f"{objects} objects, {took / read:.1f}x read"))
    return rows


def bench_search(entities: int, repeat: int) -> tuple[int, list[float], list[float]]:
    """Search latency over a realistic query mix (title words and ids of random entities,
    one to three words), and the worst case: one term found in a fifth of all documents."""
    import random

    rng = random.Random(7)
    with (
        tempfile.TemporaryDirectory() as tmp,
        Graph.open(Path(tmp) / "d", write=True, create=True) as g,
    ):
        g.writes.commit(
            Delta(adds=set(synthetic_quads(g, entities))), trusted="bench: synthetic data"
        )
        g.reindex()
        people, projects = max(1, entities // 20), max(1, entities // 50)
        tasks = entities - people - projects
        queries = query_mix(rng, entities, repeat)
        mixed = timed_each(lambda q: g.search(q, limit=10), queries)
        common = timed_each(lambda q: g.search(q, limit=10), ["blocked"] * max(5, repeat // 20))
        two = [
            f"person {rng.randrange(people)}" if i % 2 else f"task {rng.randrange(tasks)}"
            for i in range(repeat)
        ]
        two_word = timed_each(lambda q: g.search(q, limit=10), two)
        LAST_SEARCH.clear()
        LAST_SEARCH.update({"two-word query": two_word, **bench_listing(g, tasks, repeat)})
    return entities, mixed, common


LAST_SEARCH: dict[str, list[float]] = {}


def bench_listing(g: Graph, tasks: int, repeat: int) -> dict[str, list[float]]:
    """read_graph pages of 100: the first, and one 90% of the way through the ids."""
    from ontoloom.memory import Memory, _encode_cursor

    memory = Memory(g)
    deep = _encode_cursor(f"task_{tasks * 9 // 10:08x}")
    runs = max(5, repeat // 10)
    return {
        "read_graph first page": timed(lambda: memory.read_graph(None, 100), runs),
        "read_graph deep page": timed(lambda: memory.read_graph(deep, 100), runs),
    }


def timed_each(fn: Callable[[Any], object], items: list[Any]) -> list[float]:
    samples = []
    for item in items:
        start = time.perf_counter()
        fn(item)
        samples.append(time.perf_counter() - start)
    return samples


def search_recall() -> float:
    """recall@5 on the labelled query set that ships with the tests."""
    import json

    from ontoloom.demo import load_entities

    root = Path(__file__).resolve().parents[1]
    labelled = json.loads((root / "tests" / "search_queries.json").read_text())
    with (
        tempfile.TemporaryDirectory() as tmp,
        Graph.open(Path(tmp) / "d", write=True, create=True) as g,
    ):
        load_entities(g, root / labelled["instance"])
        found = sum(
            q["expected"] in [h.id for h in g.search(q["query"], limit=5)]
            for q in labelled["queries"]
        )
    return found / len(labelled["queries"])


def make_records(root: Path, count: int) -> None:
    """An instance of ``count`` generated records: failures over recurring classes, rules,
    runbooks, decisions in lineages, documents — all cross-linked."""
    import random

    rng = random.Random(11)
    (root / "ontoloom.toml").write_text('[[documents]]\nroot = "docs"\n')
    n_rules, n_runbooks, n_decisions, n_docs = count // 5, count // 10, count // 5, count // 10
    n_failures = count - n_rules - n_runbooks - n_decisions - n_docs
    folders = {k: root / "records" / k for k in ("failures", "memory", "runbooks", "decisions")}
    for folder in [*folders.values(), root / "docs"]:
        folder.mkdir(parents=True, exist_ok=True)
    words = [
        "payment",
        "ledger",
        "cache",
        "retry",
        "timeout",
        "deploy",
        "schema",
        "queue",
        "webhook",
        "token",
        "audit",
        "export",
    ]
    for i in range(n_rules):
        (folders["memory"] / f"rule-{i}.md").write_text(
            f"---\ntitle: Rule {i} about {rng.choice(words)}\naliases: [r{i}]\n---\nKeep the {rng.choice(words)} safe.\n"
        )
    for i in range(n_runbooks):
        (folders["runbooks"] / f"runbook-{i}.md").write_text(
            f"---\ntitle: Runbook {i}\n---\nFix the {rng.choice(words)} with step {i}.\n"
        )
    for i in range(n_failures):
        cls = f"class-{i % max(1, n_failures // 10)}"
        (folders["failures"] / f"2026-01-01-failure-{i}.md").write_text(
            f"---\nclass: {cls}\ndate: 2026-{1 + i % 12:02d}-{1 + i % 28:02d}\ntitle: The {rng.choice(words)} failed again {i}\n"
            f"covered-by: [rule:rule-{rng.randrange(n_rules)}]\nresolved-by: [runbook-{rng.randrange(n_runbooks)}]\n---\n"
            f"The {rng.choice(words)} broke during {rng.choice(words)}. See [[Rule {rng.randrange(n_rules)} about x]].\n"
        )
    for i in range(n_decisions):
        builds = f"\n  builds-on: decision:decision-{i - 1}" if i % 4 else ""
        (folders["decisions"] / f"decision-{i}.md").write_text(
            f"---\ntitle: Decision {i}\ndate: 2025-06-01\nrelations:\n  applies: [rule:rule-{rng.randrange(n_rules)}]{builds}\n---\n"
            f"We chose the {rng.choice(words)} path.\n"
        )
    for i in range(n_docs):
        (root / "docs" / f"doc-{i}.md").write_text(
            f"---\ntitle: Doc {i}\n---\nNotes on the {rng.choice(words)}.\n"
        )


def bench_records(count: int, repeat: int) -> list[tuple[str, int, float, float]]:
    from ontoloom.actions import guard, why
    from ontoloom.instance import init_instance

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "inst"
        root.mkdir()
        make_records(root, count)
        info = init_instance(root)
        with Graph.open(info["data_dir"], write=True) as g:
            start = time.perf_counter()
            report = g.rebuild(full=True)
            rows.append(("full rebuild", report.files, time.perf_counter() - start, 0.0))
            changed = root / "records" / "runbooks" / "runbook-3.md"
            changed.write_text("---\ntitle: Runbook 3 (edited)\n---\nnew steps\n")
            start = time.perf_counter()
            g.rebuild()
            rows.append(("incremental (1 file)", report.files, time.perf_counter() - start, 0.0))
            for name, fn in (
                ("guard", lambda: guard(g, "the webhook failed again during deploy")),
                ("guard --class", lambda: guard(g, class_ref="class-7")),
                ("why", lambda: why(g, "rule:rule-5")),
            ):
                samples = timed(fn, repeat)
                rows.append(
                    (name, report.files, statistics.median(samples), percentile(samples, 0.95))
                )
    return rows


HOOK_PROMPTS = [
    # (prompt, whether it should point at something)
    ("what is blocking task_{task:08x}?", True),
    ("Task number {n} is stuck again, who owns it?", True),
    ("Person {p} is on leave, can you reassign their work", True),
    ("status of Project {j} and its open tasks", True),
    ("task_{task:08x} and task_{task2:08x} both look blocked", True),
    ("what's the weather like", False),
    ("refactor this function to use a generator", False),
    ("please run the tests and tell me what fails", False),
]


def hook_prompt(
    i: int, rng: random.Random, people: int, projects: int, tasks: int
) -> tuple[str, bool]:
    """The ``i``-th benchmark prompt, its ids drawn by ``rng``; whether it names something."""
    template, expected = HOOK_PROMPTS[i % len(HOOK_PROMPTS)]
    prompt = template.format(
        task=rng.randrange(tasks),
        task2=rng.randrange(tasks),
        n=rng.randrange(tasks),
        p=rng.randrange(people),
        j=rng.randrange(projects),
    )
    return prompt, expected


def compile_package() -> None:
    """Write ontoloom's bytecode, as ``pip install`` does for an installed package: a fresh
    process then loads it instead of compiling each module it imports — which an editable
    install never stops doing under PYTHONDONTWRITEBYTECODE (~40 ms of every hook)."""
    import compileall

    import ontoloom

    compileall.compile_dir(Path(ontoloom.__file__).parent, quiet=1)


def bench_hook(entities: int, repeat: int) -> tuple[int, list[float], list[float], list[float]]:
    """The prompt hook as Claude Code runs it: the `ontoloom hook prompt-context` console
    script as a fresh process per prompt, JSON on stdin — against `python -c pass` run the
    same way (the floor of any fresh Python process)."""
    import json
    import shutil
    import subprocess

    compile_package()

    script = Path(sys.executable).with_name("ontoloom")
    ontoloom = str(script) if script.exists() else shutil.which("ontoloom") or "ontoloom"
    rng = random.Random(5)
    people, projects = max(1, entities // 20), max(1, entities // 50)
    tasks = entities - people - projects
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "d"
        with Graph.open(data_dir, write=True, create=True) as g:
            g.writes.commit(
                Delta(adds=set(synthetic_quads(g, entities))), trusted="bench: synthetic data"
            )
            g.reindex()
        events = []
        for i in range(repeat):
            prompt, _ = hook_prompt(i, rng, people, projects, tasks)
            event = {"hook_event_name": "UserPromptSubmit", "cwd": tmp, "prompt": prompt}
            events.append(json.dumps(event).encode())

        def run(args: list[str], stdin: bytes) -> tuple[float, bytes]:
            start = time.perf_counter()
            done = subprocess.run(args, input=stdin, capture_output=True, check=True)
            return time.perf_counter() - start, done.stdout

        hook_args = [ontoloom, "hook", "prompt-context", "--data-dir", str(data_dir)]
        run(hook_args, events[0])  # warm the page cache, as a live instance has it
        matched, quiet = [], []
        for i, event in enumerate(events):
            elapsed, out = run(hook_args, event)
            expected = HOOK_PROMPTS[i % len(HOOK_PROMPTS)][1]
            if bool(out) != expected:
                print(f"  note: {json.loads(event)['prompt']!r} gave {len(out)} bytes", flush=True)
            (matched if expected else quiet).append(elapsed)
        floor = [run([sys.executable, "-c", "pass"], b"")[0] for _ in range(repeat)]
    return entities, matched, quiet, floor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--only",
        choices=[
            "writes",
            "shapes",
            "audit",
            "cycles",
            "import",
            "search",
            "records",
            "hook",
            "view",
            "mcp",
            "long",
            "endpoint",
            "history",
        ],
        action="append",
    )
    parser.add_argument(
        "--history-sizes",
        default="10000,100000",
        help="entities with --history-versions versions each, for `get --as-of`",
    )
    parser.add_argument("--history-versions", type=int, default=10, help="versions per entity")
    parser.add_argument(
        "--endpoint-sizes", default="1000,10000", help="entities, embedded vs oxigraph serve"
    )
    parser.add_argument("--endpoint-repeat", type=int, default=50, help="calls per endpoint row")
    parser.add_argument(
        "--gateway-writes", type=int, default=25, help="creates per gateway, concurrent"
    )
    parser.add_argument("--view-sizes", default="1000,10000", help="entities, for ontoloom view")
    parser.add_argument(
        "--hook-sizes", default="1000,100000", help="entities, for the prompt hook figures"
    )
    parser.add_argument("--hook-repeat", type=int, default=24, help="fresh hook processes")
    parser.add_argument(
        "--records", type=int, default=10000, help="generated records for the rebuild figures"
    )
    parser.add_argument("--search-sizes", default="1000,10000,100000", help="entities, for search")
    parser.add_argument(
        "--sizes", default="1000,10000,100000", help="entities, for the write figures"
    )
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument(
        "--shape-sizes", default="1000,100000", help="entities, for the user-shape write figures"
    )
    parser.add_argument("--oracle-repeat", type=int, default=5)
    parser.add_argument("--audit-triples", default="10000,100000,1000000")
    parser.add_argument(
        "--oracle-max",
        type=int,
        default=150000,
        help="largest graph (triples) pySHACL's full validation is run on",
    )
    parser.add_argument("--import-triples", type=int, default=100000)
    parser.add_argument(
        "--long-quads",
        default="10000,123000,1000000",
        help="graph sizes (quads) for import, infer and reindex",
    )
    parser.add_argument("--long-repeat", type=int, default=3, help="runs per long row")
    parser.add_argument(
        "--owlrl-max", type=int, default=15000, help="largest graph (quads) owlrl is run on"
    )
    parser.add_argument(
        "--reindex-objects", type=int, default=25000, help="entities for the reindex target"
    )
    parser.add_argument("--cycle-edges", default="10000,100000", help="edges, for cycle detection")
    args = parser.parse_args()
    only = set(
        args.only
        or [
            "writes",
            "shapes",
            "audit",
            "cycles",
            "import",
            "search",
            "records",
            "hook",
            "view",
            "long",
        ]
    )
    if "writes" in only:
        bench_all_writes(args)
    if "endpoint" in only:
        from endpoint_bench import run as bench_endpoint

        bench_endpoint(
            [int(x) for x in args.endpoint_sizes.split(",")],
            args.endpoint_repeat,
            args.gateway_writes,
        )
    if "shapes" in only:
        print(
            f"\n{'update, with':<18}{'route':>10}{'entities':>10}{'p50 ms':>10}{'p95 ms':>10}"
            f"{'vs 1st size':>13}",
            flush=True,
        )
        first: dict[str, float] = {}
        for n in (int(x) for x in args.shape_sizes.split(",")):
            for name, route, samples in bench_user_shapes(n, args.repeat):
                p50, p95 = statistics.median(samples) * 1000, percentile(samples, 0.95) * 1000
                ratio = p50 / first.setdefault(name, p50)
                print(
                    f"{name:<18}{route:>10}{n:>10}{p50:>10.2f}{p95:>10.2f}{ratio:>12.2f}x",
                    flush=True,
                )
        print("target: built-in shapes p50@100k / p50@1k ≤ 1.5; global shapes read the whole store")
    if "audit" in only:
        print(f"\n{'full audit':<18}{'triples':>10}{'median s':>11}{'max s':>9}", flush=True)
        by_size: dict[int, dict[str, float]] = {}
        for t in (int(x) for x in args.audit_triples.split(",")):
            for name, size, median, worst in bench_audit(t, args.oracle_max):
                by_size.setdefault(size, {})[name] = median
                print(f"{name:<18}{size:>10}{median:>11.2f}{worst:>9.2f}", flush=True)
        for size, figures in by_size.items():
            if "audit (pyshacl)" in figures:
                ratio = figures["audit (pyshacl)"] / figures["audit (ontoloom)"]
                print(
                    f"at {size} triples the fast path is {ratio:.0f}x faster than pySHACL (target ≥ 10x)"
                )
            else:
                print(
                    f"at {size} triples pySHACL was not run (above --oracle-max {args.oracle_max})"
                )
    if "cycles" in only:
        print(f"\n{'cycles (check)':<18}{'edges':>10}{'cycles':>8}{'median s':>11}{'max s':>9}")
        for n in (int(x) for x in args.cycle_edges.split(",")):
            edges, found, median, worst = bench_cycles(n)
            print(f"{'blocks':<18}{edges:>10}{found:>8}{median:>11.2f}{worst:>9.2f}", flush=True)
        print("target: ≤ 2 s at 100k edges (one pass, strongly connected components)")
    if "search" in only:
        print(f"\n{'search':<22}{'entities':>10}{'p50 ms':>10}{'p95 ms':>10}", flush=True)
        for n in (int(x) for x in args.search_sizes.split(",")):
            size, mixed, common = bench_search(n, args.repeat)
            for name, samples in (
                ("mixed queries", mixed),
                ("one common term", common),
                *LAST_SEARCH.items(),
            ):
                p50, p95 = statistics.median(samples) * 1000, percentile(samples, 0.95) * 1000
                print(f"{name:<22}{size:>10}{p50:>10.2f}{p95:>10.2f}", flush=True)
        print(f"recall@5 on the labelled query set: {search_recall():.2f}")
        print(
            "target: p95 ≤ 10 ms at 100k entities (sage-memory publishes 101 ms p95 at 22k memories)"
        )
    if "records" in only:
        print(f"\n{'records':<22}{'files':>8}{'p50/total s':>13}{'p95 s':>9}", flush=True)
        for name, files, median, p95 in bench_records(args.records, 30):
            print(f"{name:<22}{files:>8}{median:>13.3f}{p95:>9.3f}", flush=True)
    if "hook" in only:
        print(
            f"\n{'prompt hook (fresh process)':<34}{'entities':>10}{'p50 ms':>10}{'p95 ms':>10}"
            f"{'vs python -c pass':>19}",
            flush=True,
        )
        for n in (int(x) for x in args.hook_sizes.split(",")):
            size, matched, quiet, floor = bench_hook(n, args.hook_repeat)
            base = statistics.median(floor)
            for name, samples in (
                ("prompts that match objects", matched),
                ("prompts that match nothing", quiet),
                ("python -c pass (baseline)", floor),
            ):
                p50, p95 = statistics.median(samples) * 1000, percentile(samples, 0.95) * 1000
                ratio = statistics.median(samples) / base
                print(f"{name:<34}{size:>10}{p50:>10.1f}{p95:>10.1f}{ratio:>18.1f}x", flush=True)
        print(
            "target: p50 ≤ 150 ms wall for a fresh `ontoloom hook prompt-context` at 100k entities"
        )
    if "import" in only:
        quads, elapsed = bench_import(args.import_triples)
        print(
            f"\nvalidated import: {quads} triples in {elapsed:.2f} s = {quads / elapsed:,.0f} triples/s "
            "(target ≥ 100,000/s)"
        )

    if "long" in only:
        bench_all_long(args)
    if "view" in only:
        print(
            f"\n{'ontoloom view':<16}{'entities':>10}{'relations':>11}{'generate s':>12}"
            f"{'HTML MB':>10}{'first render s':>16}{'layout fps':>12}{'vs 1st size':>13}",
            flush=True,
        )
        base: float | None = None
        for size in [int(s) for s in args.view_sizes.split(",")]:
            links, generate, size_mb, render = bench_view(size)
            base = base or generate
            shown = (
                f"{render[0]:>16.2f}{render[1]:>12.0f}"
                if render is not None
                else f"{'no chromium':>16}{'':>12}"
            )
            print(
                f"{'':<16}{size:>10}{links:>11}{generate:>12.2f}{size_mb:>10.2f}{shown}"
                f"{generate / base:>12.1f}x",
                flush=True,
            )
        print(
            "first render: from opening the file in headless Chromium to the graph drawn; "
            "vs 1st size: generation time"
        )

    if "history" in (args.only or []):  # opt-in: large stores
        bench_all_history(args)
    if "mcp" in (args.only or []):  # opt-in: it installs and starts peer servers
        import mcp_bench

        mcp_bench.main([])


def bench_view(entities: int) -> tuple[int, float, float, tuple[float, float] | None]:
    """(relations, seconds to generate the HTML file — data and page —, its size in MB, what
    :func:`_first_render` measured)."""
    from ontoloom.view import render_page, view_data

    with tempfile.TemporaryDirectory() as tmp:
        with Graph.open(Path(tmp) / "d", write=True, create=True) as g:
            g.writes.commit(
                Delta(adds=set(synthetic_quads(g, entities))), trusted="bench: synthetic data"
            )
            start = time.perf_counter()
            data = view_data(g)
            html = render_page("view", data)
            generate = time.perf_counter() - start
        out = Path(tmp) / "view.html"
        out.write_text(html, encoding="utf-8")
        return data["meta"]["links"], generate, len(html.encode()) / 1e6, _first_render(out, tmp)


def _first_render(path: Path, tmp: str) -> tuple[float, float] | None:
    """(seconds from opening the file to the graph drawn, frames per second while the layout
    runs) in headless Chromium; None without it."""
    import os

    chromium = os.environ.get("ONTOLOOM_CHROMIUM", "/usr/bin/chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not os.access(chromium, os.X_OK):
        return None
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    args += ["--disable-background-networking", "--disable-component-update", "--disable-sync"]
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(Path(tmp) / "profile"), executable_path=chromium, args=args, headless=True
        )
        page = context.new_page()
        page.goto(path.as_uri())
        # The page notes when force-graph first drew the graph (ms from navigation start).
        first = page.wait_for_function(
            "() => window.ontoloomFirstFrame", timeout=120000, polling=100
        ).json_value()
        # Frames per second while the layout runs: whether it stays interactive.
        fps = page.evaluate(
            """() => new Promise(r => { let n = 0; const t0 = performance.now();
               function f() { n++; if (performance.now() - t0 < 2000) requestAnimationFrame(f);
                              else r(n / 2); } requestAnimationFrame(f); })"""
        )
        context.close()
    return float(first) / 1000, float(fps)


def bench_all_long(args: argparse.Namespace) -> None:
    print(f"\n{'long work':<26}{'quads':>10}{'median s':>10}  compared", flush=True)
    for size in (int(x) for x in args.long_quads.split(",")):
        # a single run at the largest sizes: each takes minutes on a shared machine
        repeat = args.long_repeat if size <= 200000 else 1
        for name, n, median, note in bench_long(size, repeat, args.owlrl_max):
            print(f"{name:<26}{n:>10}{median:>10.2f}  {note}", flush=True)
    n, objects, median, read = bench_reindex(args.reindex_objects, args.long_repeat)
    print(
        f"{'reindex':<26}{n:>10}{median:>10.2f}  {objects} objects, {median / read:.1f}x read",
        flush=True,
    )
    print(
        "targets: validated import ≥ 100,000 triples/s; infer ≤ 10 s at 123k quads; "
        "reindex of 25k objects ≤ 2 s"
    )


def bench_reindex(entities: int, repeat: int) -> tuple[int, int, float, float]:
    """A full reindex of ``entities`` objects: (quads, objects, median s, read-all median)."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        Graph.open(Path(tmp) / "d", write=True, create=True) as g,
    ):
        quads = synthetic_quads(g, entities)
        g.writes.commit(Delta(adds=set(quads)), trusted="bench: synthetic data")
        read = _median_of(lambda: sum(1 for _ in g.backend.quads()), repeat)
        samples = timed(g.reindex, repeat)
        return len(quads), g.reindex(), statistics.median(samples), read


def bench_all_writes(args: argparse.Namespace) -> None:
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    baseline: dict[str, float] = {}
    print(
        f"{'operation':<16}{'entities':>10}{'p50 ms':>10}{'p95 ms':>10}{'vs 1st size':>13}",
        flush=True,
    )
    for n in sizes:
        results = bench_writes(n, args.repeat, args.oracle_repeat)
        for name, samples in results.items():
            p50, p95 = statistics.median(samples) * 1000, percentile(samples, 0.95) * 1000
            baseline.setdefault(name, p50)
            ratio = p50 / baseline[name]
            rows.append((name, n, p50, p95, ratio))
            print(f"{name:<16}{n:>10}{p50:>10.2f}{p95:>10.2f}{ratio:>12.2f}x", flush=True)
    print()
    for name in ("create", "relate"):
        mine = [r for r in rows if r[0] == name]
        small, large = mine[0], mine[-1]
        print(f"{name}: p50@{large[1]} / p50@{small[1]} = {large[2] / small[2]:.2f} (target ≤ 1.5)")
    for n in sizes:
        ours = next(r[2] for r in rows if r[0] == "create" and r[1] == n)
        theirs = next(r[2] for r in rows if r[0] == "pyshacl focus" and r[1] == n)
        print(f"validated create vs pySHACL focus validation at {n}: {theirs / ours:.0f}x faster")


def history_quads(g: Graph, n: int, versions: int) -> list[Quad]:
    """``versions`` versions of facts for each of the n entities of :func:`synthetic_quads`,
    as the write path records them (:func:`ontoloom.history.version_quads`): its type since
    the start, and the rest a value replaced month by month (a task's status and who it is
    assigned to in turn, a person's or project's name), the last one open — the one the
    current graph holds."""
    import datetime as dt

    from ontoloom.history import Version, version_quads

    start = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    month = [start + dt.timedelta(days=30 * k) for k in range(versions + 1)]
    ol = lambda local: NamedNode(OL + local)  # noqa: E731
    people, projects = max(1, n // 20), max(1, n // 50)
    out: list[Quad] = []
    number = itertools.count()

    def add(s: NamedNode, p: NamedNode, o: NamedNode | Literal, k: int, last: bool) -> None:
        node = NamedNode(f"https://ontoloom.dev/version/b{next(number):023x}")
        end = None if last else month[k + 1]
        v = Version(node, s, p, o, month[k], end, month[k], None if last else month[k + 1])
        out.extend(version_quads(v))

    def entity(
        s: NamedNode, kind: str, changes: list[tuple[NamedNode, NamedNode | Literal]]
    ) -> None:
        add(s, RDF_TYPE, ol(kind), 0, True)
        for k, (p, o) in enumerate(changes, start=1):
            add(s, p, o, k, k == len(changes))

    rest = versions - 1
    for i in range(people):
        names = [
            (ol("name"), Literal(f"Person {i}" + ("" if k == rest - 1 else f" v{k}")))
            for k in range(rest)
        ]
        entity(g.ids.iri(f"pers_{i:08x}"), "Person", names)
    for i in range(projects):
        names = [
            (ol("name"), Literal(f"Project {i}" + ("" if k == rest - 1 else f" v{k}")))
            for k in range(rest)
        ]
        entity(g.ids.iri(f"proj_{i:08x}"), "Project", names)
    for i in range(n - people - projects):
        changes: list[tuple[NamedNode, NamedNode | Literal]] = []
        for k in range(rest):
            if k % 2:
                who = (i + rest - 1 - k) % people
                changes.append((ol("assigned_to"), g.ids.iri(f"pers_{who:08x}")))
            else:
                changes.append((ol("status"), Literal(STATUSES[(i + k) % 5])))
        entity(g.ids.iri(f"task_{i:08x}"), "Task", changes)
    return out


def _disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def bench_history(n: int, versions: int, repeat: int) -> dict[str, float]:
    """`get --as-of` (in process: the get_entity operation on an open graph, as the MCP
    server runs it) at random entities and
    instants of a store whose n entities have ``versions`` versions each, loaded in bulk (the
    current graph, then the history, each one trusted commit); and the store's bytes on disk
    per version (after the history, less before it, over the versions)."""
    from ontoloom.ops import operations
    from ontoloom.store import store_path

    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "d"
        with Graph.open(data_dir, write=True, create=True) as g:
            g.writes.commit(Delta(adds=set(synthetic_quads(g, n))), trusted="bench: synthetic data")
        before = _disk(store_path(data_dir))
        with Graph.open(data_dir, write=True) as g:
            start = time.perf_counter()
            history = history_quads(g, n, versions)
            g.writes.commit(Delta(adds=set(history)), trusted="bench: synthetic history")
            loaded = time.perf_counter() - start
            count = len({q.subject for q in history})
        after = _disk(store_path(data_dir))
        people, projects = max(1, n // 20), max(1, n // 50)
        tasks = n - people - projects
        with Graph.open(data_dir) as g:
            get = operations(g.schema)["get_entity"].handler  # as an owner (MCP) runs it
            asks = [
                (f"task_{rng.randrange(tasks):08x}", f"2025-{rng.randrange(1, 13):02d}-15")
                for _ in range(repeat)
            ]
            # the two interleaved, call by call, after a warm-up: both meet the same store
            # (a store just loaded is compacting, and its pages are cold) and the same load
            for i, d in asks[:20]:
                get(g, {"id": i, "as_of": d}), get(g, {"id": i})
            samples, now = [], []
            for i, d in asks:
                samples += timed_each(
                    lambda pair: get(g, {"id": pair[0], "as_of": pair[1]}), [(i, d)]
                )
                now += timed_each(lambda x: get(g, {"id": x}), [i])
            g.then("2025-06-15")  # the time index caught up with the load, once
            snapshot = timed(lambda: g.then("2025-06-15"), 3)
            listing = operations(g.schema)["list_entities"].handler
            listed = timed(
                lambda: listing(g, {"type": "Task", "limit": 10, "as_of": "2025-06-15"}), 3
            )
        return {
            "versions": count,
            "load s": loaded,
            "as-of p50": statistics.median(samples),
            "as-of p95": percentile(samples, 0.95),
            "now p50": statistics.median(now),
            "bytes/version": (after - before) / count,
            "then s": statistics.median(snapshot),
            "list then s": statistics.median(listed),
        }


def bench_all_history(args: argparse.Namespace) -> None:
    print(
        f"\n{'get --as-of':<26}{'entities':>10}{'versions':>10}{'p50 ms':>9}{'p95 ms':>9}"
        f"{'get now p50':>13}{'disk B/version':>16}{'load s':>8}{'graph then s':>14}"
        f"{'list --as-of s':>16}",
        flush=True,
    )
    for n in (int(x) for x in args.history_sizes.split(",")):
        r = bench_history(n, args.history_versions, args.repeat)
        print(
            f"{'get_entity, open graph':<26}{n:>10}{int(r['versions']):>10}"
            f"{r['as-of p50'] * 1000:>9.2f}{r['as-of p95'] * 1000:>9.2f}"
            f"{r['now p50'] * 1000:>13.2f}{r['bytes/version']:>16.0f}{r['load s']:>8.1f}"
            f"{r['then s']:>14.2f}{r['list then s']:>16.2f}",
            flush=True,
        )
    print(
        "target: get --as-of p50 ≤ 5 ms at 100k entities with 10 versions each; graph then: "
        "the whole graph at one instant, read off the time index (what list/traverse/"
        "search/query --as-of build); list --as-of: the list_entities operation with as_of, "
        "end to end (the graph then, its temporary store and search index, one page)"
    )


if __name__ == "__main__":
    sys.exit(main())
