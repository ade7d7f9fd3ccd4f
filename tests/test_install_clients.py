"""`ontoloom install <client>` for Cursor, Codex CLI, Gemini CLI, OpenCode and Claude Desktop,
and `ontoloom skill`: each client's MCP config merged in its own format (the user's other
entries kept), a second run changing nothing, --dry-run writing nothing, a malformed file
refused with its location and nothing written; instructions where each client reads them."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ontoloom.cli import main
from ontoloom.errors import BadInput
from ontoloom.install import BEGIN, END, claude_desktop_config, install
from ontoloom.skill import skill_text

EXE = "/opt/tools/bin/ontoloom"
SKILL = "---\nname: ontoloom\ndescription: d\n---\n# ontoloom instructions\n\nUse the tools.\n"
BODY = "# ontoloom instructions\n\nUse the tools.\n"


def run(client: str, root: Path, scope: str = "project", dry_run: bool = False, **kw: Any):
    kw.setdefault("environ", {})
    kw.setdefault("platform", "linux")
    return install(
        client,
        scope,
        dry_run,
        project_dir=root / "proj",
        home=root / "home",
        executable=EXE,
        skill=SKILL,
        **kw,
    )


# Per client and scope: (config path, how to read it, where our entry sits, the entry, the
# instruction file or None) — relative to tmp_path.
def config_of(client: str, scope: str) -> tuple[str, list[str], dict[str, Any], str | None]:
    stdio = {"command": EXE, "args": ["mcp"], "env": {}}
    table = {
        ("cursor", "project"): (
            "proj/.cursor/mcp.json",
            ["mcpServers"],
            stdio,
            "proj/.cursor/rules/ontoloom.mdc",
        ),
        ("cursor", "global"): ("home/.cursor/mcp.json", ["mcpServers"], stdio, None),
        ("codex", "project"): (
            "proj/.codex/config.toml",
            ["mcp_servers"],
            {"command": EXE, "args": ["mcp"]},
            "proj/AGENTS.md",
        ),
        ("codex", "global"): (
            "home/.codex/config.toml",
            ["mcp_servers"],
            {"command": EXE, "args": ["mcp"]},
            "home/.codex/AGENTS.md",
        ),
        ("gemini", "project"): (
            "proj/.gemini/settings.json",
            ["mcpServers"],
            stdio,
            "proj/GEMINI.md",
        ),
        ("gemini", "global"): (
            "home/.gemini/settings.json",
            ["mcpServers"],
            stdio,
            "home/.gemini/GEMINI.md",
        ),
        ("opencode", "project"): (
            "proj/opencode.json",
            ["mcp"],
            {"type": "local", "command": [EXE, "mcp"], "enabled": True},
            "proj/AGENTS.md",
        ),
        ("opencode", "global"): (
            "home/.config/opencode/opencode.json",
            ["mcp"],
            {"type": "local", "command": [EXE, "mcp"], "enabled": True},
            "home/.config/opencode/AGENTS.md",
        ),
        ("claude-desktop", "global"): (
            "home/.config/Claude/claude_desktop_config.json",
            ["mcpServers"],
            stdio,
            None,
        ),
    }
    return table[(client, scope)]


CASES = [
    ("cursor", "project"),
    ("cursor", "global"),
    ("codex", "project"),
    ("codex", "global"),
    ("gemini", "project"),
    ("gemini", "global"),
    ("opencode", "project"),
    ("opencode", "global"),
    ("claude-desktop", "global"),
]


def load(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)


def at(data: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    for key in keys:
        data = data[key]
    return data


def existing_config(path: Path, keys: list[str]) -> None:
    """A config with the user's own settings and another server, written in its format."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".toml":
        path.write_text(
            '# my codex settings\nmodel = "o4"  # keep me\n\n[mcp_servers.other]\n'
            'command = "npx"\nargs = ["-y", "other"]\n\n[profiles.fast]\nmodel = "mini"\n',
            encoding="utf-8",
        )
        return
    other = (
        {"type": "local", "command": ["npx", "other"]}
        if keys == ["mcp"]
        else {"command": "npx", "args": ["-y", "other"]}
    )
    data: dict[str, Any] = {"theme": "dark", keys[0]: {"other": other}, "zzz": [1, "ü"]}
    path.write_text(json.dumps(data, indent=4, ensure_ascii=False), encoding="utf-8")


