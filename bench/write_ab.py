"""The write cost of a change (history, issue 36): validated writes of two source trees of
ontoloom — before and after the change — interleaved on one machine in one run.

Each tree runs in its own long-lived worker process (``PYTHONPATH=TREE/src``, this
environment's packages), holding its own store of N synthetic entities (bench/run.py's graph,
loaded trusted), as an owner process holds its store. Rounds alternate A B B A …; each round
times R of each operation in-process (``Graph.create`` of a task with three properties, a
first ``relate`` of a many-to-one relation, a reassignment, an ``update`` of one property, a
``relate`` of the acyclic ``blocks``). Wall time and the writing thread's CPU time are both taken:
on a machine shared with other work the CPU time is the steadier figure (the store's own
background threads, flushing and compacting, are left out of it). Printed: p50 per
operation and tree over all rounds, and the change in per cent.

    git worktree add --detach /tmp/before COMMIT
    python bench/write_ab.py /tmp/before . [--entities 10000] [--rounds 6] [--repeat 40]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

OPERATIONS = ("create", "relate", "reassign", "update", "blocks")
Op = Callable[[int], object]


def operations(g: Any, ids: list[str], first: int, people: int, tasks: int) -> dict[str, Op]:
    """The timed writes of one round, each of its own new task ``ids[i]``."""
    return {
        "create": lambda i: g.create(
            "Task", {"title": "New task", "status": "open", "priority": "high"}, id=ids[i]
        ),
        "relate": lambda i: g.relate(ids[i], "assigned_to", f"pers_{i % people:08x}"),
        "reassign": lambda i: g.relate(ids[i], "assigned_to", f"pers_{(i + 1) % people:08x}"),
        "update": lambda i: g.update(ids[i], {"status": "done"}),
        "blocks": lambda i: g.relate(ids[i], "blocks", f"task_{(first + i) * 7919 % tasks:08x}"),
    }


def worker(entities: int) -> None:
    """One tree's side: read 'round K R' lines, answer each with the samples as JSON."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from ontoloom.api import Graph
    from ontoloom.store.base import Delta
    from run import synthetic_quads

    with (
        tempfile.TemporaryDirectory() as tmp,
        Graph.open(Path(tmp) / "d", write=True, create=True) as g,
    ):
        g.writes.commit(Delta(adds=set(synthetic_quads(g, entities))), trusted="bench")
        people, projects = max(1, entities // 20), max(1, entities // 50)
        tasks = entities - people - projects
        g.create("Task", {"title": "warm", "status": "open"}, id="task_warm")
        print("ready", flush=True)
        for line in sys.stdin:
            _, k, r = line.split()
            rnd, repeat = int(k), int(r)
            ids = [f"task_r{rnd}n{i}" for i in range(repeat)]
            out: dict[str, list[list[float]]] = {}
            for name, op in operations(g, ids, rnd * repeat, people, tasks).items():
                samples = []
                for i in range(repeat):
                    wall, cpu = time.perf_counter(), time.thread_time()
                    op(i)
                    samples.append([time.perf_counter() - wall, time.thread_time() - cpu])
                out[name] = samples
            print(json.dumps(out), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("before", type=Path, help="the source tree before (its src/ is used)")
    parser.add_argument("after", type=Path, help="the source tree after")
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=6, help="rounds per tree, interleaved")
    parser.add_argument("--repeat", type=int, default=40, help="each operation, per round")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.entities)
        return
    procs = {}
    for side, tree in (("before", args.before), ("after", args.after)):
        env = {**os.environ, "PYTHONPATH": str(tree.resolve() / "src")}
        procs[side] = subprocess.Popen(
            [sys.executable, __file__, "x", "x", "--worker", "--entities", str(args.entities)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
    for p in procs.values():
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    samples: dict[str, dict[str, list[list[float]]]] = {
        s: {op: [] for op in OPERATIONS} for s in procs
    }
    order = [("before", "after"), ("after", "before")]
    for k in range(args.rounds):
        for side in order[k % 2]:
            p = procs[side]
            assert p.stdin is not None and p.stdout is not None
            p.stdin.write(f"round {k} {args.repeat}\n")
            p.stdin.flush()
            for op, got in json.loads(p.stdout.readline()).items():
                samples[side][op] += got
    for p in procs.values():
        assert p.stdin is not None
        p.stdin.close()
        p.wait()
    print(f"{args.entities} entities, {args.rounds} rounds x {args.repeat} each, interleaved")
    print(
        f"{'operation':10} {'wall p50 before':>16} {'after':>8} {'change':>7}   "
        f"{'cpu p50 before':>15} {'after':>8} {'change':>7}"
    )
    for op in OPERATIONS:
        row = [op]
        for i in (0, 1):
            b = statistics.median(s[i] for s in samples["before"][op]) * 1000
            a = statistics.median(s[i] for s in samples["after"][op]) * 1000
            row += [f"{b:.2f} ms", f"{a:.2f} ms", f"{(a / b - 1) * 100:+.0f}%"]
        print(
            f"{row[0]:10} {row[1]:>16} {row[2]:>8} {row[3]:>7}   {row[4]:>15} {row[5]:>8} {row[6]:>7}"
        )


if __name__ == "__main__":
    main()
