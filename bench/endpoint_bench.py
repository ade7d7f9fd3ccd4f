"""`bench/run.py --only endpoint`: the same operations on the embedded store and on a real
`oxigraph serve` (started here on loopback, tests/endpoint_servers.py), in one run, each row
naming the graph size; then 2 and 4 gateways (each its own data dir) writing to one endpoint
at once: throughput and how often a commit had to be validated again (another gateway had
committed first). Virtuoso 7 rows too when it is installed (Debian virtuoso-opensource-7)."""

from __future__ import annotations

import contextlib
import statistics
import sys
import tempfile
import threading
import time
import types
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from ontoloom.api import Graph
from ontoloom.cli import main
from ontoloom.errors import CommitConflict
from ontoloom.store.endpoint import SparqlEndpointBackend
from ontoloom.terms import Quad, RdfFormat, serialize
from ontoloom.vocab import RDF_TYPE, IdSpace

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from endpoint_servers import EndpointServer, EngineMissing, OxigraphServer, VirtuosoServer


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _instance(root: Path, server: EndpointServer | None) -> Path:
    args = ["init", str(root)]
    if server is not None:
        args += ["--endpoint", server.query_url, "--update-endpoint", server.update_url]
    done = CliRunner().invoke(main, args)
    if done.exit_code != 0:
        raise RuntimeError(done.output)
    return root / ".ontoloom"


PART = 600  # quads per import into Virtuoso
OXIGRAPH_PART = 200000  # quads per import into oxigraph serve (it takes updates of ≤ 128 MiB)
VIRTUOSO_MAX = 10000  # entities: beyond, its imports in parts run for most of an hour


def _parts(quads: list[Quad], size: int) -> list[list[Quad]]:
    """``quads`` cut into runs of at most about ``size``, each cut before an rdf:type."""
    parts: list[list[Quad]] = [[]]
    for q in quads:
        if q.predicate == RDF_TYPE and len(parts[-1]) >= size:
            parts.append([])
        parts[-1].append(q)
    return parts


def _timed(fn: Callable[[int], object], repeat: int) -> list[float]:
    out = []
    for i in range(repeat):
        start = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - start)
    return out


def bench_backend(
    name: str, n: int, repeat: int, tmp: Path, server: EndpointServer | None
) -> list[tuple[str, str, int, float, float]]:
    """(backend, operation, entities, p50 ms or figure, p95 ms or 0) rows."""
    from run import synthetic_quads

    data_dir = _instance(tmp / f"{name}-{n}", server)
    quads = synthetic_quads(types.SimpleNamespace(ids=IdSpace()), n)  # type: ignore[arg-type]
    # Every commit is one update, and engines bound one: Virtuoso compiles at most a few
    # thousand triples, oxigraph serve reads at most 128 MiB. Larger files go in parts (cut
    # before an entity, in the generator's order, so that each part refers only to entities
    # already there).
    part = len(quads)
    if server is not None:
        part = min(part, PART if server.name == "virtuoso" else OXIGRAPH_PART)
    parts = _parts(quads, part)
    seconds = 0.0
    for k, chunk in enumerate(parts):
        path = tmp / f"data-{n}-{k}.nt"
        with path.open("wb") as out:
            serialize([q.triple for q in chunk], out, RdfFormat.N_TRIPLES)
        # 100k entities are 70 MiB of N-Triples, above the default input limit (64 MiB)
        limit = str(max(path.stat().st_size, 64 << 20))
        start = time.perf_counter()
        done = CliRunner().invoke(
            main,
            ["--data-dir", str(data_dir), "import", str(path)],
            env={"ONTOLOOM_MAX_INPUT_BYTES": limit},
        )
        seconds += time.perf_counter() - start
        if done.exit_code != 0:
            raise RuntimeError(done.output[-500:])
    what = "validated import, triples/s" if len(parts) == 1 else f"import in {part}s, triples/s"
    rows = [(name, what, n, len(quads) / seconds, 0.0)]
    with Graph.open(data_dir, write=True) as g:
        tasks = [e.id for e in g.entity_page("Task", limit=repeat)[0]]
        creates = _timed(
            lambda i: g.create("Task", {"title": f"Bench {i}", "status": "open"}), repeat
        )
        traverse = _timed(
            lambda i: g.traverse(tasks[i % len(tasks)], depth=3, direction="out"), repeat
        )
        search = _timed(lambda i: g.search(f"number {i * 37 % n}"), repeat)
    for op, samples in (
        ("validated create", creates),
        ("traverse, 3 hops", traverse),
        ("search, two words", search),
    ):
        rows.append(
            (
                name,
                op,
                n,
                statistics.median(samples) * 1000,
                _percentile(samples, 0.95) * 1000,
            )
        )
    return rows


