"""`ontoloom install claude-code`: merged, idempotent, atomic writes of the MCP server and hooks
into Claude Code's settings files; a diff and no writes in dry run; exit 2 on a broken file."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ontoloom.cli import main
from ontoloom.install import install_claude_code

EXE = "/opt/venvs/ontoloom/bin/ontoloom"


def hooks_for(exe: str) -> dict:
    return {
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": f"{exe} hook prompt-context", "timeout": 10}]}
        ],
        "SessionStart": [
            {"hooks": [{"type": "command", "command": f"{exe} hook session-start", "timeout": 10}]}
        ],
    }


def server_for(exe: str) -> dict:
    return {"type": "stdio", "command": exe, "args": ["mcp"], "env": {}}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    """A working directory outside any instance, running as the `ontoloom` at EXE."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "argv", [EXE, "install", "claude-code"])
    return folder


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["install", "claude-code", *args])


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def snapshot(*paths: Path) -> dict[Path, tuple[bytes, int] | None]:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) if p.exists() else None for p in paths}


# -- project scope -----------------------------------------------------------------------------
def test_fresh_project_install_writes_both_files(project: Path) -> None:
    result = run()
    assert result.exit_code == 0, result.output
    settings, mcp = project / ".claude" / "settings.json", project / ".mcp.json"
    assert read(settings) == {"hooks": hooks_for(EXE)}
    assert read(mcp) == {"mcpServers": {"ontoloom": server_for(EXE)}}
    text = settings.read_text(encoding="utf-8")
    assert text.endswith("}\n") and text.startswith('{\n  "hooks": {\n    "UserPromptSubmit"')
    assert f"created: {settings}" in result.output
    assert f"created: {mcp}" in result.output


def test_merge_keeps_other_settings_intact_and_in_order(project: Path) -> None:
    settings_path, mcp_path = project / ".claude" / "settings.json", project / ".mcp.json"
    other_prompt_hook = {"hooks": [{"type": "command", "command": "echo hi"}]}
    other_start_group = {"matcher": "startup", "hooks": [{"type": "command", "command": "date"}]}
    settings = {
        "permissions": {"allow": ["Bash(npm run test:*)"], "deny": []},
        "env": {"FOO": "bär"},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}],
            "UserPromptSubmit": [other_prompt_hook],
            "SessionStart": [other_start_group],
        },
        "model": "opus",
    }
    write(settings_path, settings)
    other_server = {"command": "npx", "args": ["-y", "some-server"]}
    write(mcp_path, {"mcpServers": {"other": other_server}, "extra": [1, 2]})

    assert run().exit_code == 0

    merged = read(settings_path)
    assert list(merged) == ["permissions", "env", "hooks", "model"]
    assert merged["permissions"] == settings["permissions"]
    assert merged["env"] == {"FOO": "bär"}
    assert "bär" in settings_path.read_text(encoding="utf-8")  # ensure_ascii=False
    assert list(merged["hooks"]) == ["PreToolUse", "UserPromptSubmit", "SessionStart"]
    assert merged["hooks"]["PreToolUse"] == settings["hooks"]["PreToolUse"]
    ours = hooks_for(EXE)
    assert merged["hooks"]["UserPromptSubmit"] == [other_prompt_hook, *ours["UserPromptSubmit"]]
    assert merged["hooks"]["SessionStart"] == [other_start_group, *ours["SessionStart"]]
    mcp = read(mcp_path)
    assert list(mcp) == ["mcpServers", "extra"]
    assert list(mcp["mcpServers"].items()) == [
        ("other", other_server),
        ("ontoloom", server_for(EXE)),
    ]


