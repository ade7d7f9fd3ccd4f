"""Nothing private leaves: every outgoing payload passes the egress gate (ontoloom.egress).

The end-to-end test greps every payload `enrich --emit` writes for every private record's
body sentences, titles, aliases and id, listed here from the fixture files and RECORDS.md's
privacy rules — not from what the tool says is private.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Cli
from ontoloom.egress import (
    MISSING,
    NAMES_WITHHELD,
    PRIVATE,
    UNKNOWN_SOURCE,
    UNRECOGNISED,
    Gate,
    Guarded,
    Item,
    Privacy,
    most_restrictive,
    privacy_of,
)
from records_fixture import PRIVATE_FILES, build

# Every record that is private by RECORDS.md's rules: (title, aliases, id, body).
PRIVATE_RECORDS: list[tuple[str, list[str], str | None, str]] = [
    # privacy: PRIVATE (case-insensitive)
    (
        "ANSI codes in the changelog",
        [],
        "failure:2026-11-09-again",
        "Coloured output went straight into CHANGELOG.md. Fixed with [[Strip control bytes]].",
    ),
    # a failure class takes the most restrictive class of its occurrences (one is private)
    (
        "literal control bytes",
        ["escape bytes in output"],
        "failure-class:literal-control-bytes",
        "",
    ),
    # privacy: Top-Secret is unrecognised: private
    ("A rule with broken links", [], "rule:broken-links", "Body."),
    # privacy: private in decision-log.md applies to every section
    (
        "Event sourcing for ledger",
        [],
        "decision:2026-09-15-event-sourcing-for-ledger",
        "Every change is an event. Reviewed with [[Strip control bytes]].",
    ),
    (
        "Keep one region",
        [],
        "decision:2026-09-20-keep-one-region",
        "We stay in one region for now.",
    ),
    ("Payroll", [], "doc:secret", "Salaries."),
    # root docs/b declares privacy = "Classified": unrecognised, so its files are private
    ("Other doc", [], "doc:other", "from root b, see [[Nowhere Page]]."),
    ("Another tax summary", [], None, "Duplicate id."),  # its id collides: no object
    # PRIVATE_FILES
    (
        "Rotate the vault keys monthly",
        ["vault rotation", "quarterly key ceremony"],
        "rule:vault-rotation",
        "The ceremony happens in room 4B with two officers present. Keys are split three ways\n"
        "between the officers and the escrow box.",
    ),
    (
        "Unlock the escrow box",
        [],
        "action:unlock-escrow",
        "Dial 31-07-88 on the escrow box, then turn the brass handle twice.",
    ),
    (
        "Hire an external auditor",
        ["auditor hiring"],
        "decision:2026-10-20-hire-auditor",
        "The auditor from Halden & Voss reviews the ceremony each spring.",
    ),
]


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _sentences(body: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", " ".join(body.split())) if s]


def needles() -> list[str]:
    out = []
    for title, aliases, object_id, body in PRIVATE_RECORDS:
        out += [title, *aliases, *_sentences(body)]
        if object_id is not None:
            out.append(object_id)
            local = object_id.partition(":")[2]
            if "-" in local:
                out.append(local)
    return [_norm(n) for n in out]


def strings(value: object) -> Iterator[str]:
    """Every JSON string of a payload: keys and values."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def leaks(text: str) -> list[str]:
    """The private needles found in one emitted text (a JSON payload or a stderr line)."""
    try:
        found = [_norm(s) for s in strings(json.loads(text))]
    except json.JSONDecodeError:
        found = [_norm(text)]
    return sorted({n for n in needles() for s in found if n in s})


@pytest.fixture
def inst(tmp_path: Path) -> Cli:
    root = build(tmp_path / "inst", extra=PRIVATE_FILES)
    cli = Cli(root / ".ontoloom")
    cli("init", str(root))
    assert cli("rebuild").exit_code in (0, 1)
    return cli


