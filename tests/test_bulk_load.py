"""The journaled bulk load (shared/DESIGN.md "Writes"; ontoloom.store.journal): an import is
loaded into a checkpoint, validated there and switched in with one rename. The process is
killed (SIGKILL) or interrupted (SIGINT) at each step through the test seam
``ONTOLOOM_TEST_STEP``; the store is then exactly the old one or the new one — compared with
what the file says, read by pyoxigraph, not with ontoloom's own output — and the import,
run again, succeeds."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pyoxigraph
import pytest

from conftest import quads_of
from ontoloom.api import Graph
from ontoloom.store import store_path
from ontoloom.store.journal import POINTER, STEPS
from ontoloom.vocab import FACTS, HISTORY

ID = "https://ontoloom.dev/id/"
OL = "https://ontoloom.dev/ns#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
XSD = "http://www.w3.org/2001/XMLSchema#"


def _tasks(first: int, count: int, status: str = "open", *, by_value: bool = True) -> str:
    lines = []
    for i in range(first, first + count):
        t = f"<{ID}task_bulk{i}>"
        lines += [
            f"{t} <{RDF_TYPE}> <{OL}Task> .",
            f'{t} <{OL}title> "Bulk task {i}" .',
            f'{t} <{OL}status> "{status}" .',
        ]
        if by_value:  # kept by value in the store ("7"), given back as written: a record
            lines.append(f'{t} <http://example.org/count> "00{i % 10}"^^<{XSD}integer> .')
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir with a few objects already (the store before every import here)."""
    data_dir = tmp_path_factory.mktemp("template") / "d"
    with Graph.open(data_dir, write=True, create=True) as g:
        for i in range(3):
            g.create("Task", {"title": f"Old {i}", "status": "done"}, id=f"task_old{i}")
    return data_dir


