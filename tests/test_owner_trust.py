"""The owner's socket is trusted only between processes of one user (``SO_PEERCRED``): a
client sends nothing to another user's listener, and an owner reads nothing from another
user's client. Needs root (to run the other side as ``nobody``)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import wait_until

NOBODY = 65534
# The other user's side is standard library only: a system Python it can execute (this
# interpreter may live where that user cannot read).
OTHER_PYTHON = shutil.which("python3", path="/usr/bin:/bin") or ""
root_only = pytest.mark.skipif(
    not hasattr(socket, "SO_PEERCRED") or os.geteuid() != 0 or not OTHER_PYTHON,
    reason="runs the other end as another user: needs root, SO_PEERCRED (Linux) and /usr/bin/python3",
)

FAKE_OWNER = r"""
import json, socket, sys
path, log = sys.argv[1], sys.argv[2]
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen(1)
open(log + ".ready", "w").close()
conn, _ = server.accept()
conn.settimeout(3)
try:
    got = conn.recv(65536)
except OSError:
    got = b""
open(log, "wb").write(got)
conn.sendall(json.dumps({"result": "forged"}).encode() + b"\n")
"""


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory under /tmp that another user can reach (pytest's own is 0700)."""
    base = Path(tempfile.mkdtemp(prefix="ontoloom-trust-"))
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _shared_dir(base: Path) -> Path:
    data_dir = base / "shared" / ".ontoloom"
    data_dir.mkdir(parents=True)
    for d in (base, base / "shared", data_dir):
        d.chmod(0o777)  # another user may write here: what the check guards against
    return data_dir


@contextlib.contextmanager
def _fake_owner(data_dir: Path, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Another user's process listening on the data dir's socket, logging what it gets."""
    fake = subprocess.Popen(
        [OTHER_PYTHON, "-c", FAKE_OWNER, str(data_dir / "owner.sock"), str(log)], user=NOBODY
    )
    try:
        wait_until(lambda: Path(str(log) + ".ready").exists(), what="the fake owner listening")
        yield fake
    finally:
        fake.kill()


@root_only
def test_a_client_sends_nothing_to_another_users_listener(shared: Path) -> None:
    from ontoloom.owner_client import OwnerUntrusted, forward

    data_dir = _shared_dir(shared)
    log = shared / "received"
    with _fake_owner(data_dir, log) as fake:
        secret = {"kind": "op", "name": "get_entity", "arguments": {"id": "AKIAIOSFODNN7EXAMPLE"}}
        with pytest.raises(OwnerUntrusted, match="another user"):
            forward(data_dir, secret, wait=5)
        fake.wait(10)
    assert log.read_bytes() == b""  # not one byte of the request reached it


@root_only
def test_the_cli_refuses_another_users_listener_readably(shared: Path) -> None:
    data_dir = _shared_dir(shared)
    log = shared / "received"
    with _fake_owner(data_dir, log) as fake:
        done = subprocess.run(
            [sys.executable, "-m", "ontoloom", "--data-dir", str(data_dir), "list"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        fake.wait(10)
    assert done.returncode == 2
    assert "another user's process" in done.stderr and "forged" not in done.stdout
    assert log.read_bytes() == b""


CLIENT = r"""
import json, socket, sys
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.settimeout(5)
conn.connect(sys.argv[1])
conn.sendall(json.dumps({"kind": "op", "name": "list_entities", "arguments": {}}).encode() + b"\n")
try:
    answer = conn.recv(65536)
except OSError:
    answer = b""
sys.stdout.write(answer.decode())
"""


@root_only
def test_an_owner_reads_nothing_from_another_users_client(shared: Path) -> None:
    from ontoloom.api import Graph
    from ontoloom.owner import Owner

    data_dir = _shared_dir(shared)
    with Graph.open(data_dir, write=True, create=True) as g:
        g.create("Task", {"title": "private plans", "status": "open"}, "task_p")
    owner = Owner.claim(data_dir)
    assert owner is not None
    try:
        (data_dir / "owner.sock").chmod(0o777)  # as if the mode had been loosened
        done = subprocess.run(
            [OTHER_PYTHON, "-c", CLIENT, str(data_dir / "owner.sock")],
            capture_output=True,
            text=True,
            timeout=30,
            user=NOBODY,
        )
    finally:
        owner.close()
    assert "task_p" not in done.stdout and "private" not in done.stdout
    assert done.stdout == "" or "error" in json.loads(done.stdout)
