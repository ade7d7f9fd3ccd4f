"""`make bench-secrets`: precision and recall of the secret refusal, through the real doors.

The corpus (bench/secrets_corpus.py, written from the credential formats, never from
ontoloom's patterns) is sent through every way text reaches the graph, and each door is
scored: an ordinary item must be stored, a fake must be refused. A refusal counts whatever
its reason (nothing was stored); the table says how many were refused for another reason
than the secret rule, and how many refusals printed the secret back.

    python bench/secrets_bench.py                 # every door, about ten minutes
    python bench/secrets_bench.py --quick         # a few items per door, seconds
    python bench/secrets_bench.py --only judge,import --json results.json

Doors: ``judge`` (the Python API in process, the whole corpus), ``import`` (RDF import through
the ops layer, the whole corpus), ``cli``, ``mcp``, ``http`` and ``rebuild`` (samples, each
through its own process), and the peers ``detect-secrets`` (its ad hoc ``scan_line``, and its
file scan) on the same texts. The figures are the output: the exit code is 0 whatever they
are, and nonzero only when the harness itself fails.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(SRC))  # measure the checkout this bench lives in

from secrets_corpus import (  # noqa: E402
    CARRIERS,
    DEFAULT_SEED,
    IRI_CARRIERS,
    TEXT_CARRIERS,
    Corpus,
    Item,
    corpus,
    one_per_cell,
    sample,
)

#: Words of a refusal by the secret rule (ol:NoSecrets' results, and the id check's words).
SECRET_MARKERS = ("forbidden", "holds a token or key", "secrets are never stored")
EX = "https://ex.org/"


@dataclass
class Outcome:
    item: Item
    refused: bool
    reason: str = ""  # "secret", "other" or "crash: <type>" when refused
    echoed: bool = False  # a fake's refusal printed the secret back
    detail: str = ""  # the refusal's first line (ordinary items only)


def judged(item: Item, refused: bool, message: str = "") -> Outcome:
    if not refused:
        return Outcome(item, False)
    lower = message.lower()
    reason = "secret" if any(m in lower for m in SECRET_MARKERS) else "other"
    if message.startswith("crash: "):
        reason = message.split("\n", 1)[0]
    echoed = item.kind == "fake" and bool(item.secret) and item.secret in _plain(message)
    lines = [line.strip() for line in message.strip().split("\n")]
    telling = [line for line in lines if any(m in line.lower() for m in SECRET_MARKERS)]
    first = "" if item.kind == "fake" else (telling or lines)[0][:160]
    return Outcome(item, True, reason, echoed, first)


_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200d\u00ad"))


def _plain(message: str) -> str:
    """A refusal as a reader sees it: NFKC, invisible characters (and their JSON escapes)
    dropped, so a secret printed back in a disguise is still found."""
    for escape in ("\\u200b", "\\u200d", "\\u00ad", "\\u00AD", "\\u200B", "\\u200D"):
        message = message.replace(escape, "")
    return unicodedata.normalize("NFKC", message).translate(_INVISIBLE)


def child_env() -> dict[str, str]:
    """The environment of an ontoloom process: this checkout's src first, no ONTOLOOM_HOME."""
    env = {k: v for k, v in os.environ.items() if k not in ("ONTOLOOM_HOME", "ONTOLOOM_TOKEN")}
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    env["ONTOLOOM_LOCK_TIMEOUT"] = "30"
    return env


ONTOLOOM = [sys.executable, "-m", "ontoloom"]


# -- RDF text ---------------------------------------------------------------------------------
def literal(text: str) -> str:
    out = text.replace("\\", "\\\\").replace('"', '\\"')
    out = out.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return '"' + "".join(c if ord(c) >= 0x20 else f"\\u{ord(c):04X}" for c in out) + '"'


def iri_ok(text: str) -> bool:
    return bool(text) and not any(c in text for c in ' <>"{}|^`\\\n\r\t')


