"""``ontoloom demo``: build the bundled example instance and show validation at work."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from ontoloom.actions import guard, why
from ontoloom.api import Graph
from ontoloom.errors import ValidationFailed
from ontoloom.instance import init_instance
from ontoloom.resources import resource_dir

__all__ = ["load_entities", "run_demo"]


def load_entities(graph: Graph, path: Path) -> tuple[int, int]:
    """Create the entities and relations of an ``entities.json`` file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for item in data.get("entities", []):
        graph.create(item["type"], item.get("properties", {}), id=item["id"])
    for from_id, rel, to_id in data.get("relations", []):
        graph.relate(from_id, rel, to_id)
    return len(data.get("entities", [])), len(data.get("relations", []))


def run_demo(keep: Path | None, echo: Callable[[str], None] = print) -> Path:
    source = resource_dir("examples") / "team"
    if keep is not None:
        target = keep.resolve()
        if target.exists():
            shutil.rmtree(target)
    else:
        target = Path(tempfile.mkdtemp(prefix="ontoloom-demo-")) / "team"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".ontoloom"))
    info = init_instance(target)
    echo(f"example instance: {target}")
    with Graph.open(info["data_dir"], write=True) as g:
        n_entities, n_relations = load_entities(g, target / "entities.json")
        echo(f"loaded {n_entities} entities and {n_relations} relations, every write validated\n")

        echo("1. An invalid write is refused, with the fix for each broken rule:")
        echo(
            '   $ ontoloom create Task -p title="Rotate keys" -p status=wip -p api_key="$STRIPE_KEY"  # a live Stripe key'
        )
        try:
            g.create("Task", {"title": "Rotate keys", "status": "wip", "api_key": "sk_live_123"})
        except ValidationFailed as exc:
            echo(_indent(exc.message))

        echo("\n2. A relation that would close a cycle is refused, naming the cycle:")
        echo("   $ ontoloom relate task_deploy blocks task_timeout")
        try:
            g.relate("task_deploy", "blocks", "task_timeout")
        except ValidationFailed as exc:
            echo(_indent(exc.message))

        echo("\n3. many_to_one relations replace, and say so:")
        echo("   $ ontoloom relate task_copy assigned_to pers_chloe  (then pers_bob)")
        g.relate("task_copy", "assigned_to", "pers_chloe")
        outcome = g.relate("task_copy", "assigned_to", "pers_bob")
        for old in outcome.replaced:
            echo(f"   replaced: {old.from_id} {old.rel} {old.to_id}")

        echo("\n4. What blocks the checkout deploy, two hops back:")
        for hit in g.traverse("task_deploy", rel="blocks", direction="in", depth=2):
            echo(f"   [{hit['distance']}] {hit['id']}: {hit['title']}")

        echo("\n5. Records are read into the graph (failures, decisions, rules, runbooks, docs):")
        echo("   $ ontoloom rebuild")
        report = g.rebuild()
        echo("   objects:   " + ", ".join(f"{k} {v}" for k, v in report.objects_by_type.items()))
        echo("   relations: " + ", ".join(f"{k} {v}" for k, v in report.relations_by_type.items()))

        echo(
            '\n6. Has this failure happened before?  $ ontoloom guard "ANSI codes in the changelog again"'
        )
        for known in guard(g, "ANSI codes in the changelog again"):
            echo(
                f"   {known.id}: recurred {known.recurrences} times; latest {known.latest[0]['date']}"
            )
            for rule in known.rules:
                echo(f"   rule:   {rule['title']}")
            for action in known.actions:
                echo(f"   action: {action['title']}")

        echo("\n7. Why is this rule there?  $ ontoloom why rule:no-raw-control-bytes")
        for decision in why(g, "rule:no-raw-control-bytes")["decisions"]:
            echo(f"   {decision['id']} ({decision['hops']} hop(s)): {decision['title']}")
            for step in decision["path"]:
                ev = step["evidence"]
                echo(f"      {ev['source']}:{ev['line']}: {ev['quote']}")

        mined = _mine(g, target, echo)

        entities = g.entities()
        types = Counter(e.type for e in entities)
        rels = Counter(r.rel for e in entities for r in g.relations(e.id, direction="out"))
    echo("\nsummary")
    echo("   entities:  " + ", ".join(f"{t} {n}" for t, n in sorted(types.items())))
    echo("   relations: " + ", ".join(f"{r} {n}" for r, n in sorted(rels.items())))
    echo("   nothing invalid was stored: the refused writes left the store unchanged")

    echo("\n9. Confirmed conversation knowledge survives a rebuild from the records alone:")
    echo("   $ mv .ontoloom .ontoloom-before && ontoloom init && ontoloom rebuild")
    shutil.move(target / ".ontoloom", target / ".ontoloom-before")
    fresh = init_instance(target)
    with Graph.open(fresh["data_dir"], write=True) as g:
        g.rebuild()
        back = g.get(mined)
    echo(
        f"   {back.id} ({back.type}): {back.properties['title']} — after a rebuild from the "
        "records alone (records/ontoloom/conversations.md)"
    )
    return target


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


def _mine(g: Graph, target: Path, echo: Callable[[str], None]) -> str:
    """Step 8: one transcript mined, the agent's (canned) answer ingested, one proposal
    confirmed into the tool-owned record. Returns the confirmed object's id."""
    from ontoloom.proposals import mine

    (target / "transcripts").mkdir(exist_ok=True)
    session = target / "transcripts" / "demo-session.jsonl"
    session.write_text("\n".join(json.dumps(e) for e in DEMO_SESSION) + "\n", encoding="utf-8")
    with (target / "ontoloom.toml").open("a", encoding="utf-8") as f:
        f.write(
            '\n[mining]\nenabled = true\ntranscripts = ["transcripts/*.jsonl"]\n'
            "closed_after_minutes = 0\n"
        )
    echo("\n8. Conversation mining (opt-in): a closed session becomes a proposal, then knowledge")
    echo("   $ ontoloom mine --scan")
    scanned = mine.scan(g, 5, write_files=False)
    echo(f"   requested {len(scanned.requests)} transcript(s) for extraction")
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
    echo("   $ ontoloom mine --ingest response.json")
    result = mine.ingest(g, answer).to_json()
    echo(
        f"   stored {result['stored']['LOW']} (LOW), dropped {result['dropped']} "
        f"{result['dropped_by_reason']} — a quote that is not in the transcript never counts"
    )
    echo("   $ ontoloom mine --review")
    [proposal] = mine.review(g)
    ev = proposal["evidence"]
    echo(
        f"   {proposal['id']} [unconfirmed, {proposal['confidence']} confidence] new Rule "
        f'{proposal["source"]}: "{ev["quote"]}" ({ev["transcript"]}, {proposal["date"]})'
    )
    echo(f"   $ ontoloom mine --confirm {proposal['id']}")
    done = mine.confirm(g, proposal["id"])
    echo(f"   confirmed {proposal['source']}; written to {done['record']['path']}")
    return str(proposal["source"])


def _indent(text: str) -> str:
    return "\n".join("   " + line for line in text.splitlines())
