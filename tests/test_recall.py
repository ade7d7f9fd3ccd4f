"""The prompt hook's reach into what was said (src/ontoloom/recall.py, the passages of the search
index, the quotes of src/ontoloom/context.py): a conversation or a record body is quoted when,
and only when, the rules allow it — an opted-in root, never a private one, never a secret, at
most two quotes of at most 240 characters, labelled and dated, within the token cap — and the
index follows the transcripts through rebuild, reindex and mine scan."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import Cli
from ontoloom import context as hook_context
from ontoloom.api import Graph
from ontoloom.config import Config, TranscriptRoot
from ontoloom.errors import BadInput
from ontoloom.hooks import context
from ontoloom.instance import init_instance
from ontoloom.search import QUOTE_WIDTH, chunks, statements

QUOTES_HEADER = hook_context.QUOTES_HEADER
FACTS_HEADER = hook_context.HEADER
SAID = re.compile(r'^- said in a conversation(?: on (\S+))? \((.+?)\): "(.*)"$')
WRITTEN = re.compile(r'^- written in (.+?) \((\S+)\)(?: on (\S+))?: "(.*)"$')

SECRET = "password: Lx9vTq2Rw7pz"
SLACK = "xoxb-2918273645-8273645091-AbCdEfGhIjKlMnOpQrStUvWx"


def plain(rows: list[tuple[str, str, str]]) -> str:
    """A plain JSONL transcript: (role, timestamp, text) per message."""
    return "".join(
        json.dumps({"id": f"m{i}", "role": role, "content": text, "timestamp": stamp}) + "\n"
        for i, (role, stamp, text) in enumerate(rows, 1)
    )


SHARED = plain(
    [
        (
            "user",
            "2026-11-30T10:02:00Z",
            "How long should the dedupe table keep webhook event ids?",
        ),
        (
            "assistant",
            "2026-11-30T10:03:10Z",
            "Stripe retries a failed webhook for up to three days, so keep processed event ids "
            "for 72 hours and purge older ones with the nightly job.",
        ),
        ("user", "2026-11-30T10:05:00Z", f"The staging dashboard login is admin, {SECRET}"),
        (
            "assistant",
            "2026-11-30T10:06:00Z",
            "For the zorgon export, mail the finance contact at dana@example.com before the "
            "quarterly zorgon reconciliation run.",
        ),
        (
            "assistant",
            "2026-11-30T10:07:00Z",
            "The flumox mirror keeps ninety days of snapshots in the primary region.",
        ),
        (
            "assistant",
            "2026-11-30T10:08:00Z",
            "In the backup region the flumox mirror keeps thirty days of snapshots.",
        ),
        (
            "assistant",
            "2026-11-30T10:09:00Z",
            "The staging flumox mirror keeps seven days of snapshots, no more.",
        ),
        (
            "assistant",
            "2026-11-30T10:10:00Z",
            "The quarterly payroll review happens in the Payroll salaries spreadsheet, owned by "
            "finance.",
        ),
    ]
)
PRIVATE = plain(
    [
        (
            "user",
            "2026-11-28T17:40:00Z",
            "Between us: the contractor on the quasar migration leaves at the end of January.",
        )
    ]
)
MINING = """
[mining]
closed_after_minutes = 0
transcripts = [
  "transcripts/private/*.jsonl",
  { root = "transcripts/shared/*.jsonl", privacy = "internal" },
]
"""
RECORDS = {
    "records/memory/dedupe-webhooks.md": (
        "---\ntitle: Deduplicate webhook events\n---\nEvery webhook handler records the event id "
        "and ignores an id it has seen.\n"
    ),
    "records/memory/quasar-secrets.md": (
        "---\ntitle: Quasar bonus schedule\nprivacy: private\n---\nThe quasar bonus schedule "
        "pays out in March for the whole quasar team.\n"
    ),
    "docs/payroll.md": (
        "---\ntitle: Payroll salaries\nprivacy: private\n---\nSalary bands for the team.\n"
    ),
}


def make_instance(root: Path, mining: str = MINING) -> Path:
    for rel, text in RECORDS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "transcripts/shared").mkdir(parents=True)
    (root / "transcripts/private").mkdir(parents=True)
    (root / "transcripts/shared/2026-11-30-webhooks.jsonl").write_text(SHARED, encoding="utf-8")
    (root / "transcripts/private/2026-11-28-staffing.jsonl").write_text(PRIVATE, encoding="utf-8")
    (root / "ontoloom.toml").write_text(
        '[[documents]]\nroot = "docs"\nprivacy = "internal"\n' + mining, encoding="utf-8"
    )
    info = init_instance(root)
    data_dir = Path(info["data_dir"])
    with Graph.open(data_dir, write=True) as g:
        report = g.rebuild()
        assert not report.rejected, report.to_json()
    return data_dir


@pytest.fixture(scope="module")
def inst(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_instance(tmp_path_factory.mktemp("recall"))


def quotes(text: str) -> list[re.Match[str]]:
    """Each quote line of a hook output, parsed (a line that looks like one and does not
    parse fails the test)."""
    found = []
    for line in text.splitlines():
        if line.startswith(("- said", "- written")):
            match = SAID.match(line) or WRITTEN.match(line)
            assert match is not None, line
            found.append(match)
    return found


# -- configuration -------------------------------------------------------------------------------
def test_a_root_is_private_unless_its_entry_opts_it_in() -> None:
    config = Config(
        None,
        raw={
            "mining": {
                "transcripts": [
                    "a/*.jsonl",
                    {"root": "b/*.jsonl", "privacy": "Internal"},
                    {"root": "c/*.jsonl", "privacy": "public"},
                    {"root": "d/*.jsonl", "privacy": "top-secret"},
                    {"root": "e/*.jsonl"},
                ]
            }
        },
    )
    mining = config.mining()
    assert mining.transcripts == ["a/*.jsonl", "b/*.jsonl", "c/*.jsonl", "d/*.jsonl", "e/*.jsonl"]
    assert [r.privacy for r in mining.roots] == [
        "private",
        "internal",
        "public",
        "private",  # an unrecognised class fails closed
        "private",
    ]
    assert mining.quotable_roots() == [
        TranscriptRoot("b/*.jsonl", "internal"),
        TranscriptRoot("c/*.jsonl", "public"),
    ]
    assert Config(None).mining().quotable_roots() == []  # the default root: private


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({"root": "x", "privcy": "internal"}, "unknown key(s) privcy"),
        ({"privacy": "internal"}, "transcripts must be a list"),
        (3, "transcripts must be a list"),
    ],
)
def test_a_bad_transcripts_entry_is_named(entry: object, said: str) -> None:
    with pytest.raises(BadInput, match=re.escape(said)):
        Config(None, raw={"mining": {"transcripts": [entry]}}).mining()


# -- passages ------------------------------------------------------------------------------------
def test_chunks_pack_sentences_and_cut_long_ones_between_words() -> None:
    text = "One two three. Four five six.\n\n" + " ".join(["word"] * 100) + "\n\nOk then."
    found = chunks(text, 40)
    assert found[0] == "One two three. Four five six."
    assert all(len(c) <= 40 for c in found)
    assert " ".join(found[1:]) == " ".join(["word"] * 100)  # "Ok then." is too short to quote
    # a run without spaces is cut where it must; a piece of one word alone is not a quote
    assert chunks("x" * 100 + " a b", 30) == ["x" * 10 + " a b"]
    assert statements("Why not? Because it breaks.\n\nWhat then, really, now?") == [
        "Why not? Because it breaks."
    ]


@given(st.text(max_size=2000))
def test_no_chunk_is_longer_than_a_quote_may_be(text: str) -> None:
    for chunk in chunks(text):
        assert 0 < len(chunk) <= QUOTE_WIDTH
        assert chunk == " ".join(chunk.split())


# -- quotes: when, and only when ----------------------------------------------------------------
def test_an_opted_in_conversation_is_quoted_labelled_dated_and_hedged(inst: Path) -> None:
    out = context(inst, "how long do we keep webhook event ids for dedupe?")
    assert QUOTES_HEADER in out and "not facts" in QUOTES_HEADER
    said = [q for q in quotes(out) if q.re is SAID]
    assert said, out
    day, label, text = said[0].groups()
    assert (day, label) == ("2026-11-30", "transcripts/shared/2026-11-30-webhooks.jsonl")
    assert text.startswith("Stripe retries a failed webhook for up to three days")
    # after the graph's facts
    if FACTS_HEADER in out:
        assert out.index(FACTS_HEADER) < out.index(QUOTES_HEADER)


def test_a_record_body_is_quoted_with_its_path_when_the_record_is_presented(inst: Path) -> None:
    out = context(inst, "why do we deduplicate webhook events?")
    assert "- rule:dedupe-webhooks (Rule)" in out, out
    written = [q for q in quotes(out) if q.re is WRITTEN]
    assert [q.group(1, 2) for q in written] == [
        ("records/memory/dedupe-webhooks.md", "rule:dedupe-webhooks")
    ]
    assert written[0].group(4).startswith("Every webhook handler records the event id")


def test_a_transcript_of_a_default_private_root_is_never_quoted(inst: Path) -> None:
    out = context(inst, "when does the contractor on the quasar migration leave?")
    assert "contractor" not in out and "2026-11-28" not in out and quotes(out) == []


@pytest.mark.parametrize("privacy", ["private", "Top-Secret", ""])
def test_a_passage_of_a_private_or_unclassed_source_in_the_index_is_never_quoted(
    tmp_path: Path, privacy: str
) -> None:
    """Whatever put it there (an index written before a root became private): the hook
    checks the class again when it quotes."""
    data_dir = make_instance(tmp_path / "i")
    from ontoloom.search import SearchIndex

    index = SearchIndex.of(data_dir)
    try:
        said = [("m1", "2026-12-01T00:00:00Z", "The grumbleweed dashboard theme is teal now.", "")]
        index.put_transcript("transcripts/x.jsonl", "h", privacy, said)
        index.put_transcript("transcripts/y.jsonl", "h", "internal", said)
    finally:
        index.close()
    out = context(data_dir, "what colour is the grumbleweed dashboard theme?")
    assert [q.group(2) for q in quotes(out)] == ["transcripts/y.jsonl"], out


def test_a_private_record_is_never_quoted(inst: Path) -> None:
    out = context(inst, "when does the quasar bonus schedule pay out for the quasar team?")
    assert "March" not in out and quotes(out) == [] and "quasar-secrets" not in out
    # nor when it is the only passage the terms reach, handed to the quoting as presented
    index = hook_context._index(inst)
    assert index is not None
    try:
        from ontoloom.store import open_backend
        from ontoloom.vocab import IdSpace

        with open_backend(inst, write=False, create=False, wait=0) as backend:
            lines = hook_context._quotes(
                backend,
                IdSpace(),
                index,
                ["quasar", "bonus", "schedule", "pays", "march"],
                {"rule:quasar-secrets"},
            )
    finally:
        index.close()
    assert lines == []


def test_a_secret_is_never_quoted_nor_indexed(inst: Path) -> None:
    out = context(inst, "what is the staging dashboard login password?")
    assert "Lx9vTq2Rw7pz" not in out and "redacted" not in out
    raw = (inst / "search.sqlite").read_bytes()
    assert b"Lx9vTq2Rw7pz" not in raw  # never copied into the index


def test_personal_data_is_redacted_in_a_quote(inst: Path) -> None:
    out = context(inst, "who do we mail about the zorgon export before the zorgon reconciliation?")
    said = quotes(out)
    assert said, out
    assert "dana@example.com" not in out
    assert "[an email address withheld]" in said[0].group(3)


def test_a_quote_naming_a_private_object_is_dropped(inst: Path) -> None:
    out = context(inst, "where does the quarterly payroll review happen, which spreadsheet?")
    assert "spreadsheet" not in out and quotes(out) == []


def test_at_most_two_quotes_each_at_most_240_characters(inst: Path) -> None:
    out = context(inst, "how many days of flumox snapshots does the flumox mirror keep?")
    found = quotes(out)
    assert len(found) == 2, out  # three passages hold the prompt's terms
    for q in found:
        assert len(q.groups()[-1]) <= QUOTE_WIDTH


def test_quiet_when_the_prompt_does_not_really_match(inst: Path) -> None:
    assert context(inst, "keep it short") == ""
    assert context(inst, "refactor the webhook parser") == ""  # one term in common: no quote


def test_quotes_are_cut_first_to_stay_within_the_token_cap(
    inst: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompt = "why do we deduplicate webhook events?"
    full = context(inst, prompt)
    facts = full.split("\n" + QUOTES_HEADER)[0]
    assert quotes(full) and facts.startswith(FACTS_HEADER)
    monkeypatch.setattr(hook_context, "MAX_TOKENS", hook_context._tokens(facts) + 5)
    assert context(inst, prompt) == facts  # the facts whole, no quote
    monkeypatch.setattr(hook_context, "MAX_TOKENS", 1)
    assert context(inst, prompt) == facts  # the facts are bounded by their own limits


def test_the_hook_process_quotes_without_importing_rdflib_pyshacl_or_click(
    inst: Path, tmp_path: Path
) -> None:
    listing = tmp_path / "modules.json"
    event = {
        "hook_event_name": "UserPromptSubmit",
        "prompt": "how long do we keep webhook event ids?",
    }
    script = f"""
