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

        entities = g.entities()
        types = Counter(e.type for e in entities)
        rels = Counter(r.rel for e in entities for r in g.relations(e.id, direction="out"))
    echo("\nsummary")
    echo("   entities:  " + ", ".join(f"{t} {n}" for t, n in sorted(types.items())))
    echo("   relations: " + ", ".join(f"{r} {n}" for r, n in sorted(rels.items())))
    echo("   nothing invalid was stored: the refused writes left the store unchanged")
    return target


def _indent(text: str) -> str:
    return "\n".join("   " + line for line in text.splitlines())
