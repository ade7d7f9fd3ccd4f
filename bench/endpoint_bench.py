"""`make bench-endpoint` (and `bench/run.py --only endpoint`): scale-out on SPARQL stores.

First, disjoint-write throughput: 1, 2, 4 and 8 gateways — each its own process with its own
data dir — creating their own tasks on one endpoint at once (a real `oxigraph serve` on
loopback, tests/endpoint_servers.py; Virtuoso 7 too when installed), and the same number of
processes sharing one embedded data dir, in the same run: writes/s, the ratio to one
gateway, p50 of one create, and how often a commit had to be validated again (another
gateway changed what it read). Then, per graph size, the same operations on the embedded
store and on each engine (validated import, create, traverse, search)."""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from ontoloom.api import Graph
from ontoloom.cli import main
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


# One gateway: its own process (as a deployment runs them), its own data dir, one Graph open
# for all its writes. It waits for the start signal (a file), writes, and prints one JSON
# line: the seconds each write took, the validations it ran, the busy refusals.
_GATEWAY = """
import json, os, sys, time
from pathlib import Path
from ontoloom.api import Graph
from ontoloom.writes import WritePath

data_dir, prefix, writes, go = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
validations = [0]
findings = WritePath._findings
def counted(self, *args, **kw):
    validations[0] += 1
    return findings(self, *args, **kw)
WritePath._findings = counted
# Every HTTP request to the store, by what it was for (counted and timed in the transport's
# one door, SparqlEndpointBackend._post), and this process's CPU: requests per create, and
# whether a gateway is bound by its CPU or by waiting for the store.
from ontoloom.store.endpoint import SparqlEndpointBackend
requests, waited = {}, [0.0]
post = SparqlEndpointBackend._post
def timed_post(self, url, data, accept, what, *args, **kw):
    t = time.perf_counter()
    try:
        return post(self, url, data, accept, what, *args, **kw)
    finally:
        waited[0] += time.perf_counter() - t
        kind = what.split(" of generation")[0].split(" on generation")[0]
        requests[kind] = requests.get(kind, 0) + 1
SparqlEndpointBackend._post = timed_post
took, busy = [], 0
# A gateway keeps its graph open (a server); processes sharing one embedded data dir open it
# for each write (as CLI commands do: its writer lock lets one in at a time).
shared = os.environ.get("BENCH_SHARED_DIR") == "1"
def session():
    return Graph.open(data_dir, write=True)
opened = None if shared else session()
g = None if opened is None else opened.__enter__()
def create(title):
    if g is not None:
        return g.create("Task", {"title": title, "status": "open"})
    with session() as one:
        return one.create("Task", {"title": title, "status": "open"})
create(f"{prefix} warm")  # shapes compiled, indexes read
validations[0] = 0
while not go.exists():
    time.sleep(0.005)
requests.clear()
waited[0] = 0.0
cpu = time.process_time()
started = time.time()
for i in range(writes):
    t = time.perf_counter()
    try:
        create(f"{prefix} {i}")
        took.append(time.perf_counter() - t)
    except Exception as exc:  # counted, and named once
        busy += 1
        print(type(exc).__name__, str(exc)[:200], file=sys.stderr)
ended = time.time()
cpu = time.process_time() - cpu
if opened is not None:
    opened.__exit__(None, None, None)
print(json.dumps({"took": took, "validations": validations[0], "busy": busy,
                  "started": started, "ended": ended, "cpu": cpu, "requests": requests,
                  "waited": waited[0]}))
"""


def bench_gateways(
    server: EndpointServer | None, gateways: int, writes: int, tmp: Path
) -> dict[str, float]:
    """``gateways`` processes, each with its own data dir on one endpoint (``server``; None:
    one embedded data dir they share, its writer lock ordering them), ``writes`` creates of
    their own tasks each — disjoint writes. Returns writes/s (all acknowledged writes over
    the wall time from the start signal to the last one done), p50 ms of one create,
    validations beyond one a write, and busy refusals."""
    import json
    import subprocess

    name = "embedded" if server is None else server.name
    if server is not None:
        server.reset()
        dirs = [_instance(tmp / f"gw-{name}-{gateways}-{i}", server) for i in range(gateways)]
    else:
        dirs = [_instance(tmp / f"gw-{name}-{gateways}", None)] * gateways
    with Graph.open(dirs[0], write=True) as g:  # the class, the values: in the graph already
        g.create("Task", {"title": "seed", "status": "open"})
    go = tmp / f"go-{name}-{gateways}"
    env = {
        **os.environ,
        "ONTOLOOM_LOCK_TIMEOUT": "120",
        "BENCH_SHARED_DIR": str(int(server is None)),
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _GATEWAY, str(d), f"G{k}", str(writes), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for k, d in enumerate(dirs)
    ]
    time.sleep(3.0 + 0.5 * gateways)  # every process started and opened its graph
    served = _cpu_seconds(server)
    go.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"a gateway failed: {err[-800:]}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    served = _cpu_seconds(server) - served
    took = [t for r in results for t in r["took"]]
    done = max(1, len(took))
    kinds: dict[str, int] = {}
    for r in results:
        for kind, count in r["requests"].items():
            kinds[kind] = kinds.get(kind, 0) + count
    wall = max(r["ended"] for r in results) - min(r["started"] for r in results)
    return {
        "rate": len(took) / wall,
        "p50": statistics.median(took) * 1000 if took else float("nan"),
        "again": sum(r["validations"] for r in results) - len(took),
        "busy": sum(r["busy"] for r in results),
        # per acknowledged create: HTTP requests, ms waiting for them, gateway CPU ms, and
        # the store's CPU ms (the engine's process; 0 for the embedded store)
        "requests": sum(kinds.values()) / done,
        "waited": sum(r["waited"] for r in results) * 1000 / done,
        "cpu": sum(r["cpu"] for r in results) * 1000 / done,
        "served": served * 1000 / done,
        "kinds": {k: v / done for k, v in sorted(kinds.items())},
    }


