"""The two instances the prompt-hook eval runs on.

``team``: the bundled example instance (``examples/team``: records rebuilt, ``entities.json``
loaded), as ``ontoloom demo`` builds it.

``ops``: a generated platform-team instance: a fixed core of records and entities the labelled
prompts talk about (failure classes with several occurrences each, rules, runbooks, decisions in
a lineage, people with aliases, tasks), drowned in seeded filler (tasks, notes, documents and
one-off failures over the same vocabulary) so that ranking has something to get wrong.

Both get conversation transcripts (``eval/transcripts/<instance>``): a ``shared`` root opted in
with ``privacy = "internal"`` (the prompt hook may quote it) and a ``private`` one listed
without a class (private: never quoted); some messages hold a secret.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

from ontoloom.api import Graph
from ontoloom.demo import load_entities
from ontoloom.instance import init_instance
from ontoloom.resources import resource_dir

__all__ = ["TRANSCRIPTS", "build_ops", "build_team"]

TRANSCRIPTS = Path(__file__).resolve().parent / "transcripts"
MINING = """
[mining]
closed_after_minutes = 0
transcripts = [
  "transcripts/private/*.jsonl",
  { root = "transcripts/shared/*.jsonl", privacy = "internal" },
]
"""

# -- ops: the core the labels talk about -------------------------------------------------------
# (file stem, class, date, title, covered-by, resolved-by, class-aliases, body)
FAILURES = [
    (
        "runner-out-of-disk",
        "disk-full-on-runner",
        "2026-08-03",
        "Build runner ran out of disk space",
        ["prune-docker-layers"],
        ["prune-build-cache"],
        ["runner disk full"],
        "The nightly build stopped: /var/lib/docker was at 100%.",
    ),
    (
        "docker-layers-filled-volume",
        "disk-full-on-runner",
        "2026-09-14",
        "CI agent volume filled up with docker layers",
        [],
        [],
        [],
        "Old image layers piled up on the agent until jobs could not write artifacts.",
    ),
    (
        "no-space-artifact-upload",
        "disk-full-on-runner",
        "2026-10-20",
        "No space left on device during artifact upload",
        [],
        ["prune-build-cache"],
        [],
        "ENOSPC while tarring the test reports.",
    ),
    (
        "api-cert-expired",
        "expired-tls-certificate",
        "2026-07-01",
        "The api certificate expired on a Sunday",
        ["certs-renewed-early"],
        ["rotate-tls-certificate"],
        ["cert expiry"],
        "Clients saw handshake errors for four hours until someone rotated it by hand.",
    ),
    (
        "webhook-callbacks-rejected",
        "expired-tls-certificate",
        "2026-10-02",
        "Webhook callbacks rejected because the certificate was out of date",
        [],
        [],
        [],
        "Partners' callbacks failed TLS verification against the old chain.",
    ),
    (
        "flag-flip-slow",
        "stale-feature-flag-cache",
        "2026-09-02",
        "A flag flip took an hour to reach the mobile API",
        ["flag-caches-expire-fast"],
        ["flush-flag-cache"],
        [],
        "The mobile API kept serving the old variant from its cache.",
    ),
    (
        "kill-switch-ignored",
        "stale-feature-flag-cache",
        "2026-11-05",
        "Kill switch was ignored by two pods for forty minutes",
        [],
        ["flush-flag-cache"],
        [],
        "Two pods held an old copy of the flag set in memory.",
    ),
    (
        "migration-locked-orders",
        "migration-lock-timeout",
        "2026-06-11",
        "Schema migration held a table lock and stalled checkout",
        ["migrations-are-online"],
        ["run-online-migration"],
        [],
        "ALTER TABLE orders blocked every write for six minutes.",
    ),
    (
        "index-build-blocked-writes",
        "migration-lock-timeout",
        "2026-11-18",
        "Adding an index blocked writes to the invoices table",
        [],
        [],
        [],
        "CREATE INDEX without CONCURRENTLY locked invoices during the busiest hour.",
    ),
]
# (stem, title, aliases, body, relations)
RULES = [
    (
        "prune-docker-layers",
        "Runners prune docker layers nightly",
        ["layer pruning"],
        "Every CI runner removes unused images and build cache each night.",
        [],
    ),
    (
        "certs-renewed-early",
        "Certificates are renewed thirty days ahead",
        [],
        "No certificate may get within thirty days of expiry.",
        ["enforced-by: action:rotate-tls-certificate"],
    ),
    (
        "flag-caches-expire-fast",
        "Feature flag caches expire within a minute",
        ["flag ttl"],
        "Services cache flag sets for at most sixty seconds.",
        [],
    ),
    (
        "migrations-are-online",
        "Migrations never take long table locks",
        [],
        "Schema changes run online: no statement may hold a table lock for more than a second.",
        ["sibling-of: [rule:prune-docker-layers]"],
    ),
]
RUNBOOKS = [
    (
        "prune-build-cache",
        "Prune the build cache on CI runners",
        "Drain the runner, run `docker system prune -af --volumes`, check `df -h`, undrain.",
    ),
    (
        "rotate-tls-certificate",
        "Rotate the TLS certificate",
        "Issue a new certificate with the ACME client, load it on the load balancer, check the chain.",
    ),
    (
        "flush-flag-cache",
        "Flush the feature-flag cache",
        "Call the admin endpoint /flags/flush on every pod, then verify the variant served.",
    ),
    (
        "run-online-migration",
        "Run a schema migration online",
        "Use gh-ost (or CREATE INDEX CONCURRENTLY); never a plain ALTER on a hot table.",
    ),
    (
        "restore-db-snapshot",
        "Restore a database snapshot",
        "Pick the snapshot, restore it to a new instance, repoint the read replica, verify counts.",
    ),
    (
        "cut-weekly-release",
        "Cut the weekly release",
        "Tag main, build the release artifacts, write the changelog, announce in #releases.",
    ),
]
# (stem, title, date, relations, body)
DECISIONS = [
    (
        "2026-05-01-kubernetes-runners",
        "Run CI runners on Kubernetes",
        "2026-05-01",
        [],
        "Ephemeral runner pods instead of long-lived build VMs.",
    ),
    (
        "2026-07-20-acme-renewal",
        "Renew certificates automatically with ACME",
        "2026-07-20",
        ["applies: [rule:certs-renewed-early]", "enforced-by: action:rotate-tls-certificate"],
        "After the Sunday expiry, renewal is automated and alerts fire thirty days out.",
    ),
    (
        "2026-09-10-managed-flags",
        "Move feature flags to a managed service",
        "2026-09-10",
        ["applies: [rule:flag-caches-expire-fast]"],
        "The home-grown flag store could not push changes; the managed one streams them.",
    ),
    (
        "2026-06-20-online-migrations",
        "Only online schema migrations",
        "2026-06-20",
        ["applies: [rule:migrations-are-online]"],
        "After the orders lock, every migration goes through gh-ost.",
    ),
    (
        "2026-11-20-concurrent-indexes",
        "Build indexes concurrently",
        "2026-11-20",
        ["builds-on: decision:2026-06-20-online-migrations"],
        "Index builds use CONCURRENTLY, like every other online migration.",
    ),
]
PEOPLE = [
    ("pers_dana", "Dana Okafor", ["Dee"]),
    ("pers_marcus", "Marcus Lindqvist", ["Lindy"]),
    ("pers_priya", "Priya Raman", []),
    ("pers_tomas", "Tomás Herrera", ["Tom"]),
]
TASKS = [
    ("task_pg16", "Upgrade Postgres to 16", "open", "high", "pers_priya", ["pg16 upgrade"]),
    ("task_acme", "Automate certificate renewal", "done", "high", "pers_marcus", []),
    ("task_runner_img", "Shrink the CI runner images", "in_progress", "medium", "pers_dana", []),
    (
        "task_flag_sdk",
        "Replace the flag SDK in the mobile API",
        "blocked",
        "high",
        "pers_tomas",
        [],
    ),
    ("task_oncall", "Write the on-call handbook", "open", "low", "pers_dana", []),
]
FILLER_WORDS = [
    "billing",
    "search",
    "ledger",
    "queue",
    "export",
    "gateway",
    "session",
    "mobile",
    "metrics",
    "alerts",
    "backup",
    "cache",
    "deploy",
    "login",
    "report",
    "worker",
    "payments",
    "audit",
    "schema",
    "runner",
    "token",
    "invoice",
    "dashboard",
    "latency",
]
FILLER_VERBS = ["Review", "Document", "Clean up", "Measure", "Split", "Rename", "Archive", "Test"]


def _yaml_list(items: list[str]) -> str:
    return "[" + ", ".join(items) + "]"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def write_ops(root: Path, filler: int = 240, seed: int = 7) -> None:
    """The ops instance's files (records and ``entities.json``) under ``root``."""
    rng = random.Random(seed)
    _write(root / "ontoloom.toml", '[[documents]]\nroot = "docs"\nprivacy = "internal"\n')
    rec = root / "records"
    for stem, cls, date, title, covered, resolved, aliases, body in FAILURES:
        head = f"class: {cls}\ndate: {date}\ntitle: {title}\n"
        if covered:
            head += f"covered-by: {_yaml_list(covered)}\n"
        if resolved:
            head += f"resolved-by: {_yaml_list(resolved)}\n"
        if aliases:
            head += f"class-aliases: {_yaml_list(aliases)}\n"
        _write(rec / "failures" / f"{date}-{stem}.md", f"---\n{head}---\n{body}\n")
    for stem, title, aliases, body, relations in RULES:
        head = f"title: {title}\n"
        if aliases:
            head += f"aliases: {_yaml_list(aliases)}\n"
        if relations:
            head += "relations:\n" + "".join(f"  - {r}\n" for r in relations)
        _write(rec / "memory" / f"{stem}.md", f"---\n{head}---\n{body}\n")
    for stem, title, body in RUNBOOKS:
        _write(rec / "runbooks" / f"{stem}.md", f"---\ntitle: {title}\n---\n{body}\n")
    for stem, title, date, relations, body in DECISIONS:
        head = f"title: {title}\ndate: {date}\n"
        if relations:
            head += "relations:\n" + "".join(f"  - {r}\n" for r in relations)
        _write(rec / "decisions" / f"{stem}.md", f"---\n{head}---\n{body}\n")
    # Filler: one-off failures, documents, tasks and notes over the same everyday words.
    for i in range(filler // 8):
        a, b = rng.sample(FILLER_WORDS, 2)
        _write(
            rec / "failures" / f"2026-03-{1 + i % 28:02d}-oneoff-{i}.md",
            f"---\nclass: oneoff-{a}-{i}\ndate: 2026-03-{1 + i % 28:02d}\n"
            f"title: The {a} {b} job failed once\n---\nA one-off {a} problem during {b}.\n",
        )
    for i in range(filler // 4):
        a, b = rng.sample(FILLER_WORDS, 2)
        _write(
            root / "docs" / f"{a}-{b}-notes-{i}.md",
            f"---\ntitle: Notes on {a} and {b} ({i})\n---\nHow the {a} talks to the {b}.\n",
        )
    entities: list[dict[str, object]] = [
        {"id": "org_platform", "type": "Organization", "properties": {"name": "Platform team"}},
        {
            "id": "proj_reliability",
            "type": "Project",
            "properties": {"name": "Platform reliability", "status": "active"},
        },
    ]
    relations: list[list[str]] = []
    for pid, name, aliases in PEOPLE:
        props: dict[str, object] = {"name": name}
        if aliases:
            props["aliases"] = aliases
        entities.append({"id": pid, "type": "Person", "properties": props})
        relations.append([pid, "member_of", "org_platform"])
    for tid, title, status, priority, who, aliases in TASKS:
        props = {"title": title, "status": status, "priority": priority}
        if aliases:
            props["aliases"] = aliases
        entities.append({"id": tid, "type": "Task", "properties": props})
        relations += [[tid, "assigned_to", who], ["proj_reliability", "has_task", tid]]
    relations.append(["task_flag_sdk", "depends_on", "task_pg16"])
    entities.append(
        {
            "id": "even_pg_cutover",
            "type": "Event",
            "properties": {"title": "Postgres 16 cutover", "start": "2026-12-14"},
        }
    )
    relations.append(["task_pg16", "depends_on", "even_pg_cutover"])
    people = [p[0] for p in PEOPLE]
    for i in range(filler // 2):
        a, b = rng.sample(FILLER_WORDS, 2)
        tid = f"task_fill{i:04d}"
        title = f"{rng.choice(FILLER_VERBS)} the {a} {b}"
        status = rng.choice(["open", "done", "in_progress"])
        entities.append(
            {"id": tid, "type": "Task", "properties": {"title": title, "status": status}}
        )
        relations.append([tid, "assigned_to", rng.choice(people)])
    for i in range(filler // 8):
        a, b = rng.sample(FILLER_WORDS, 2)
        entities.append(
            {
                "id": f"note_fill{i:04d}",
                "type": "Note",
                "properties": {"content": f"The {a} dashboard shows {b} spikes again."},
            }
        )
    _write(
        root / "entities.json", json.dumps({"entities": entities, "relations": relations}, indent=1)
    )


def _add_transcripts(root: Path, name: str) -> None:
    """The instance's fixture transcripts, and the ``[mining]`` roots that name them."""
    shutil.copytree(TRANSCRIPTS / name, root / "transcripts")
    with (root / "ontoloom.toml").open("a", encoding="utf-8") as f:
        f.write(MINING)


def _load(root: Path) -> Path:
    info = init_instance(root)
    with Graph.open(info["data_dir"], write=True) as g:
        load_entities(g, root / "entities.json")  # first, as the demo does: records point at them
        report = g.rebuild()
        if report.rejected:
            raise RuntimeError(f"{root}: rebuild rejected entries: {report.to_json()}")
        g.reindex()
    return Path(info["data_dir"])


def build_team(root: Path) -> Path:
    """The bundled example instance under ``root``; returns its data dir."""
    shutil.copytree(
        resource_dir("examples") / "team", root, ignore=shutil.ignore_patterns(".ontoloom")
    )
    _add_transcripts(root, "team")
    return _load(root)


def build_ops(root: Path, filler: int = 240) -> Path:
    """The generated ops instance under ``root``; returns its data dir."""
    write_ops(root, filler)
    _add_transcripts(root, "ops")
    return _load(root)
