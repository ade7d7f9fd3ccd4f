"""Ctrl-C during long work (issue 34, item 4): an import, a rebuild and a reindex, each run as a
child process with stderr on a pseudo-terminal, get SIGINT once their progress shows; each
exits 130 (errors.OUTCOMES["stopped"]), says what it left ("stopped: …"), and the store —
read by pyoxigraph afterwards — holds exactly what it held before. Each, run again, succeeds."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import quads_of
from ontoloom.api import Graph
from ontoloom.errors import OUTCOMES
from ontoloom.interchange import import_file

ID = "https://ontoloom.dev/id/"
OL = "https://ontoloom.dev/ns#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def _tasks(count: int) -> str:
    lines = []
    for i in range(count):
        t = f"<{ID}task_int{i}>"
        lines += [
            f"{t} <{RDF_TYPE}> <{OL}Task> .",
            f'{t} <{OL}title> "Interrupted task {i}" .',
            f'{t} <{OL}status> "open" .',
        ]
    return "\n".join(lines) + "\n"


def _interrupted(data_dir: Path, seen: bytes, *args: str) -> tuple[int, bytes]:
    """``ontoloom ARGS`` with stderr on a terminal; SIGINT once ``seen`` shows there. Its exit
    code and all it wrote to stderr."""
    master, slave = pty.openpty()
    env = {**os.environ, "ONTOLOOM_PROGRESS_AFTER": "0", "COLUMNS": "120"}
    env.pop("ONTOLOOM_TEST_STEP", None)
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("ontoloom")), "--data-dir", str(data_dir), *args],
        stdout=subprocess.DEVNULL,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    os.close(slave)
    err, sent = b"", False
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            err += chunk
        if not sent and seen in err:
            proc.send_signal(signal.SIGINT)
            sent = True
    proc.wait(timeout=120)
    os.close(master)
    assert sent, err[-500:]
    return proc.returncode, err


def _stopped(code: int, err: bytes, said: bytes) -> None:
    assert code == OUTCOMES["stopped"][0] == 128 + signal.SIGINT, (code, err[-800:])
    assert b"stopped: " + said in err, err[-800:]
    assert b"Traceback" not in err


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A data dir holding a few thousand tasks, and a file of 20k more (60k triples)."""
    root = tmp_path_factory.mktemp("interrupts")
    data_dir = root / "d"
    seed = root / "seed.nt"
    seed.write_text(_tasks(4000).replace("task_int", "task_old"))
    with Graph.open(data_dir, write=True, create=True) as g:
        import_file(g, seed)
    more = root / "more.nt"
    more.write_text(_tasks(20000))
    return data_dir, more


def test_ctrl_c_mid_import_leaves_the_store_as_it_was(big: tuple[Path, Path]) -> None:
    data_dir, more = big
    before = quads_of(data_dir)
    code, err = _interrupted(data_dir, b"validating", "import", str(more))
    _stopped(code, err, b"nothing was imported: the store is as it was")
    assert quads_of(data_dir) == before


def test_ctrl_c_mid_reindex_leaves_the_store_and_the_index_as_they_were(
    big: tuple[Path, Path],
) -> None:
    data_dir, _ = big
    before = quads_of(data_dir)
    with Graph.open(data_dir) as g:
        found = [h.id for h in g.search("Interrupted task 17")]
    code, err = _interrupted(data_dir, b"search index", "reindex")
    _stopped(code, err, b"the search index is as it was")
    assert quads_of(data_dir) == before
    with Graph.open(data_dir) as g:
        assert [h.id for h in g.search("Interrupted task 17")] == found


def test_ctrl_c_mid_rebuild_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    root = tmp_path / "inst"
    failures = root / "records" / "failures"
    failures.mkdir(parents=True)
    for i in range(3000):
        (failures / f"2026-11-02-f{i}.md").write_text(
            f"---\nclass: failure-class-{i}\ndate: 2026-11-02\ntitle: Failure {i}\n---\n"
            f"It failed, number {i}.\n"
        )
    (root / "ontoloom.toml").write_text('[records]\nfailures = "records/failures"\n')
    script = str(Path(sys.executable).with_name("ontoloom"))
    made = subprocess.run([script, "init", str(root)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    data_dir = root / ".ontoloom"
    before = quads_of(data_dir)
    code, err = _interrupted(data_dir, b"reading records", "rebuild")
    _stopped(code, err, b"nothing was rebuilt: the graph is as it was")
    assert quads_of(data_dir) == before
