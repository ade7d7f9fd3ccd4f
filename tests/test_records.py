"""Records into the graph, exactly as RECORDS.md says (tests/records_fixture.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Cli, quads_of
from ontoloom.api import Graph
from records_fixture import build

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def inst(tmp_path: Path) -> Cli:
    root = build(tmp_path / "inst")
    cli = Cli(root / ".ontoloom")
    cli("init", str(root))
    return cli


def rebuild(cli: Cli, *args: str) -> tuple[int, dict]:
    result = cli.json("rebuild", *args)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.output)


def entity(cli: Cli, entity_id: str) -> dict:
    result = cli.json("get", entity_id)
    assert result.exit_code == 0, (entity_id, result.output)
    return json.loads(result.output)


def notes(report: dict, kind: str) -> list[str]:
    return [f"{n['path']}:{n['line']}: {n['message']}" for n in report["notes"].get(kind, [])]


def test_object_ids_types_and_titles(inst: Cli) -> None:
    rebuild(inst)
    expected = {
        "failure:2026-11-02-ctrl-bytes": "FailureOccurrence",
        "failure-class:literal-control-bytes": "FailureClass",
        "rule:no-raw-control-bytes": "Rule",
        "action:strip-control-bytes": "Action",
        "decision:2026-10-01-use-sagas": "Decision",
        "decision:2026-09-15-event-sourcing-for-ledger": "Decision",
        "doc:billing/tax-summary": "Doc",
        "rule:cafe-menu": "Rule",
    }
    for object_id, type_name in expected.items():
        assert entity(inst, object_id)["type"] == type_name
    assert (
        entity(inst, "failure-class:literal-control-bytes")["properties"]["title"]
        == "literal control bytes"
    )
    assert (
        entity(inst, "decision:2026-09-15-event-sourcing-for-ledger")["properties"]["title"]
        == "Event sourcing for ledger"
    )
    assert entity(inst, "doc:plain")["properties"]["title"] == "A plain note"


def test_failure_classes_gather_their_occurrences(inst: Cli) -> None:
    rebuild(inst)
    cls = entity(inst, "failure-class:literal-control-bytes")
    assert cls["properties"]["aliases"] == ["escape bytes in output"]
    assert cls["properties"]["privacy"] == "private"  # the most restrictive of its occurrences
    incoming = [r["from_id"] for r in cls["relations"]["incoming"] if r["rel"] == "recurs-as"]
    assert sorted(incoming) == ["failure:2026-11-02-ctrl-bytes", "failure:2026-11-09-again"]
    outgoing = {(r["rel"], r["to_id"]) for r in cls["relations"]["outgoing"]}
    assert outgoing == {
        ("covered-by", "rule:no-raw-control-bytes"),
        ("resolved-by", "action:strip-control-bytes"),
    }


def test_occurrence_level_entries_are_stored_on_the_occurrence_too(inst: Cli) -> None:
    rebuild(inst)
    occ = entity(inst, "failure:2026-11-02-ctrl-bytes")
    assert {(r["rel"], r["to_id"]) for r in occ["relations"]["outgoing"]} == {
        ("recurs-as", "failure-class:literal-control-bytes"),
        ("covered-by", "rule:no-raw-control-bytes"),
        ("resolved-by", "action:strip-control-bytes"),
    }
    assert occ["properties"]["covered_by"] == "kept as a plain property"  # field names are exact
    again = entity(inst, "failure:2026-11-09-again")  # CRLF, covered-by by title
    assert ("covered-by", "rule:no-raw-control-bytes") in {
        (r["rel"], r["to_id"]) for r in again["relations"]["outgoing"]
    }


def test_privacy_classes(inst: Cli) -> None:
    rebuild(inst)
    privacy = lambda i: entity(inst, i)["properties"]["privacy"]  # noqa: E731
    assert privacy("failure:2026-11-02-ctrl-bytes") == "internal"  # the failure ledger's default
    assert privacy("failure:2026-11-09-again") == "private"  # case-insensitive
    assert privacy("rule:broken-links") == "private"  # unrecognised: fail closed
    assert privacy("doc:plain") == "public"  # the document root's default
    assert privacy("doc:secret") == "private"
    assert privacy("doc:other") == "private"  # a root with an unrecognised default
    assert privacy("decision:2026-09-20-keep-one-region") == "private"  # the log's privacy: applies


def test_both_relations_forms_and_identity_resolution(inst: Cli) -> None:
    rebuild(inst)
    rule = entity(inst, "rule:no-raw-control-bytes")
    out = {(r["rel"], r["to_id"]) for r in rule["relations"]["outgoing"]}
    assert ("enforced-by", "action:strip-control-bytes") in out
    escape = entity(
        inst, "rule:escape-terminal-output"
    )  # first in path order: its entry is the one stored
    assert ("sibling-of", "rule:no-raw-control-bytes") in {
        (r["rel"], r["to_id"]) for r in escape["relations"]["outgoing"]
    }
    sagas = entity(inst, "decision:2026-10-01-use-sagas")
    assert ("applies", "rule:no-raw-control-bytes") in {
        (r["rel"], r["to_id"]) for r in sagas["relations"]["outgoing"]
    }


def test_symmetric_relations_are_stored_once(inst: Cli) -> None:
    rebuild(inst)
    rules = ["rule:no-raw-control-bytes", "rule:escape-terminal-output"]
    stored = [
        r
        for i in rules
        for r in entity(inst, i)["relations"]["outgoing"]
        if r["rel"] == "sibling-of"
    ]
    assert len(stored) == 1
    reached = json.loads(
        inst.json("traverse", "rule:escape-terminal-output", "--rel", "sibling-of").output
    )
    assert [h["id"] for h in reached] == ["rule:no-raw-control-bytes"]
    back = json.loads(
        inst.json("traverse", "rule:no-raw-control-bytes", "--rel", "sibling-of").output
    )
    assert [h["id"] for h in back] == ["rule:escape-terminal-output"]


def test_rejected_entries_name_path_line_and_reason(inst: Cli) -> None:
    code, report = rebuild(inst)
    assert code == 1
    rejected = notes(report, "rejected")
    assert any(
        r.startswith("records/memory/broken-links.md:5: applies:")
        and "applies starts at a Decision" in r
        for r in rejected
    )
    assert any(
        r.startswith("records/memory/broken-links.md:6: inspires:") and "unknown relation" in r
        for r in rejected
    )
    assert any(
        r.startswith("records/memory/broken-links.md:7: relates-to:") and "matches no object" in r
        for r in rejected
    )
    assert any(r.startswith("records/failures/no-class.md:1:") and "class:" in r for r in rejected)
    assert any(
        r.startswith("records/memory/wrong-prefix.md:2:") and "another kind" in r for r in rejected
    )
    # the valid rest of a record is kept
    broken = entity(inst, "rule:broken-links")
    assert ("enforced-by", "action:strip-control-bytes") in {
        (r["rel"], r["to_id"]) for r in broken["relations"]["outgoing"]
    }


def test_the_entry_that_would_close_a_cycle_is_rejected(inst: Cli) -> None:
    _, report = rebuild(inst)
    assert any(
        r.startswith("records/decisions/2026-10-03-b.md:4: builds-on: use sagas for payments")
        and "cycle" in r
        for r in notes(report, "rejected")
    )
    b = entity(inst, "decision:2026-10-03-b")
    assert {(r["rel"], r["to_id"]) for r in b["relations"]["outgoing"]} == {
        ("builds-on", "decision:2026-09-15-event-sourcing-for-ledger")
    }
    assert inst("check").exit_code == 0


def test_malformed_ambiguous_and_non_utf8_records_are_reported(inst: Cli) -> None:
    _, report = rebuild(inst)
    assert any(r.startswith("records/failures/bad-yaml.md:") for r in notes(report, "malformed"))
    assert notes(report, "ambiguous") == [
        "records/failures/two-blocks.md:5: a second frontmatter block: only the first is read, the second stays body text"
    ]
    assert notes(report, "encoding") == [
        "records/failures/latin1.md:4: not UTF-8 text: save the file as UTF-8"
    ]
    assert inst("get", "failure:bad-yaml").exit_code == 2
    assert "---\nsecond: block" in entity(inst, "failure:two-blocks")["properties"]["body"]


def test_document_roots_collisions_symlinks_and_binaries(inst: Cli) -> None:
    _, report = rebuild(inst)
    assert (
        entity(inst, "doc:billing/tax-summary")["properties"]["title"] == "Tax summary"
    )  # the first root keeps it
    assert any(
        "docs/b/billing/tax-summary.md" in c and "doc:billing/tax-summary" in c
        for c in notes(report, "collision")
    )
    skipped = "\n".join(notes(report, "skipped"))
    assert "docs/a/loop" in skipped and "docs/a/escape" in skipped and "docs/a/leak.md" in skipped
    assert "docs/a/image.md" in skipped and "binary" in skipped
    assert inst("get", "doc:leak").exit_code == 2


def test_rebuild_never_modifies_a_record(inst: Cli) -> None:
    root = inst.data_dir.parent
    before = {p: p.read_bytes() for p in root.rglob("*.md") if p.is_file() and not p.is_symlink()}
    rebuild(inst)
    rebuild(inst, "--full")
    assert {p: p.read_bytes() for p in before} == before


def test_a_second_rebuild_changes_nothing_and_says_so(inst: Cli) -> None:
    rebuild(inst)
    before = quads_of(inst.data_dir)
    result = inst("rebuild")
    assert "nothing changed" in result.output
    assert quads_of(inst.data_dir) == before
    rebuild(inst, "--full")
    assert quads_of(inst.data_dir) == before


def test_incremental_rebuild_reads_only_what_changed(inst: Cli) -> None:
    rebuild(inst)
    root = inst.data_dir.parent
    runbook = root / "records/runbooks/strip-control-bytes.md"
    runbook.write_text("---\ntitle: Strip control bytes (v2)\n---\nUse the helper.\n")
    _, report = rebuild(inst)
    assert report["changed"] == ["records/runbooks/strip-control-bytes.md"]
    assert (
        entity(inst, "action:strip-control-bytes")["properties"]["title"]
        == "Strip control bytes (v2)"
    )
    incremental = quads_of(inst.data_dir)
    rebuild(inst, "--full")
    assert quads_of(inst.data_dir) == incremental


def test_deleting_a_record_leaves_orphans_that_gc_removes(inst: Cli) -> None:
    rebuild(inst)
    (inst.data_dir.parent / "records/runbooks/strip-control-bytes.md").unlink()
    _, report = rebuild(inst)
    assert report["removed"] == ["records/runbooks/strip-control-bytes.md"]
    orphans = notes(report, "orphan")
    assert any(
        "rule:no-raw-control-bytes enforced-by action:strip-control-bytes" in o for o in orphans
    )
    listed = json.loads(inst.json("gc").output)
    assert {
        "from_id": "rule:no-raw-control-bytes",
        "rel": "enforced-by",
        "to_id": "action:strip-control-bytes",
    } in [{k: r[k] for k in ("from_id", "rel", "to_id")} for r in listed["relations"]]
    assert inst("gc", "--yes").exit_code == 0
    assert json.loads(inst.json("gc").output)["relations"] == []
    assert inst("check").exit_code == 0


def test_rebuild_outside_an_instance_cannot_run(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "loose" / ".ontoloom")
    result = cli("rebuild")
    assert result.exit_code == 2 and "needs an instance" in result.output


def test_records_are_searchable_and_private_ones_flagged(inst: Cli) -> None:
    rebuild(inst)
    hits = json.loads(inst.json("search", "payroll salaries").output)
    assert hits[0]["id"] == "doc:secret" and hits[0]["private"] is True
    changelog = json.loads(inst.json("search", "changelog").output)
    # a relation's label carries its ends' titles: private when an end is
    assert [(h["id"], h["private"]) for h in changelog] == [
        ("failure:2026-11-09-again", True),
        ("failure-class:literal-control-bytes", True),
        ("failure:2026-11-09-again recurs-as failure-class:literal-control-bytes", True),
        ("failure:2026-11-09-again covered-by rule:no-raw-control-bytes", True),
    ]


# -- guard, why --------------------------------------------------------------------------------
def _golden(name: str, data: object) -> None:
    path = GOLDEN / f"{name}.json"
    assert json.loads(path.read_text()) == data, json.dumps(data, indent=2)


def test_guard_golden(inst: Cli) -> None:
    rebuild(inst)
    result = inst.json("guard", "--class", "literal-control-bytes")
    assert result.exit_code == 0
    _golden("guard", json.loads(result.output))
    by_text = json.loads(inst.json("guard", "escape bytes in output appeared again").output)
    assert by_text["classes"][0]["class"] == "failure-class:literal-control-bytes"
    assert by_text["classes"][0]["matched_by"] == "alias"
    assert inst.json("guard", "ANSI codes in the changelog").exit_code == 0
    missing = inst.json("guard", "the coffee machine leaks")
    assert missing.exit_code == 3 and json.loads(missing.output) == {
        "matched": False,
        "classes": [],
    }


def test_why_golden(inst: Cli) -> None:
    rebuild(inst)
    result = inst.json("why", "rule:no-raw-control-bytes")
    assert result.exit_code == 0
    _golden("why", json.loads(result.output))
    by_title = json.loads(inst.json("why", "Never write raw control bytes").output)
    assert by_title["target"]["id"] == "rule:no-raw-control-bytes"


# -- the wikilink worklist ---------------------------------------------------------------------
def test_the_worklist_hides_unresolved_and_connected_candidates(inst: Cli) -> None:
    _, report = rebuild(inst)
    items = json.loads(inst.json("links").output)
    pairs = {(i["source"], i["target"]) for i in items}
    assert ("failure:2026-11-09-again", "action:strip-control-bytes") in pairs
    assert ("doc:billing/tax-summary", "decision:2026-09-20-keep-one-region") in pairs
    # [[no-raw-control-bytes]] in ctrl-bytes: already connected by covered-by
    assert all(i["source"] != "failure:2026-11-02-ctrl-bytes" for i in items)
    unresolved = notes(report, "unresolved-wikilink")
    assert unresolved == ["docs/b/other.md:4: [[Nowhere Page]] matches no object"]


def test_typing_a_candidate_makes_a_pending_proposal_shown_by_hints(inst: Cli) -> None:
    rebuild(inst)
    item = next(
        i for i in json.loads(inst.json("links").output) if i["source"] == "doc:billing/tax-summary"
    )
    before_check = inst.json("check").output
    result = inst.json("links", "type", item["id"], "mentions")
    assert result.exit_code == 0
    proposal = json.loads(result.output)
    assert proposal["status"] == "pending" and proposal["label"] == "unconfirmed"
    hints = json.loads(inst.json("hints", "doc:billing/tax-summary").output)
    assert [h["id"] for h in hints] == [proposal["id"]]
    assert hints[0]["evidence"]["quote"] == "VAT per line, see [[Keep one region]]."
    # never in the trusted graph
    assert json.loads(inst.json("relations", "doc:billing/tax-summary").output) == []
    assert inst.json("check").output == before_check
    assert all(i["id"] != item["id"] for i in json.loads(inst.json("links").output))


def test_verdicts_follow_the_sentence(inst: Cli) -> None:
    rebuild(inst)
    item = next(
        i
        for i in json.loads(inst.json("links").output)
        if i["source"] == "failure:2026-11-09-again"
    )
    assert inst("links", "dismiss", item["id"]).exit_code == 0
    path = inst.data_dir.parent / "records/failures/2026-11-09-again.md"
    text = path.read_bytes().decode()
    path.write_bytes(
        text.replace("ANSI codes in the changelog", "ANSI codes in the CHANGELOG").encode()
    )
    rebuild(inst)
    assert all(
        i["source"] != "failure:2026-11-09-again" for i in json.loads(inst.json("links").output)
    )
    path.write_bytes(
        text.replace(
            "Fixed with [[Strip control bytes]].", "We ran [[Strip control bytes]] again."
        ).encode()
    )
    rebuild(inst)
    assert any(
        i["source"] == "failure:2026-11-09-again" for i in json.loads(inst.json("links").output)
    )


def test_typing_with_a_wrong_relation_is_refused(inst: Cli) -> None:
    rebuild(inst)
    item = next(
        i
        for i in json.loads(inst.json("links").output)
        if i["source"] == "failure:2026-11-09-again"
    )
    assert inst("links", "type", item["id"], "applies").exit_code == 1
    assert inst("links", "type", item["id"], "frobs").exit_code == 1
    assert inst("links", "type", "nope", "mentions").exit_code == 2


def test_records_written_directly_cannot_be_made_by_create(inst: Cli) -> None:
    result = inst("create", "Rule", "-p", "title=x")
    assert result.exit_code == 1 and "rebuild" in result.output


def test_the_api_rebuilds_too(inst: Cli) -> None:
    with Graph.open(inst.data_dir, write=True) as g:
        report = g.rebuild()
    assert report.objects_by_type["FailureOccurrence"] == 3
