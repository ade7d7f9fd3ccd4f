"""Issue 32, the first hour of a new user: ordinary mistakes get ordinary answers — a read
with a wrong name is bad input (exit 2), never a refused write; every name the schema or
the store knows comes back as a "did you mean"; a failed `init` leaves nothing behind."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import Cli
from ontoloom.cli import main


@pytest.fixture
def team(cli: Cli) -> Cli:
    for args in (
        ["Person", "--id", "pers_alice", "-p", "name=Alice"],
        ["Task", "--id", "task_timeout", "-p", "title=Fix the timeout", "-p", "status=open"],
        ["Task", "--id", "task_deploy", "-p", "title=Deploy", "-p", "status=blocked"],
    ):
        made = cli("create", *args)
        assert made.exit_code == 0, made.output
    assert cli("relate", "task_timeout", "blocks", "task_deploy").exit_code == 0
    return cli


# -- a read naming an unknown relation or type: bad input, with a "did you mean" ---------------
@pytest.mark.parametrize("command", ["traverse", "relations"])
def test_a_read_with_an_unknown_rel_is_bad_input_naming_it_not_a_refused_write(
    team: Cli, command: str
) -> None:
    result = team(command, "task_timeout", "--rel", "blocx")
    assert result.exit_code == 2, result.output
    assert "unknown relation 'blocx'" in result.stderr
    assert "did you mean 'blocks'" in result.stderr
    assert "refused" not in result.stderr and "nothing was stored" not in result.stderr
    as_json = json.loads(team.json(command, "task_timeout", "--rel", "blocx").stdout)
    assert as_json["error"] == "bad_input"


def test_search_and_list_refuse_an_unknown_type_alike_with_exit_2(team: Cli) -> None:
    searched = team("search", "timeout", "--type", "Tsk")
    listed = team("list", "--type", "Tsk")
    assert searched.exit_code == listed.exit_code == 2, searched.output
    assert searched.stderr == listed.stderr
    assert "unknown entity type 'Tsk' (did you mean 'Task'?)" in searched.stderr
    assert json.loads(team.json("search", "x", "--type", "Nope").stdout)["error"] == "bad_input"


# -- "did you mean" for types, relations, ids and commands -------------------------------------
@pytest.mark.parametrize(
    ("args", "code", "suggestion"),
    [
        (["create", "Tsk", "-p", "title=x", "-p", "status=open"], 1, "'Task'"),
        (["list", "--type", "task"], 2, "'Task'"),
        (["schema", "show", "Persn"], 2, "'Person'"),
        (["relate", "task_timeout", "blocx", "task_deploy"], 1, "'blocks'"),
        (["unrelate", "task_timeout", "blcks", "task_deploy"], 1, "'blocks'"),
        (["get", "task_timeot"], 2, "'task_timeout'"),
        (["update", "task_deplyo", "-p", "status=open"], 2, "'task_deploy'"),
        (["delete", "pers_alise"], 2, "'pers_alice'"),
        (["relate", "task_timeout", "blocks", "task_deploi"], 1, "'task_deploy'"),
        (["relations", "task_timout"], 2, "'task_timeout'"),
    ],
)
def test_an_unknown_name_gets_the_closest_known_ones(
    team: Cli, args: list[str], code: int, suggestion: str
) -> None:
    result = team(*args)
    assert result.exit_code == code, result.output
    assert f"did you mean {suggestion}" in result.output


@pytest.mark.parametrize(
    ("name", "arguments", "suggestion"),
    [
        ("list_entities", {"type": "Tsk"}, "'Task'"),
        ("create_entity", {"type": "Persn", "properties": {}}, "'Person'"),
        ("traverse", {"id": "task_timeout", "rel": "blocx"}, "'blocks'"),
    ],
)
def test_the_tools_name_the_closest_type_or_relation_never_the_value_given(
    team: Cli, name: str, arguments: dict, suggestion: str
) -> None:
    """MCP and HTTP check arguments against the operation's schema (enums of the live
    schema's names) before the domain sees them: the same "did you mean" comes from there."""
    from ontoloom import ops
    from ontoloom.errors import BadInput

    with pytest.raises(BadInput) as refused:
        ops.call(team.data_dir, name, arguments)
    assert f"did you mean {suggestion}?" in refused.value.message
    given = arguments.get("type") or arguments.get("rel")
    assert f"'{given}'" not in refused.value.message and f'"{given}"' not in refused.value.message