def bench_gateways(
    server: EndpointServer, gateways: int, writes: int, tmp: Path
) -> tuple[float, int, int]:
    """``gateways`` threads, each with its own data dir on one endpoint, ``writes`` creates
    each: (writes/s, commits validated again, writes refused as busy)."""
    server.reset()
    dirs = [_instance(tmp / f"gw-{server.name}-{gateways}-{i}", server) for i in range(gateways)]
    conflicts = [0]
    busy = [0]
    original = SparqlEndpointBackend.apply

    def counting(self, delta, expected=None):  # type: ignore[no-untyped-def]
        try:
            return original(self, delta, expected)
        except CommitConflict:
            conflicts[0] += 1
            raise

    SparqlEndpointBackend.apply = counting  # type: ignore[method-assign]

    def write(data_dir: Path, k: int) -> None:
        for i in range(writes):
            try:
                with Graph.open(data_dir, write=True) as g:
                    g.create("Task", {"title": f"G{k}-{i}", "status": "open"})
            except Exception:
                busy[0] += 1

    threads = [threading.Thread(target=write, args=(d, k)) for k, d in enumerate(dirs)]
    start = time.perf_counter()
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        SparqlEndpointBackend.apply = original  # type: ignore[method-assign]
    seconds = time.perf_counter() - start
    return gateways * writes / seconds, conflicts[0], busy[0]


def run(sizes: list[int], repeat: int, writes: int) -> None:
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        servers: list[tuple[str, EndpointServer]] = [
            ("oxigraph serve", stack.enter_context(OxigraphServer(tmp / "oxigraph")))
        ]
        try:
            servers.append(("virtuoso 7", stack.enter_context(VirtuosoServer(tmp / "virtuoso"))))
        except EngineMissing as exc:
            print(f"(no Virtuoso rows: {exc})", flush=True)
        _run(servers, tmp, sizes, repeat, writes)


def _run(
    servers: list[tuple[str, EndpointServer]], tmp: Path, sizes: list[int], repeat: int, writes: int
) -> None:
    # Gateways first, on the engines as started: a store that held 100k entities and was
    # emptied answers slowly for a long while after (oxigraph's deleted keys stay until
    # compaction), which would measure that instead.
    print(
        f"\n{'gateways on one endpoint':<30}{'writes':>8}{'writes/s':>10}"
        f"{'validated again':>17}{'busy':>6}"
    )
    for name, server in servers:
        for gateways in (1, 2, 4):
            rate, conflicts, busy = bench_gateways(server, gateways, writes, tmp)
            print(
                f"{name + ', ' + str(gateways):<30}{gateways * writes:>8}{rate:>10.1f}"
                f"{conflicts:>17}{busy:>6}",
                flush=True,
            )
    print(
        f"\n{'backend':<16}{'operation':<30}{'entities':>9}{'p50 ms':>12}{'p95 ms':>10}",
        flush=True,
    )
    backends: list[tuple[str, EndpointServer | None]] = [("embedded", None), *servers]
    for n in sizes:
        for name, srv in backends:
            if srv is not None and srv.name == "virtuoso" and n > VIRTUOSO_MAX:
                print(f"{name:<16}(not run above {VIRTUOSO_MAX} entities: imported in parts, "
                      "it would take most of an hour)", flush=True)  # fmt: skip
                continue
            if srv is not None:
                srv.reset()
            for backend, op, size, p50, p95 in bench_backend(name, n, repeat, tmp, srv):
                if op.endswith("triples/s"):
                    print(f"{backend:<16}{op:<30}{size:>9}{p50:>12,.0f}", flush=True)
                else:
                    print(f"{backend:<16}{op:<30}{size:>9}{p50:>12.2f}{p95:>10.2f}", flush=True)
