"""The write cost of a change over MCP (history, issue 36): two `ontoloom mcp` owners, one per
source tree (before and after the change), each on its own copy of N synthetic entities, driven
by one client with their calls alternated one by one — so both see the same load on a shared
machine. Timed on the client side, as bench/mcp_bench.py times them: validated
``create_entity`` p50, the drop-in's single ``create_entities`` p50, ``search`` (two-word
queries) p95, and the prompt hook (a fresh
``ontoloom hook prompt-context`` process per prompt, JSON on stdin, while the owner is alive)
p50, the trees alternating prompt by prompt.

    git worktree add --detach /tmp/before COMMIT
    python bench/mcp_ab.py /tmp/before . [--entities 10000] [--repeat 200] [--hook-repeat 24]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mcp_bench import base_env, connected, counts, load_ontoloom, ontoloom_command, two_word_queries
from run import compile_package, hook_prompt, percentile

SIDES = ("before", "after")


async def call(session: Any, name: str, arguments: dict[str, Any]) -> float:
    start = time.perf_counter()
    result = await session.call_tool(name, arguments)
    elapsed = time.perf_counter() - start
    if result.isError:
        raise RuntimeError(f"{name} failed: {result.content[0].text[:200]}")
    return elapsed


def hook(data_dir: Path, env: dict[str, str], prompt: str, tmp: Path) -> float:
    event = {"hook_event_name": "UserPromptSubmit", "cwd": str(tmp), "prompt": prompt}
    args = [ontoloom_command(), "hook", "prompt-context", "--data-dir", str(data_dir)]
    start = time.perf_counter()
    subprocess.run(args, input=json.dumps(event).encode(), capture_output=True, env=env)
    return time.perf_counter() - start


async def run(args: argparse.Namespace) -> dict[str, dict[str, list[float]]]:
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    envs = {side: {**base_env(), "PYTHONPATH": str(trees[side] / "src")} for side in SIDES}
    samples: dict[str, dict[str, list[float]]] = {s: {} for s in SIDES}
    n = args.entities
    with tempfile.TemporaryDirectory(prefix="ontoloom-mcp-ab-") as name:
        tmp = Path(name)
        dirs = {}
        for side in SIDES:
            os.environ["PYTHONPATH"] = envs[side]["PYTHONPATH"]  # init and import by that tree
            (tmp / side).mkdir()
            dirs[side], load = load_ontoloom(tmp / side, n)
            print(f"  {side}: imported {n} entities in {load:.1f} s", flush=True)
            # its bytecode written, as an installed package has it (bench/run.py)
            subprocess.run([sys.executable, __file__, "--compile"], env=envs[side], check=True)
        async with contextlib.AsyncExitStack() as stack:
            sessions = {
                side: await stack.enter_async_context(
                    connected(
                        ontoloom_command(),
                        ["mcp", "--data-dir", str(dirs[side])],
                        envs[side],
                        tmp,
                        tmp / f"{side}.log",
                    )
                )
                for side in SIDES
            }
            warm = {"type": "Task", "properties": {"title": "Warm-up task", "status": "open"}}
            queries = two_word_queries(n, args.repeat)
            for side in SIDES:
                await sessions[side].list_tools()
                await call(sessions[side], "create_entity", warm)
                for q in queries[:5]:
                    await call(sessions[side], "search", {"query": q, "limit": 10})
            for i in range(args.repeat):
                create = {
                    "type": "Task",
                    "properties": {"title": f"Benchmark task {i}", "status": "open"},
                }
                for side in SIDES if i % 2 == 0 else SIDES[::-1]:
                    got = await call(sessions[side], "create_entity", create)
                    samples[side].setdefault("create_entity p50", []).append(got)
            for i in range(args.repeat):  # the drop-in's own create, as mcp_bench calls it
                entity = {"name": f"Drop-in task {i}", "entityType": "Task"}
                drop_in = {"entities": [{**entity, "observations": ["status: open"]}]}
                for side in SIDES if i % 2 == 0 else SIDES[::-1]:
                    got = await call(sessions[side], "create_entities", drop_in)
                    samples[side].setdefault("create_entities p50", []).append(got)
            for i, q in enumerate(queries):
                for side in SIDES if i % 2 == 0 else SIDES[::-1]:
                    got = await call(sessions[side], "search", {"query": q, "limit": 10})
                    samples[side].setdefault("search p95", []).append(got)
            people, projects, tasks = counts(n)
            rng = random.Random(5)
            for i in range(args.hook_repeat + 1):
                prompt, _ = hook_prompt(i, rng, people, projects, tasks)
                for side in SIDES if i % 2 == 0 else SIDES[::-1]:
                    got = await asyncio.to_thread(hook, dirs[side], envs[side], prompt, tmp)
                    if i:  # the first warms the page cache, as a live instance has it
                        samples[side].setdefault("hook p50", []).append(got)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    if sys.argv[1:] == ["--compile"]:
        compile_package()
        return
    parser.add_argument("before", type=Path, help="the source tree before (its src/ is used)")
    parser.add_argument("after", type=Path, help="the source tree after")
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--hook-repeat", type=int, default=24)
    args = parser.parse_args()
    samples = asyncio.run(run(args))
    print(f"{args.entities} entities over MCP, the two owners' calls alternated one by one")
    for figure in samples["before"]:
        stat = statistics.median if "p50" in figure else (lambda s: percentile(s, 0.95))
        b, a = (stat(samples[side][figure]) * 1000 for side in SIDES)
        print(f"{figure:18} before {b:8.2f} ms   after {a:8.2f} ms   {(a / b - 1) * 100:+.0f}%")


if __name__ == "__main__":
    main()