import atexit, io, json, sys
atexit.register(lambda: open({str(listing)!r}, "w").write(json.dumps(sorted(sys.modules))))
from ontoloom.entry import main
sys.argv = ["ontoloom", "hook", "prompt-context", "--data-dir", {str(inst)!r}]
sys.stdin = io.TextIOWrapper(io.BytesIO({json.dumps(event).encode()!r}))
main()
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert "- said in a conversation on 2026-11-30" in done.stdout
    modules = set(json.loads(listing.read_text()))
    for heavy in ("rdflib", "pyshacl", "owlrl", "click", "ontoloom.cli", "ontoloom.api"):
        assert heavy not in modules, heavy


# -- the index follows the transcripts -----------------------------------------------------------
ASK = "what colour is the grumbleweed dashboard theme now?"
SAID_THEN = plain(
    [
        (
            "assistant",
            "2026-12-02T08:00:00Z",
            "The grumbleweed dashboard theme is teal now, not orange.",
        )
    ]
)


def test_rebuild_indexes_new_edited_and_gone_transcripts(tmp_path: Path) -> None:
    data_dir = make_instance(tmp_path / "i")
    path = tmp_path / "i/transcripts/shared/2026-12-02-theme.jsonl"
    assert context(data_dir, ASK) == ""
    path.write_text(SAID_THEN, encoding="utf-8")
    with Graph.open(data_dir, write=True) as g:
        g.rebuild()
    assert "teal" in context(data_dir, ASK)
    path.write_text(SAID_THEN.replace("teal", "mauve"), encoding="utf-8")
    with Graph.open(data_dir, write=True) as g:
        g.rebuild()
    out = context(data_dir, ASK)
    assert "mauve" in out and "teal" not in out
    path.unlink()
    with Graph.open(data_dir, write=True) as g:
        g.rebuild()
    assert context(data_dir, ASK) == ""