def triple(item: Item, n: int) -> str | None:
    """The item as one Turtle triple; None where the item cannot travel so."""
    subject = f"<{EX}item/{n}>"
    if item.carrier in TEXT_CARRIERS:
        return f"{subject} <{EX}ns#text> {literal(item.text)} ."
    if item.carrier == "property-name":
        if not iri_ok(item.text):
            return None
        return f"{subject} <{EX}ns#{item.text}> {literal(item.value)} ."
    if item.carrier == "object-iri":
        return f"{subject} <{EX}ns#link> <{item.text}> ." if iri_ok(item.text) else None
    if item.carrier == "subject-iri":
        return f'<{item.text}> <{EX}ns#label> "item {n}" .' if iri_ok(item.text) else None
    return None  # an entity id is made by create, not by import


# -- batching ---------------------------------------------------------------------------------
def bisect(
    indices: list[int], attempt: Callable[[list[int]], None], failed: dict[int, str]
) -> None:
    """Try ``indices`` at once; a refused batch (all or nothing) is split until each refusal
    is one item, its message in ``failed``."""
    from ontoloom.errors import OntoloomError

    stack = [indices]
    while stack:
        batch = stack.pop()
        if not batch:
            continue
        try:
            attempt(batch)
        except OntoloomError as exc:
            if len(batch) == 1:
                failed[batch[0]] = str(exc)
            else:
                mid = len(batch) // 2
                stack += [batch[mid:], batch[:mid]]
        except Exception as exc:  # a crash on some input is a finding, not a harness failure
            if len(batch) == 1:
                failed[batch[0]] = f"crash: {type(exc).__name__}\n{exc}"
            else:
                mid = len(batch) // 2
                stack += [batch[mid:], batch[:mid]]


def chunks(seq: list[int], size: int) -> Iterator[list[int]]:
    for i in range(0, len(seq), size):
        yield seq[i : i + size]


# -- door: judge (the Python API, in process) -------------------------------------------------
def door_judge(items: list[Item], work: Path) -> list[Outcome]:
    from ontoloom.api import Graph
    from ontoloom.interchange import import_file

    failed: dict[int, str] = {}
    with Graph.open(work / "judge", write=True, create=True) as g:

        def stage(changes: Any, n: int) -> None:
            item = items[n]
            task = {"title": f"carrier {n}", "status": "open"}
            if item.carrier == "property-name":
                changes.create("Task", {**task, item.text: item.value})
            elif item.carrier == "entity-id":
                changes.create("Task", task, item.text)
            else:
                props = {"title": item.text, "status": "open", "description": item.text}
                changes.create("Task", props)

        def attempt(batch: list[int]) -> None:
            first = items[batch[0]]
            if first.carrier in IRI_CARRIERS:
                body = "\n".join(filter(None, (triple(items[n], n) for n in batch)))
                import_file(g, None, "turtle", None, data=body.encode(), label="item.ttl")
                return
            changes = g.changes()
            for n in batch:
                stage(changes, n)
            g.commit(changes)

        ordinary = [n for n, i in enumerate(items) if i.kind == "ordinary"]
        for part in chunks(ordinary, 250):  # ordinary items in batches: they should all pass
            bisect(part, attempt, failed)
        for n, item in enumerate(items):  # each fake alone
            if item.kind == "fake":
                bisect([n], attempt, failed)
    return [judged(item, n in failed, failed.get(n, "")) for n, item in enumerate(items)]


# -- door: import (RDF import through the ops layer) ------------------------------------------
def door_import(items: list[Item], work: Path) -> list[Outcome]:
    """The ``import_rdf`` operation (what ``ontoloom import`` and the owner run), its argument
    check included, on one open graph: opening the store per file would cost most of the
    time."""
    import jsonschema

    from ontoloom.api import Graph
    from ontoloom.errors import BadInput
    from ontoloom.ops import argument_problem, operations

    failed: dict[int, str] = {}
    lines = {n: triple(item, n) for n, item in enumerate(items)}
    with Graph.open(work / "import", write=True, create=True) as g:
        operation = operations(g.schema)["import_rdf"]
        check = jsonschema.Draft202012Validator(operation.input_schema())

        def attempt(batch: list[int]) -> None:
            body = "\n".join(str(lines[n]) for n in batch) + "\n"
            arguments = {"name": "items.ttl", "text": body}
            problem = argument_problem(operation, arguments, check)
            if problem:
                raise BadInput(problem)
            operation.handler(g, arguments)

        ordinary = [n for n, i in enumerate(items) if i.kind == "ordinary" and lines[n]]
        bisect(ordinary, attempt, failed)  # one file with every ordinary item
        for n, item in enumerate(items):
            if item.kind == "fake" and lines[n]:
                bisect([n], attempt, failed)  # one file per fake
    return [
        judged(item, n in failed, failed.get(n, ""))
        for n, item in enumerate(items)
        if lines[n] is not None
    ]