@pytest.fixture
def data_dir(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "d"
    shutil.copytree(template, copy)
    return copy


@pytest.fixture
def import_file(tmp_path: Path) -> Path:
    path = tmp_path / "bulk.nt"
    path.write_text(_tasks(0, 30))
    return path


def _file_quads(path: Path) -> set:
    """The file's triples in the facts graph, as pyoxigraph reads them (written forms kept)."""
    with path.open("rb") as f:
        triples = list(pyoxigraph.parse(f, format=pyoxigraph.RdfFormat.N_TRIPLES))
    return {pyoxigraph.Quad(t.subject, t.predicate, t.object, FACTS) for t in triples}


def _ontoloom(
    data_dir: Path, *args: str, step: str | None = None, bulk_load: str = "10"
) -> subprocess.CompletedProcess:
    """``ontoloom ARGS`` in a process of its own; every import here is a bulk load (from 10
    quads) unless ``bulk_load`` says otherwise."""
    # (a crash of the store's native code shows its Python stack in the failure)
    env = {**os.environ, "ONTOLOOM_BULK_LOAD": bulk_load, "PYTHONFAULTHANDLER": "1"}
    env.pop("ONTOLOOM_TEST_STEP", None)
    if step is not None:
        env["ONTOLOOM_TEST_STEP"] = step
    script = str(Path(sys.executable).with_name("ontoloom"))
    return subprocess.run(
        [script, "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def _store_dirs(data_dir: Path) -> list[str]:
    return sorted(p.name for p in data_dir.iterdir() if p.name.startswith("store"))


def _left_clean(data_dir: Path) -> None:
    """One store directory (the live one) and its pointer, nothing a bulk load left."""
    live = store_path(data_dir).name
    assert _store_dirs(data_dir) == sorted({live} | ({POINTER} if live != "store" else set()))


# Steps after which the pointer names the new store: the rename is the commit.
_SWITCHED = {"renamed", "switched"}


@pytest.mark.parametrize("step", STEPS)
def test_a_crash_at_any_step_leaves_the_old_store_or_the_new_one_and_a_retry_succeeds(
    data_dir: Path, import_file: Path, step: str
) -> None:
    before = quads_of(data_dir)
    after = before | _file_quads(import_file)
    assert after != before
    crashed = _ontoloom(data_dir, "import", str(import_file), step=f"{step}:kill")
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    # Exactly one of the two states, and which one is fixed by the step: the rename decides.
    assert quads_of(data_dir) == (after if step in _SWITCHED else before)
    retried = _ontoloom(data_dir, "import", str(import_file))
    assert retried.returncode == 0, retried.stderr
    assert quads_of(data_dir) == after
    _left_clean(data_dir)


def test_the_next_writer_drops_a_checkpoint_a_crash_left_and_readers_ignore_it(
    data_dir: Path, import_file: Path
) -> None:
    before = quads_of(data_dir)
    crashed = _ontoloom(data_dir, "import", str(import_file), step="validated:kill")
    assert crashed.returncode == -signal.SIGKILL
    assert len(_store_dirs(data_dir)) == 2  # the live store and the stray checkpoint
    assert quads_of(data_dir) == before  # a reader: reads the live store, removes nothing
    assert len(_store_dirs(data_dir)) == 2
    assert (
        _ontoloom(data_dir, "create", "Task", "-p", "title=T", "-p", "status=open").returncode == 0
    )
    _left_clean(data_dir)


def test_a_refused_import_leaves_the_store_untouched_and_no_checkpoint(
    data_dir: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.nt"
    bad.write_text(_tasks(0, 20) + _tasks(20, 1, status="bogus"))
    before = quads_of(data_dir)
    with Graph.open(data_dir) as g:
        generation = g.backend.generation()
        dump_before = sorted(map(str, g.backend.quads()))
    refused = _ontoloom(data_dir, "import", str(bad))
    assert refused.returncode == 1
    assert "task_bulk20" in refused.stderr and "nothing was stored" in refused.stderr
    with Graph.open(data_dir) as g:
        assert g.backend.generation() == generation
        assert sorted(map(str, g.backend.quads())) == dump_before  # bookkeeping included
    assert quads_of(data_dir) == before
    _left_clean(data_dir)


@pytest.mark.parametrize("step", ["checkpoint", "loading", "validated"])
def test_ctrl_c_during_an_import_leaves_the_store_as_it_was_and_says_so(
    data_dir: Path, import_file: Path, step: str
) -> None:
    before = quads_of(data_dir)
    stopped = _ontoloom(data_dir, "import", str(import_file), step=f"{step}:int")
    assert stopped.returncode == 130, stopped.stderr
    assert "nothing was imported: the store is as it was" in stopped.stderr
    assert "Traceback" not in stopped.stderr
    assert quads_of(data_dir) == before
    _left_clean(data_dir)


def test_ctrl_c_once_the_store_is_switched_says_the_import_was_stored(
    data_dir: Path, import_file: Path
) -> None:
    after = quads_of(data_dir) | _file_quads(import_file)
    stopped = _ontoloom(data_dir, "import", str(import_file), step="renamed:int")
    assert stopped.returncode == 130, stopped.stderr
    assert "the import was stored whole" in stopped.stderr
    assert quads_of(data_dir) == after
    _left_clean(data_dir)


def test_a_bulk_load_and_a_one_request_write_store_the_same(
    data_dir: Path, import_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The route changes how the delta is stored, never what: bookkeeping aside (records of
    literals as written, generation), the two stores hold the same quads."""
    from ontoloom.interchange import import_file as run_import

    other = tmp_path / "other"
    shutil.copytree(data_dir, other)
    assert _ontoloom(data_dir, "import", str(import_file)).returncode == 0
    monkeypatch.setenv("ONTOLOOM_BULK_LOAD", "1000000")
    with Graph.open(other, write=True) as g:
        run_import(g, import_file)
    assert store_path(data_dir).name != "store" and store_path(other).name == "store"
    assert quads_of(data_dir) == quads_of(other)
    with Graph.open(data_dir) as a, Graph.open(other) as b:
        assert a.backend.generation() == b.backend.generation()
        assert [h.id for h in a.search("Bulk task 7")] == [h.id for h in b.search("Bulk task 7")]


# -- progress: a terminal sees the load, with its rate and time left; a pipe sees nothing ---------
def test_a_bulk_import_shows_its_progress_on_a_terminal_and_nothing_on_a_pipe(
    data_dir: Path, import_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_long_work import _run_on_a_terminal

    monkeypatch.setenv("ONTOLOOM_BULK_LOAD", "10")
    code, out, err = _run_on_a_terminal(data_dir, "import", str(import_file))
    assert code == 0 and out.startswith("imported 120 quads")
    assert b"loading quads" in err and b"eta" in err
    piped = _ontoloom(data_dir, "import", str(import_file))
    assert piped.returncode == 0 and piped.stderr == ""


def test_the_rate_column_says_how_many_a_second() -> None:
    from types import SimpleNamespace

    from ontoloom.progress import _rate_column

    column = _rate_column()
    assert column.render(SimpleNamespace(finished_speed=None, speed=48213.4)).plain == "48,213/s"
    assert column.render(SimpleNamespace(finished_speed=None, speed=None)).plain == ""


# -- a global shape: validated in place on the checkpoint -----------------------------------------
_ONE_URGENT = """@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ol: <https://ontoloom.dev/ns#> .
ol: sh:declare [ sh:prefix "ol" ; sh:namespace "https://ontoloom.dev/ns#" ] .
ol:OneUrgent a sh:NodeShape ; sh:targetClass ol:Task ; sh:sparql [ sh:prefixes ol: ;
  sh:select \"\"\"SELECT $this WHERE { $this ol:priority "urgent" .
    ?other ol:priority ?p . FILTER (?p = "urgent" && ?other != $this) }\"\"\" ] .
"""


def _urgent(path: Path, urgent: list[int]) -> Path:
    lines = [f'<{ID}task_bulk{i}> <{OL}priority> "urgent" .' for i in urgent]
    # (no literal kept by value: a SPARQL constraint over such a store goes to pySHACL)
    path.write_text(_tasks(0, 20, by_value=False) + "\n".join(lines) + "\n")
    return path


def test_a_global_shape_refuses_a_bulk_load_exactly_as_one_request(
    data_dir: Path, tmp_path: Path
) -> None:
    """A shape about the whole graph (no walk bounds what it reads) is validated on the
    checkpoint in place: the refusal names the same violations as the one-request route,
    which the differential tests hold to full validation."""
    shapes = tmp_path / "urgent.ttl"
    shapes.write_text(_ONE_URGENT)
    added = _ontoloom(data_dir, "--json", "schema", "add-shapes", str(shapes))
    assert added.returncode == 0, added.stderr
    assert [c["route"] for c in json.loads(added.stdout)["checks"]] == ["global"]
    other = tmp_path / "other"
    shutil.copytree(data_dir, other)
    bad = _urgent(tmp_path / "two.nt", [3, 7])
    before = quads_of(data_dir)
    bulk = _ontoloom(data_dir, "--json", "import", str(bad))
    one = _ontoloom(other, "--json", "import", str(bad), bulk_load="1000000")
    assert bulk.returncode == one.returncode == 1
    refused = json.loads(bulk.stdout)["results"]
    assert {r["focus"] for r in refused} == {"task_bulk3", "task_bulk7"}
    assert refused == json.loads(one.stdout)["results"]
    assert quads_of(data_dir) == before
    _left_clean(data_dir)
    good = _urgent(tmp_path / "one.nt", [5])
    assert _ontoloom(data_dir, "import", str(good)).returncode == 0
    assert quads_of(data_dir) == before | _file_quads(good)


# -- an owner: it goes on with the new store ------------------------------------------------------
def test_an_owner_switched_by_a_bulk_import_goes_on_with_the_new_store(
    data_dir: Path, import_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ontoloom.owner import Owner

    monkeypatch.setenv("ONTOLOOM_BULK_LOAD", "10")  # the owner runs the import: its setting
    expected = quads_of(data_dir) | _file_quads(import_file)
    owner = Owner.claim(data_dir)
    assert owner is not None
    try:
        old = owner.graph.backend.path
        imported = _ontoloom(data_dir, "import", str(import_file))  # forwarded to the owner
        assert imported.returncode == 0, imported.stderr
        assert owner.graph.backend.path == store_path(data_dir) != old
        assert not old.exists()  # the store it replaced is gone, closed first
        found = _ontoloom(data_dir, "--json", "search", "Bulk task 17")
        assert found.returncode == 0 and '"task_bulk17"' in found.stdout
        made = _ontoloom(data_dir, "create", "Task", "--id", "task_after", "-p", "title=After")
        assert made.returncode == 1  # no status: refused by the owner, on the new store
        made = _ontoloom(
            data_dir,
            "create",
            "Task",
            "--id",
            "task_after",
            "-p",
            "title=After",
            "-p",
            "status=open",
        )
        assert made.returncode == 0, made.stderr
    finally:
        owner.close()
    after = quads_of(data_dir)
    added = {q.subject.value for q in after - expected if q.graph_name != HISTORY}
    assert expected < after and added == {f"{ID}task_after"}  # (and its versions in history)
    _left_clean(data_dir)


def test_a_checkpoint_that_cannot_be_made_stores_nothing_and_says_why(
    data_dir: Path, import_file: Path
) -> None:
    before = quads_of(data_dir)
    (data_dir / "store.1").write_text("in the way\n")  # where the checkpoint would go
    failed = _ontoloom(data_dir, "import", str(import_file))
    assert failed.returncode == 2, failed.stderr
    assert "cannot make a checkpoint" in failed.stderr and "nothing was stored" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert quads_of(data_dir) == before


def test_ctrl_c_during_a_whole_rebuild_leaves_the_graph_as_it_was_and_says_so(
    tmp_path: Path,
) -> None:
    from records_fixture import build

    root = build(tmp_path / "inst")
    data_dir = root / ".ontoloom"
    assert _ontoloom(data_dir, "init", str(root)).returncode == 0
    before = quads_of(data_dir)
    stopped = _ontoloom(data_dir, "rebuild", "--full", step="validated:int")
    assert stopped.returncode == 130, stopped.stderr
    assert "nothing was rebuilt: the graph is as it was" in stopped.stderr
    assert quads_of(data_dir) == before
    _left_clean(data_dir)
    assert _ontoloom(data_dir, "rebuild", "--full").returncode in (0, 1)  # 1: rejected entries
    assert quads_of(data_dir) != before


# -- the layout: the pointer names the live store, settle removes only what a crash left ----------
def test_the_pointer_names_the_live_store_and_a_damaged_one_is_named(tmp_path: Path) -> None:
    from ontoloom.errors import StorageError
    from ontoloom.store.journal import StoreDirs

    dirs = StoreDirs(tmp_path)
    assert dirs.live() == tmp_path / "store"  # a data dir before any bulk load
    (tmp_path / POINTER).write_text("store.3\n")
    assert dirs.live() == tmp_path / "store.3"
    (tmp_path / POINTER).write_text("../elsewhere\n")
    with pytest.raises(StorageError, match=r"store\.current names '\.\./elsewhere'"):
        dirs.live()


def test_settling_removes_only_what_an_interrupted_bulk_load_left(tmp_path: Path) -> None:
    from ontoloom.store.journal import StoreDirs

    for name in ("store", "store.2", "store.3", "storefront", "store.x"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "CURRENT").write_text("x")
    (tmp_path / "store.4").write_text("a file, not a store directory")
    (tmp_path / POINTER).write_text("store.2\n")
    (tmp_path / (POINTER + ".tmp")).write_text("store.3\n")  # a pointer never renamed
    StoreDirs(tmp_path).settle()
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["store.2", "store.4", POINTER, "store.x", "storefront"]
    assert StoreDirs(tmp_path).fresh() == tmp_path / "store.3"


def test_nothing_is_settled_while_the_pointer_names_no_store(tmp_path: Path) -> None:
    from ontoloom.store.journal import StoreDirs

    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "CURRENT").write_text("x")
    (tmp_path / POINTER).write_text("store.5\n")  # moved away by hand: keep what is left
    StoreDirs(tmp_path).settle()
    assert (tmp_path / "store" / "CURRENT").exists()


# -- a bulk load into a small store: full validation after it against full validation before -----
def _refusal(data_dir: Path, path: Path) -> list[dict]:
    from ontoloom.errors import ValidationFailed
    from ontoloom.interchange import import_file as run_import

    with Graph.open(data_dir, write=True) as g:
        try:
            run_import(g, path)
        except ValidationFailed as exc:
            return [f.to_json() for f in exc.findings]
    return []


def test_a_bulk_load_into_a_small_store_refuses_what_one_request_refuses(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Into a store not much larger than the delta, the checkpoint is validated whole and
    compared with the store before (WritePath._whole_difference): the same refusal as the
    one-request route, whose focus-node validation the differential tests hold to full
    validation — and nothing stored."""
    from ontoloom.writes import WritePath

    bad = tmp_path / "bad.nt"
    bad.write_text(_tasks(0, 30) + _tasks(30, 2, status="bogus"))
    other = tmp_path / "other"
    shutil.copytree(data_dir, other)
    before = quads_of(data_dir)
    whole: list[bool] = []
    chosen = WritePath._whole_difference
    monkeypatch.setattr(
        WritePath,
        "_whole_difference",
        lambda self, applied, delta: whole.append(True) or chosen(self, applied, delta),
    )
    monkeypatch.setenv("ONTOLOOM_BULK_LOAD", "10")
    bulk = _refusal(data_dir, bad)
    assert whole, "the bulk load into a small store was validated whole"
    monkeypatch.setenv("ONTOLOOM_BULK_LOAD", "1000000")
    one = _refusal(other, bad)
    assert {f["focus"] for f in bulk} == {"task_bulk30", "task_bulk31"}
    assert bulk == one
    assert quads_of(data_dir) == before
    _left_clean(data_dir)


def test_a_violation_the_store_had_does_not_refuse_a_bulk_load_beside_it(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only what the delta breaks is refused: a violation already stored (smuggled in past
    validation) is found on the checkpoint and on the store before alike."""
    from ontoloom.store.base import Delta
    from ontoloom.terms import Literal, NamedNode, Quad

    task = NamedNode(ID + "task_old0")
    with Graph.open(data_dir, write=True) as g:
        g.writes.commit(
            Delta(adds={Quad(task, NamedNode(OL + "status"), Literal("bogus"), FACTS)}),
            trusted="test: a violation from before",
        )
    good = tmp_path / "good.nt"
    good.write_text(_tasks(0, 30))
    monkeypatch.setenv("ONTOLOOM_BULK_LOAD", "10")
    assert _refusal(data_dir, good) == []
    assert _file_quads(good) <= quads_of(data_dir)
    bad = tmp_path / "bad.nt"
    bad.write_text(_tasks(100, 30) + _tasks(130, 1, status="bogus"))
    assert {f["focus"] for f in _refusal(data_dir, bad)} == {"task_bulk130"}