def test_enrich_emit_sends_nothing_of_a_private_record(inst: Cli, tmp_path: Path) -> None:
    out = tmp_path / "request.json"
    runs = [
        ("--limit", "1000", "-o", str(out)),
        ("--limit", "1000"),
        ("--for", "Rotate the vault keys monthly"),
        ("--for", "quarterly key ceremony"),
        ("--for", "rule:no-raw-control-bytes"),
        ("--for", "Share release notes"),
    ]
    payloads: list[str] = []
    for args in runs:
        result = inst("enrich", "--emit", *args)
        assert result.exit_code == 0, result.output
        payloads += [result.stdout, result.stderr]
        if "-o" in args:
            payloads.append(out.read_text(encoding="utf-8"))
    for text in payloads:
        assert leaks(text) == []
    request = json.loads(out.read_text(encoding="utf-8"))
    # The gate does not withhold everything: public and internal records still go out.
    sent = {i["object"] for i in request["items"] if i["kind"] == "record"}
    assert {"rule:plain-public", "rule:no-raw-control-bytes", "action:strip-control-bytes"} <= sent
    # …and an item that names, links to or quotes a private object is withheld whole.
    assert not sent & {
        "rule:share-release-notes",  # a wikilink to a private rule's alias
        "rule:quote-the-ceremony",  # a sentence of a private rule
        "rule:mentions-auditor",  # a private decision's title
        "rule:names-by-id",  # a private runbook's id
        "decision:2026-10-01-use-sagas",  # a wikilink to a private decision-log section
    }
    assert {o["id"] for o in request["objects"]} >= {
        "rule:plain-public",
        "rule:share-release-notes",
    }
    # The summary says how many were withheld and why, by count.
    withheld = request["withheld"]
    assert withheld["withheld"] == sum(withheld["reasons"].values()) > 0
    assert withheld["reasons"][PRIVATE] >= 10 and withheld["reasons"][NAMES_WITHHELD] >= 4
    stderr = inst("enrich", "--emit", "-o", str(out)).stderr
    assert f"withheld {withheld['withheld']} item(s)" in stderr


def test_the_request_stays_valid_against_its_schema(inst: Cli) -> None:
    import jsonschema

    schema = Path(__file__).parents[1] / "src/ontoloom/proposals/schemas/request.schema.json"
    request = json.loads(inst("enrich", "--emit").stdout)
    jsonschema.validate(request, json.loads(schema.read_text()))


def test_entities_without_a_privacy_class_never_leave(inst: Cli) -> None:
    inst("create", "Person", "--id", "pers_zed", "-p", "name=Zed Quill")
    inst("create", "Person", "--id", "pers_amy", "-p", "name=Amy Pond", "-p", "privacy=internal")
    request = json.loads(inst("enrich", "--emit").stdout)
    ids = {o["id"] for o in request["objects"]}
    assert "pers_amy" in ids and "pers_zed" not in ids
    assert request["withheld"]["reasons"][MISSING] >= 1
    assert leaks(json.dumps(request)) == []
    assert "zed quill" not in _norm(json.dumps(request))


# -- the gate's fail-closed table -------------------------------------------------------------
@pytest.mark.parametrize(
    ("values", "default", "cls", "reason"),
    [
        (["public"], None, "public", None),
        (["internal"], None, "internal", None),
        (["INTERNAL"], None, "internal", None),
        ([" Public "], None, "public", None),
        (["private"], None, "private", PRIVATE),
        (["PRIVATE"], None, "private", PRIVATE),
        (["Top-Secret"], None, "private", UNRECOGNISED),
        ([""], None, "private", UNRECOGNISED),
        ([3], None, "private", UNRECOGNISED),
        ([None], None, "private", UNRECOGNISED),
        ([["public"]], None, "private", UNRECOGNISED),
        ([], None, None, MISSING),  # no default applies: an entity written directly
        ([], "internal", "internal", None),  # a root's default
        ([], "public", "public", None),
        ([], "private", "private", PRIVATE),  # transcripts' default
        ([], "Classified", "private", UNRECOGNISED),
        (["public", "internal"], None, "internal", None),  # the most restrictive
        (["public", "private"], None, "private", PRIVATE),
        (["public", "nonsense"], None, "private", UNRECOGNISED),
    ],
)
def test_privacy_classes_fail_closed(
    values: list[object], default: str | None, cls: str | None, reason: str | None
) -> None:
    privacy = privacy_of(values, default)
    assert (privacy.cls, privacy.reason, privacy.passes) == (cls, reason, reason is None)


@pytest.mark.parametrize(
    ("occurrences", "passes"),
    [
        (["public", "public"], True),
        (["public", "internal"], True),
        (["internal", "private"], False),
        (["public", "unknown"], False),
        (["public", None], False),  # an occurrence with no class
    ],
)
def test_a_failure_class_takes_its_most_restrictive_occurrence(
    occurrences: list[str | None], passes: bool
) -> None:
    found = [privacy_of([] if o is None else [o]) for o in occurrences]
    assert most_restrictive(found).passes is passes
    assert most_restrictive([]).passes is False


