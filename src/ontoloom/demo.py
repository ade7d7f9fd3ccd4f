"""``ontoloom demo``: build the bundled example instance and show validation at work.

The demo always builds its own instance with its own data dir (``DIR/.ontoloom``): it never
reads ``ONTOLOOM_HOME`` or ``--data-dir``, so it can neither write into a user's store nor
fail because one is set. Without ``--keep`` it builds in a temporary directory that is
removed before the command returns.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ontoloom.actions import guard, why
from ontoloom.api import Graph
from ontoloom.config import DATA_DIR_NAME, INSTANCE_MARKER
from ontoloom.errors import BadInput, ValidationFailed
from ontoloom.instance import init_instance
from ontoloom.resources import resource_dir

__all__ = ["load_entities", "render_text", "run_demo"]

_EXAMPLE = "team"


def load_entities(graph: Graph, path: Path) -> tuple[int, int]:
    """Create the entities and relations of an ``entities.json`` file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for item in data.get("entities", []):
        graph.create(item["type"], item.get("properties", {}), id=item["id"])
    for from_id, rel, to_id in data.get("relations", []):
        graph.relate(from_id, rel, to_id)
    return len(data.get("entities", [])), len(data.get("relations", []))


def run_demo(keep: Path | None = None, *, keep_temp: bool = False) -> dict[str, Any]:
    """Build the demo and run its steps; what each step did, as JSON-ready data.

    ``keep``: build in that directory and leave it there (it must be new, empty, or an
    earlier demo, which is rebuilt). ``keep_temp``: build in a new temporary directory and
    leave it there. Neither: the temporary directory is removed before returning, and
    ``instance`` is None in the result.
    """
    if keep is not None:
        return _build(_fresh_target(keep), kept=True)
    if keep_temp:
        return _build(Path(tempfile.mkdtemp(prefix="ontoloom-demo-")) / _EXAMPLE, kept=True)
    with tempfile.TemporaryDirectory(prefix="ontoloom-demo-") as tmp:
        return _build(Path(tmp) / _EXAMPLE, kept=False)


def _fresh_target(keep: Path) -> Path:
    target = keep.expanduser().resolve()
    if target.exists() and not target.is_dir():
        raise BadInput(f"--keep {keep}: a file is there; name a new or empty directory")
    if target.is_dir() and any(target.iterdir()):
        # Rebuilding an earlier demo is fine; anything else is the user's and stays.
        if not ((target / INSTANCE_MARKER).is_file() and (target / "entities.json").is_file()):
            raise BadInput(
                f"--keep {keep}: the directory is not empty and is not an earlier demo; "
                "name a new or empty directory"
            )
        shutil.rmtree(target)
    return target


def _build(target: Path, *, kept: bool) -> dict[str, Any]:
    shutil.copytree(
        resource_dir("examples") / _EXAMPLE,
        target,
        ignore=shutil.ignore_patterns(DATA_DIR_NAME),
        dirs_exist_ok=True,
    )
    # An explicit data dir inside the demo: ONTOLOOM_HOME must not redirect it.
    info = init_instance(target, target / DATA_DIR_NAME)
    steps: list[dict[str, Any]] = []
    with Graph.open(info["data_dir"], write=True) as g:
        n_entities, n_relations = load_entities(g, target / "entities.json")

        step = _step(
            "refused_write",
            'ontoloom create Task -p title="Rotate keys" -p status=wip -p api_key="$STRIPE_KEY"',
        )
        try:
            g.create("Task", {"title": "Rotate keys", "status": "wip", "api_key": "sk_live_123"})
            step["refused"] = False
        except ValidationFailed as exc:
            step.update(refused=True, message=exc.message, refusal=exc.to_json())
        steps.append(step)

        step = _step("refused_cycle", "ontoloom relate task_deploy blocks task_timeout")
        try:
            g.relate("task_deploy", "blocks", "task_timeout")
            step["refused"] = False
        except ValidationFailed as exc:
            step.update(refused=True, message=exc.message, refusal=exc.to_json())
        steps.append(step)

        step = _step(
            "many_to_one_replaces",
            "ontoloom relate task_copy assigned_to pers_chloe  (then pers_bob)",
        )
        g.relate("task_copy", "assigned_to", "pers_chloe")
        outcome = g.relate("task_copy", "assigned_to", "pers_bob")
        step["replaced"] = [r.to_json() for r in outcome.replaced]
        steps.append(step)

        step = _step(
            "traverse", "ontoloom traverse task_deploy --rel blocks --direction in --depth 2"
        )
        step["reached"] = g.traverse("task_deploy", rel="blocks", direction="in", depth=2)
        steps.append(step)

        step = _step("rebuild", "ontoloom rebuild")
        step["report"] = g.rebuild().to_json()
        steps.append(step)

        step = _step("guard", 'ontoloom guard "ANSI codes in the changelog again"')
        step["known"] = [hit.to_json() for hit in guard(g, "ANSI codes in the changelog again")]
        steps.append(step)

        step = _step("why", "ontoloom why rule:no-raw-control-bytes")
        step["decisions"] = why(g, "rule:no-raw-control-bytes")["decisions"]
        steps.append(step)

        steps.append(_mine(g, target))

        entities = g.entities()
        types = Counter(e.type for e in entities)
        rels = Counter(r.rel for e in entities for r in g.relations(e.id, direction="out"))
    steps.append(_survives_rebuild(target, steps[-1]["confirmed"]))
    return {
        "instance": str(target) if kept else None,
        "kept": kept,
        "loaded": {"entities": n_entities, "relations": n_relations},
        "steps": steps,
        "summary": {
            "entities": dict(sorted(types.items())),
            "relations": dict(sorted(rels.items())),
        },
    }


