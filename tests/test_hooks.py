"""The Claude Code hooks through their real protocol: the ``ontoloom`` console script run as a
fresh process, the hook event as JSON on stdin, context on stdout — and silence (exit 0, empty
stdout and stderr) on every failure path."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ontoloom.api import Graph
from ontoloom.entry import hook_route
from ontoloom.hooks import salient_terms
from ontoloom.instance import init_instance
from ontoloom.proposals.store import Proposal, proposal_id, proposal_quads, set_status
from ontoloom.store.base import Delta
from ontoloom.store.lock import DataDirLock

ONTOLOOM = str(Path(sys.executable).with_name("ontoloom"))
HEADER = "ontoloom — facts from the shared graph that this prompt points at:"
STATUS = re.compile(
    r"^ontoloom: (\d+) objects · (\d+) relations · (\d+) proposals pending · rebuilt (.+)$"
)
CUE = (
    "ontoloom: this instance has never been rebuilt — run `ontoloom rebuild` to read its "
    "records into the graph"
)

RECORDS = {
    "ontoloom.toml": '[[documents]]\nroot = "docs"\nprivacy = "internal"\n',
    "records/failures/2026-09-01-bell-in-log.md": (
        "---\nclass: literal-control-bytes\ndate: 2026-09-01\ntitle: Bell character in the build log\n"
        "---\nA BEL byte rang in CI.\n"
    ),
    "records/failures/2026-10-01-ctrl-in-commit.md": (
        "---\nclass: literal-control-bytes\ndate: 2026-10-01\n"
        "title: Control bytes broke the commit message\ncovered-by: [no-raw-control-bytes]\n---\n"
        "The hook wrote a literal escape into COMMIT_EDITMSG.\n"
    ),
    "records/failures/2026-10-15-nul-in-yaml.md": (
        "---\nclass: literal-control-bytes\ndate: 2026-10-15\ntitle: NUL byte in the config file\n"
        "class-aliases: [escape bytes in output]\n---\nThe YAML loader choked.\n"
    ),
    "records/failures/2026-11-02-ansi-in-changelog.md": (
        "---\nclass: literal-control-bytes\ndate: 2026-11-02\ntitle: ANSI codes in the changelog\n"
        "resolved-by: [strip-ansi]\n---\nColoured output went straight into CHANGELOG.md.\n"
    ),
    "records/failures/2026-08-01-dns.md": (
        "---\nclass: flaky-dns\ndate: 2026-08-01\ntitle: DNS lookups timed out in CI\n---\nAgain.\n"
    ),
    "records/memory/no-raw-control-bytes.md": (
        "---\ntitle: Never write raw control bytes\n---\nEscape bytes below 0x20 first.\n"
    ),
    "records/memory/escape-terminal-output.md": (
        "---\ntitle: Escape terminal output\nrelations:\n  - sibling-of: no-raw-control-bytes\n"
        "---\nTerminal output is escaped before it is logged.\n"
    ),
    "records/runbooks/strip-ansi.md": (
        "---\ntitle: Strip ANSI escape codes\n---\nRun the clean-output helper.\n"
    ),
    "records/decisions/2026-10-20-escape-logs.md": (
        "---\ntitle: Escape what goes into logs\ndate: 2026-10-20\nrelations:\n"
        "  applies: [no-raw-control-bytes]\n---\nAfter the bell in the build log.\n"
    ),
    "docs/payroll.md": (
        "---\ntitle: Payroll salaries 2026\nprivacy: private\n---\n"
        "Quarterly salary bands for the payroll run.\n"
    ),
}


def _write_records(root: Path) -> None:
    for rel, text in RECORDS.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _propose(g: Graph, source: str, rel: str, target: str) -> str:
    p = Proposal(
        proposal_id(source, rel, target),
        source,
        rel,
        target,
        tier="HIGH",
        origin="enrich",
        proposer="llm",
        evidence={"source": "records/memory/no-raw-control-bytes.md", "quote": "x"},
    )
    g.backend.apply(Delta(adds=proposal_quads(g, p)))
    return p.id


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An instance with records (rebuilt), agent-written entities and proposals."""
    root = tmp_path_factory.mktemp("team")
    _write_records(root)
    info = init_instance(root)
    with Graph.open(info["data_dir"], write=True) as g:
        report = g.rebuild()
        assert not report.rejected, report.to_json()
        g.create("Person", {"name": "Alice"}, id="pers_alice001")
        g.create("Person", {"name": "Secret Agent", "privacy": "private"}, id="pers_secret01")
        g.create("Person", {"name": "Bob Chen"}, id="pers_bobchen1")
        g.create(
            "Task",
            {"title": "Fix payment timeout", "status": "open", "priority": "high"},
            id="task_a1b2c3d4",
        )
        g.create("Task", {"title": "Deploy checkout page", "status": "blocked"}, id="task_e5f6a7b8")
        g.relate("task_a1b2c3d4", "blocks", "task_e5f6a7b8")
        g.relate("task_a1b2c3d4", "assigned_to", "pers_alice001")
        g.relate("task_e5f6a7b8", "assigned_to", "pers_secret01")
        # Ranking: four prompt terms against two.
        g.create(
            "Task",
            {"title": "Gateway retries hit the payment timeout", "status": "open"},
            id="task_gw000001",
        )
        # Caps: three objects matching, a hub with five relations.
        for i, title in enumerate(
            [
                "Invoice export fails on large accounts",
                "Invoice export retries forever",
                "Invoice export drops currency",
            ]
        ):
            g.create("Task", {"title": title, "status": "open"}, id=f"task_inv0000{i}")
        g.create(
            "Task", {"title": "Migrate billing database", "status": "open"}, id="task_hub00001"
        )
        for i in range(5):
            g.create(
                "Task", {"title": f"Cutover step {i}", "status": "open"}, id=f"task_step000{i}"
            )
            g.relate("task_hub00001", "blocks", f"task_step000{i}")
        # Distinctive names, to be found beside everyday words.
        g.create("Project", {"name": "Zorblax service"}, id="proj_zorblax1")
        g.create("Task", {"title": "Quuxify the widget", "status": "open"}, id="task_quuxify1")
        # Proposals: three pending on one rule, one touching a private doc, one rejected.
        for target in (
            "action:strip-ansi",
            "rule:escape-terminal-output",
            "failure-class:flaky-dns",
        ):
            _propose(g, "rule:no-raw-control-bytes", "relates-to", target)
        _propose(g, "rule:no-raw-control-bytes", "mentions", "doc:payroll")
        rejected = _propose(g, "task_a1b2c3d4", "relates-to", "rule:no-raw-control-bytes")
        g.backend.apply(set_status(g, rejected, "rejected"))
        g.backend.flush()
    return root


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ONTOLOOM_HOME"}
    env.update(extra)
    return env


