"""`ontoloom status` (no --write) is the application layer's ``store_status`` operation: the
command line prints what ``ontoloom.ops`` answers, read from ontoloom.toml with no request
to the store — so it answers while the endpoint is down, and opens nothing."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from ontoloom import ops
from ontoloom.cli import main
from ontoloom.errors import BadInput


def _init(root: Path) -> Path:
    done = CliRunner().invoke(main, ["init", str(root)])
    assert done.exit_code == 0, done.output
    return root / ".ontoloom"


def _status(data_dir: Path, *more: str):
    return CliRunner().invoke(main, ["--data-dir", str(data_dir), "status", *more])


def _closed_port() -> int:
    with socket.socket() as s:  # bound, never listening: a connection is refused
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_status_of_an_embedded_instance_is_the_ops_answer(tmp_path: Path) -> None:
    data_dir = _init(tmp_path / "inst")
    answer = ops.call(data_dir, "store_status", {}).value
    assert answer["store"] == "embedded" and answer["gaps"] == []
    assert Path(answer["path"]).is_relative_to(data_dir)
    shown = _status(data_dir, "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout) == answer


def test_status_names_an_endpoint_that_is_down_without_asking_it(tmp_path: Path) -> None:
    data_dir = _init(tmp_path / "inst")
    url = f"http://127.0.0.1:{_closed_port()}"
    toml = tmp_path / "inst" / "ontoloom.toml"
    toml.write_text(
        toml.read_text()
        + f'\n[store]\nendpoint = "{url}/query"\nupdate_endpoint = "{url}/update"\n'
        + 'default_graph = "named"\nengine = "Oxigraph/0.5"\ngaps = ["booleans-as-integers"]\n'
    )
    answer = ops.call(data_dir, "store_status", {}).value
    assert answer["store"] == "endpoint"
    assert (answer["endpoint"], answer["update_endpoint"]) == (f"{url}/query", f"{url}/update")
    assert (answer["default_graph"], answer["engine"]) == ("named", "Oxigraph/0.5")
    assert [g["gap"] for g in answer["gaps"]] == ["booleans-as-integers"]
    shown = _status(data_dir, "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout) == answer
    text = _status(data_dir)
    assert text.exit_code == 0 and f"{url}/query" in text.output
    # A write does ask the store: it is down, and says so (the status above never asked).
    listed = CliRunner().invoke(main, ["--data-dir", str(data_dir), "list"])
    assert listed.exit_code != 0


def test_store_status_refuses_arguments_it_does_not_take(tmp_path: Path) -> None:
    data_dir = _init(tmp_path / "inst")
    with pytest.raises(BadInput):
        ops.call(data_dir, "store_status", {"verbose": True})
