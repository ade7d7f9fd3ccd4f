"""`make bench-scale`: a validated import beside pyoxigraph's raw bulk load of the same file.

For each size (entities of the synthetic team graph of ``bench/run.py``, about 6.4 triples
each) one N-Quads file is written, then, each in a fresh process of its own (so that its peak
RSS is its own):

* ``raw bulk load`` — pyoxigraph's ``Store.bulk_load`` of the file into an empty store,
  flushed: the floor no validated import can go under;
* ``import (journaled)`` — ``ontoloom import`` of the file into an empty instance, the way
  it runs now: a checkpoint, the delta bulk-loaded into it, validated, switched in
  (shared/DESIGN.md, "Journaled bulk load"), the search index following;
* ``import (one request)`` — the same import through one store transaction (the route
  every import took before, and small writes still take), with ``--one-request``.

Each row gives the triples, seconds, triples per second, peak RSS and the ratio to the raw
bulk load measured in the same run. After the imports of each size, on the instance the
journaled import made: ``export`` of every graph as N-Quads (streamed: its peak RSS should
not grow with the size), ``reindex`` (the search index rebuilt whole, objects counted in the
row's label), then a single validated create (p50), a search over ``bench/run.py``'s query
mix (p95) and the prompt hook as a fresh process (p50), each printed at the largest size
against the smallest too (target ≤ 1.5×; ``--no-latency`` leaves them out); last, ``check`` (the full audit) of a graph of 5,000 tasks in one ``blocks`` chain
(``--chain``), the rebuild and the audit each timed alone. Rows at 10k and 100k entities by default; ``--million``
adds 1M (144 MiB of N-Quads; minutes), ``--entities`` chooses others. The machine's load is
printed first: figures from a shared machine are comparisons within one run, not promises.

    make bench-scale BENCH_ARGS="--entities 23500 --one-request"   # ~150k triples, both routes
    make bench-scale BENCH_ARGS="--million"
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

_HUGE = str(10**12)  # a bulk-load threshold no delta reaches: the one-request route


def _write_file(entities: int, path: Path) -> int:
    from ontoloom.api import Graph
    from ontoloom.terms import RdfFormat, serialize
    from run import synthetic_quads

    with tempfile.TemporaryDirectory() as tmp, Graph.open(Path(tmp), write=True, create=True) as g:
        quads = synthetic_quads(g, entities)
    with path.open("wb") as out:
        serialize(quads, out, RdfFormat.N_QUADS)
    return len(quads)


def _child(kind: str, path: Path, target: Path) -> None:
    """One measurement, in this (fresh) process: prints {"seconds", "rss_mib"}."""
    if kind == "chain":
        _chain(int(str(path)), target)
        return
    if kind == "ops":
        _ops(int(str(path)), target)
        return
    start = time.perf_counter()
    if kind == "raw":
        import pyoxigraph

        store = pyoxigraph.Store(str(target))
        store.bulk_load(path=str(path), format=pyoxigraph.RdfFormat.N_QUADS)
        store.flush()
    elif kind == "export":  # the instance an import run left in ``target``, all graphs
        from ontoloom.api import Graph
        from ontoloom.interchange import export_graph

        with Graph.open(target) as g, open(os.devnull, "wb") as out:
            start = time.perf_counter()  # the export alone, not opening the graph
            export_graph(g, out, "nquads")
    elif kind == "reindex":  # the instance an import run left in ``target``
        from ontoloom.api import Graph

        with Graph.open(target, write=True) as g:
            start = time.perf_counter()  # the rebuild alone, not opening the graph
            objects = g.reindex()
        print(
            json.dumps(
                {"seconds": time.perf_counter() - start, "rss_mib": _rss(), "objects": objects}
            )
        )
        return
    else:
        from ontoloom.api import Graph
        from ontoloom.interchange import import_file

        with Graph.open(target, write=True, create=True) as g:
            import_file(g, path)
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "rss_mib": _rss()}))


def _rss() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return rss / (1 << 20) if sys.platform == "darwin" else rss / 1024


def _ops(entities: int, target: Path, repeat: int = 40) -> None:
    """On the instance an import left in ``target``: a single validated create (p50, after
    one to warm the compiled plans, as a long-lived process has them) and a search over the
    query mix of ``bench/run.py`` (p95)."""
    import random

    from ontoloom.api import Graph
    from run import percentile, query_mix

    rng = random.Random(7)
    with Graph.open(target, write=True) as g:
        g.create("Task", {"title": "warm", "status": "open"}, id="task_warm")
        creates = []
        for i in range(repeat):
            start = time.perf_counter()
            g.create("Task", {"title": f"New task {i}", "status": "open"}, id=f"task_new_{i}")
            creates.append(time.perf_counter() - start)
        queries = query_mix(rng, entities, repeat)
        g.search(queries[0], limit=10)  # warm
        searches = []
        for q in queries:
            start = time.perf_counter()
            g.search(q, limit=10)
            searches.append(time.perf_counter() - start)
    print(
        json.dumps(
            {
                "create_p50": percentile(creates, 0.5),
                "search_p95": percentile(searches, 0.95),
                "rss_mib": _rss(),
            }
        )
    )


def _hook(entities: int, target: Path, repeat: int = 16) -> float:
    """The prompt hook as Claude Code runs it (a fresh ``ontoloom hook prompt-context``
    process per prompt, JSON on stdin) on the instance in ``target``: p50 seconds."""
    import random
    import shutil

    from run import compile_package, hook_prompt, percentile

    compile_package()
    script = Path(sys.executable).with_name("ontoloom")
    ontoloom = str(script) if script.exists() else shutil.which("ontoloom") or "ontoloom"
    rng = random.Random(5)
    people, projects = max(1, entities // 20), max(1, entities // 50)
    tasks = entities - people - projects
    args = [ontoloom, "hook", "prompt-context", "--data-dir", str(target)]
    times = []
    for i in range(repeat + 1):
        prompt, _ = hook_prompt(i, rng, people, projects, tasks)
        event = {"hook_event_name": "UserPromptSubmit", "cwd": str(target), "prompt": prompt}
        start = time.perf_counter()
        subprocess.run(args, input=json.dumps(event).encode(), capture_output=True, check=True)
        if i:  # the first warms the page cache, as a live instance has it
            times.append(time.perf_counter() - start)
    return percentile(times, 0.5)


def _chain(tasks: int, target: Path) -> None:
    """``check`` (the full audit) of ``tasks`` tasks in one ``blocks`` chain, timed alone
    (the graph is stored first, unvalidated: the chain is what is measured)."""
    from ontoloom.api import Graph
    from ontoloom.audit import audit
    from ontoloom.store.base import Delta
    from ontoloom.terms import Literal, NamedNode, Quad
    from ontoloom.vocab import FACTS, OL, RDF_TYPE

    with Graph.open(target, write=True, create=True) as g:
        quads = []
        for i in range(tasks):
            t = g.ids.iri(f"task_{i:08x}")
            quads += [
                Quad(t, RDF_TYPE, NamedNode(OL + "Task"), FACTS),
                Quad(t, NamedNode(OL + "title"), Literal(f"Task {i}"), FACTS),
                Quad(t, NamedNode(OL + "status"), Literal("open"), FACTS),
            ]
            if i:
                quads.append(
                    Quad(g.ids.iri(f"task_{i - 1:08x}"), NamedNode(OL + "blocks"), t, FACTS)
                )
        g.writes.commit(Delta(adds=set(quads)), trusted="bench: the chain to audit")
        start = time.perf_counter()
        result = audit(g)
        seconds = time.perf_counter() - start
        assert result.conforms, "the chain has no cycle: the audit must find nothing"
    print(json.dumps({"seconds": seconds, "rss_mib": _rss(), "triples": len(quads)}))


def _measure(kind: str, path: Path, target: Path, env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path), str(target)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{kind} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


LATENCY = ("create p50", "search p95", "prompt hook p50")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--million", action="store_true", help="add the 1M-entity row")
    parser.add_argument(
        "--one-request", action="store_true", help="also import through one store transaction"
    )
    parser.add_argument(
        "--chain",
        type=int,
        default=5000,
        metavar="TASKS",
        help="the `check` row: a chain of this many tasks linked by blocks (0: none)",
    )
    parser.add_argument(
        "--no-latency",
        action="store_true",
        help="leave out the create p50, search p95 and prompt hook p50 rows",
    )
    parser.add_argument(
        "--child", nargs=3, metavar=("KIND", "FILE", "TARGET"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        kind, file, target = args.child
        _child(kind, Path(file), Path(target))
        return
    sizes = [*args.entities, *([1_000_000] if args.million else [])]
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(f"cpus: {os.cpu_count()}, load average: {load}")
    header = f"{'row':<22} {'entities':>9} {'triples':>9} {'seconds':>8} {'triples/s':>10} {'peak RSS':>9}  vs raw"
    print(header)
    print("-" * len(header))
    latency: dict[int, tuple[float, float, float]] = {}
    for entities in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "data.nq"
            triples = _write_file(entities, path)
            env = {**os.environ}
            # 1M entities are ~144 MiB of N-Quads, above the default input limit (64 MiB)
            env["ONTOLOOM_MAX_INPUT_BYTES"] = str(max(path.stat().st_size + 1, 64 << 20))
            env.pop("ONTOLOOM_BULK_LOAD", None)
            runs = [("raw bulk load", "raw", env), ("import (journaled)", "import", env)]
            if args.one_request:
                runs.append(
                    ("import (one request)", "import", {**env, "ONTOLOOM_BULK_LOAD": _HUGE})
                )
            raw = None
            for i, (label, kind, run_env) in enumerate(runs):
                got = _measure(kind, path, Path(tmp) / f"run{i}", run_env)
                seconds = got["seconds"]
                raw = raw or seconds
                ratio = "baseline" if kind == "raw" else f"{seconds / raw:.1f}x"
                print(
                    f"{label:<22} {entities:>9,} {triples:>9,} {seconds:>8.2f} "
                    f"{triples / seconds:>10,.0f} {got['rss_mib']:>6,.0f} MiB  {ratio}",
                    flush=True,
                )
            imported = Path(tmp) / "run1"  # the instance the journaled import made
            # Every graph of it written as N-Quads (streamed: its RSS should not grow).
            got = _measure("export", path, imported, env)
            print(
                f"{'export (N-Quads)':<22} {entities:>9,} {triples:>9,} {got['seconds']:>8.2f} "
                f"{triples / got['seconds']:>10,.0f} {got['rss_mib']:>6,.0f} MiB",
                flush=True,
            )
            # Its search index rebuilt whole.
            got = _measure("reindex", path, imported, env)
            label = f"reindex ({got['objects']:,.0f} obj.)"
            print(
                f"{label:<22} {entities:>9,} {triples:>9,} {got['seconds']:>8.2f} "
                f"{triples / got['seconds']:>10,.0f} {got['rss_mib']:>6,.0f} MiB",
                flush=True,
            )
            if not args.no_latency:
                got = _measure("ops", Path(str(entities)), imported, env)
                hook = _hook(entities, imported)
                latency[entities] = (got["create_p50"], got["search_p95"], hook)
                for label, value in zip(LATENCY, latency[entities], strict=True):
                    rss = f"{got['rss_mib']:>6,.0f} MiB" if label != LATENCY[2] else ""
                    print(
                        f"{label:<22} {entities:>9,} {triples:>9,} {value * 1000:>6.1f}ms"
                        f"{'':>11} {rss}",
                        flush=True,
                    )
    if len(latency) > 1:  # the largest size against the smallest (target: ≤ 1.5×)
        small, large = min(latency), max(latency)
        for i, label in enumerate(LATENCY):
            ratio = latency[large][i] / latency[small][i]
            print(f"{label} at {large:,} vs {small:,} entities: {ratio:.2f}x", flush=True)
    if args.chain:
        with tempfile.TemporaryDirectory() as tmp:
            got = _measure("chain", Path(str(args.chain)), Path(tmp) / "chain", {**os.environ})
            label = "check (blocks chain)"
            print(
                f"{label:<22} {args.chain:>9,} {got['triples']:>9,.0f} {got['seconds']:>8.2f} "
                f"{got['triples'] / got['seconds']:>10,.0f} {got['rss_mib']:>6,.0f} MiB",
                flush=True,
            )


if __name__ == "__main__":
    main()
