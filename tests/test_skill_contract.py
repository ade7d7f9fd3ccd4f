"""The skill contract (issue 33, item 4): a skill's SKILL.md declares the types it reads and
writes; `ontoloom mcp --skill` serves a session bound to it, `ontoloom skills` maps many,
and scoped tokens bind HTTP callers the same way — all judged by one Scope in the
application layer (`ontoloom.ops.call`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, quads_of
from ontoloom import ops
from ontoloom.errors import OUTCOMES, Forbidden, ParseError
from ontoloom.ops import Scope
from ontoloom.ops.scope import RULES
from ontoloom.schema import Schema
from ontoloom.skills import check_types, coordination_map, parse_contract, read_contract

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "skills"
TRIAGE = Scope("skill 'triage'", frozenset({"Task", "Project"}), frozenset({"Task"}))


def skill(body: str) -> bytes:
    return body.encode("utf-8")


# -- the ontology block ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "reads", "writes"),
    [
        (
            "---\nname: a\nontology:\n  reads: [Task, Project]\n  writes: [Task]\n---\n",
            ["Project", "Task"],
            ["Task"],
        ),
        ("---\nname: a\nontology: {reads: [Task]}\n---\nbody\n", ["Task"], []),
        ("---\nname: a\nontology:\n  writes:\n    - Note\n---\n", [], ["Note"]),
        ('---\nname: a\nontology: {reads: "*", writes: [Task]}\n---\n', "*", ["Task"]),
    ],
)
def test_a_contract_reads_as_declared(text: str, reads: Any, writes: Any) -> None:
    contract = parse_contract("s/SKILL.md", skill(text))
    assert contract.to_json()["reads"] == reads
    assert contract.to_json()["writes"] == writes
    assert contract.name == "a"


def test_writing_a_type_implies_reading_it() -> None:
    contract = parse_contract(
        "s/SKILL.md", skill("---\nontology: {reads: [Goal], writes: [Task]}\n---\n")
    )
    assert contract.readable == {"Goal", "Task"}
    assert contract.name == "s"  # no name: the skill's folder


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("# no frontmatter\n", 1, "no YAML frontmatter"),
        ("---\nname: a\n---\n", 1, "no ontology block"),
        ("---\nname: a\nontology: [Task]\n---\n", 3, "a mapping of reads and writes"),
        ("---\nname: a\nontology:\n  reads: Task\n---\n", 4, "a list of type names"),
        ("---\nname: a\nontology:\n  read: [Task]\n---\n", 4, "did you mean 'reads'"),
        (
            "---\nname: a\nontology:\n  reads:\n    - Task\n    - 3\n---\n",
            6,
            "item 2 is not a type name",
        ),
        ("---\nname: a\nontology:\n  reads: [Task, '*']\n---\n", 4, "stands alone"),
        ("---\nname: a\nontology: {reads: [], writes: []}\n---\n", 3, "declares no type"),
        ("---\nname: a\nontology: {reads: [Task\n---\n", 3, "malformed YAML"),
        ("---\nname: a\nontology: {reads: [Task]}\n", 1, "never closed"),
    ],
)
def test_a_malformed_contract_is_refused_at_its_line(text: str, line: int, words: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_contract("s/SKILL.md", skill(text))
    assert caught.value.line == line
    assert caught.value.message.startswith(f"s/SKILL.md:{line}: ")
    assert words in caught.value.message


def test_a_type_the_schema_lacks_is_refused_at_its_line() -> None:
    text = "---\nname: a\nontology:\n  reads:\n    - Task\n    - Projct\n---\n"
    contract = parse_contract("s/SKILL.md", skill(text))
    with pytest.raises(ParseError) as caught:
        check_types(contract, Schema.load().types)
    assert caught.value.line == 6
    assert "'Projct'" in caught.value.message and "did you mean 'Project'" in caught.value.message


def test_the_example_skills_are_valid_against_the_shipped_schema() -> None:
    files = sorted(EXAMPLES.rglob("SKILL.md"))
    assert files
    for path in files:
        check_types(read_contract(path), Schema.load().types)


# -- the coordination map ----------------------------------------------------------------------
def write_skill(folder: Path, name: str, block: str | None) -> Path:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    head = f"name: {name}\n" + (f"ontology: {block}\n" if block is not None else "")
    path.write_text(f"---\n{head}---\n\n# {name}\n")
    return path


def test_the_map_says_who_writes_and_who_reads_each_type(tmp_path: Path) -> None:
    write_skill(tmp_path, "triage", "{reads: [Task, Project], writes: [Task]}")
    write_skill(tmp_path, "standup", "{reads: [Task, Person], writes: [Note]}")
    write_skill(tmp_path / "nested", "planning", "{reads: [Goal], writes: [Project]}")
    write_skill(tmp_path, "plain", None)
    found = coordination_map(sorted(tmp_path.rglob("SKILL.md")), Schema.load().types)
    assert found.types == {
        "Goal": {"writers": [], "readers": ["planning"]},
        "Note": {"writers": ["standup"], "readers": []},
        "Person": {"writers": [], "readers": ["standup"]},
        "Project": {"writers": ["planning"], "readers": ["triage"]},
        "Task": {"writers": ["triage"], "readers": ["standup", "triage"]},
    }
    assert found.unwritten == ["Goal", "Person"]
    assert found.unread == ["Note"]
    assert [Path(p).parent.name for p in found.undeclared] == ["plain"]
    assert found.malformed == []


def test_skills_prints_the_map_as_a_table_and_as_json(cli: Cli) -> None:
    table = cli("skills", str(EXAMPLES))
    assert table.exit_code == 0, table.output
    rows = {line.split()[0]: line.split()[1:] for line in table.output.splitlines() if line}
    assert rows["Task"] == ["triage", "standup,", "triage"]
    assert "read, written by no skill: Goal, Person" in table.output
    assert "written, read by no other skill: Note" in table.output
    data = json.loads(cli.json("skills", str(EXAMPLES)).output)
    assert {t["type"]: t["writers"] for t in data["types"]}["Project"] == ["planning"]
    assert data["read_not_written"] == ["Goal", "Person"]
    assert data["written_not_read"] == ["Note"]


def test_skills_reports_a_malformed_file_by_path_and_line_and_exits_2(
    cli: Cli, tmp_path: Path
) -> None:
    write_skill(tmp_path, "good", "{reads: [Task], writes: [Task]}")
    bad = write_skill(tmp_path, "bad", "{reads: [Tsak]}")
    done = cli.json("skills", str(tmp_path))
    assert done.exit_code == 2
    data = json.loads(done.stdout)
    assert [s["name"] for s in data["skills"]] == ["good"]  # the rest is still mapped
    assert data["malformed"][0]["path"] == str(bad) and data["malformed"][0]["line"] == 3
    assert f"{bad}:3: ontology: the schema has no type 'Tsak'" in done.stderr


def test_skills_refuses_a_folder_that_is_not_there(cli: Cli, tmp_path: Path) -> None:
    done = cli("skills", str(tmp_path / "nope"))
    assert done.exit_code == 2 and "no such folder" in done.output


# -- one scope, in the application layer ---------------------------------------------------------
@pytest.fixture
def team(data_dir: Path) -> Path:
    """Ann (a Person), project p, tasks t1 (part of p) and t2 (assigned to Ann), task t3
    that project p2 holds (has_task)."""
    for kind, props, entity_id in (
        ("Person", {"name": "Ann"}, "pers_ann"),
        ("Project", {"name": "Payments"}, "proj_p"),
        ("Project", {"name": "Search"}, "proj_p2"),
        ("Task", {"title": "Fix login", "status": "open"}, "task_t1"),
        ("Task", {"title": "Ship login", "status": "open"}, "task_t2"),
        ("Task", {"title": "Index", "status": "open"}, "task_t3"),
    ):
        ops.call(data_dir, "create_entity", {"type": kind, "properties": props, "id": entity_id})
    for a, rel, b in (
        ("task_t1", "part_of", "proj_p"),
        ("task_t2", "assigned_to", "pers_ann"),
        ("proj_p2", "has_task", "task_t3"),
    ):
        ops.call(data_dir, "relate", {"from_id": a, "rel": rel, "to_id": b})
    return data_dir


def refused(data_dir: Path, name: str, arguments: dict[str, Any], scope: Scope = TRIAGE) -> str:
    before = quads_of(data_dir)
    with pytest.raises(Forbidden) as caught:
        ops.call(data_dir, name, arguments, scope=scope)
    assert quads_of(data_dir) == before  # nothing stored
    assert scope.name in caught.value.message
    return caught.value.message


def test_a_write_of_an_undeclared_type_is_refused_naming_the_contract_and_the_type(
    team: Path,
) -> None:
    message = refused(team, "create_entity", {"type": "Project", "properties": {"name": "X"}})
    assert "does not write Project" in message and "it writes Task" in message
    assert "Project" in refused(
        team, "update_entity", {"id": "proj_p", "properties": {"name": "Y"}}
    )
    assert "Person" in refused(team, "delete_entity", {"id": "pers_ann"})
    made = ops.call(
        team,
        "create_entity",
        {"type": "Task", "properties": {"title": "New", "status": "open"}},
        scope=TRIAGE,
    )
    assert made.value["type"] == "Task"


def test_a_relation_is_written_by_its_from_end_and_reads_its_to_end(team: Path) -> None:
    ops.call(
        team, "relate", {"from_id": "task_t1", "rel": "blocks", "to_id": "task_t2"}, scope=TRIAGE
    )
    assert "does not read Person" in refused(
        team, "relate", {"from_id": "task_t1", "rel": "assigned_to", "to_id": "pers_ann"}
    )
    assert "does not write Project" in refused(
        team, "relate", {"from_id": "proj_p", "rel": "has_task", "to_id": "task_t1"}
    )
    # deleting t3 would remove proj_p2's has_task: a statement of a Project
    message = refused(team, "delete_entity", {"id": "task_t3"})
    assert "proj_p2 has_task task_t3" in message and "does not write Project" in message


def test_a_read_outside_the_contract_is_refused(team: Path) -> None:
    assert "does not read Person" in refused(team, "get_entity", {"id": "pers_ann"})
    assert "does not read Person" in refused(team, "relations", {"id": "pers_ann"})
    assert "does not read Person" in refused(team, "list_entities", {"type": "Person"})
    assert "does not read Person" in refused(team, "search", {"query": "Ann", "type": ["Person"]})
    assert "give type" in refused(team, "list_entities", {})
    # the walk from t2 reaches Ann through assigned_to
    message = refused(team, "traverse", {"id": "task_t2"})
    assert "does not read Person" in message and "pers_ann" in message
    walked = ops.call(team, "traverse", {"id": "task_t1", "depth": 2}, scope=TRIAGE).value
    assert [r["id"] for r in walked] == ["proj_p"]


def test_what_cannot_be_judged_per_type_needs_every_type(team: Path) -> None:
    assert 'reads: "*"' in refused(team, "query", {"query": "SELECT * WHERE { ?s ?p ?o }"})
    for name in ("check", "summary", "read_graph"):
        refused(team, name, {})
    assert 'writes: "*"' in refused(
        team,
        "create_entities",
        {"entities": [{"name": "x", "entityType": "task", "observations": []}]},
    )
    assert "not one of the tools" in refused(team, "export", {"format": "turtle"})
    everything = Scope("skill 'all'", None, frozenset({"Task"}))
    assert ops.call(team, "query", {"query": "ASK { ?s ?p ?o }"}, scope=everything).value["boolean"]
    assert ops.call(team, "schema_list", {}, scope=TRIAGE).value["types"]  # the schema is no data


def test_reads_answer_only_what_the_contract_reads_and_say_what_they_left_out(team: Path) -> None:
    got = ops.call(team, "get_entity", {"id": "task_t2"}, scope=TRIAGE)
    assert got.value["relations"] == {"outgoing": [], "incoming": []}
    assert got.note is not None and "1 relation(s)" in got.note and "skill 'triage'" in got.note
    mine = ops.call(team, "relations", {"id": "task_t1"}, scope=TRIAGE)
    assert [r["rel"] for r in mine.value] == ["part_of"] and mine.note is None
    hits = ops.call(team, "search", {"query": "Ann login"}, scope=TRIAGE).value
    assert hits and all(h["type"] in ("Task", "Project") for h in hits)
    tasks = ops.call(team, "list_entities", {"type": "Task"}, scope=TRIAGE).value
    assert {e["id"] for e in tasks} == {"task_t1", "task_t2", "task_t3"}


def test_a_plan_is_judged_step_by_step(team: Path) -> None:
    plan = {
        "steps": [
            {
                "op": "create",
                "type": "Task",
                "as": "fix",
                "properties": {"title": "Fix", "status": "open"},
            },
            {"op": "relate", "from": "fix", "rel": "part_of", "to": "proj_p"},
        ]
    }
    done = ops.call(team, "plan_apply", {"plan": plan}, scope=TRIAGE)
    assert done.value
    bad = {
        "steps": [
            {
                "op": "create",
                "type": "Task",
                "as": "a",
                "properties": {"title": "A", "status": "open"},
            },
            {"op": "create", "type": "Project", "properties": {"name": "Nope"}},
        ]
    }
    assert "step 2 (create)" in refused(team, "plan_apply", {"plan": bad})


def test_every_tool_has_a_rule_under_a_scope() -> None:
    # a tool added without a row would be refused to every scoped caller: named here instead
    assert {o.name for o in ops.tools(Schema.load())} <= set(RULES)


def test_forbidden_is_exit_2_and_http_403() -> None:
    assert OUTCOMES["forbidden"] == (2, 403)
    error = Forbidden("x")
    assert (error.exit_code, error.http_status, error.to_json()["error"]) == (2, 403, "forbidden")


def test_the_tools_a_scope_sees_name_only_its_types() -> None:
    listed = {t["name"]: t for t in ops.describe.tool_list(Schema.load(), TRIAGE)}
    assert "query" not in listed and "create_entities" not in listed and "check" not in listed
    create = listed["create_entity"]
    assert create["inputSchema"]["properties"]["type"]["enum"] == ["Task"]
    assert "Person:" not in create["description"]
    assert listed["list_entities"]["inputSchema"]["properties"]["type"]["enum"] == [
        "Project",
        "Task",
    ]
    relate = listed["relate"]["inputSchema"]["properties"]["rel"]["enum"]
    assert "blocks" in relate and "part_of" in relate and "assigned_to" not in relate
    assert "has_task" not in relate  # from a Project, which it does not write


def test_a_type_covers_its_subclasses(data_dir: Path) -> None:
    subclass = (
        "@prefix ol: <https://ontoloom.dev/ns#> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "ol:Bug a owl:Class ; rdfs:subClassOf ol:Task .\n"
    )
    ops.call(data_dir, "schema_add_shapes", {"text": subclass, "name": "bug.ttl"})
    bug = {"type": "Bug", "properties": {"title": "Crash", "status": "open"}}
    assert ops.call(data_dir, "create_entity", bug, scope=TRIAGE).value["type"] == "Bug"
    planning = Scope("skill 'planning'", frozenset({"Goal"}), frozenset({"Project"}))
    assert "does not write Bug" in refused(data_dir, "create_entity", bug, scope=planning)


def test_skills_reads_the_clients_skill_folders_by_default(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    write_skill(home / ".claude" / "skills", "mine", "{reads: [Goal]}")
    write_skill(project / ".claude" / "skills", "ours", "{writes: [Goal]}")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    data = json.loads(cli.json("skills").output)
    assert {s["name"] for s in data["skills"]} == {"mine", "ours"}
    assert data["types"] == [{"type": "Goal", "writers": ["ours"], "readers": ["mine"]}]


def test_a_skill_whose_frontmatter_cannot_be_read_is_reported_not_passed_over(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "broken" / "SKILL.md"
    broken.parent.mkdir()
    broken.write_text("---\nname: broken\nontology: {reads: [Task]}\n")  # never closed
    plain = tmp_path / "plain" / "SKILL.md"
    plain.parent.mkdir()
    plain.write_text("# no frontmatter: no claim\n")
    found = coordination_map([broken, plain], Schema.load().types)
    assert [(e.file, e.line) for e in found.malformed] == [(str(broken), 1)]
    assert found.undeclared == [str(plain)]