def _step(name: str, command: str) -> dict[str, Any]:
    return {"step": name, "command": command}


def render_text(result: dict[str, Any], echo: Callable[[str], None] = print) -> None:
    """The demo as a reader follows it: each step with the command it stands for."""
    steps = {s["step"]: s for s in result["steps"]}
    loaded = result["loaded"]
    where = result["instance"] or "a temporary directory (removed at the end; --keep keeps it)"
    echo(f"example instance: {where}")
    echo(
        f"loaded {loaded['entities']} entities and {loaded['relations']} relations, "
        "every write validated\n"
    )
    s = steps["refused_write"]
    echo("1. An invalid write is refused, with the fix for each broken rule:")
    echo(f"   $ {s['command']}  # a live Stripe key")
    echo(_indent(s.get("message", "NOT REFUSED")))

    s = steps["refused_cycle"]
    echo("\n2. A relation that would close a cycle is refused, naming the cycle:")
    echo(f"   $ {s['command']}")
    echo(_indent(s.get("message", "NOT REFUSED")))

    s = steps["many_to_one_replaces"]
    echo("\n3. many_to_one relations replace, and say so:")
    echo(f"   $ {s['command']}")
    for old in s["replaced"]:
        echo(f"   replaced: {old['from_id']} {old['rel']} {old['to_id']}")

    s = steps["traverse"]
    echo("\n4. What blocks the checkout deploy, two hops back:")
    for hit in s["reached"]:
        echo(f"   [{hit['distance']}] {hit['id']}: {hit['title']}")

    s = steps["rebuild"]
    echo("\n5. Records are read into the graph (failures, decisions, rules, runbooks, docs):")
    echo(f"   $ {s['command']}")
    echo("   objects:   " + ", ".join(f"{k} {v}" for k, v in s["report"]["objects"].items()))
    echo("   relations: " + ", ".join(f"{k} {v}" for k, v in s["report"]["relations"].items()))

    s = steps["guard"]
    echo(f"\n6. Has this failure happened before?  $ {s['command']}")
    for known in s["known"]:
        echo(
            f"   {known['class']}: recurred {known['recurrences']} times; "
            f"latest {known['latest'][0]['date']}"
        )
        for rule in known["rules"]:
            echo(f"   rule:   {rule['title']}")
        for action in known["actions"]:
            echo(f"   action: {action['title']}")

    s = steps["why"]
    echo(f"\n7. Why is this rule there?  $ {s['command']}")
    for decision in s["decisions"]:
        echo(f"   {decision['id']} ({decision['hops']} hop(s)): {decision['title']}")
        for hop in decision["path"]:
            ev = hop["evidence"]
            echo(f"      {ev['source']}:{ev['line']}: {ev['quote']}")

    s = steps["mine"]
    echo("\n8. Conversation mining (opt-in): a closed session becomes a proposal, then knowledge")
    echo("   $ ontoloom mine --scan")
    echo(f"   requested {s['requested']} transcript(s) for extraction")
    echo("   $ ontoloom mine --ingest response.json")
    ingested = s["ingested"]
    echo(
        f"   stored {ingested['stored']['LOW']} (LOW), dropped {ingested['dropped']} "
        f"{ingested['dropped_by_reason']} — a quote that is not in the transcript never counts"
    )
    echo("   $ ontoloom mine --review")
    proposal = s["proposal"]
    ev = proposal["evidence"]
    echo(
        f"   {proposal['id']} [unconfirmed, {proposal['confidence']} confidence] new Rule "
        f'{proposal["source"]}: "{ev["quote"]}" ({ev["transcript"]}, {proposal["date"]})'
    )
    echo(f"   $ ontoloom mine --confirm {proposal['id']}")
    echo(f"   confirmed {s['confirmed']}; written to {s['record']}")

    s = steps["survives_rebuild"]
    echo("\n9. Confirmed conversation knowledge survives a rebuild from the records alone:")
    echo(f"   $ {s['command']}")
    back = s["entity"]
    echo(
        f"   {back['id']} ({back['type']}): {back['properties']['title']} — after a rebuild "
        "from the records alone (records/ontoloom/conversations.md)"
    )

    summary = result["summary"]
    echo("\nsummary")
    echo("   entities:  " + ", ".join(f"{t} {n}" for t, n in summary["entities"].items()))
    echo("   relations: " + ", ".join(f"{r} {n}" for r, n in summary["relations"].items()))
    echo("   nothing invalid was stored: the refused writes left the store unchanged")
    if result["kept"]:
        echo(f"\nkept: {result['instance']}  (cd there and try `ontoloom list`)")


