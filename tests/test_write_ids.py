"""Write ids on the embedded store and through the data dir's owner (issue 35): each commit
stores its write id with it; `ontoloom status --write ID` (and the `write_status` operation)
answers from the store; a client whose owner died mid-write asks by the write id instead of
guessing — a write the owner committed is reported done (never "already exists"), one it did
not commit is done once, by the client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import wait_until
from ontoloom import ops
from ontoloom.api import Graph
from ontoloom.errors import OUTCOMES, BadInput, OutcomeUnknown, revive
from ontoloom.store import write_ids
from test_owner import ONTOLOOM, cli


def test_each_commit_stores_its_write_id_with_its_generation(data_dir: Path) -> None:
    with Graph.open(data_dir, write=True, create=True) as g:
        with write_ids.writing("first-write"):
            g.create("Task", {"title": "a", "status": "open"}, id="task_a")
        g.create("Task", {"title": "b", "status": "open"}, id="task_b")  # a fresh id
        generation = g.backend.generation()
        with write_ids.writing("second"):
            g.delete("task_b")
        assert g.backend.committed("first-write") == [generation - 1]
        assert g.backend.committed("second") == [generation + 1]
        assert g.backend.committed("never") == []
    answer = ops.call(data_dir, "write_status", {"write_id": "second"}).value
    assert answer == {"write_id": "second", "status": "committed", "generations": [generation + 1]}


def test_status_answers_committed_not_committed_and_refuses_a_malformed_id(data_dir: Path) -> None:
    with Graph.open(data_dir, write=True, create=True) as g, write_ids.writing("w1"):
        g.create("Task", {"title": "a", "status": "open"}, id="task_a")
    done = cli(data_dir, "--json", "status", "--write", "w1")
    assert done.returncode == 0 and json.loads(done.stdout)["status"] == "committed"
    done = cli(data_dir, "status", "--write", "w2")
    assert done.returncode == 3 and "not committed" in done.stdout
    done = cli(data_dir, "status", "--write", "no such/id")
    assert done.returncode == 2 and "write id" in done.stderr and "Traceback" not in done.stderr


def test_outcome_unknown_has_its_own_exit_code_and_carries_the_write_id() -> None:
    assert OUTCOMES["outcome_unknown"] == (4, 504)
    assert all(code != 4 for kind, (code, _) in OUTCOMES.items() if kind != "outcome_unknown")
    error = OutcomeUnknown("the store went away", "abc")
    assert error.exit_code == 4 and "ontoloom status --write abc" in error.message
    again = revive(error.to_json())
    assert isinstance(again, OutcomeUnknown) and again.write_id == "abc"
    assert again.to_json()["write_id"] == "abc"


# An owner (`ontoloom mcp`) that dies while doing a create: after committing it
# (``after``) or before (``before``), never answering.
_DYING_OWNER = """
import os, sys
from ontoloom.owner import Owner

when = sys.argv.pop(1)
done = Owner._op

def dying(self, name, *rest):
    if name != "create_entity":
        return done(self, name, *rest)
    if when == "after":
        done(self, name, *rest)
        self.graph.backend.flush()
    os._exit(9)