def test_a_root_made_private_again_is_forgotten(tmp_path: Path) -> None:
    data_dir = make_instance(tmp_path / "i")
    assert quotes(context(data_dir, "how long do we keep webhook event ids for dedupe?"))
    toml = tmp_path / "i/ontoloom.toml"
    toml.write_text(toml.read_text().replace('privacy = "internal" }', 'privacy = "private" }'))
    with Graph.open(data_dir, write=True) as g:
        g.rebuild()
    assert not quotes(context(data_dir, "how long do we keep webhook event ids for dedupe?"))
    assert b"Stripe retries" not in (data_dir / "search.sqlite").read_bytes()


def test_an_open_transcript_waits_until_it_is_closed(tmp_path: Path) -> None:
    data_dir = make_instance(tmp_path / "i", MINING.replace("= 0", "= 600"))
    assert quotes(context(data_dir, "how long do we keep webhook event ids for dedupe?")) == []


def test_reindex_reads_the_transcripts_again(tmp_path: Path) -> None:
    data_dir = make_instance(tmp_path / "i")
    (data_dir / "search.sqlite").unlink()
    cli = Cli(data_dir)
    done = cli.json("reindex")
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert report["conversations"]["transcripts"] == 1  # the opted-in one
    assert report["conversations"]["withheld_secret"] == 1
    assert "1 opted-in transcript(s)" in cli("reindex").output
    assert "Stripe retries" in context(
        data_dir, "how long do we keep webhook event ids for dedupe?"
    )