def files_of(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize(("client", "scope"), CASES)
def test_fresh_install_writes_the_entry_and_the_instructions(
    tmp_path: Path, client: str, scope: str
) -> None:
    rel, keys, entry, instructions = config_of(client, scope)
    result = run(client, tmp_path, scope)
    assert result.changed and all(f.action == "created" for f in result.files)
    assert at(load(tmp_path / rel), keys)["ontoloom"] == entry
    if instructions is not None:
        text = (tmp_path / instructions).read_text(encoding="utf-8")
        assert BODY.strip() in text and "name: ontoloom" not in text.split("---\n", 2)[-1]
    written = {str(f.path.relative_to(tmp_path)) for f in result.files}
    assert written == {rel} | ({instructions} if instructions else set())


@pytest.mark.parametrize(("client", "scope"), CASES)
def test_merge_keeps_the_users_other_entries(tmp_path: Path, client: str, scope: str) -> None:
    rel, keys, entry, _ = config_of(client, scope)
    path = tmp_path / rel
    existing_config(path, keys)
    before = load(path)
    run(client, tmp_path, scope)
    after = load(path)
    servers = at(after, keys)
    assert servers["other"] == at(before, keys)["other"] and servers["ontoloom"] == entry
    assert list(servers) == ["other", "ontoloom"]
    for key in before:
        if key != keys[0]:
            assert after[key] == before[key]
    if path.suffix == ".toml":  # comments and layout kept
        text = path.read_text(encoding="utf-8")
        assert text.startswith('# my codex settings\nmodel = "o4"  # keep me\n')
        assert "[profiles.fast]" in text


@pytest.mark.parametrize(("client", "scope"), CASES)
def test_second_run_changes_nothing(tmp_path: Path, client: str, scope: str) -> None:
    rel, keys, _, _ = config_of(client, scope)
    existing_config(tmp_path / rel, keys)
    run(client, tmp_path, scope)
    before = files_of(tmp_path)
    again = run(client, tmp_path, scope)
    assert not again.changed and all(f.action == "unchanged" for f in again.files)
    assert files_of(tmp_path) == before
    assert "already installed; nothing to change" in again.text


@pytest.mark.parametrize(("client", "scope"), CASES)
def test_dry_run_writes_nothing(tmp_path: Path, client: str, scope: str) -> None:
    rel, keys, _, _ = config_of(client, scope)
    result = run(client, tmp_path, scope, dry_run=True)
    assert result.changed and not (tmp_path / "home").exists() and not (tmp_path / "proj").exists()
    assert all(f.diff.startswith("--- /dev/null\n+++ ") for f in result.files)
    assert "dry run: nothing was written" in result.text
    existing_config(tmp_path / rel, keys)
    before = files_of(tmp_path)
    result = run(client, tmp_path, scope, dry_run=True)
    assert any(f.action == "updated" for f in result.files)
    assert files_of(tmp_path) == before


@pytest.mark.parametrize(("client", "scope"), CASES)
@pytest.mark.parametrize("broken", ["syntax", "shape"])
def test_a_malformed_config_is_refused_and_nothing_is_written(
    tmp_path: Path, client: str, scope: str, broken: str
) -> None:
    rel, keys, _, _ = config_of(client, scope)
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".toml":
        text = {"syntax": 'model = "o4"\n[mcp_servers\n', "shape": 'mcp_servers = "x"\n'}[broken]
        expected = {"syntax": ":2:", "shape": ':1: "mcp_servers" must be a table'}[broken]
    else:
        text = {"syntax": '{\n  "a": 1,\n}\n', "shape": json.dumps({keys[0]: [1]})}[broken]
        expected = {
            "syntax": ":3:1: not valid JSON",
            "shape": f'"{keys[0]}" must be a JSON object',
        }[broken]
    path.write_text(text, encoding="utf-8")
    before = files_of(tmp_path)
    with pytest.raises(BadInput) as info:
        run(client, tmp_path, scope)
    message = str(info.value)
    assert message.startswith(str(path)) and expected in message, message
    assert "nothing was written" in message
    assert files_of(tmp_path) == before  # the instruction file was not written either


def test_instructions_block_in_a_users_file_is_replaced_in_place(tmp_path: Path) -> None:
    agents = tmp_path / "proj" / "AGENTS.md"
    agents.parent.mkdir(parents=True)
    agents.write_text("# My project\n\nRun `make test`.\n", encoding="utf-8")
    run("codex", tmp_path)
    text = agents.read_text(encoding="utf-8")
    assert text.startswith("# My project\n\nRun `make test`.\n\n" + BEGIN + "\n")
    assert text.endswith(END + "\n")
    # The user adds text after the block; a new skill replaces the block only.
    agents.write_text(text + "\nMore of mine.\n", encoding="utf-8")
    install(
        "codex",
        project_dir=tmp_path / "proj",
        home=tmp_path / "home",
        executable=EXE,
        skill="# new instructions\n",
        environ={},
    )
    text = agents.read_text(encoding="utf-8")
    assert "# new instructions" in text and "Use the tools." not in text
    assert text.startswith("# My project\n") and text.endswith("More of mine.\n")
    assert text.count(BEGIN) == 1
    # OpenCode reads the same AGENTS.md: one block, shared.
    install(
        "opencode",
        project_dir=tmp_path / "proj",
        home=tmp_path / "home",
        executable=EXE,
        skill="# new instructions\n",
        environ={},
    )
    assert agents.read_text(encoding="utf-8") == text


def test_unpaired_markers_are_refused_with_the_line(tmp_path: Path) -> None:
    gemini = tmp_path / "proj" / "GEMINI.md"
    gemini.parent.mkdir(parents=True)
    gemini.write_text(f"# Notes\n{BEGIN}\nhalf a block\n", encoding="utf-8")
    with pytest.raises(BadInput, match=r"GEMINI\.md:2: the ontoloom block's marker lines"):
        run("gemini", tmp_path)
    assert not (tmp_path / "proj" / ".gemini").exists()


def test_codex_home_is_honoured(tmp_path: Path) -> None:
    codex_home = tmp_path / "ch"
    result = run("codex", tmp_path, "global", environ={"CODEX_HOME": str(codex_home)})
    assert {f.path for f in result.files} == {codex_home / "config.toml", codex_home / "AGENTS.md"}


def test_codex_keeps_the_users_keys_on_our_table(tmp_path: Path) -> None:
    path = tmp_path / "home" / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(
        '[mcp_servers.ontoloom]\ncommand = "/old/ontoloom"\nargs = ["mcp"]\n'
        'startup_timeout_sec = 30\n\n[mcp_servers.ontoloom.env]\nONTOLOOM_HOME = "/data"\n',
        encoding="utf-8",
    )
    run("codex", tmp_path, "global")
    ours = tomllib.loads(path.read_text(encoding="utf-8"))["mcp_servers"]["ontoloom"]
    assert ours == {
        "command": EXE,
        "args": ["mcp"],
        "startup_timeout_sec": 30,
        "env": {"ONTOLOOM_HOME": "/data"},
    }


def test_json_clients_keep_the_env_the_user_set(tmp_path: Path) -> None:
    path = tmp_path / "proj" / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "ontoloom": {"command": "/old", "args": ["mcp"], "env": {"ONTOLOOM_HOME": "/d"}}
                }
            }
        ),
        encoding="utf-8",
    )
    run("cursor", tmp_path)
    assert load(path)["mcpServers"]["ontoloom"] == {
        "command": EXE,
        "args": ["mcp"],
        "env": {"ONTOLOOM_HOME": "/d"},
    }