def test_an_id_like_no_other_gets_no_suggestion(team: Cli) -> None:
    result = team("get", "zzzz_99999999")
    assert result.exit_code == 2 and "did you mean" not in result.stderr


def test_an_unknown_command_gets_clicks_suggestion() -> None:
    result = CliRunner().invoke(main, ["crate", "Task"])
    assert result.exit_code == 2 and "Did you mean" in result.output and "'create'" in result.output


# -- output ------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["json", "xml", "csv", "tsv"])
def test_query_output_ends_with_one_newline(team: Cli, fmt: str) -> None:
    out = team("query", "SELECT ?s WHERE { ?s a ol:Task }", "--format", fmt).stdout
    assert out.endswith("\n") and not out.endswith("\n\n"), repr(out[-20:])


def test_query_json_output_ends_with_one_newline(team: Cli) -> None:
    out = team.json("query", "ASK { ?s ?p ?o }").stdout
    assert out.endswith("}\n"), repr(out[-20:])


# -- init --------------------------------------------------------------------------------------
def _nothing_listening() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/query"


@pytest.mark.parametrize("before", ["no directory", "an empty directory", "an instance"])
def test_a_failed_init_with_an_endpoint_leaves_the_directory_as_it_was(
    tmp_path: Path, before: str
) -> None:
    runner = CliRunner()
    where = tmp_path / "team"
    if before != "no directory":
        where.mkdir()
    if before == "an instance":
        assert runner.invoke(main, ["init", str(where)]).exit_code == 0
    snapshot = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    dirs = sorted(p for p in tmp_path.rglob("*") if p.is_dir())
    url = _nothing_listening()
    failed = runner.invoke(main, ["init", str(where), "--endpoint", url])
    assert failed.exit_code == 2 and "cannot be reached" in failed.stderr, failed.output
    after = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == snapshot
    assert sorted(p for p in tmp_path.rglob("*") if p.is_dir()) == dirs
    # the retry meets the same directory, and fails for the same reason (not "it exists")
    again = runner.invoke(main, ["init", str(where), "--endpoint", url])
    assert again.exit_code == 2 and again.stderr == failed.stderr


@pytest.mark.parametrize(
    ("command", "spec", "says"),
    [
        ("add-type", '{"typ": "Sprint"}', "unknown key 'typ' (did you mean 'type'?)"),
        ("add-type", '{"type": "Sprint", "requird": ["name"]}', "did you mean 'required'?"),
        ("add-relation", '{"rel": "mentors", "from_type": ["Person"]}', "'from_types'"),
    ],
)
def test_a_misspelt_schema_key_is_named_with_the_key_it_meant(
    team: Cli, command: str, spec: str, says: str
) -> None:
    """A typo in a key was reported as its correct key missing ("type" is a CamelCase name)."""
    result = team("schema", command, spec)
    assert result.exit_code == 2, result.output
    assert says in result.stderr and "CamelCase" not in result.stderr


def test_an_object_imported_under_its_own_iri_is_seen_by_every_command(
    team: Cli, tmp_path: Path
) -> None:
    """It was stored, listed under its IRI, and then get, relate and search could not see it."""
    ol = "https://ontoloom.dev/ns#"
    data = tmp_path / "foreign.nt"
    data.write_text(
        f"<http://example.org/x1> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{ol}Task> .\n"
        f'<http://example.org/x1> <{ol}title> "Foreign task" .\n'
        f'<http://example.org/x1> <{ol}status> "open" .\n',
        encoding="utf-8",
    )
    assert team("import", str(data)).exit_code == 0
    foreign = "http://example.org/x1"
    got = json.loads(team.json("get", foreign).stdout)
    assert got["id"] == foreign and got["properties"]["title"] == "Foreign task"
    assert team("relate", foreign, "blocks", "task_deploy").exit_code == 0
    incoming = json.loads(team.json("relations", "task_deploy").stdout)
    assert foreign in {r["from_id"] for r in incoming}
    hits = json.loads(team.json("search", "Foreign").stdout)
    assert foreign in [h["id"] for h in hits]
    assert team("update", foreign, "-p", "status=done").exit_code == 0
    assert team("check").exit_code == 0
    exported = team("export", "--format", "nquads").stdout
    assert f"<{foreign}> <{ol}blocks>" in exported  # still its own IRI, not renamed