def test_mine_scan_indexes_when_mining_is_on_and_reads_nothing_when_off(tmp_path: Path) -> None:
    data_dir = make_instance(tmp_path / "i", MINING.replace("[mining]", "[mining]\nenabled = true"))
    path = tmp_path / "i/transcripts/shared/2026-12-02-theme.jsonl"
    path.write_text(SAID_THEN, encoding="utf-8")
    cli = Cli(data_dir)
    done = cli.json("mine", "scan")
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["conversations"]["read"] == 1
    assert "teal" in context(data_dir, ASK)
    off = make_instance(tmp_path / "j")
    (tmp_path / "j/transcripts/shared/2026-12-02-theme.jsonl").write_text(SAID_THEN)
    done = Cli(off).json("mine", "scan")
    assert json.loads(done.output)["conversations"] is None  # off: nothing read
    assert context(off, ASK) == ""


def test_a_bad_mining_section_is_a_note_of_rebuild_not_a_failure(tmp_path: Path) -> None:
    data_dir = make_instance(tmp_path / "i")
    toml = tmp_path / "i/ontoloom.toml"
    toml.write_text(
        toml.read_text().replace("closed_after_minutes = 0", "closed_after_minutes = -1")
    )
    with Graph.open(data_dir, write=True) as g:
        report = g.rebuild().to_json()
    skipped = report["notes"]["skipped"]
    assert any("closed_after_minutes" in n["message"] for n in skipped), skipped
    # what was indexed stays until the section is fixed
    assert quotes(context(data_dir, "how long do we keep webhook event ids for dedupe?"))


def test_a_secret_cut_in_two_by_the_windows_keeps_none_of_its_message(tmp_path: Path) -> None:
    # a sentence too long for one window, the secret's name at the end of the first window
    # and its value at the start of the next: neither window alone holds it
    filler = " ".join(["grumbleweed"] * 19)  # 227 characters, the window's first part
    text = f"{filler} password: {'Lx9vTq2Rw7pz'} and the grumbleweed theme is teal now"
    windows = chunks(text)
    assert len(windows) == 2 and "Lx9vTq2Rw7pz" in windows[1] and "password:" in windows[0]
    data_dir = make_instance(tmp_path / "i")
    (tmp_path / "i/transcripts/shared/2026-12-03-split.jsonl").write_text(
        plain([("assistant", "2026-12-03T08:00:00Z", text)]), encoding="utf-8"
    )
    with Graph.open(data_dir, write=True) as g:
        said = g.index_conversations()
    assert said.read == 1 and said.passages == 0 and said.secret == 2
    assert b"Lx9vTq2Rw7pz" not in (data_dir / "search.sqlite").read_bytes()
