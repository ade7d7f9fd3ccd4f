"""One rule for where data lives (issue 32): the CLI, the MCP server, `serve` and the hooks
find the same data dir from the same working directory and environment, and `ontoloom where`
says which one and by which rule."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from test_mcp import ONTOLOOM


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ONTOLOOM_HOME"}
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    env.update(extra)
    return env


def _where(cwd: Path, env: dict[str, str], *args: str) -> dict:
    done = subprocess.run(
        [ONTOLOOM, "where", "--json", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _mcp_creates(cwd: Path, env: dict[str, str], name: str) -> None:
    """`ontoloom mcp` started as a client starts it, in ``cwd``: one entity stored."""

    async def main() -> None:
        params = StdioServerParameters(command=ONTOLOOM, args=["mcp"], env=env, cwd=str(cwd))
        with open(os.devnull, "w") as err:
            async with (
                stdio_client(params, errlog=err) as (r, w),
                ClientSession(r, w) as session,
            ):
                await session.initialize()
                entity = {"name": name, "entityType": "person", "observations": ["x"]}
                result = await session.call_tool("create_entities", {"entities": [entity]})
                assert not result.isError, result

    asyncio.run(main())


def test_outside_an_instance_the_cli_and_the_mcp_server_share_one_memory(
    tmp_path: Path,
) -> None:
    """The CLI kept data in ./.ontoloom, `ontoloom mcp` in ~/.local/share/ontoloom."""
    cwd = tmp_path / "somewhere"
    cwd.mkdir()
    env = _env(tmp_path)
    _mcp_creates(cwd, env, "Alice")
    listed = subprocess.run(
        [ONTOLOOM, "--json", "list"], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert listed.returncode == 0, listed.stderr
    assert "Alice" in listed.stdout
    assert list(cwd.iterdir()) == []  # neither wrote where it was started
    status = subprocess.run(  # the session-start hook reads the same memory
        [ONTOLOOM, "hook", "session-start"],
        input=json.dumps({"hook_event_name": "SessionStart", "cwd": str(cwd)}),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert status.returncode == 0 and status.stdout.startswith("ontoloom: 1 objects"), status
    where = _where(cwd, env)
    assert where["data_dir"] == str(tmp_path / "xdg" / "ontoloom") and where["rule"] == "user"


@pytest.mark.parametrize("rule", ["--data-dir", "ONTOLOOM_HOME", "instance", "here", "user"])
def test_where_names_the_data_dir_and_the_rule_and_mcp_agrees(tmp_path: Path, rule: str) -> None:
    project = tmp_path / "project"
    cwd = project / "deep"
    cwd.mkdir(parents=True)
    env, args = _env(tmp_path), []
    expected = {
        "--data-dir": tmp_path / "explicit",
        "ONTOLOOM_HOME": tmp_path / "home",
        "instance": project / ".ontoloom",
        "here": cwd / ".ontoloom",
        "user": tmp_path / "xdg" / "ontoloom",
    }[rule]
    if rule == "--data-dir":
        args = ["--data-dir", str(expected)]
    elif rule == "ONTOLOOM_HOME":
        env["ONTOLOOM_HOME"] = str(expected)
    elif rule == "instance":
        (project / "ontoloom.toml").write_text("")
    elif rule == "here":  # a data dir an earlier version made outside any instance
        expected.mkdir()
    where = _where(cwd, env, *args)
    assert (where["data_dir"], where["rule"]) == (str(expected), rule)
    assert where["reason"] and where["exists"] is (rule == "here")
    text = subprocess.run(
        [ONTOLOOM, "where", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert text.returncode == 0 and text.stdout.splitlines()[0] == str(expected)
    if rule != "--data-dir":  # the MCP server, started in the same place, stores there
        _mcp_creates(cwd, env, "Bob")
        assert (expected / "store").is_dir()
