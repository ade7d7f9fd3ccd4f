"""Score the prompt hook (``ontoloom hook prompt-context``) on a labelled prompt set.

    python eval/hook_eval.py [--set eval/hook_prompts.json] [--show tune|heldout|fresh|all] [--json]

Builds the two instances of ``eval/world.py`` in a temporary folder, asks the hook about every
prompt (``ontoloom.hooks.context``, the function the hook process and a forwarding owner both
run) and scores what it injected against the labels:

* **presented** objects: each ``- id (Type) …`` line, and the rules and actions named on a
  failure class's line (relation lines under an object are context, and are not scored); and
  each quote of what was said, as its source: ``transcript:<label>`` for a conversation, the
  record's object id for a record body (labels name them the same way);
* **precision**: presented objects that are labelled ``want`` or ``ok``, over all presented
  (micro-averaged over the prompts);
* **recall**: ``want`` objects presented, over all ``want`` objects;
* **quiet**: prompts of kind ``quiet`` that got no output at all;
* **tokens**: injected text, estimated as UTF-8 bytes / 4 (mean and max over the prompts);
* **leaks**: prompts whose output quotes a source labelled ``never`` (a private transcript),
  or holds a secret — must be 0;
* **ms**: wall time of one in-process ``context`` call (median), for orientation only — the
  latency budget of the hook as a fresh process is measured by ``bench/run.py --only hook``.

Rows for the tuning part, the held-out part, the fresh part (written after the last
tuning) and all prompts, then the cases of what was said (kinds ``conversation``, ``private``,
``secret``) in the tuning and held-out parts; exit 0 (figures are reported, not
asserted: the targets are in the README).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

DEFAULT_SET = HERE / "hook_prompts.json"
_PRESENTED = re.compile(r"(\S+) \(([A-Z][A-Za-z]*)\)")
_SAID = re.compile(r'- said in a conversation(?: on \S+)? \((.+?)\): "')
_WRITTEN = re.compile(r'- written in .+? \((\S+)\)(?: on \S+)?: "')


@dataclass
class Case:
    instance: str
    split: str
    kind: str
    prompt: str
    want: set[str]
    ok: set[str]
    never: set[str] = field(default_factory=set)


@dataclass
class Outcome:
    case: Case
    text: str
    seconds: float = 0.0
    presented: list[str] = field(default_factory=list)


def presented(text: str) -> list[str]:
    """The objects a hook output presents: the head of each object line, and the objects
    named on that line (a failure class's rules and actions); the source of each quote; not
    relation lines nor proposals.

    >>> presented('h\\n- a:x (FailureClass) "x" — recurred 2 times (latest f:1); covered by r:1 (Rule) "r"\\n  → rel t_1 (Task) "t"')
    ['a:x', 'r:1']
    >>> presented('q\\n- said in a conversation on 2026-11-30 (t/a.jsonl): "x (Task)"\\n- written in r/m.md (rule:m): "y"')
    ['transcript:t/a.jsonl', 'rule:m']
    """
    out: list[str] = []
    for line in text.splitlines():
        if not line.startswith("- ") or line.startswith("- [unconfirmed]"):
            continue
        quote = _SAID.match(line) or _WRITTEN.match(line)
        if quote is not None:
            source = ("transcript:" if line.startswith("- said") else "") + quote.group(1)
            if source not in out:
                out.append(source)
            continue
        for match in _PRESENTED.finditer(line[2:]):
            if match.group(1) not in out:
                out.append(match.group(1))
    return out


def tokens(text: str) -> int:
    """Estimated tokens: UTF-8 bytes / 4, rounded up (0 for no output)."""
    return math.ceil(len(text.encode("utf-8")) / 4)


def leaked(o: Outcome) -> bool:
    """Whether ``o``'s output quotes a source it must never quote, or holds a secret."""
    from ontoloom.secret_text import holds_secret

    return bool(o.case.never & set(o.presented)) or holds_secret(o.text)


def score(outcomes: list[Outcome]) -> dict[str, Any]:
    """Precision, recall, quiet rate, leaks and tokens over ``outcomes`` (see the module
    doc)."""
    shown = right = wanted = found = 0
    quiet_total = quiet_kept = 0
    for o in outcomes:
        ids = o.presented
        if o.case.kind == "quiet":
            quiet_total += 1
            quiet_kept += not o.text.strip()
        shown += len(ids)
        right += sum(1 for i in ids if i in o.case.want or i in o.case.ok)
        wanted += len(o.case.want)
        found += len(o.case.want & set(ids))
    sizes = [tokens(o.text) for o in outcomes]
    return {
        "prompts": len(outcomes),
        "precision": right / shown if shown else 1.0,
        "recall": found / wanted if wanted else 1.0,
        "quiet": quiet_kept / quiet_total if quiet_total else 1.0,
        "leaks": sum(1 for o in outcomes if leaked(o)),
        "tokens_mean": statistics.fmean(sizes) if sizes else 0.0,
        "tokens_max": max(sizes, default=0),
        "ms_p50": 1000 * statistics.median([o.seconds for o in outcomes]) if outcomes else 0.0,
    }


def load_set(path: Path) -> list[Case]:
    data = json.loads(path.read_text(encoding="utf-8"))
    cases = []
    for n, row in enumerate(data["prompts"], 1):
        missing = {"instance", "split", "kind", "prompt", "want"} - set(row)
        if missing:
            raise SystemExit(f"{path}: prompt {n}: missing {', '.join(sorted(missing))}")
        cases.append(
            Case(
                row["instance"],
                row["split"],
                row["kind"],
                row["prompt"],
                set(row["want"]),
                set(row.get("ok", [])),
                set(row.get("never", [])),
            )
        )
    return cases


def run(cases: list[Case], data_dirs: dict[str, Path]) -> list[Outcome]:
    from ontoloom.hooks import context

    outcomes = []
    for case in cases:
        start = time.perf_counter()
        text = context(data_dirs[case.instance], case.prompt)
        elapsed = time.perf_counter() - start
        outcomes.append(Outcome(case, text, elapsed, presented(text)))
    return outcomes


def check_labels(cases: list[Case], data_dirs: dict[str, Path]) -> None:
    """Every labelled id names an object of its instance, every ``transcript:`` label one
    of its transcripts (a typo would score as a miss)."""
    from ontoloom.api import Graph

    for name, data_dir in data_dirs.items():
        with Graph.open(data_dir) as g:
            known = {e.id for e in g.entities()}
        instance = data_dir.parent
        known |= {
            f"transcript:{p.relative_to(instance).as_posix()}"
            for p in (instance / "transcripts").rglob("*.jsonl")
        }
        for case in cases:
            if case.instance == name:
                unknown = sorted((case.want | case.ok | case.never) - known)
                if unknown:
                    raise SystemExit(f"{case.prompt!r}: labels name no object: {unknown}")


def build(root: Path, names: set[str]) -> dict[str, Path]:
    """The instances named (``team``, ``ops``) under ``root``: their data dirs."""
    from world import build_ops, build_team

    builders = {"team": build_team, "ops": build_ops}
    unknown = names - set(builders)
    if unknown:
        raise SystemExit(f"unknown instance(s) {sorted(unknown)}: use team or ops")
    return {name: builders[name](root / name) for name in sorted(names)}


def table(rows: list[tuple[str, dict[str, Any]]]) -> str:
    head = (
        f"{'prompts':<14}{'n':>4}{'precision':>11}{'recall':>8}{'quiet':>7}{'leaks':>7}"
        f"{'tokens mean':>13}{'max':>5}{'ms p50':>8}"
    )
    lines = [head]
    for name, s in rows:
        lines.append(
            f"{name:<14}{s['prompts']:>4}{s['precision']:>11.2f}{s['recall']:>8.2f}"
            f"{s['quiet']:>7.0%}{s['leaks']:>7}{s['tokens_mean']:>13.0f}{s['tokens_max']:>5}{s['ms_p50']:>8.1f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="the labelled prompts")
    parser.add_argument(
        "--show", choices=["tune", "heldout", "fresh", "all"], help="print each prompt's outcome"
    )
    parser.add_argument("--json", action="store_true", help="figures as JSON")
    args = parser.parse_args(argv)
    cases = load_set(args.set)
    with tempfile.TemporaryDirectory(prefix="ontoloom-eval-") as tmp:
        data_dirs = build(Path(tmp), {c.instance for c in cases})
        check_labels(cases, data_dirs)
        outcomes = run(cases, data_dirs)
    parts = [
        ("tune", [o for o in outcomes if o.case.split == "tune"]),
        ("held-out", [o for o in outcomes if o.case.split == "heldout"]),
        ("fresh", [o for o in outcomes if o.case.split == "fresh"]),
        ("all", outcomes),
    ]
    # The cases of what was said (answers only in a conversation, in a private transcript, or
    # beside a secret), by part: the quoting was tuned on the first and checked on the second.
    said = {"conversation", "private", "secret"}
    parts += [
        (f"said, {name}", [o for o in outcomes if o.case.split == split and o.case.kind in said])
        for name, split in (("tune", "tune"), ("held-out", "heldout"))
    ]
    rows = [(name, score(part)) for name, part in parts]
    kinds = sorted({o.case.kind for o in outcomes})
    by_kind = [(k, score([o for o in outcomes if o.case.kind == k])) for k in kinds]
    if args.show:
        for o in outcomes:
            if args.show in ("all", o.case.split):
                ids = o.presented
                missed = sorted(o.case.want - set(ids))
                wrong = [i for i in ids if i not in o.case.want | o.case.ok]
                good = not missed and not wrong and (o.case.kind != "quiet" or not o.text)
                flag = "ok " if good and not leaked(o) else "BAD"
                print(f"{flag} [{o.case.instance}/{o.case.kind}] {o.case.prompt}")
                if missed or wrong:
                    print(f"     missed {missed} wrong {wrong}")
                    print("     " + o.text.replace("\n", "\n     "))
    if args.json:
        print(json.dumps({"splits": dict(rows), "kinds": dict(by_kind)}, indent=2))
    else:
        print(table(rows))
        print()
        print(table(by_kind))
        print(
            "\ntargets: precision ≥ 0.90, recall ≥ 0.85, quiet 100%, no leaks, ≤ 400 tokens "
            "(tokens ≈ UTF-8 bytes / 4)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