def test_opencode_newer_layout_and_jsonc(tmp_path: Path) -> None:
    path = tmp_path / "proj" / "opencode.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"mcp": {"servers": {"x": {"type": "remote", "url": "u"}}}}))
    run("opencode", tmp_path)
    assert load(path)["mcp"]["servers"] == {
        "x": {"type": "remote", "url": "u"},
        "ontoloom": {"type": "local", "command": [EXE, "mcp"]},
    }
    path.unlink()
    (path.parent / "AGENTS.md").unlink()
    (path.parent / "opencode.jsonc").write_text("{ // mine\n}\n")
    with pytest.raises(BadInput, match=r"opencode\.jsonc: OpenCode reads this JSONC file"):
        run("opencode", tmp_path)
    assert not path.exists() and not (path.parent / "AGENTS.md").exists()


@pytest.mark.parametrize(
    ("platform", "environ", "expected"),
    [
        ("darwin", {}, "home/Library/Application Support/Claude/claude_desktop_config.json"),
        ("win32", {"APPDATA": "APPDATA"}, "APPDATA/Claude/claude_desktop_config.json"),
        ("win32", {}, "home/AppData/Roaming/Claude/claude_desktop_config.json"),
        ("linux", {"XDG_CONFIG_HOME": "xdg"}, "xdg/Claude/claude_desktop_config.json"),
        ("linux", {}, "home/.config/Claude/claude_desktop_config.json"),
    ],
)
def test_claude_desktop_config_per_platform(
    tmp_path: Path, platform: str, environ: dict[str, str], expected: str
) -> None:
    env = {k: str(tmp_path / v) for k, v in environ.items()}
    assert claude_desktop_config(tmp_path / "home", env, platform) == tmp_path / expected