def _cpu_seconds(server: EndpointServer | None) -> float:
    """CPU seconds the engine's process has used so far (0 when there is none to read)."""
    process = None if server is None else server.process
    if process is None:
        return 0.0
    try:
        fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


GATEWAYS = (1, 2, 4, 8)


def run(
    sizes: list[int],
    repeat: int,
    writes: int,
    gateways: tuple[int, ...] = GATEWAYS,
    engines: tuple[str, ...] = ("embedded", "oxigraph", "virtuoso"),
) -> None:
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        servers: list[tuple[str, EndpointServer]] = []
        if "oxigraph" in engines:
            servers.append(("oxigraph serve", stack.enter_context(OxigraphServer(tmp / "ox"))))
        if "virtuoso" in engines:
            try:
                virtuoso = stack.enter_context(VirtuosoServer(tmp / "virtuoso"))
                servers.append(("virtuoso 7", virtuoso))
            except EngineMissing as exc:
                print(f"(no Virtuoso rows: {exc})", flush=True)
        _run(servers, tmp, sizes, repeat, writes, gateways, "embedded" in engines)


def _scaling(
    servers: list[tuple[str, EndpointServer]],
    tmp: Path,
    writes: int,
    gateways: tuple[int, ...],
    embedded: bool = True,
) -> None:
    """Disjoint writes (each gateway creates its own tasks), 1, 2, 4, 8 gateways on each
    engine and on the embedded store (its processes share one data dir and its lock)."""
    print(
        f"\n{'gateways, disjoint creates':<28}{'writes':>7}{'writes/s':>10}{'vs 1':>7}"
        f"{'p50 ms':>9}{'validated again':>17}{'busy':>6}{'req/w':>7}{'http ms/w':>10}"
        f"{'gw cpu ms/w':>12}{'store cpu ms/w':>15}",
        flush=True,
    )
    rows: list[tuple[str, EndpointServer | None]] = [("embedded", None)] if embedded else []
    for name, server in [*rows, *servers]:
        one = None
        for n in gateways:
            row = bench_gateways(server, n, writes, tmp)
            one = row["rate"] if one is None else one
            print(
                f"{name + ', ' + str(n):<28}{n * writes:>7}{row['rate']:>10.1f}"
                f"{row['rate'] / one:>6.2f}x{row['p50']:>9.1f}{row['again']:>17.0f}"
                f"{row['busy']:>6.0f}{row['requests']:>7.1f}{row['waited']:>10.1f}"
                f"{row['cpu']:>12.1f}{row['served']:>15.1f}",
                flush=True,
            )
            if os.environ.get("BENCH_REQUESTS"):  # what each create asked the store for
                kinds = ", ".join(f"{k} {v:.2f}" for k, v in row["kinds"].items())
                print(f"    requests per create: {kinds}", flush=True)


def _run(
    servers: list[tuple[str, EndpointServer]],
    tmp: Path,
    sizes: list[int],
    repeat: int,
    writes: int,
    gateways: tuple[int, ...] = GATEWAYS,
    embedded: bool = True,
) -> None:
    # Gateways first, on the engines as started: a store that held 100k entities and was
    # emptied answers slowly for a long while after (oxigraph's deleted keys stay until
    # compaction), which would measure that instead.
    _scaling(servers, tmp, writes, gateways, embedded)
    if not sizes:
        return
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


if __name__ == "__main__":  # make bench-endpoint
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gateways", default="1,2,4,8", help="gateway counts, one row each")
    parser.add_argument("--writes", type=int, default=30, help="creates per gateway")
    parser.add_argument("--sizes", default="1000", help="entities for the per-call rows ('' none)")
    parser.add_argument("--repeat", type=int, default=50, help="calls per per-call row")
    parser.add_argument(
        "--engines", default="embedded,oxigraph,virtuoso", help="embedded, oxigraph, virtuoso"
    )
    args = parser.parse_args()
    run(
        [int(x) for x in args.sizes.split(",") if x],
        args.repeat,
        args.writes,
        tuple(int(x) for x in args.gateways.split(",")),
        tuple(args.engines.split(",")),
    )