Owner._op = dying
from ontoloom.entry import main
sys.argv = ["ontoloom", *sys.argv[1:]]
main()
"""


@pytest.mark.skipif(sys.platform == "win32", reason="owners need local sockets")
@pytest.mark.parametrize("when", ["after", "before"])
def test_a_client_whose_owner_died_mid_write_asks_by_write_id(tmp_path: Path, when: str) -> None:
    from ontoloom.owner_client import owner_alive

    data_dir = tmp_path / "instance" / ".ontoloom"  # embedded: an owner keeps a local store

    assert cli(data_dir, "create", "Person", "--id", "pers_seed", "-p", "name=S").returncode == 0
    owner = subprocess.Popen(
        [sys.executable, "-c", _DYING_OWNER, when, "--data-dir", str(data_dir), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(lambda: owner_alive(data_dir), 30, what="the owner to claim the data dir")
        done = subprocess.run(
            [
                *ONTOLOOM,
                "--data-dir",
                str(data_dir),
                "create",
                "Task",
                "--id",
                "task_once",
                "-p",
                "title=once",
                "-p",
                "status=open",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert owner.wait(30) == 9
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
    assert done.returncode == 0, done.stderr
    assert "already exists" not in done.stdout + done.stderr
    if when == "after":  # its answer lost, the write not: reported, not done again
        assert "the write was committed" in done.stdout and "not done again" in done.stdout
    listed = json.loads(cli(data_dir, "--json", "list", "--type", "Task").stdout)
    assert [e["id"] for e in listed] == ["task_once"]
    assert cli(data_dir, "check").returncode == 0


def test_a_schema_change_moves_the_schema_generation_and_other_commits_keep_it(
    data_dir: Path,
) -> None:
    with Graph.open(data_dir, write=True, create=True) as g:
        g.create("Task", {"title": "a", "status": "open"}, id="task_a")
        assert g.backend.versions()[1] == 0
    added = cli(data_dir, "schema", "add-type", '{"type": "Sprint", "required": ["name"]}')
    assert added.returncode == 0, added.stderr
    with Graph.open(data_dir, write=True) as g:
        changed = g.backend.generation()
        assert g.backend.versions() == (changed, changed)
        g.create("Task", {"title": "b", "status": "open"}, id="task_b")  # one transaction
        g.delete("task_a")  # one update
        assert g.backend.versions() == (changed + 2, changed)
    with Graph.open(data_dir) as g:  # as stored, not as kept in memory
        assert g.backend.versions() == (changed + 2, changed)


def test_an_mcp_tool_whose_owner_died_after_committing_answers_the_write_status() -> None:
    from ontoloom.mcp_server import tool_result

    lost = {"write_id": "w", "status": "committed", "generations": [3], "answer_lost": True}
    answer = tool_result("create_entities", ops.Result(lost, note="not done again"))
    assert not answer.isError and answer.structuredContent == lost
    assert json.loads(answer.content[0].text)["status"] == "committed"
    assert answer.content[1].text == "note: not done again"


def test_the_http_api_asks_by_write_id_too(data_dir: Path) -> None:
    from test_serve import Server

    with Graph.open(data_dir, write=True, create=True) as g, write_ids.writing("over-http"):
        g.create("Task", {"title": "a", "status": "open"}, id="task_a")
    server = Server(data_dir)
    try:
        asked = server.post("write_status", {"write_id": "over-http"})
        assert asked.status_code == 200, asked.text
        assert asked.json()["status"] == "committed"
        assert server.post("write_status", {"write_id": "other"}).json() == {
            "write_id": "other",
            "status": "not committed",
        }
        assert server.post("write_status", {"write_id": "a b"}).status_code == 400
    finally:
        server.stop()


def test_the_commits_of_one_operation_are_numbered_so_an_error_names_the_one_in_doubt(
    data_dir: Path,
) -> None:
    with Graph.open(data_dir, write=True, create=True) as g, write_ids.writing("multi"):
        g.create("Task", {"title": "a", "status": "open"}, id="task_a")
        first = g.backend.generation()
        g.create("Task", {"title": "b", "status": "open"}, id="task_b")
        assert g.backend.committed("multi") == [first]
        assert g.backend.committed("multi-2") == [first + 1]
    with pytest.raises(BadInput, match="at most 64"), write_ids.writing("x" * 65):
        pass


def test_a_scoped_caller_may_ask_by_write_id(data_dir: Path) -> None:
    """A skill or scoped token whose write ended "outcome unknown" can ask: the answer says
    whether a write id committed, no data of any type."""
    from ontoloom.ops.scope import Scope

    scope = Scope("skill 'narrow' (SKILL.md)", frozenset(), frozenset())
    assert scope.allows("write_status")
    with Graph.open(data_dir, write=True, create=True) as g, write_ids.writing("scoped"):
        g.create("Task", {"title": "a", "status": "open"}, id="task_a")
    answer = ops.call(data_dir, "write_status", {"write_id": "scoped"}, scope=scope).value
    assert answer["status"] == "committed"


def test_a_journaled_bulk_load_stores_its_write_id_and_keeps_the_schema_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = tmp_path / "instance" / ".ontoloom"  # checkpoints: a local store
    added = cli(data_dir, "schema", "add-type", '{"type": "Sprint", "required": ["name"]}')
    assert added.returncode == 0, added.stderr
    monkeypatch.setenv("ONTOLOOM_BULK_LOAD", "1")  # every write goes by checkpoint
    from ontoloom.store.embedded import EmbeddedBackend

    made = []
    checkpoint = EmbeddedBackend.checkpoint
    monkeypatch.setattr(
        EmbeddedBackend, "checkpoint", lambda *a, **k: made.append(1) or checkpoint(*a, **k)
    )
    with Graph.open(data_dir, write=True) as g:
        changed = g.backend.generation()
        assert g.backend.versions() == (changed, changed)
        with write_ids.writing("bulk"):
            g.create("Task", {"title": "a", "status": "open"}, id="task_a")
        assert made and g.backend.committed("bulk") == [changed + 1]
        assert g.backend.versions() == (changed + 1, changed)
    with Graph.open(data_dir) as g:
        assert g.backend.committed("bulk") == [changed + 1]
        assert g.backend.versions() == (changed + 1, changed)