def hook(
    name: str,
    payload: Any = None,
    *,
    raw: bytes | None = None,
    data_dir: Path | None = None,
    cwd: Path,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``ontoloom hook NAME`` as Claude Code does: the event on stdin, in ``cwd``."""
    args = [ONTOLOOM, "hook", name]
    if data_dir is not None:
        args += ["--data-dir", str(data_dir)]
    stdin = raw if raw is not None else json.dumps(payload).encode()
    done = subprocess.run(
        args, input=stdin, capture_output=True, cwd=cwd, env=env or _env(), timeout=60
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def ask(team: Path, prompt: str) -> str:
    """The context the prompt hook gives in the instance (as Claude Code runs it there)."""
    event = {
        "session_id": "s1",
        "transcript_path": str(team / "t.jsonl"),
        "cwd": str(team),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    done = hook("prompt-context", event, cwd=team)
    assert done.returncode == 0 and done.stderr == "", done
    return done.stdout


def objects_of(text: str) -> list[str]:
    """The objects presented as facts (not proposals, not quotes of what was said)."""
    return [
        line.split()[1]
        for line in text.splitlines()
        if line.startswith("- ")
        and "[unconfirmed]" not in line
        and not line.startswith(("- said in a conversation", "- written in "))
    ]


def assert_silent(done: subprocess.CompletedProcess[str]) -> None:
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


# -- prompt-context: what it says ---------------------------------------------------------------
def test_an_id_in_the_prompt_shows_the_object_and_its_typed_relations(team: Path) -> None:
    out = ask(team, "what is blocking task_e5f6a7b8?")
    lines = out.splitlines()
    assert lines[0] == HEADER
    assert lines[1] == '- task_e5f6a7b8 (Task) "Deploy checkout page" · status blocked'
    assert '  ← blocks task_a1b2c3d4 (Task) "Fix payment timeout"' in lines
    assert "Secret Agent" not in out and "pers_secret01" not in out  # private: never shown


def test_a_title_in_the_prompt(team: Path) -> None:
    out = ask(team, "Let's pick up fix payment timeout today")
    assert objects_of(out)[0] == "task_a1b2c3d4"
    assert '- task_a1b2c3d4 (Task) "Fix payment timeout" · status open · priority high' in out
    assert '  → blocks task_e5f6a7b8 (Task) "Deploy checkout page"' in out
    assert '  → assigned_to pers_alice001 (Person) "Alice"' in out


@pytest.mark.parametrize(
    "prompt",
    [
        "looks like escape bytes in output again",  # an alias
        "is this the literal control bytes problem?",  # the title
        "see failure-class:literal-control-bytes",  # the id
    ],
)
def test_a_failure_class_with_its_recurrences_rules_and_actions(team: Path, prompt: str) -> None:
    out = ask(team, prompt)
    assert objects_of(out)[0] == "failure-class:literal-control-bytes"
    line = next(
        x for x in out.splitlines() if x.startswith("- failure-class:literal-control-bytes")
    )
    assert line == (
        '- failure-class:literal-control-bytes (FailureClass) "literal control bytes" — recurred '
        "4 times (latest failure:2026-11-02-ansi-in-changelog); covered by "
        'rule:no-raw-control-bytes (Rule) "Never write raw control bytes"; resolved by '
        'action:strip-ansi (Action) "Strip ANSI escape codes"'
    )
    # Its occurrences are summed up in the count, not listed as relations.
    assert "← recurs-as" not in out


def test_an_occurrence_in_other_words_lifts_its_failure_class_and_remedies(team: Path) -> None:
    out = ask(team, "the nightly job choked on a NUL byte in the yaml config file")
    assert objects_of(out) == ["failure-class:literal-control-bytes"]
    assert "recurred 4 times" in out and "covered by rule:no-raw-control-bytes" in out
    assert "resolved by action:strip-ansi" in out
    assert "- failure:" not in out  # the occurrence is summed up in its class


def test_a_runbook_prompt_finds_the_action_by_its_verb(team: Path) -> None:
    for prompt in ("time to strip the codes out of the output", "how do I strip escape codes?"):
        assert objects_of(ask(team, prompt))[0] == "action:strip-ansi", prompt


def test_a_why_prompt_finds_the_decision_behind_a_rule(team: Path) -> None:
    out = ask(team, "why must we never write raw control bytes?")
    assert objects_of(out) == ["decision:2026-10-20-escape-logs", "rule:no-raw-control-bytes"]


def test_a_slug_counts_as_a_name(team: Path) -> None:
    assert objects_of(ask(team, "is escape-terminal-output still true"))[0] == (
        "rule:escape-terminal-output"
    )


def test_a_first_name_written_capitalised_counts_as_a_name(team: Path) -> None:
    assert objects_of(ask(team, "what is Bob up to this week")) == ["pers_bobchen1"]
    assert ask(team, "the bob haircut is back") == ""  # not written as a name


def test_search_matches_rank_by_distinct_prompt_terms(team: Path) -> None:
    out = ask(team, "why does the payment gateway timeout on retries")
    # 4 distinct terms (payment, gateway, timeout, retries) before 2 (payment, timeout) — and
    # the runner-up, less pointed at than the first and not named, is left out.
    assert objects_of(out) == ["task_gw000001"]
    out = ask(team, "the payment gateway timeout again, and Fix payment timeout is still open")
    assert objects_of(out) == ["task_a1b2c3d4", "task_gw000001"]  # named outright: first


def test_at_most_two_objects(team: Path) -> None:
    out = ask(team, "the invoice export is broken again")
    shown = objects_of(out)
    assert len(shown) == 2 and set(shown) <= {"task_inv00000", "task_inv00001", "task_inv00002"}


def test_at_most_three_relations(team: Path) -> None:
    out = ask(team, "Migrate billing database this week")
    assert objects_of(out) == ["task_hub00001"]
    assert len([x for x in out.splitlines() if x.startswith(("  → ", "  ← "))]) == 3


def test_at_most_two_proposals_labelled_unconfirmed(team: Path) -> None:
    out = ask(team, "check rule:no-raw-control-bytes")
    lines = out.splitlines()
    assert "Unconfirmed proposals (not facts — review with `ontoloom proposals`):" in lines
    proposals = [x for x in lines if "[unconfirmed]" in x]
    assert len(proposals) == 2
    for line in proposals:
        assert re.fullmatch(
            r"- \[unconfirmed\] [0-9a-f]{12}: rule:no-raw-control-bytes relates-to \S+ \(enrich, tier HIGH\)",
            line,
        ), line
    assert "doc:payroll" not in out  # touches a private object
    assert "rejected" not in out and "task_a1b2c3d4" not in out  # the rejected one


@pytest.mark.parametrize(
    "prompt",
    ["payroll salaries 2026", "what does doc:payroll say", "who is Secret Agent", "pers_secret01"],
)
def test_private_objects_are_never_shown(team: Path, prompt: str) -> None:
    out = ask(team, prompt)
    assert "payroll" not in out.lower() and "secret" not in out.lower()


@pytest.mark.parametrize(
    ("prompt", "found"),
    [
        ("is Zorblax healthy", "proj_zorblax1"),
        ("the Zorblax deploy failed again", "proj_zorblax1"),
        ("can we ship the Quuxify change today?", "task_quuxify1"),
    ],
)
def test_a_distinctive_name_is_found_beside_everyday_words(
    team: Path, prompt: str, found: str
) -> None:
    assert objects_of(ask(team, prompt)) == [found]


@pytest.mark.parametrize(
    "prompt",
    [
        "what's the weather like",
        "refactor this function",
        "hello!",
        "thanks, that works",
        "please run the tests and tell me what fails",
    ],
)
def test_quiet_on_unrelated_prompts(team: Path, prompt: str) -> None:
    assert ask(team, prompt) == ""


def test_the_instance_is_found_from_the_events_cwd(team: Path, tmp_path: Path) -> None:
    sub = team / "records" / "memory"
    event = {"hook_event_name": "UserPromptSubmit", "cwd": str(sub), "prompt": "task_a1b2c3d4"}
    done = hook("prompt-context", event, cwd=tmp_path)  # the process runs elsewhere
    assert done.returncode == 0 and objects_of(done.stdout) == ["task_a1b2c3d4"]
    data_dir = hook(
        "prompt-context", {"prompt": "task_a1b2c3d4"}, cwd=tmp_path, data_dir=team / ".ontoloom"
    )
    assert objects_of(data_dir.stdout) == ["task_a1b2c3d4"]
    home = hook(
        "prompt-context",
        {"prompt": "task_a1b2c3d4"},
        cwd=tmp_path,
        env=_env(ONTOLOOM_HOME=str(team / ".ontoloom")),
    )
    assert objects_of(home.stdout) == ["task_a1b2c3d4"]


# -- prompt-context: silent on every failure path -----------------------------------------------
@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"   \n",
        b"{not json",
        b"\xff\xfe garbage",
        b'["a", "list"]',
        b'"just a string"',
        b"42",
        b"null",
        b"{}",
        b'{"hook_event_name": "UserPromptSubmit"}',
        b'{"prompt": 42}',
        b'{"prompt": ["task_a1b2c3d4"]}',
        b'{"prompt": null}',
        b'{"prompt": "   "}',
    ],
)
def test_silent_on_bad_input(team: Path, raw: bytes) -> None:
    assert_silent(hook("prompt-context", raw=raw, cwd=team))


def test_odd_text_is_still_read(team: Path) -> None:
    # A lone surrogate (valid JSON, not valid Unicode) and control bytes around an id.
    raw = b'{"prompt": "\\ud800 \\u0000 see `task_a1b2c3d4`, \\u001b[31m\\n"}'
    done = hook("prompt-context", raw=raw, cwd=team)
    assert done.returncode == 0 and done.stderr == ""
    assert objects_of(done.stdout) == ["task_a1b2c3d4"]


def test_the_hooks_never_write_to_the_data_dir(team: Path) -> None:
    def files() -> dict[str, tuple[int, int]]:
        return {
            str(p.relative_to(team)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in (team / ".ontoloom").rglob("*")
            if p.is_file()
        }

    before = files()
    ask(team, "what blocks task_e5f6a7b8 and the literal control bytes")
    start(team)
    assert files() == before


def test_silent_without_a_store_and_creates_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "nowhere"
    empty.mkdir()
    event = {"prompt": "what blocks task_a1b2c3d4", "cwd": str(empty)}
    assert_silent(hook("prompt-context", event, cwd=empty))
    assert_silent(hook("prompt-context", event, cwd=empty, data_dir=empty / "missing"))
    assert_silent(
        hook("prompt-context", event, cwd=empty, env=_env(ONTOLOOM_HOME=str(empty / "home")))
    )
    assert list(empty.iterdir()) == []


def test_silent_in_an_instance_without_a_store(tmp_path: Path) -> None:
    (tmp_path / "ontoloom.toml").write_text("")
    assert_silent(hook("prompt-context", {"prompt": "task_a1b2c3d4"}, cwd=tmp_path))
    assert not (tmp_path / ".ontoloom").exists()


def test_silent_and_quick_while_a_writer_holds_the_store(team: Path) -> None:
    with DataDirLock(team / ".ontoloom", exclusive=True, wait=5):
        start = time.monotonic()
        done = hook(
            "prompt-context",
            {"prompt": "task_a1b2c3d4"},
            cwd=team,
            env=_env(ONTOLOOM_LOCK_TIMEOUT="60"),
        )
        elapsed = time.monotonic() - start
    assert_silent(done)
    assert elapsed < 30  # it never waits for the writer (the lock timeout here is 60 s)
    assert objects_of(ask(team, "task_a1b2c3d4")) == ["task_a1b2c3d4"]  # and answers after


def test_silent_on_a_garbage_store(tmp_path: Path) -> None:
    store = tmp_path / "d" / "store"
    store.mkdir(parents=True)
    (store / "CURRENT").write_bytes(b"MANIFEST-000001\n")
    (store / "MANIFEST-000001").write_bytes(os.urandom(4096))
    assert_silent(
        hook("prompt-context", {"prompt": "task_a1b2c3d4"}, cwd=tmp_path, data_dir=tmp_path / "d")
    )
    (store / "CURRENT").write_bytes(os.urandom(64))
    assert_silent(
        hook("prompt-context", {"prompt": "task_a1b2c3d4"}, cwd=tmp_path, data_dir=tmp_path / "d")
    )


def test_a_corrupt_search_index_leaves_ids_titles_and_aliases(team: Path, tmp_path: Path) -> None:
    data_dir = tmp_path / "copy"
    shutil.copytree(team / ".ontoloom", data_dir)
    (data_dir / "search.sqlite").write_bytes(b"this is not a database" * 100)

    def run(prompt: str) -> subprocess.CompletedProcess[str]:
        return hook("prompt-context", {"prompt": prompt}, cwd=tmp_path, data_dir=data_dir)

    by_id = run("what blocks task_e5f6a7b8")
    assert by_id.returncode == 0 and by_id.stderr == ""
    assert objects_of(by_id.stdout)[0] == "task_e5f6a7b8"
    by_alias = run("escape bytes in output again")
    assert objects_of(by_alias.stdout)[0] == "failure-class:literal-control-bytes"
    assert_silent(run("why does the payment gateway timeout on retries"))  # search only
    (data_dir / "search.sqlite").unlink()
    assert objects_of(run("task_e5f6a7b8").stdout) == ["task_e5f6a7b8"]


@pytest.mark.parametrize(
    ("name", "event", "answer"),
    [
        ("prompt-context", {"prompt": "escape bytes in output: task_a1b2c3d4"}, HEADER),
        ("session-start", {"hook_event_name": "SessionStart", "source": "startup"}, "ontoloom: "),
    ],
)
def test_the_hook_path_imports_neither_rdflib_pyshacl_nor_click(
    team: Path, tmp_path: Path, name: str, event: dict[str, str], answer: str
) -> None:
    """Run the console script's entry point in a process and list what it imported."""
    listing = tmp_path / "modules.json"
    script = f"""
import atexit, io, json, sys
atexit.register(lambda: open({str(listing)!r}, "w").write(json.dumps(sorted(sys.modules))))
from ontoloom.entry import main
sys.argv = ["ontoloom", "hook", {name!r}, "--data-dir", {str(team / ".ontoloom")!r}]
sys.stdin = io.TextIOWrapper(io.BytesIO({json.dumps(event).encode()!r}))
main()
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(),
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.startswith(answer)  # the hook answered
    modules = set(json.loads(listing.read_text()))
    assert "ontoloom.hooks" in modules
    for heavy in ("rdflib", "pyshacl", "owlrl", "click", "rich", "ontoloom.cli", "ontoloom.api"):
        assert heavy not in modules, heavy


def test_hooks_go_the_fast_way_and_everything_else_to_click(tmp_path: Path) -> None:
    assert hook_route(["hook", "prompt-context"]) == ("prompt_context", None)
    assert hook_route(["--data-dir", "d", "hook", "session-start"]) == ("session_start", "d")
    assert hook_route(["hook", "session-start", "--data-dir", "d"]) == ("session_start", "d")
    assert hook_route(["hook", "prompt-context", "--help"]) is None
    assert hook_route(["hook", "--data-dir", "d", "prompt-context"]) is None
    assert hook_route(["hook"]) is None and hook_route([]) is None
    helped = subprocess.run(
        [ONTOLOOM, "hook", "prompt-context", "--help"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(),
    )
    assert helped.returncode == 0 and "UserPromptSubmit" in helped.stdout


def test_salient_terms() -> None:
    assert salient_terms("What's the weather like?") == ["weather"]
    assert salient_terms("see doc:billing/tax and rule:no-raw-control-bytes") == [
        "doc:billing/tax",
        "rule:no-raw-control-bytes",
        "doc",
        "billing",
        "tax",
        "rule",
        "raw",
        "control",
        "bytes",
    ]


# -- session-start ------------------------------------------------------------------------------
def start(cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    event = {
        "session_id": "s1",
        "cwd": str(cwd),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    return hook("session-start", event, cwd=cwd, **kwargs)


def test_session_start_status_line(team: Path) -> None:
    done = start(team)
    assert done.returncode == 0 and done.stderr == ""
    match = STATUS.fullmatch(done.stdout.rstrip("\n"))
    assert match, done.stdout
    with Graph.open(team / ".ontoloom") as g:
        summary = g.summary()
    objects, relations, pending, when = match.groups()
    assert (int(objects), int(relations)) == (summary["objects"], summary["relations"])
    assert int(objects) == 12 + 12 + 5  # from records, written by agents, the hub's steps
    assert int(pending) == 4  # three on the rule, one touching a private doc; not the rejected
    assert when == "just now"


def test_session_start_cue_once_then_the_status_line(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    init_instance(root)
    first = start(root)
    assert (first.returncode, first.stdout, first.stderr) == (0, CUE + "\n", "")
    assert (root / ".ontoloom" / "hook-state.json").is_file()
    second = start(root)
    assert (
        second.stdout == "ontoloom: 0 objects · 0 relations · 0 proposals pending · rebuilt never\n"
    )
    _write_records(root)
    with Graph.open(root / ".ontoloom", write=True) as g:
        g.rebuild()
        g.create("Task", {"title": "One more", "status": "open"}, id="task_onemore1")
    third = STATUS.fullmatch(start(root).stdout.rstrip("\n"))
    assert third and third.group(4) == "just now" and int(third.group(1)) == 13
    manifest = root / ".ontoloom" / "records.json"
    data = json.loads(manifest.read_text())
    data["rebuilt"] = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=3, minutes=5)).isoformat()
    manifest.write_text(json.dumps(data))
    assert start(root).stdout.endswith("· rebuilt 3 h ago\n")


def test_session_start_in_an_instance_without_a_store_never_creates_one(tmp_path: Path) -> None:
    (tmp_path / "ontoloom.toml").write_text("")
    assert start(tmp_path).stdout == CUE + "\n"
    assert start(tmp_path).stdout == CUE + "\n"  # nowhere to remember it: no data dir is made
    assert not (tmp_path / ".ontoloom").exists()


def test_session_start_silent_without_an_instance(tmp_path: Path) -> None:
    assert_silent(start(tmp_path))
    assert_silent(hook("session-start", {}, cwd=tmp_path, data_dir=tmp_path / "missing"))
    assert list(tmp_path.iterdir()) == []


def test_session_start_silent_on_bad_input_or_a_busy_store(team: Path) -> None:
    for raw in (b"{not json", b"[1]", b"\xff"):
        assert_silent(hook("session-start", raw=raw, cwd=team))
    assert STATUS.fullmatch(hook("session-start", raw=b"", cwd=team).stdout.rstrip("\n"))
    with DataDirLock(team / ".ontoloom", exclusive=True, wait=5):
        assert_silent(start(team, env=_env(ONTOLOOM_LOCK_TIMEOUT="60")))


def test_a_kind_that_repeats_the_type_is_not_shown(tmp_path: Path) -> None:
    from ontoloom.memory import Memory

    init_instance(tmp_path, tmp_path / ".ontoloom")
    with Graph.open(tmp_path / ".ontoloom", write=True) as g:
        Memory(g).create_entities(
            [
                {"name": "Zorblax Quimby", "entityType": "person", "observations": []},
                {"name": "Zorblax Labs", "entityType": "company", "observations": []},
            ]
        )
    text = ask(tmp_path, "What does Zorblax Quimby do at Zorblax Labs?")
    person = next(line for line in text.splitlines() if "Zorblax Quimby" in line)
    company = next(line for line in text.splitlines() if "Zorblax Labs" in line)
    assert "kind" not in person  # a Person of entityType "person"
    assert "· kind company" in company  # a Thing: the kind is all it says