def test_claude_desktop_pins_the_instance_and_has_no_project_scope(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "ontoloom.toml").write_text("")
    result = run("claude-desktop", tmp_path, "global")
    entry = load(result.files[0].path)["mcpServers"]["ontoloom"]
    assert entry["env"] == {"ONTOLOOM_HOME": str(tmp_path / "proj" / ".ontoloom")}
    assert any("reads no instruction file" in n for n in result.notes)
    with pytest.raises(BadInput, match="one config per user"):
        run("claude-desktop", tmp_path, "project")


def test_cli_install_each_client_dry_run_and_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("ONTOLOOM_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # ontoloom's own query cache
    (tmp_path / "proj").mkdir()
    monkeypatch.chdir(tmp_path / "proj")
    runner = CliRunner()
    for client in ("cursor", "codex", "gemini", "opencode", "claude-desktop"):
        done = runner.invoke(main, ["install", client, "--dry-run", "--json"])
        assert done.exit_code == 0, done.output
        out = json.loads(done.output)
        assert out["client"] == client and out["dry_run"] and out["changed"]
    assert list((tmp_path / "proj").iterdir()) == []
    assert not (tmp_path / "home").exists(), list((tmp_path / "home").rglob("*"))
    (tmp_path / "proj" / "opencode.json").write_text("{oops")
    done = runner.invoke(main, ["install", "opencode"])
    assert done.exit_code == 2 and "opencode.json:1:2: not valid JSON" in done.output
    assert "Traceback" not in done.output


def test_skill_is_generated_from_the_live_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ONTOLOOM_HOME", raising=False)
    runner = CliRunner()
    data_dir = tmp_path / "d"
    assert runner.invoke(main, ["--data-dir", str(data_dir), "init"]).exit_code == 0
    added = runner.invoke(
        main,
        [
            "--data-dir",
            str(data_dir),
            "schema",
            "add-type",
            '{"type": "Incident", "required": ["severity"]}',
        ],
    )
    assert added.exit_code == 0, added.output
    done = runner.invoke(main, ["--data-dir", str(data_dir), "skill"])
    assert done.exit_code == 0, done.output
    text = done.output
    assert text.startswith("---\nname: ontoloom\ndescription: ")
    assert "- `Incident`: severity" in text  # an added type: no drift
    for tool in ("create_entity", "guard", "why", "read_graph", "create_relations"):
        assert f"| `{tool}` |" in text
    assert (
        "## How refusals read" in text and "- `blocks`: Task → Task (many_to_many, acyclic)" in text
    )
    plain = runner.invoke(main, ["--data-dir", str(data_dir), "skill", "--plain"]).output
    assert plain.startswith("# ontoloom") and plain == text.split("---\n", 2)[2].lstrip("\n")


def test_skill_without_a_store_uses_the_shipped_schema_and_creates_nothing(tmp_path: Path) -> None:
    from ontoloom.schema import Schema

    data_dir = tmp_path / "none"
    done = CliRunner().invoke(main, ["--data-dir", str(data_dir), "skill"])
    assert done.exit_code == 0 and not data_dir.exists()
    assert done.output.rstrip("\n") == skill_text(Schema.load()).rstrip("\n")