DEMO_SESSION = [
    {
        "type": "user",
        "uuid": "demo-u1",
        "timestamp": "2026-11-24T09:12:00Z",
        "message": {
            "role": "user",
            "content": "The payment webhook fired twice and we charged twice.",
        },
    },
    {
        "type": "assistant",
        "uuid": "demo-a1",
        "timestamp": "2026-11-24T09:13:00Z",
        "message": {
            "role": "assistant",
            "content": [
                {
                    "type": "text",
                    "text": "Agreed rule: dedupe webhook events by their event id before doing any work.",
                }
            ],
        },
    },
]


def _mine(g: Graph, target: Path) -> dict[str, Any]:
    """Step 8: one transcript mined, the agent's (canned) answer ingested, one proposal
    confirmed into the tool-owned record."""
    from ontoloom.proposals import mine

    (target / "transcripts").mkdir(exist_ok=True)
    session = target / "transcripts" / "demo-session.jsonl"
    session.write_text("\n".join(json.dumps(e) for e in DEMO_SESSION) + "\n", encoding="utf-8")
    with (target / "ontoloom.toml").open("a", encoding="utf-8") as f:
        f.write(
            '\n[mining]\nenabled = true\ntranscripts = ["transcripts/*.jsonl"]\n'
            "closed_after_minutes = 0\n"
        )
    step = _step("mine", "ontoloom mine --scan; --ingest; --review; --confirm")
    scanned = mine.scan(g, 5, write_files=False)
    step["requested"] = len(scanned.requests)
    answer = {
        "version": 1,
        "request_id": scanned.requests[0]["request_id"],
        "model": "the agent (a canned answer here)",
        "candidates": [
            {
                "kind": "object",
                "type": "Rule",
                "title": "Dedupe webhook events by event id",
                "evidence": {
                    "transcript": "transcripts/demo-session.jsonl",
                    "message_id": "demo-a1",
                    "quote": "dedupe webhook events by their event id before doing any work",
                },
                "sensitive": False,
            },
            {
                "kind": "object",
                "type": "Rule",
                "title": "Never charge twice",
                "evidence": {
                    "transcript": "transcripts/demo-session.jsonl",
                    "message_id": "demo-u1",
                    "quote": "we must never charge a customer twice",  # not what was said
                },
                "sensitive": False,
            },
        ],
    }
    step["ingested"] = mine.ingest(g, answer).to_json()
    [proposal] = mine.review(g)
    step["proposal"] = proposal
    done = mine.confirm(g, proposal["id"])
    step["confirmed"] = str(proposal["source"])
    step["record"] = str(done["record"]["path"])
    return step


def _survives_rebuild(target: Path, mined: str) -> dict[str, Any]:
    """Step 9: a fresh data dir rebuilt from the records holds the confirmed object. The
    demo's own data dir is put back afterwards, so a kept demo keeps what the agent wrote."""
    step = _step(
        "survives_rebuild", "mv .ontoloom .ontoloom-before && ontoloom init && ontoloom rebuild"
    )
    before = target / ".ontoloom-before"
    shutil.move(target / DATA_DIR_NAME, before)
    try:
        fresh = init_instance(target, target / DATA_DIR_NAME)
        with Graph.open(fresh["data_dir"], write=True) as g:
            g.rebuild()
            step["entity"] = g.get(mined).to_json()
    finally:
        shutil.rmtree(target / DATA_DIR_NAME, ignore_errors=True)
        shutil.move(before, target / DATA_DIR_NAME)
    return step


def _indent(text: str) -> str:
    return "\n".join("   " + line for line in text.splitlines())
