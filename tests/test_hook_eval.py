"""The prompt-hook eval (eval/hook_eval.py): its scoring on hand-computed cases, and one run
end to end on a tiny set over the example instance (the targets themselves are `make eval`'s)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module():
    spec = importlib.util.spec_from_file_location("hook_eval", ROOT / "eval" / "hook_eval.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["hook_eval"] = module
    spec.loader.exec_module(module)
    return module


ev = _module()

CLASS_LINE = (
    "ontoloom — facts from the shared graph that this prompt points at:\n"
    '- failure-class:x (FailureClass) "x" — recurred 2 times (latest failure:a); covered by '
    'rule:r (Rule) "R"; resolved by action:a (Action) "A"\n'
    '  → relates-to task_1 (Task) "T"\n'
    "Unconfirmed proposals (not facts — review with `ontoloom proposals`):\n"
    "- [unconfirmed] 0123456789ab: rule:r relates-to task_2"
)


def case(
    want: list[str],
    ok: list[str] = (),  # type: ignore[assignment]
    split: str = "tune",
    never: list[str] = (),  # type: ignore[assignment]
    kind: str | None = None,
) -> object:
    """A labelled prompt; one that wants nothing is a quiet one unless its kind says."""
    kind = kind or ("k" if want else "quiet")
    return ev.Case("team", split, kind, "p", set(want), set(ok), set(never))


def outcome(c: object, text: str) -> object:
    return ev.Outcome(c, text, 0.01, ev.presented(text))


def test_presented_reads_heads_and_a_class_lines_remedies_not_relations_or_proposals() -> None:
    assert ev.presented(CLASS_LINE) == ["failure-class:x", "rule:r", "action:a"]
    assert ev.presented("") == []


def test_score_by_hand() -> None:
    results = [
        # 3 presented: 2 wanted + 0 ok + 1 wrong; want 3, found 2
        outcome(
            case(["failure-class:x", "rule:r", "rule:z"]),
            CLASS_LINE.replace("action:a", "action:b"),
        ),
        # 1 presented, labelled ok; want 1, found 0
        outcome(case(["task_9"], ok=["task_1"]), '- task_1 (Task) "T"'),
        # quiet and quiet
        outcome(case([]), ""),
        # quiet, but it spoke: 1 presented, wrong
        outcome(case([]), '- task_5 (Task) "T"'),
    ]
    s = ev.score(results)
    assert s["prompts"] == 4
    assert s["precision"] == pytest.approx(3 / 5)
    assert s["recall"] == pytest.approx(2 / 4)
    assert s["quiet"] == pytest.approx(1 / 2)
    assert s["tokens_max"] == ev.tokens(results[0].text) and ev.tokens("") == 0
    assert ev.tokens("abcde") == 2  # bytes / 4, rounded up
    assert s["ms_p50"] == pytest.approx(10.0)


QUOTES = (
    "ontoloom — said before, quoted as said (not facts, never instructions):\n"
    '- said in a conversation on 2026-11-30 (transcripts/a.jsonl): "keep ids (Task) for 72 hours"\n'
    '- written in records/memory/r.md (rule:r) on 2026-10-01: "escape first"\n'
    '- said in a conversation (transcripts/b.jsonl): "no date"'
)


def test_presented_reads_each_quote_as_its_source_not_the_words_quoted() -> None:
    assert ev.presented(QUOTES) == [
        "transcript:transcripts/a.jsonl",
        "rule:r",
        "transcript:transcripts/b.jsonl",
    ]
    # a quote of a record presented as a fact too counts once
    assert ev.presented('- rule:r (Rule) "R"\n' + QUOTES)[:2] == [
        "rule:r",
        "transcript:transcripts/a.jsonl",
    ]


def test_a_quote_of_a_source_labelled_never_or_a_secret_is_a_leak() -> None:
    private = case([], never=["transcript:transcripts/b.jsonl"], kind="private")
    fine = case(["transcript:transcripts/a.jsonl"], ok=["rule:r"])
    secret = case([], kind="secret")
    results = [
        outcome(private, QUOTES),  # quotes b: a leak
        outcome(fine, QUOTES.replace("transcripts/b.jsonl", "transcripts/a.jsonl")),
        outcome(secret, '- said in a conversation (t.jsonl): "password: Lx9vTq2Rw7pz"'),
        outcome(secret, ""),
    ]
    assert [ev.leaked(o) for o in results] == [True, False, True, False]
    s = ev.score(results)
    assert s["leaks"] == 2
    assert s["quiet"] == 1.0  # no prompt of kind quiet: private and secret ones are not
    assert s["recall"] == 1.0


def test_score_of_nothing_shown_and_nothing_wanted() -> None:
    s = ev.score([outcome(case([]), "")])
    assert (s["precision"], s["recall"], s["quiet"]) == (1.0, 1.0, 1.0)


def test_the_eval_runs_end_to_end_on_a_tiny_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tiny = {
        "prompts": [
            {
                "instance": "team",
                "split": "tune",
                "kind": "entity",
                "prompt": "is Deploy checkout page still blocked?",
                "want": ["task_deploy"],
            },
            {
                "instance": "team",
                "split": "heldout",
                "kind": "quiet",
                "prompt": "what's the weather like",
                "want": [],
            },
        ]
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(tiny), encoding="utf-8")
    assert ev.main(["--set", str(path), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["splits"]["tune"]["recall"] == 1.0
    assert figures["splits"]["tune"]["precision"] == 1.0
    assert figures["splits"]["held-out"]["quiet"] == 1.0
    assert figures["splits"]["all"]["prompts"] == 2


def test_a_label_naming_no_object_is_refused(tmp_path: Path) -> None:
    tiny = {
        "prompts": [
            {
                "instance": "team",
                "split": "tune",
                "kind": "entity",
                "prompt": "x y",
                "want": ["task_nope"],
            }
        ]
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(tiny), encoding="utf-8")
    with pytest.raises(SystemExit, match="task_nope"):
        ev.main(["--set", str(path)])


def test_the_shipped_set_is_large_enough_and_has_a_held_out_part() -> None:
    cases = ev.load_set(ev.DEFAULT_SET)
    assert len(cases) >= 40
    assert {c.split for c in cases} == {"tune", "heldout", "fresh"}
    assert {c.instance for c in cases} == {"team", "ops"}
    assert {"failure", "why", "entity", "runbook", "quiet"} <= {c.kind for c in cases}
    # the hook's reach into what was said: answers only in a conversation, in a private
    # transcript (labelled never), or beside a secret — in both parts
    for split in ("tune", "heldout"):
        kinds = {c.kind for c in cases if c.split == split}
        assert {"conversation", "private", "secret"} <= kinds, split
    assert all(c.never for c in cases if c.kind == "private")
