"""Proposals kept apart from the trusted graph: enrichment, tiers, review, writeback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Cli
from ontoloom.records.frontmatter import parse_record
from ontoloom.records.writeback import write_back
from records_fixture import build


@pytest.fixture
def inst(tmp_path: Path) -> Cli:
    root = build(tmp_path / "inst")
    cli = Cli(root / ".ontoloom")
    cli("init", str(root))
    cli("rebuild")
    return cli


def ingest(
    cli: Cli, tmp_path: Path, candidates: list[dict], model: str = "claude-haiku-4-5"
) -> dict:
    path = tmp_path / "response.json"
    path.write_text(json.dumps({"version": 1, "model": model, "candidates": candidates}))
    result = cli.json("enrich", "--ingest", str(path))
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def cand(source: str, rel: str, target: str, path: str, quote: str, **extra: object) -> dict:
    return {
        "source": source,
        "relation": rel,
        "target": target,
        "evidence": {"path": path, "quote": quote},
        **extra,
    }


RUNBOOK = "records/runbooks/strip-control-bytes.md"
ESCAPE = "records/memory/escape-terminal-output.md"
QUOTE = "Terminal output is escaped before it is logged."


def enforced(quote: str = QUOTE, path: str = ESCAPE, **extra: object) -> dict:
    """The candidate most tests use: rule:escape-terminal-output enforced-by the strip action."""
    return cand(
        "rule:escape-terminal-output",
        "enforced-by",
        "action:strip-control-bytes",
        path,
        quote,
        **extra,
    )


# -- emit ----------------------------------------------------------------------------------------
def test_emit_writes_a_request_with_items_vocabulary_and_the_response_schema(
    inst: Cli, tmp_path: Path
) -> None:
    out = tmp_path / "request.json"
    assert inst("enrich", "--emit", "--limit", "5", "-o", str(out)).exit_code == 0
    request = json.loads(out.read_text())
    assert len(request["items"]) == 5
    assert "never instructions" in request["instruction"]
    builds_on = next(v for v in request["vocabulary"] if v["relation"] == "builds-on")
    assert (builds_on["from"], builds_on["to"]) == (
        ["Decision"],
        ["Decision"],
    ) and "acyclic" in builds_on["notes"]
    assert request["response_schema"]["title"] == "ontoloom enrichment response"
    shipped = Path(__file__).parents[1] / "src/ontoloom/proposals/schemas/response.schema.json"
    assert request["response_schema"] == json.loads(shipped.read_text())
    focused = json.loads(inst("enrich", "--emit", "--for", "rule:no-raw-control-bytes").stdout)
    assert focused["items"] and all(
        "control bytes" in i["text"].lower()
        or i["object"] == "rule:no-raw-control-bytes"
        or "no-raw-control-bytes" in i["text"]
        for i in focused["items"]
    )


# -- ingest: the tier table ----------------------------------------------------------------------
def test_the_tier_table(inst: Cli, tmp_path: Path) -> None:
    summary = ingest(
        inst,
        tmp_path,
        [
            # HIGH: the records already say it (a wikilink from the source to the target)
            cand(
                "failure:2026-11-09-again",
                "resolved-by",
                "Strip control bytes",
                "records/failures/2026-11-09-again.md",
                "Fixed with [[Strip control bytes]].",
            ),
            # MEDIUM: a second, independent model agreed
            enforced(second_opinion={"model": "gpt-5", "agree": True}),
            # LOW: self-checked only
            cand(
                "rule:cafe-menu",
                "relates-to",
                "action:strip-control-bytes",
                "records/memory/custom.md",
                "x",
                self_check=True,
            ),
            # rejected: the two models disagree
            cand(
                "rule:broken-links",
                "relates-to",
                "action:strip-control-bytes",
                "records/memory/broken-links.md",
                "Body.",
                second_opinion={"model": "gpt-5", "agree": False},
            ),
        ],
    )
    assert summary["stored"] == {"HIGH": 1, "MEDIUM": 1, "LOW": 1, "rejected": 1}
    pending = json.loads(inst.json("proposals").output)
    assert sorted(p["tier"] for p in pending) == ["HIGH", "LOW", "MEDIUM"]
    everything = json.loads(inst.json("proposals", "--status", "all").output)
    assert [p["tier"] for p in everything if p["status"] == "rejected"] == ["rejected"]
    assert [p["tier"] for p in json.loads(inst.json("proposals", "--tier", "MEDIUM").output)] == [
        "MEDIUM"
    ]


def test_forged_and_paraphrased_quotes_are_dropped_and_counted(inst: Cli, tmp_path: Path) -> None:
    summary = ingest(
        inst,
        tmp_path,
        [
            enforced(quote="Terminal output is always escaped before logging."),  # paraphrased
            enforced(quote="The runbook must be followed."),  # forged
            enforced(quote="must not be read", path="../outside/leak.md"),  # outside the instance
            enforced(
                quote="Terminal   output is escaped\nbefore it is logged."
            ),  # verbatim, spacing aside
        ],
    )
    assert summary["dropped"] == 3
    assert summary["stored"]["LOW"] == 1


def test_refusals_and_duplicates(inst: Cli, tmp_path: Path) -> None:
    summary = ingest(
        inst,
        tmp_path,
        [
            cand(
                "rule:escape-terminal-output",
                "inspires",
                "action:strip-control-bytes",
                ESCAPE,
                QUOTE,
            ),
            cand(
                "rule:escape-terminal-output", "applies", "rule:no-raw-control-bytes", ESCAPE, QUOTE
            ),
            cand(
                "rule:escape-terminal-output",
                "enforced-by",
                "a thing that is not there",
                ESCAPE,
                QUOTE,
            ),
            cand(
                "rule:no-raw-control-bytes",
                "enforced-by",
                "action:strip-control-bytes",
                "records/memory/no-raw-control-bytes.md",
                "Escape bytes below 0x20",
            ),  # already a fact
            enforced(),
            enforced(),
        ],
    )
    assert summary["refused"] == {"vocabulary": 1, "domain_range": 1, "unresolved": 1}
    assert summary["duplicate"] == {"known": 1, "proposed": 1}
    again = ingest(
        inst,
        tmp_path,
        [enforced()],
    )
    assert again["duplicate"] == {"proposed": 1}


def test_a_rejected_candidate_is_never_proposed_again(inst: Cli, tmp_path: Path) -> None:
    first = ingest(
        inst,
        tmp_path,
        [enforced()],
    )
    pid = first["outcomes"][0]["id"]
    assert inst("proposals", "reject", pid, "--reason", "no").exit_code == 0
    again = ingest(
        inst,
        tmp_path,
        [enforced()],
    )
    assert again["duplicate"] == {"rejected": 1}
    assert json.loads(inst.json("proposals").output) == []


@pytest.mark.parametrize(
    "payload",
    [
        '{"version": 2, "candidates": []}',
        "not json",
        '{"version": 1}',
        '{"version": 1, "candidates": [{"source": "a"}]}',
    ],
)
def test_a_response_breaking_the_schema_exits_2(inst: Cli, tmp_path: Path, payload: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(payload)
    assert inst("enrich", "--ingest", str(path)).exit_code == 2
    assert inst("enrich", "--ingest", str(tmp_path / "missing.json")).exit_code == 2


# -- isolation -----------------------------------------------------------------------------------
def test_a_pending_proposal_changes_no_output_of_the_trusted_graph(
    inst: Cli, tmp_path: Path
) -> None:
    commands = [
        ("check", "--json"),
        ("guard", "--class", "literal-control-bytes", "--json"),
        ("why", "rule:no-raw-control-bytes", "--json"),
        ("traverse", "rule:escape-terminal-output", "--depth", "3", "--json"),
        ("relations", "rule:escape-terminal-output", "--json"),
        ("search", "escape terminal output", "--json"),
        ("query", "SELECT ?s ?o WHERE { ?s ol:enforced-by ?o } ORDER BY ?s ?o", "--format", "json"),
    ]
    before = [inst(*c).output for c in commands]
    ingest(
        inst,
        tmp_path,
        [
            enforced(),
            cand(
                "decision:2026-10-01-use-sagas",
                "applies",
                "rule:escape-terminal-output",
                "records/decisions/2026-10-01-use-sagas.md",
                "A saga keeps the ledger consistent.",
            ),
        ],
    )
    assert len(json.loads(inst.json("proposals").output)) == 2
    assert [inst(*c).output for c in commands] == before


# -- review and writeback -------------------------------------------------------------------------
def test_confirm_goes_through_the_write_path_and_writes_back(inst: Cli, tmp_path: Path) -> None:
    pid = ingest(
        inst,
        tmp_path,
        [enforced()],
    )["outcomes"][0]["id"]
    record = inst.data_dir.parent / ESCAPE
    body_before = parse_record(ESCAPE, record.read_bytes()).body
    result = inst.json("proposals", "confirm", pid)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["writeback"] == {"path": ESCAPE, "written": True, "reason": None, "pending": False}
    parsed = parse_record(ESCAPE, record.read_bytes())
    assert parsed.body == body_before
    entry = parsed.meta["ontoloom"][0]
    assert (entry["source"], entry["relation"], entry["target"]) == (
        "rule:escape-terminal-output",
        "enforced-by",
        "action:strip-control-bytes",
    )

    def relations() -> set[tuple[str, str]]:
        out = inst.json("relations", "rule:escape-terminal-output", "--direction", "out").output
        return {(r["rel"], r["to_id"]) for r in json.loads(out)}

    assert ("enforced-by", "action:strip-control-bytes") in relations()
    assert inst("rebuild").exit_code in (0, 1)
    assert ("enforced-by", "action:strip-control-bytes") in relations()
    assert inst("rebuild", "--full").exit_code in (0, 1)
    assert ("enforced-by", "action:strip-control-bytes") in relations()
    again = inst("proposals", "confirm", pid)  # idempotent (issue 11)
    assert again.exit_code == 0 and "already confirmed" in again.output


def test_a_confirmation_that_breaks_a_rule_is_refused_with_the_report(
    inst: Cli, tmp_path: Path
) -> None:
    pid = ingest(
        inst,
        tmp_path,
        [
            cand(
                "decision:2026-09-15-event-sourcing-for-ledger",
                "builds-on",
                "decision:2026-10-03-b",
                "records/decisions/decision-log.md",
                "Every change is an event.",
            )
        ],
    )["outcomes"][0]["id"]
    result = inst.json("proposals", "confirm", pid)
    assert (
        result.exit_code == 1 and json.loads(result.output)["results"][0]["constraint"] == "acyclic"
    )
    assert json.loads(inst.json("proposals", "show", pid).output)["status"] == "pending"


def test_model_role_policy_fails_closed(inst: Cli) -> None:
    assert (
        inst("enrich", "--resolve-model", "--backend", "claude", "--role", "economy").output.strip()
        == "claude-haiku-4-5"
    )
    assert (
        inst("enrich", "--resolve-model", "--backend", "codex", "--role", "standard").exit_code == 0
    )
    unknown = inst("enrich", "--resolve-model", "--backend", "claude", "--role", "premium")
    assert unknown.exit_code == 2 and "unknown model role" in unknown.output
    toml = inst.data_dir.parent / "ontoloom.toml"
    toml.write_text(
        toml.read_text()
        + '\n[models.economy]\nclaude = "claude-custom"\n[models.premium]\nclaude = "claude-big"\n'
    )
    assert (
        inst("enrich", "--resolve-model", "--backend", "claude", "--role", "economy").output.strip()
        == "claude-custom"
    )
    assert (
        inst("enrich", "--resolve-model", "--backend", "claude", "--role", "premium").output.strip()
        == "claude-big"
    )
    missing = inst("enrich", "--resolve-model", "--backend", "codex", "--role", "premium")
    assert missing.exit_code == 2 and "no model for role" in missing.output


# -- writeback corpus ----------------------------------------------------------------------------
CORPUS = {
    "comments": "---\n# a comment\ntitle: T  # trailing\n---\nbody\n",
    "flow-list": "---\naliases: [a, 'b c']\n---\nbody\n",
    "block-list": "---\naliases:\n  - a\n  - b\n---\nbody\n",
    "quoted": "---\ntitle: \"quoted: yes\"\nother: 'single'\n---\nbody\n",
    "anchors": "---\nbase: &b {x: 1}\nderived: *b\n---\nbody\n",
    "crlf": "---\r\ntitle: T\r\n---\r\nbody\r\nline\r\n",
    "bom": "\ufeff---\ntitle: T\n---\nbody\n",
    "none": "just a body\nwith lines\n",
    "empty": "---\n---\nbody\n",
    "existing-block": "---\ntitle: T\nontoloom:\n  - {source: rule:a, relation: mentions, target: rule:b, confirmed: 2026-01-01}\n# after\n---\nbody\n",
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_writeback_preserves_everything_but_adds_the_entry(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.md"
    original = CORPUS[name].encode("utf-8")
    path.write_bytes(original)
    before = parse_record(name, original)
    result = write_back(path, name, "rule:x", "enforced-by", "action:y", "2026-11-29")
    assert result.written, result.reason
    after_bytes = path.read_bytes()
    after = parse_record(name, after_bytes)
    assert after.body == before.body
    assert after_bytes.endswith(
        original.split(b"---", 2)[-1] if before.has_frontmatter else original
    )
    for key, value in (before.meta or {}).items():
        if key != "ontoloom":
            assert after.meta[key] == value
    entries = after.meta["ontoloom"]
    assert {"source": "rule:x", "relation": "enforced-by", "target": "action:y"}.items() <= dict(
        entries[-1]
    ).items()
    if name == "crlf":
        assert b"\n" not in after_bytes.replace(b"\r\n", b"")
    if name == "bom":
        assert after_bytes.startswith(b"\xef\xbb\xbf")
    if name == "comments":
        assert b"# a comment" in after_bytes and b"# trailing" in after_bytes
    # idempotent
    assert not write_back(path, name, "rule:x", "enforced-by", "action:y", "2026-12-01").written
    assert path.read_bytes() == after_bytes


@pytest.mark.parametrize(
    "text",
    [
        "---\nbad: [unclosed\n---\nbody\n",
        "---\na: 1\n---\n\n---\nb: 2\n---\nbody\n",
        "---\nontoloom: not a list\n---\nbody\n",
    ],
)
def test_writeback_leaves_malformed_and_ambiguous_frontmatter_untouched(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "r.md"
    path.write_text(text)
    result = write_back(path, "r.md", "rule:x", "enforced-by", "action:y", "2026-11-29")
    assert not result.written and result.reason
    assert path.read_text() == text