def test_second_run_changes_nothing(project: Path) -> None:
    assert run().exit_code == 0
    files = (project / ".claude" / "settings.json", project / ".mcp.json")
    before = snapshot(*files)
    result = run("--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["changed"] is False
    assert [f["action"] for f in out["files"]] == ["unchanged", "unchanged", "unchanged"]
    assert snapshot(*files) == before
    assert "unchanged:" in run().output


def test_an_equivalent_file_in_another_layout_is_left_alone(project: Path) -> None:
    mcp_path = project / ".mcp.json"
    mcp_path.write_text(json.dumps({"mcpServers": {"ontoloom": server_for(EXE)}}), "utf-8")
    before = snapshot(mcp_path)
    out = json.loads(run("--json").output)
    assert out["files"][1] == {"path": str(mcp_path), "action": "unchanged", "diff": ""}
    assert snapshot(mcp_path) == before


def test_a_stale_ontoloom_path_is_replaced_in_place(project: Path) -> None:
    stale = "/old/venv/bin/ontoloom"
    settings_path, mcp_path = project / ".claude" / "settings.json", project / ".mcp.json"
    write(
        settings_path,
        {
            "hooks": {
                "UserPromptSubmit": [
                    {
                        "hooks": [
                            {"type": "command", "command": "echo before"},
                            {"type": "command", "command": f"{stale} hook prompt-context"},
                            {"type": "command", "command": "echo after"},
                        ]
                    },
                    {"hooks": [{"type": "command", "command": "ontoloom hook prompt-context"}]},
                ],
                "SessionStart": [
                    {"hooks": [{"type": "command", "command": f"'{stale}' hook session-start"}]}
                ],
            }
        },
    )
    write(mcp_path, {"mcpServers": {"ontoloom": {"command": stale, "args": ["mcp"]}, "b": {}}})

    result = run("--json")
    assert result.exit_code == 0, result.output
    actions = [f["action"] for f in json.loads(result.output)["files"]]
    assert actions == ["updated", "updated", "created"]  # and the skill, new here

    hooks = read(settings_path)["hooks"]
    ours = hooks_for(EXE)
    prompt_handler = ours["UserPromptSubmit"][0]["hooks"][0]
    assert hooks["UserPromptSubmit"] == [  # replaced where it was; the duplicate group dropped
        {
            "hooks": [
                {"type": "command", "command": "echo before"},
                prompt_handler,
                {"type": "command", "command": "echo after"},
            ]
        }
    ]
    assert hooks["SessionStart"] == ours["SessionStart"]
    assert list(read(mcp_path)["mcpServers"].items()) == [("ontoloom", server_for(EXE)), ("b", {})]
    assert stale not in settings_path.read_text() + mcp_path.read_text()


def test_executable_path_is_shell_quoted_in_hook_commands(tmp_path: Path) -> None:
    exe = str(tmp_path / "my venv" / "bin" / "ontoloom")
    install_claude_code(project_dir=tmp_path, home=tmp_path, executable=exe)
    hooks = read(tmp_path / ".claude" / "settings.json")["hooks"]
    assert hooks["SessionStart"][0]["hooks"][0]["command"] == f"'{exe}' hook session-start"
    assert read(tmp_path / ".mcp.json")["mcpServers"]["ontoloom"]["command"] == exe
    # and the quoted form is recognised as ours on the next run
    again = install_claude_code(project_dir=tmp_path, home=tmp_path, executable=exe)
    assert not again.to_json()["changed"]


def test_project_dir_is_the_enclosing_instance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    instance = tmp_path / "team"
    (instance / "src" / "deep").mkdir(parents=True)
    (instance / "ontoloom.toml").write_text("", encoding="utf-8")
    monkeypatch.chdir(instance / "src" / "deep")
    monkeypatch.setattr(sys, "argv", [EXE])
    assert run().exit_code == 0
    assert (instance / ".claude" / "settings.json").is_file()
    assert (instance / ".mcp.json").is_file()
    assert not (instance / "src" / "deep" / ".mcp.json").exists()


def test_permissions_are_kept(project: Path) -> None:
    mcp_path = project / ".mcp.json"
    write(mcp_path, {})
    os.chmod(mcp_path, 0o640)
    assert run().exit_code == 0
    assert stat.S_IMODE(mcp_path.stat().st_mode) == 0o640
    assert not [p.name for p in project.iterdir() if p.name.endswith(".tmp")]


def test_empty_file_counts_as_empty_object(project: Path) -> None:
    (project / ".mcp.json").write_text("", encoding="utf-8")
    out = json.loads(run("--json").output)
    assert out["files"][1]["action"] == "updated"
    assert read(project / ".mcp.json") == {"mcpServers": {"ontoloom": server_for(EXE)}}


# -- global scope ------------------------------------------------------------------------------
def test_global_writes_user_settings_and_keeps_claude_json_state(project: Path, home: Path) -> None:
    claude_json = home / ".claude.json"
    state = {
        "numStartups": 42,
        "projects": {"/some/where": {"mcpServers": {}, "allowedTools": []}},
        "mcpServers": {"github": {"command": "gh-mcp"}},
        "userID": "abc",
    }
    write(claude_json, state)
    result = run("--global")
    assert result.exit_code == 0, result.output

    assert read(home / ".claude" / "settings.json") == {"hooks": hooks_for(EXE)}
    merged = read(claude_json)
    assert list(merged) == ["numStartups", "projects", "mcpServers", "userID"]
    assert merged["projects"] == state["projects"]
    assert merged["mcpServers"] == {"github": {"command": "gh-mcp"}, "ontoloom": server_for(EXE)}
    assert not (project / ".mcp.json").exists()
    assert not (project / ".claude").exists()


# -- dry run and JSON --------------------------------------------------------------------------
def test_dry_run_writes_nothing_and_prints_a_diff(project: Path, home: Path) -> None:
    mcp_path = project / ".mcp.json"
    write(mcp_path, {"mcpServers": {"other": {"command": "x"}}})
    before = snapshot(mcp_path)
    result = run("--dry-run")
    assert result.exit_code == 0, result.output
    assert snapshot(mcp_path) == before
    assert not (project / ".claude").exists()
    out = result.output
    assert f"+++ {project / '.claude' / 'settings.json'}" in out
    assert f"--- {mcp_path}" in out and f"+++ {mcp_path}" in out
    assert '+    "ontoloom": {' in out
    assert "hook prompt-context" in out
    assert "nothing was written" in out
    # EXE is not the `ontoloom` on PATH: the project's files name it, and the note says so
    assert "work on this machine only" in out

    glob = run("--global", "--dry-run")
    assert glob.exit_code == 0
    assert list(home.iterdir()) == []


def test_json_output_shape(project: Path) -> None:
    result = run("--dry-run", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert set(out) == {"client", "scope", "dry_run", "files", "changed", "notes"}
    assert out["client"] == "claude-code"
    assert len(out["notes"]) == 1 and "work on this machine only" in out["notes"][0]
    assert out["scope"] == "project" and out["dry_run"] is True and out["changed"] is True
    assert [f["path"] for f in out["files"]] == [
        str(project / ".claude" / "settings.json"),
        str(project / ".mcp.json"),
        str(project / ".claude" / "skills" / "ontoloom" / "SKILL.md"),
    ]
    for entry in out["files"]:
        assert set(entry) == {"path", "action", "diff"}
        assert entry["action"] == "created"
        assert entry["diff"].startswith("--- /dev/null\n+++ ")
    assert not (project / ".mcp.json").exists()

    real = json.loads(run("--global", "--json").output)
    assert real["scope"] == "global" and real["dry_run"] is False and real["changed"] is True


# -- refusals ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("broken_file", "content", "where"),
    [
        (".mcp.json", '{\n  "mcpServers": {\n    "a": 1,\n  }\n}\n', ":4:3: not valid JSON"),
        (".mcp.json", "[1, 2]\n", ":1:1: the top level must be a JSON object"),
        (".mcp.json", '{"x": 1,\n "mcpServers": []}', ':2:16: "mcpServers" must be a JSON object'),
        (".claude/settings.json", '{"hooks": "nope"}', ':1:11: "hooks" must be a JSON object'),
        (
            ".claude/settings.json",
            '{"hooks": {"SessionStart": {}}}',
            ':1:28: "hooks.SessionStart" must be a list',
        ),
    ],
)
def test_a_broken_file_is_refused_and_nothing_changes(
    project: Path, broken_file: str, content: str, where: str
) -> None:
    path = project / broken_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    files = (project / ".claude" / "settings.json", project / ".mcp.json")
    before = snapshot(*files)
    result = run()
    assert result.exit_code == 2
    assert result.output.startswith(f"error: {path}{where}")
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert snapshot(*files) == before


@pytest.mark.parametrize(
    ("broken_file", "content", "where"),
    [
        (".mcp.json", '{\n  "mcpServers": {},\n  "x": NaN\n}\n', ":3:8: not standard JSON (NaN"),
        (".mcp.json", '{"a": [1, -Infinity]}', ":1:11: not standard JSON (-Infinity"),
        (".mcp.json", '{"a": {"b": Infinity}}', ":1:13: not standard JSON (Infinity"),
        (
            ".claude/settings.json",
            '{\n  "hooks": {},\n  "env": {"A": 1, "A": 2}\n}\n',
            ':3:19: not standard JSON (duplicate key "A")',
        ),
        (
            ".claude/settings.json",
            '{"hooks": {}, "hooks": {"SessionStart": []}}',
            ':1:15: not standard JSON (duplicate key "hooks")',
        ),
    ],
)
def test_a_file_of_non_standard_json_is_refused_with_its_location_and_nothing_changes(
    project: Path, broken_file: str, content: str, where: str
) -> None:
    test_a_broken_file_is_refused_and_nothing_changes(project, broken_file, content, where)


def test_standard_json_with_look_alike_strings_is_merged(project: Path) -> None:
    write(project / ".mcp.json", {"x": "NaN", "y": {"Infinity": [1, "-Infinity"]}, "z": 1e308})
    assert run().exit_code == 0
    assert read(project / ".mcp.json")["y"] == {"Infinity": [1, "-Infinity"]}


def test_a_broken_claude_json_leaves_global_settings_unwritten(project: Path, home: Path) -> None:
    (home / ".claude.json").write_text('{"numStartups": 3,', encoding="utf-8")
    result = run("--global", "--json")
    assert result.exit_code == 2
    assert json.loads(result.output)["error"] == "bad_input"
    assert not (home / ".claude").exists()
    assert (home / ".claude.json").read_text(encoding="utf-8") == '{"numStartups": 3,'


# -- a real process ----------------------------------------------------------------------------
def test_real_process_installs_its_own_absolute_path(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / ("ontoloom.exe" if os.name == "nt" else "ontoloom")
    if not script.exists():
        pytest.skip("the ontoloom console script is not installed next to this interpreter")
    home, project = tmp_path / "h", tmp_path / "p"
    home.mkdir()
    project.mkdir()
    env = {**os.environ, "HOME": str(home), "PATH": "/nonexistent"}
    env.pop("ONTOLOOM_HOME", None)
    done = subprocess.run(
        [str(script), "install", "claude-code"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    exe = os.path.abspath(script)
    assert read(project / ".claude" / "settings.json") == {"hooks": hooks_for(exe)}
    assert read(project / ".mcp.json") == {"mcpServers": {"ontoloom": server_for(exe)}}

    again = subprocess.run(
        [str(script), "install", "claude-code", "--global", "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["changed"] is True
    assert read(home / ".claude.json") == {"mcpServers": {"ontoloom": server_for(exe)}}


def test_a_projects_files_name_ontoloom_by_its_bare_name_when_path_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project's .mcp.json is shared through git: an absolute virtualenv path works on one
    machine only, so the bare name is written where `ontoloom` on PATH is the running one."""
    from ontoloom import install as installer

    exe = tmp_path / "bin" / "ontoloom"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n", encoding="utf-8")
    exe.chmod(0o755)
    monkeypatch.setattr(installer.sys, "argv", [str(exe)])
    monkeypatch.setenv("PATH", str(exe.parent))
    assert installer.resolve_executable(portable=True) == "ontoloom"
    assert installer.resolve_executable() == str(exe)  # per-user files: the absolute path
    project = tmp_path / "project"
    project.mkdir()
    result = installer.install("claude-code", scope="project", project_dir=project, home=tmp_path)
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["ontoloom"]["command"] == (
        "ontoloom"
    )
    assert result.notes == []
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))
    result = installer.install("cursor", scope="project", project_dir=project, home=tmp_path)
    assert any("work on this machine only" in note for note in result.notes)