# -- door: cli (one `ontoloom` process per item) ----------------------------------------------
def _cli_args(item: Item, n: int, scratch: Path) -> list[str] | None:
    if item.carrier in TEXT_CARRIERS:
        props = {"title": item.text, "status": "open", "description": item.text}
        return ["create", "Task", "--props", json.dumps(props)]
    if item.carrier == "property-name":
        return ["update", "task_base", "-p", f"{item.text}={item.value}"]
    if item.carrier == "entity-id":
        return [
            "create",
            "Task",
            "--id",
            item.text,
            "-p",
            f"title=carrier {n}",
            "-p",
            "status=open",
        ]
    line = triple(item, n)
    if line is None:
        return None
    path = scratch / f"item-{n}.ttl"
    path.write_text(line + "\n", encoding="utf-8")
    return ["import", str(path)]


def base_task(home: Path) -> None:
    """Make the data dir and the task ``task_base`` whose properties the name carrier sets
    (setup, in process: the doors are measured on what follows)."""
    from ontoloom.api import Graph

    with Graph.open(home, write=True, create=True) as g:
        g.create("Task", {"title": "base", "status": "open"}, id="task_base")


def door_cli(items: list[Item], work: Path, workers: int = 4) -> list[Outcome]:
    env = child_env()
    tried = [(n, item) for n, item in enumerate(items) if _cli_args(item, n, work) is not None]
    workers = max(1, min(workers, len(tried) // 2))
    homes = [work / f"cli-{w}" / ".ontoloom" for w in range(workers)]
    for home in homes:
        base_task(home)
    results: dict[int, Outcome] = {}
    lock = threading.Lock()

    def run(job: tuple[int, tuple[int, Item]]) -> None:
        k, (n, item) = job
        home = homes[k % workers]
        args = _cli_args(item, n, home.parent)
        assert args is not None
        done = subprocess.run(
            [*ONTOLOOM, "--data-dir", str(home), *args],
            env=env,
            capture_output=True,
            timeout=120,
        )
        out = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
        if done.returncode not in (0, 1, 2):
            out = f"crash: exit {done.returncode}\n{out}"
        with lock:
            results[n] = judged(item, done.returncode != 0, out)

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(run, enumerate(tried)))
    return [results[n] for n, _ in tried]


# -- door: mcp (`ontoloom mcp` over stdio, the SDK's client) ----------------------------------
def _tool_call(item: Item, n: int) -> tuple[str, dict[str, Any]] | None:
    if item.carrier in TEXT_CARRIERS:
        props = {"title": item.text, "status": "open", "description": item.text}
        return "create_entity", {"type": "Task", "properties": props}
    if item.carrier == "property-name":
        return "update_entity", {"id": "task_base", "properties": {item.text: item.value}}
    if item.carrier == "entity-id":
        props = {"title": f"carrier {n}", "status": "open"}
        return "create_entity", {"type": "Task", "properties": props, "id": item.text}
    return None  # no tool imports RDF: an IRI reaches the graph only through import


def door_mcp(items: list[Item], work: Path) -> list[Outcome]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    home = work / "mcp" / ".ontoloom"
    tried = [(n, item, call) for n, item in enumerate(items) if (call := _tool_call(item, n))]
    results: list[Outcome] = []

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "ontoloom", "--data-dir", str(home), "mcp"],
            env=child_env(),
        )
        with open(work / "mcp.stderr", "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                base = {"title": "base", "status": "open"}
                made = await session.call_tool(
                    "create_entity", {"type": "Task", "properties": base, "id": "task_base"}
                )
                if made.isError:
                    raise RuntimeError(f"mcp: could not make the base task: {made.content}")
                for _, item, (tool, args) in tried:
                    result = await session.call_tool(tool, args)
                    text = "\n".join(getattr(c, "text", "") for c in result.content)
                    results.append(judged(item, bool(result.isError), text))

    asyncio.run(asyncio.wait_for(main(), timeout=3600))
    return results


# -- door: http (`ontoloom serve`, its JSON API) ----------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def served(home: Path) -> Iterator[tuple[str, dict[str, str]]]:
    env = child_env()
    base_task(home)
    port = _free_port()
    with open(home.parent / "serve.stderr", "w") as errlog:
        proc = subprocess.Popen(
            [*ONTOLOOM, "--data-dir", str(home), "serve", "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=errlog,
            env=env,
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                        break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError("http: `ontoloom serve` did not start") from None
                    time.sleep(0.1)
            token = (home / "serve.token").read_text().strip()
            yield f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {token}"}
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def door_http(items: list[Item], work: Path) -> list[Outcome]:
    import httpx

    home = work / "http" / ".ontoloom"
    results: list[Outcome] = []
    with served(home) as (url, headers), httpx.Client(headers=headers, timeout=60) as client:
        for n, item in enumerate(items):
            call = _tool_call(item, n)
            if call is None:
                continue
            tool, args = call
            response = client.post(f"{url}/api/{tool}", json=args)
            refused = response.status_code != 200
            text = response.text
            if response.status_code >= 500:
                text = f"crash: HTTP {response.status_code}\n{text}"
            results.append(judged(item, refused, text))
    return results


# -- door: rebuild (markdown records, then `ontoloom rebuild`) --------------------------------
def _record(item: Item, n: int) -> str | None:
    if item.carrier in TEXT_CARRIERS:
        head = f"title: {json.dumps(item.text, ensure_ascii=False)}"
        return f"---\n{head}\n---\n{item.text}\n"
    if item.carrier == "property-name":
        pair = f"{json.dumps(item.text)}: {json.dumps(item.value, ensure_ascii=False)}"
        return f'---\ntitle: "carrier {n}"\n{pair}\n---\nbody\n'
    return None  # an id is slugged from the file name, and a record holds no IRI


def door_rebuild(items: list[Item], work: Path) -> list[Outcome]:
    root = work / "rebuild"
    folder = root / "records" / "memory"
    folder.mkdir(parents=True)
    (root / "ontoloom.toml").write_text("")
    tried: dict[str, tuple[int, Item]] = {}
    for n, item in enumerate(items):
        text = _record(item, n)
        if text is None:
            continue
        name = f"{'o' if item.kind == 'ordinary' else 'f'}-{n:05}.md"
        (folder / name).write_text(text, encoding="utf-8")
        tried[f"records/memory/{name}"] = (n, item)
    done = subprocess.run(
        [*ONTOLOOM, "rebuild", "--json"], cwd=root, env=child_env(), capture_output=True
    )
    if done.returncode not in (0, 1):
        raise RuntimeError(f"rebuild: exit {done.returncode}: {done.stderr.decode()[-2000:]}")
    report = json.loads(done.stdout)
    messages: dict[str, list[str]] = {}
    notes = report.get("notes", {})
    # a record refused, or a field of it not stored (a key that cannot be a property name is
    # skipped, and said): either way the text given is not in the store
    for note in [*notes.get("rejected", []), *notes.get("skipped", [])]:
        messages.setdefault(note["path"], []).append(note["message"])
    return [
        judged(item, path in messages, "\n".join(messages.get(path, [])))
        for path, (_, item) in tried.items()
    ]


# -- peers: detect-secrets --------------------------------------------------------------------
def _detect_secrets() -> Any:
    try:
        import detect_secrets  # noqa: F401
    except ImportError:
        return None
    return True


def door_detect_secrets_line(items: list[Item], work: Path) -> list[Outcome]:
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    out = []
    with default_settings():
        for item in items:
            found = [s.type for line in item.scanned.split("\n") for s in scan_line(line)]
            out.append(judged(item, bool(found), "forbidden " + ",".join(sorted(set(found)))))
    return out


def door_detect_secrets_file(items: list[Item], work: Path) -> list[Outcome]:
    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings

    folder = work / "detect-secrets"
    folder.mkdir()
    out = []
    with default_settings():
        for n, item in enumerate(items):
            path = folder / f"item-{n}.txt"
            path.write_text(item.scanned + "\n", encoding="utf-8")
            found = [s.type for s in scan_file(str(path))]
            out.append(judged(item, bool(found), "forbidden " + ",".join(sorted(set(found)))))
            path.unlink()
    return out


# -- the doors and their samples --------------------------------------------------------------
@dataclass(frozen=True)
class Door:
    name: str
    run: Callable[[list[Item], Path], list[Outcome]]
    ordinary: int | None  # how many ordinary items (None: all)
    fakes: str  # "all", "cell" (one per format and carrier) or a number
    quick: tuple[int, int]  # ordinary and fakes in --quick
    peer: bool = False


DOORS = (
    Door("judge", door_judge, None, "all", (300, 100)),
    Door("import", door_import, None, "all", (300, 40)),
    Door("cli", door_cli, 200, "cell", (2, 2)),
    Door("mcp", door_mcp, 2000, "all", (20, 20)),
    Door("http", door_http, 2000, "all", (20, 20)),
    Door("rebuild", door_rebuild, 2000, "all", (20, 20)),
    Door("detect-secrets scan_line", door_detect_secrets_line, None, "all", (400, 150), True),
    Door("detect-secrets file", door_detect_secrets_file, None, "all", (200, 80), True),
)


def items_for(door: Door, c: Corpus, quick: bool) -> list[Item]:
    seed = c.seed + sum(map(ord, door.name))
    if quick:
        n_ord, n_fake = door.quick
        return [*sample(c.ordinary, n_ord, seed), *sample(c.fakes, n_fake, seed + 1)]
    ordinary = c.ordinary if door.ordinary is None else sample(c.ordinary, door.ordinary, seed)
    if door.fakes == "all":
        fakes = c.fakes
    elif door.fakes == "cell":
        fakes = one_per_cell(c.fakes)
    else:
        fakes = sample(c.fakes, int(door.fakes), seed + 1)
    return [*ordinary, *fakes]


@dataclass
class Score:
    door: str
    outcomes: list[Outcome]
    seconds: float
    error: str = ""
    peer: bool = False

    @property
    def ordinary(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.item.kind == "ordinary"]

    @property
    def fakes(self) -> list[Outcome]:
        """The fakes of every form the README claims (recall is measured on these)."""
        return [o for o in self.outcomes if o.item.kind == "fake" and not o.item.named_gap]

    @property
    def gaps(self) -> list[Outcome]:
        """The fakes of the README's named gap: measured and shown apart."""
        return [o for o in self.outcomes if o.item.named_gap]

    @property
    def false_positives(self) -> list[Outcome]:
        return [o for o in self.ordinary if o.refused]

    @property
    def misses(self) -> list[Outcome]:
        return [o for o in self.fakes if not o.refused]

    def precision(self) -> float | None:
        caught = sum(o.refused for o in self.fakes)
        flagged = caught + len(self.false_positives)
        return caught / flagged if flagged else None

    def recall(self) -> float | None:
        return sum(o.refused for o in self.fakes) / len(self.fakes) if self.fakes else None

    def to_json(self) -> dict[str, Any]:
        return {
            "door": self.door,
            "peer": self.peer,
            "error": self.error or None,
            "seconds": round(self.seconds, 2),
            "ordinary": len(self.ordinary),
            "fakes": len(self.fakes),
            "false_positives": [
                {"item": o.item.shown(), "reason": o.reason, "refusal": o.detail}
                for o in self.false_positives
            ],
            "misses": [
                {"format": o.item.format, "carrier": o.item.carrier, "variant": o.item.variant}
                | {"head": o.item.secret[:6]}
                for o in self.misses
            ],
            "refused_otherwise": sum(o.refused and o.reason != "secret" for o in self.fakes),
            "echoed": sum(o.echoed for o in self.fakes),
            "named_gap": [sum(o.refused for o in self.gaps), len(self.gaps)],
            "precision": self.precision(),
            "recall": self.recall(),
            "by_carrier": {
                carrier: [
                    sum(not o.refused for o in self.fakes if o.item.carrier == carrier),
                    sum(o.item.carrier == carrier for o in self.fakes),
                ]
                for carrier in CARRIERS
            },
        }


def measure(door: Door, c: Corpus, quick: bool, work: Path) -> Score:
    items = items_for(door, c, quick)
    sys.stderr.write(f"  {door.name}: {len(items)} items…\n")
    sys.stderr.flush()
    start = time.perf_counter()
    folder = work / door.name.replace(" ", "-")
    folder.mkdir()
    if door.peer and not _detect_secrets():
        return Score(door.name, [], 0.0, "not installed: pip install -e '.[peers]'", True)
    outcomes = door.run(items, folder)
    return Score(door.name, outcomes, time.perf_counter() - start, peer=door.peer)


# -- the report -------------------------------------------------------------------------------
def pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def table(rows: Iterable[list[str]], head: list[str]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(" --- " for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


Cells = dict[tuple[str, str], list[Outcome]]


def cells_of(outcomes: list[Outcome]) -> Cells:
    cells: Cells = {}
    for o in outcomes:
        cells.setdefault((o.item.format, o.item.carrier), []).append(o)
    return cells


def missed(cell: list[Outcome]) -> int:
    return sum(not o.refused for o in cell)


def format_summary(s: Score) -> list[str]:
    """Each format with a miss: how many of its fakes were accepted, and in which carriers
    (``k/n`` where only some were, with the password style when only one style was)."""
    by_format: dict[str, list[str]] = {}
    counts: dict[str, list[int]] = {}
    for (fmt, carrier), cell in cells_of(s.fakes).items():
        k = missed(cell)
        total = counts.setdefault(fmt, [0, 0])
        total[0] += k
        total[1] += len(cell)
        if not k:
            continue
        label = carrier
        if k < len(cell):
            styles = {o.item.variant for o in cell if not o.refused}
            only = f" {styles.pop()}" if len(styles) == 1 and "" not in styles else ""
            label = f"{carrier} {k}/{len(cell)}{only}"
        by_format.setdefault(fmt, []).append(label)
    return [
        f"  - {fmt} {counts[fmt][0]}/{counts[fmt][1]}: {', '.join(labels)}"
        for fmt, labels in by_format.items()
    ]


def differences(s: Score, reference: Score) -> list[str]:
    """The format × carrier cells where ``s`` and ``reference`` disagree: the same fakes with
    another count of misses, or (a sample of the cell) a miss where the reference refused
    the whole cell, or a refusal where it refused none."""
    ours, theirs = cells_of(s.fakes), cells_of(reference.fakes)
    out = []
    for key, cell in ours.items():
        other = theirs.get(key)
        if other is None:
            continue
        a, b = missed(cell), missed(other)
        same_items = [o.item for o in cell] == [o.item for o in other]
        unanimous = (b == 0 and a > 0) or (b == len(other) and a < len(cell))
        if (a != b) if same_items else unanimous:
            out.append(f"{key[0]}/{key[1]} {a}/{len(cell)} (vs {b}/{len(other)})")
    return out


def refusals_of(s: Score, reference: Score | None) -> list[str]:
    out = []
    if s.false_positives:
        by_category: dict[str, int] = {}
        for o in s.false_positives:
            key = f"{o.item.format}/{o.item.carrier}"
            by_category[key] = by_category.get(key, 0) + 1
        tried = {
            key: sum(f"{o.item.format}/{o.item.carrier}" == key for o in s.ordinary)
            for key in by_category
        }
        spread = ", ".join(f"{k} {v}/{tried[k]}" for k, v in by_category.items())
        out.append(f"**{s.door}**: ordinary refused, by category: {spread}; the first 10:")
        out += [f"- {o.item.shown()} [{o.reason}] {o.detail[:80]}" for o in s.false_positives[:10]]
    if s.misses and not s.peer:
        out.append(f"**{s.door}**: fakes accepted (the first 10 of {len(s.misses)}):")
        out += [f"- {o.item.shown()}" for o in s.misses[:10]]
        if reference is None or reference is s:
            out.append("  formats with a fake accepted (accepted/tried: carriers):")
            out += format_summary(s)
        else:
            diff = differences(s, reference)
            where = "; ".join(diff) if diff else "none"
            out.append(
                f"  format × carrier cells judged otherwise than by {reference.door}: {where}"
            )
    otherwise = [o for o in s.fakes if o.refused and o.reason != "secret"]
    if otherwise and not s.peer:
        cells = sorted({f"{o.item.format}/{o.item.carrier}" for o in otherwise})
        echoed = sum(o.echoed for o in otherwise)
        out.append(
            f"**{s.door}**: {len(otherwise)} fakes refused for another reason than the secret "
            f"rule ({echoed} printing the secret back): {', '.join(cells)}"
        )
    echoed_by_rule = [o for o in s.fakes if o.echoed and o.reason == "secret"]
    if echoed_by_rule:
        cells = sorted({f"{o.item.format}/{o.item.carrier}" for o in echoed_by_rule})
        out.append(f"**{s.door}**: refused by the rule but printed back: {', '.join(cells)}")
    return [*out, ""] if out else out


def report(scores: list[Score], c: Corpus, quick: bool, total: float) -> str:
    out = [
        f"## Secret refusal: seed {c.seed}{' (--quick)' if quick else ''}",
        "",
        f"Corpus: {len(c.ordinary)} ordinary items "
        f"({len({i.text for i in c.ordinary if i.carrier == 'value'})} distinct texts), "
        f"{len(c.fakes)} fakes in {len({(i.format, i.carrier) for i in c.fakes})} "
        f"format × carrier cells.",
        "",
    ]
    rows = []
    for s in scores:
        if s.error:
            rows.append([s.door, "—", "—", "—", "—", "—", "—", "—", f"({s.error})"])
            continue
        otherwise = sum(o.refused and o.reason != "secret" for o in s.fakes)
        rows.append(
            [
                s.door,
                f"{len(s.ordinary)} / {len(s.fakes)}",
                str(len(s.false_positives)),
                str(len(s.misses)),
                str(otherwise),
                str(sum(o.echoed for o in s.fakes)),
                pct(s.precision()),
                pct(s.recall()),
                f"{s.seconds:.1f}",
            ]
        )
    head = [
        "door",
        "tried (ordinary / fakes)",
        "ordinary refused",
        "fakes accepted",
        "fakes refused otherwise",
        "secret echoed",
        "precision",
        "recall",
        "seconds",
    ]
    out += [table(rows, head), ""]
    measured = [s for s in scores if not s.error]
    gaps = [f"{s.door} {sum(o.refused for o in s.gaps)}/{len(s.gaps)}" for s in measured if s.gaps]
    if gaps:
        out += [
            "Named gap (README), not counted above — lower-case passwords of 8–11 letters, "
            "refused/tried: " + ", ".join(gaps) + ".",
            "",
        ]
    carrier_rows = []
    for carrier in CARRIERS:
        cells = []
        for s in measured:
            tried = [o for o in s.fakes if o.item.carrier == carrier]
            missed = sum(not o.refused for o in tried)
            cells.append(f"{missed}/{len(tried)}" if tried else "n/a")
        carrier_rows.append([carrier, *cells])
    out += ["Fakes accepted by carrier (accepted/tried):", ""]
    out += [table(carrier_rows, ["carrier", *(s.door for s in measured)]), ""]
    reference = next((s for s in measured if not s.peer), None)
    for s in measured:
        out += refusals_of(s, reference)
    out.append(f"Total {total:.1f} s.")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few items per door (a smoke run)")
    parser.add_argument("--json", type=Path, help="write the figures as JSON to this file")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument(
        "--only", help="comma-separated doors: " + ", ".join(d.name for d in DOORS), default=""
    )
    args = parser.parse_args(argv)
    wanted = {w.strip() for w in args.only.split(",") if w.strip()}
    unknown = wanted - {d.name for d in DOORS} - {"detect-secrets"}
    if unknown:
        parser.error(f"unknown door(s): {', '.join(sorted(unknown))}")
    doors = [
        d
        for d in DOORS
        if not wanted
        or d.name in wanted
        or ("detect-secrets" in wanted and d.name.startswith("detect-secrets"))
    ]
    start = time.perf_counter()
    c = corpus(args.seed)
    scores = []
    with tempfile.TemporaryDirectory(prefix="ontoloom-secrets-bench-") as tmp:
        os.environ.pop("ONTOLOOM_HOME", None)
        for door in doors:
            scores.append(measure(door, c, args.quick, Path(tmp)))
    total = time.perf_counter() - start
    print(report(scores, c, args.quick, total))
    if args.json:
        data = {
            "seed": c.seed,
            "quick": args.quick,
            "seconds": round(total, 2),
            "doors": [s.to_json() for s in scores],
        }
        args.json.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
