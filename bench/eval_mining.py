"""``make eval-mining``: score conversation mining on the shipped fixtures, deterministically.

No model runs: a canned extractor answer (``tests/mining_eval/response.json``) is ingested into a
fresh copy of the fixture instance, and what ingest stored is compared with the hand-labelled
``expected.json``:

* coverage — curated facts (objects, relations) that became proposals;
* merge precision — merge proposals that name the right existing object (and merge recall);
* forged-quote rejection — forged, paraphrased, too-long and out-of-transcript candidates dropped
  (and genuine ones kept);
* pointer dereference — every stored proposal's evidence (transcript, message, quote) leads back
  to the quoted text, read again from the transcript file;
* corroboration — distinct transcripts counted for the facts said more than once.

Prints a table (or ``--json``); exits 1 when a figure is below its floor.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "mining_eval"
FLOORS = {
    "coverage": 1.0,
    "merge_precision": 1.0,
    "forged_rejection": 1.0,
    "genuine_kept": 1.0,
    "pointers_dereference": 1.0,
}


def evaluate(fixtures: Path = FIXTURES) -> dict[str, Any]:
    from ontoloom.api import Graph
    from ontoloom.instance import init_instance
    from ontoloom.proposals import mine
    from ontoloom.proposals.store import list_proposals
    from ontoloom.proposals.transcripts import read_transcript

    canned = json.loads((fixtures / "response.json").read_text(encoding="utf-8"))
    expected = json.loads((fixtures / "expected.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="ontoloom-eval-mining-") as tmp:
        root = Path(tmp) / "instance"
        shutil.copytree(fixtures / "instance", root)
        info = init_instance(root)
        outcomes: dict[tuple[str, int], dict[str, Any]] = {}
        with Graph.open(info["data_dir"], write=True) as g:
            g.rebuild()
            scanned = mine.scan(g, limit=100)
            for request in scanned.requests:
                label = request["transcripts"][0]["transcript"]
                response = {
                    "version": 1,
                    "request_id": request["request_id"],
                    "model": canned["model"],
                    "candidates": canned["responses"].get(label, []),
                }
                result = mine.ingest(g, response)
                for o in result.outcomes:
                    outcomes[(label, o["index"])] = o
            stored = [p for p in list_proposals(g) if p.origin == mine.ORIGIN]
            review = {r["id"]: r for r in mine.review(g, None)}
        # Coverage of curated facts.
        have_objects = {(p.source, p.target) for p in stored if p.kind == "object"}
        have_relations = {(p.source, p.rel, p.target) for p in stored if p.kind == "relation"}
        covered = [
            f
            for f in expected["facts"]
            if (
                (f["id"], f["type"]) in have_objects
                if f["kind"] == "object"
                else (f["source"], f["rel"], f["target"]) in have_relations
            )
        ]
        # Merges: right target (precision), and every expected merge found (recall).
        want = {m["mention"]: m["into"] for m in expected["merges"]}
        merges = [p for p in stored if p.kind == "merge"]
        right = [p for p in merges if want.get(p.properties.get("mention")) == p.source]
        # Forged quotes dropped; genuine ones kept.
        forged = {(t, i) for t, i in expected["forged"]}
        dropped = {k for k, o in outcomes.items() if o["outcome"] == "dropped"}
        genuine = set(outcomes) - forged
        # Every source pointer dereferences to the quoted text (read from the file again).
        pointers = ok = 0
        for p in stored:
            for ev in [p.evidence, *p.corroboration]:
                pointers += 1
                transcript = read_transcript(root / ev["transcript"], ev["transcript"])
                message = transcript.message(ev["message"])
                if message is not None and " ".join(ev["quote"].split()) in " ".join(
                    message.text.split()
                ):
                    ok += 1
        corroboration = {
            oid: max((r["corroboration"] for r in review.values() if r["source"] == oid), default=0)
            for oid in expected["corroborated"]
        }
    figures = {
        "transcripts": len(scanned.requests),
        "candidates": len(outcomes),
        "coverage": _ratio(len(covered), len(expected["facts"])),
        "merge_precision": _ratio(len(right), len(merges)),
        "merge_recall": _ratio(len(right), len(want)),
        "forged_rejection": _ratio(len(forged & dropped), len(forged)),
        "genuine_kept": _ratio(len(genuine - dropped), len(genuine)),
        "pointers_dereference": _ratio(ok, pointers),
        "corroboration_right": all(
            corroboration[k] == v for k, v in expected["corroborated"].items()
        ),
        "counts": {
            "facts": f"{len(covered)}/{len(expected['facts'])}",
            "merges": f"{len(right)}/{len(merges)} proposed, {len(want)} expected",
            "forged": f"{len(forged & dropped)}/{len(forged)}",
            "genuine": f"{len(genuine - dropped)}/{len(genuine)}",
            "pointers": f"{ok}/{pointers}",
        },
    }
    return figures


def _ratio(n: int, d: int) -> float:
    return round(n / d, 3) if d else 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = evaluate()
    below = [k for k, floor in FLOORS.items() if figures[k] < floor]
    if not figures["corroboration_right"]:
        below.append("corroboration_right")
    if args.json:
        print(json.dumps({**figures, "below_floor": below}, indent=2))
    else:
        print(
            f"conversation mining eval: {figures['transcripts']} transcripts, "
            f"{figures['candidates']} canned candidates"
        )
        print(f"{'figure':<22} {'value':>6}  detail")
        rows = [
            ("coverage", figures["counts"]["facts"] + " curated facts proposed"),
            ("merge_precision", figures["counts"]["merges"]),
            ("merge_recall", ""),
            ("forged_rejection", figures["counts"]["forged"] + " forged quotes dropped"),
            ("genuine_kept", figures["counts"]["genuine"] + " genuine candidates kept"),
            ("pointers_dereference", figures["counts"]["pointers"] + " evidence pointers"),
        ]
        for key, detail in rows:
            print(f"{key:<22} {figures[key]:>6.3f}  {detail}")
        print(f"{'corroboration_right':<22} {figures['corroboration_right']!s:>6}")
        if below:
            print("below floor: " + ", ".join(below))
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