def _gate() -> Gate:
    return Gate(
        [
            Guarded("rule:open", Privacy("public"), ["Open rule"], "Anyone may read this."),
            Guarded("rule:team", Privacy("internal"), ["Team rule"]),
            Guarded(
                "rule:hidden",
                privacy_of(["private"]),
                ["Hidden rule", "the vault"],
                "Keys live in the basement safe behind the boiler. Short one.",
            ),
            Guarded("rule:odd", privacy_of(["classified"]), ["Odd rule"]),
            Guarded("task_abc", privacy_of([]), ["Zed Quill"]),
        ]
    )


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        (Item({"text": "Anyone may read this."}, ("rule:open",)), None),
        (Item({"text": "Team stuff."}, ("rule:team",)), None),
        (Item({"text": "no source, plain words"}), None),
        (Item({"text": "x"}, ("rule:hidden",)), PRIVATE),
        (Item({"text": "x"}, ("rule:odd",)), UNRECOGNISED),
        (Item({"text": "x"}, ("task_abc",)), MISSING),
        (Item({"text": "x"}, ("rule:nowhere",)), UNKNOWN_SOURCE),
        (Item({"text": "x"}, ("rule:open", "rule:hidden")), PRIVATE),  # either end private
        (Item({"text": "See [[the Vault]]."}, ("rule:open",)), NAMES_WITHHELD),  # an alias
        (Item({"text": "HIDDEN-RULE applies"}, ("rule:open",)), NAMES_WITHHELD),  # a title
        (Item({"text": "per rule:hidden"}, ("rule:open",)), NAMES_WITHHELD),  # the id
        (Item({"t": ["a", {"b": "zed quill"}]}, ("rule:open",)), NAMES_WITHHELD),  # nested
        (Item({"text": "Odd rule"}, ("rule:open",)), NAMES_WITHHELD),
        (  # a quote: six words of a private body
            Item({"text": "they said keys live in the basement safe, then left"}, ("rule:open",)),
            NAMES_WITHHELD,
        ),
        (Item({"text": "Short one."}, ("rule:open",)), None),  # two words are no quote
        (Item({"text": "the basement"}, ("rule:open",)), None),
        (Item({"text": "the vaults"}, ("rule:open",)), None),  # whole words only
    ],
)
def test_the_gate_releases_only_what_may_leave(item: Item, reason: str | None) -> None:
    gate = _gate()
    assert gate.decide(item) == reason
    released = gate.release([item])
    assert released.payloads() == ([item.payload] if reason is None else [])
    assert released.summary()["reasons"] == ({} if reason is None else {reason: 1})


def test_any_text_of_a_private_object_is_a_quote_of_it_in_any_script() -> None:
    """Issue 31 item 5: the gate knows every literal of a private object, not only its body,
    compares text normalised, and reads unspaced scripts character by character."""
    gate = Gate(
        [
            Guarded(
                "note_a",
                privacy_of(["private"]),
                ["顧客リスト"],
                "The payroll export lives on the second NAS.\n顧客の個人情報はここに保存されています。",
            ),
            Guarded("rule:open", Privacy("public"), ["Open rule"]),
        ]
    )
    quoted = [
        "as noted: the payroll export lives on the second NAS",
        "the payroll\nexport lives on\nthe second NAS",  # re-wrapped
        "the pay\u200broll export lives on the second NAS",  # a zero-width space inside
        "ｔｈｅ　ｐａｙｒｏｌｌ　ｅｘｐｏｒｔ　ｌｉｖｅｓ　ｏｎ　ｔｈｅ",  # fullwidth
        "彼は顧客の個人情報はここにあると言った",  # six characters of the CJK sentence
        "see 顧客リスト",  # a CJK name
    ]
    for text in quoted:
        assert gate.decide(Item({"text": text}, ("rule:open",))) == NAMES_WITHHELD, text
    assert gate.decide(Item({"text": "顧客の声"}, ("rule:open",))) is None  # three characters


def test_the_gate_reads_every_property_of_a_private_object_in_the_store(inst: Cli) -> None:
    from ontoloom.api import Graph

    made = inst(
        "create", "Person", "--id", "pers_secretive", "-p", "name=Quentin Marsh",
        "-p", "privacy=private", "-p", "bio=Quentin keeps the spare keys under the third flowerpot",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    with Graph.open(inst.data_dir) as g:
        gate = Gate.from_graph(g)
    quote = Item({"text": "keeps the spare keys under the third flowerpot"}, ())
    assert gate.decide(quote) == NAMES_WITHHELD
