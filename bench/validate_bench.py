"""`make bench-validate`: ontoloom validate beside the other SHACL engines, in one run.

Each workload is written once to a temporary directory; then the engines run it in rounds,
interleaved (ontoloom, pyshacl-turbo, shacl, shacl-rust, pyrudof, pySHACL, then again), each
in a fresh process (bench/validate_peers.py), so that startup and imports count and a busy
moment of the machine falls on every engine alike. A row gives the median wall time, the
peak RSS, the result count (engines that disagree with ontoloom on it are marked) and the
ratio of the engine's time to ontoloom's.

    python bench/validate_bench.py                # 10 triples and 100k triples
    python bench/validate_bench.py --million      # and 1M triples
    python bench/validate_bench.py --rounds 5 --slow-timeout 900
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from validate_peers import ENGINES, run
from validate_workload import write

# The order of a round; pySHACL and pyrudof take minutes at 100k triples, so they run once.
ORDER = ("ontoloom", "pyshacl-turbo", "shacl", "shacl-rust", "pyrudof", "pyshacl")
ONCE = {"pyshacl", "pyrudof"}


def measure(
    data: Path, shapes: Path, rounds: int, timeout: float, slow_timeout: float
) -> dict[str, list[dict[str, Any]]]:
    runs: dict[str, list[dict[str, Any]]] = {e: [] for e in ORDER}
    for engine in ORDER:  # warm up: the first run after an install writes .pyc files
        if engine not in ONCE:
            run(engine, data, shapes, timeout)
    for i in range(rounds):
        for engine in ORDER:
            if engine in ONCE and i > 0:
                continue
            limit = slow_timeout if engine in ONCE else timeout
            runs[engine].append(run(engine, data, shapes, limit))
            sys.stderr.write(f"  {engine}: {runs[engine][-1]}\n")
    return runs


def rows(label: str, triples: int, runs: dict[str, list[dict[str, Any]]]) -> list[list[str]]:
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
        mark = "" if results == expected else " ≠"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--million", action="store_true", help="also the 1M-triple workload")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median)")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--slow-timeout", type=float, default=900.0)
    args = parser.parse_args()
    assert set(ORDER) == set(ENGINES)
    sizes = [("tiny file", 10), ("ordinary shapes", 100_000)]
    if args.million:
        sizes.append(("ordinary shapes", 1_000_000))
    table: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="ontoloom-bench-validate-") as tmp:
        for label, wanted in sizes:
            data, shapes = write(wanted, Path(tmp) / str(wanted))
            triples = triples_in(data)
            sys.stderr.write(f"{label}: {triples:,} triples\n")
            runs = measure(data, shapes, args.rounds, args.timeout, args.slow_timeout)
            table += rows(label, triples, runs)
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
        "results ≠: a count that differs from ontoloom's"
    )


if __name__ == "__main__":
    main()
