"""Readable by default, exact with --json (issue 15, item 4): exports with prefixes and a
JSON-LD @context (the same quads as N-Quads, read back by pyoxigraph), aligned tables,
traverse edges in their true direction, and `plan apply --dry-run` in the plan's words with
the ids the real run assigns."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyoxigraph
import pytest

from conftest import Cli, quads_of


@pytest.fixture
def demo(cli: Cli) -> Cli:
    from ontoloom.api import Graph
    from ontoloom.demo import load_entities
    from ontoloom.resources import resource_dir

    with Graph.open(cli.data_dir, write=True, create=True) as g:
        load_entities(g, resource_dir("examples") / "team" / "entities.json")
    return cli


def parsed(text: str, fmt: pyoxigraph.RdfFormat) -> set[str]:
    return {str(q) for q in pyoxigraph.parse(text.encode(), format=fmt)}


def triples(nquads: str) -> set[str]:
    return {
        str(q.triple)
        for q in pyoxigraph.parse(nquads.encode(), format=pyoxigraph.RdfFormat.N_QUADS)
    }


# -- exports -------------------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["facts", "all"])
def test_turtle_and_trig_declare_their_prefixes_and_keep_every_quad(demo: Cli, which: str) -> None:
    nquads = demo("export", "--format", "nquads", "--graph", which)
    exact = parsed(nquads.stdout, pyoxigraph.RdfFormat.N_QUADS)
    trig = demo("export", "--format", "trig", "--graph", which).stdout
    assert "@prefix ol: <https://ontoloom.dev/ns#> ." in trig
    assert "@prefix id: <https://ontoloom.dev/id/> ." in trig
    assert "@prefix graph: <https://ontoloom.dev/graph/> ." in trig
    assert "id:task_deploy" in trig
    assert parsed(trig, pyoxigraph.RdfFormat.TRIG) == exact
    turtle = demo("export", "--format", "turtle", "--graph", which).stdout
    assert "@prefix ol: <https://ontoloom.dev/ns#> ." in turtle
    as_triples = {
        str(t) for t in pyoxigraph.parse(turtle.encode(), format=pyoxigraph.RdfFormat.TURTLE)
    }
    assert as_triples == triples(nquads.stdout)


def test_only_prefixes_in_use_are_declared(demo: Cli) -> None:
    facts = demo("export", "--format", "turtle", "--graph", "facts").stdout
    declared = set(re.findall(r"^@prefix (\w*):", facts, re.MULTILINE))
    assert {"ol", "id"} <= declared
    assert "sh" not in declared and "owl" not in declared  # no shape, no OWL term in facts
    assert "graph" not in declared  # Turtle writes no graph names


def test_jsonld_is_compacted_with_a_context_and_keeps_every_quad(demo: Cli) -> None:
    exact = parsed(
        demo("export", "--format", "nquads", "--graph", "facts").stdout,
        pyoxigraph.RdfFormat.N_QUADS,
    )
    result = demo("export", "--format", "jsonld", "--graph", "facts")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["@context"]["ol"] == "https://ontoloom.dev/ns#"
    assert doc["@context"]["id"] == "https://ontoloom.dev/id/"
    assert '"id:task_deploy"' in result.stdout and '"ol:title"' in result.stdout
    assert parsed(result.stdout, pyoxigraph.RdfFormat.JSON_LD) == exact
    assert demo("export", "--json", "--graph", "facts").stdout == result.stdout  # the same


def test_jsonld_keeps_literals_as_written(cli: Cli, tmp_path: Path) -> None:
    data = tmp_path / "odd.ttl"
    data.write_text(
        "@prefix ol: <https://ontoloom.dev/ns#> . @prefix id: <https://ontoloom.dev/id/> .\n"
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        'id:task_odd a ol:Task ; ol:title "Odd" ; ol:status "open" ; ol:estimate "007"^^xsd:integer .\n'
    )
    assert cli("import", str(data)).exit_code == 0
    exact = parsed(cli("export", "--format", "nquads").stdout, pyoxigraph.RdfFormat.N_QUADS)
    assert any('"007"' in q for q in exact)
    out = cli("export", "--format", "jsonld").stdout
    assert parsed(out, pyoxigraph.RdfFormat.JSON_LD) == exact


def test_an_exported_turtle_file_imports_back(demo: Cli, tmp_path: Path) -> None:
    out = tmp_path / "facts.ttl"
    assert demo("export", "--graph", "facts", "-o", str(out)).exit_code == 0
    other = Cli(tmp_path / "other" / ".ontoloom")
    assert other("import", str(out)).exit_code == 0
    assert quads_of(other.data_dir) == {
        q for q in quads_of(demo.data_dir) if q.graph_name.value.endswith("/facts")
    }


# -- tables --------------------------------------------------------------------------------------
def table(lines: list[str], header: list[str]) -> list[list[str]]:
    """The rows of an aligned table, cut where each header starts: a cell that ran into
    the next column, or started elsewhere, would be cut wrong and fail the comparison."""
    assert lines[0].split() == header
    starts = [lines[0].index(h) for h in header]
    ends = [*starts[1:], None]
    rows = []
    for line in lines[1:]:
        assert line == line.rstrip()
        for start in starts[1:]:
            if start <= len(line):  # a gap before every column (empty last cells end early)
                assert line[start - 1] == " ", (line, start)
        rows.append([line[a:b].strip() for a, b in zip(starts, ends, strict=True)])
    return rows


def test_list_is_an_aligned_table(demo: Cli) -> None:
    out = demo("list", "--type", "Task").stdout.splitlines()
    assert out[-1].endswith("entities")
    rows = table(out[:-1], ["ID", "TYPE", "TITLE"])
    exact = json.loads(demo.json("list", "--type", "Task").output)
    assert [r[:2] for r in rows] == [[e["id"], e["type"]] for e in exact]
    assert [r[2] for r in rows] == [e["properties"]["title"] for e in exact]


def test_a_title_that_looks_like_markup_is_shown_as_is(cli: Cli) -> None:
    made = cli(
        "create", "Task", "--id", "task_m", "-p", "title=[bold]loud[/bold]", "-p", "status=open"
    )
    assert made.exit_code == 0
    assert "[bold]loud[/bold]" in cli("list").stdout


def test_schema_list_is_two_aligned_tables(demo: Cli) -> None:
    exact = json.loads(demo.json("schema", "list").output)
    types, relations = demo("schema", "list").stdout.split("\n\n")
    rows = table(types.splitlines(), ["TYPE", "REQUIRED", "ORIGIN"])
    assert rows == [
        [t["type"], ", ".join(t["required"]) or "-", "built in" if t["builtin"] else "extension"]
        for t in exact["types"]
    ]
    header = ["RELATION", "FROM", "TO", "CARDINALITY", "ACYCLIC"]
    assert table(relations.splitlines(), header) == [
        [
            r["rel"],
            ", ".join(r["from_types"]),
            ", ".join(r["to_types"]),
            r["cardinality"],
            "yes" if r["acyclic"] else "no",
        ]
        for r in exact["relations"]
    ]


def test_summary_is_aligned_tables_of_counts(demo: Cli) -> None:
    exact = json.loads(demo.json("summary").output)
    head, *tables = demo("summary").stdout.strip().split("\n\n")
    assert head.startswith(f"{exact['objects']} objects, {exact['relations']} relations")
    for text, (title, key) in zip(
        tables,
        [("TYPE", "types"), ("RELATION", "relations_by_type"), ("PROPERTY", "properties")],
        strict=True,
    ):
        lines = text.splitlines()
        assert lines[0].split() == [title, "COUNT"]
        assert len({len(line) for line in lines}) == 1  # counts are right-aligned
        assert {line.split()[0]: int(line.split()[1]) for line in lines[1:]} == exact[key]


def test_search_is_an_aligned_table(demo: Cli) -> None:
    exact = json.loads(demo.json("search", "payment").output)
    lines = demo("search", "payment").stdout.splitlines()
    header = ["SCORE", "ID", "TYPE", "TITLE", "MATCH"]
    rows = [r for r in table(lines, header) if r[0]]  # a hit's further lines have no score
    assert [r[1:3] for r in rows] == [[h["id"], h["type"]] for h in exact]
    assert [float(r[0]) for r in rows] == [round(h["score"], 2) for h in exact]


# -- traverse ------------------------------------------------------------------------------------
@pytest.fixture
def chain(cli: Cli) -> Cli:
    for task in ("task_timeout", "task_deploy", "task_launch"):
        assert (
            cli(
                "create", "Task", "--id", task, "-p", f"title={task}", "-p", "status=open"
            ).exit_code
            == 0
        )
    assert cli("relate", "task_timeout", "blocks", "task_deploy").exit_code == 0
    assert cli("relate", "task_deploy", "blocks", "task_launch").exit_code == 0
    return cli


def test_traverse_draws_each_edge_the_way_it_runs(chain: Cli) -> None:
    inbound = chain("traverse", "task_deploy", "--direction", "in").stdout
    assert "task_deploy <-blocks- task_timeout" in inbound
    assert "-blocks-> task_timeout" not in inbound
    outbound = chain("traverse", "task_deploy").stdout
    assert "task_deploy -blocks-> task_launch" in outbound
    two = chain("traverse", "task_launch", "--direction", "in", "--depth", "2").stdout
    assert "task_launch <-blocks- task_deploy <-blocks- task_timeout" in two


def test_traverse_json_gives_every_edge_as_stored(chain: Cli) -> None:
    found = json.loads(
        chain.json("traverse", "task_launch", "--direction", "in", "--depth", "2").output
    )
    far = next(r for r in found if r["id"] == "task_timeout")
    assert far["path"] == ["task_launch", "task_deploy", "task_timeout"]
    assert far["edges"] == [
        {"from": "task_deploy", "rel": "blocks", "to": "task_launch"},
        {"from": "task_timeout", "rel": "blocks", "to": "task_deploy"},
    ]


# -- plan --dry-run ------------------------------------------------------------------------------
PLAN = (
    "steps:\n"
    "  - {op: create, type: Task, as: fix, properties: {title: Fix the timeout, status: open}}\n"
    "  - {op: create, type: Task, properties: {title: Unnamed, status: open}}\n"
    "  - {op: relate, from: fix, rel: blocks, to: task_deploy}\n"
    "  - {op: update, id: task_deploy, properties: {status: blocked}, unset: [priority]}\n"
)


def created_ids(output: str) -> list[str]:
    data = json.loads(output)
    return [c["id"] for c in data["changes"] if c["op"] == "create"]


def test_a_dry_run_assigns_the_ids_the_real_run_does(demo: Cli, tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN)
    before = quads_of(demo.data_dir)
    dry = demo.json("plan", "apply", str(plan), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert quads_of(demo.data_dir) == before
    real = demo.json("plan", "apply", str(plan))
    assert real.exit_code == 0, real.output
    assert created_ids(dry.output) == created_ids(real.output)
    assert json.loads(dry.output)["aliases"] == json.loads(real.output)["aliases"]
    for entity_id in created_ids(real.output):
        assert demo("get", entity_id).exit_code == 0
    # The same plan again makes new entities, with new ids, not a refusal.
    again = demo.json("plan", "apply", str(plan))
    assert again.exit_code == 0, again.output
    assert not set(created_ids(again.output)) & set(created_ids(real.output))


def test_a_dry_run_speaks_the_plan_s_words_and_json_keeps_the_delta(
    demo: Cli, tmp_path: Path
) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN)
    text = demo("plan", "apply", str(plan), "--dry-run").stdout
    fix = json.loads(demo.json("plan", "apply", str(plan), "--dry-run").output)["aliases"]["fix"]
    assert "<https://" not in text and "^^" not in text
    assert f'1. create Task {fix} (as fix): title "Fix the timeout", status "open"' in text
    assert f"3. relate {fix} (fix) blocks task_deploy" in text
    assert '4. update task_deploy: set status = "blocked"; unset priority' in text
    assert "nothing stored" in text
    exact = json.loads(demo.json("plan", "apply", str(plan), "--dry-run").output)["delta"]
    assert any(fix in q and "ontoloom.dev/ns#blocks" in q for q in exact["adds"])


def test_a_refused_dry_run_names_the_step_and_exits_1(demo: Cli, tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text("steps:\n  - {op: create, type: Task, properties: {title: No status}}\n")
    result = demo("plan", "apply", str(plan), "--dry-run")
    assert result.exit_code == 1
    assert "would be refused" in result.stdout and "step 1" in result.stdout


def test_a_symmetric_edge_is_drawn_as_stored_whichever_way_it_is_walked(cli: Cli) -> None:
    spec = {
        "rel": "pairs_with",
        "from_types": ["Person"],
        "to_types": ["Person"],
        "cardinality": "many_to_many",
        "acyclic": False,
        "symmetric": True,
    }
    assert cli("schema", "add-relation", json.dumps(spec)).exit_code == 0
    for person in ("pers_ann", "pers_bo"):
        assert cli("create", "Person", "--id", person, "-p", f"name={person}").exit_code == 0
    assert cli("relate", "pers_ann", "pairs_with", "pers_bo").exit_code == 0
    # Stored from ann to bo; walking out from bo reaches ann over the same edge.
    found = json.loads(cli.json("traverse", "pers_bo").output)
    assert found[0]["edges"] == [{"from": "pers_ann", "rel": "pairs_with", "to": "pers_bo"}]
    assert "pers_bo <-pairs_with- pers_ann" in cli("traverse", "pers_bo").stdout


def test_the_terminal_table_and_the_piped_table_are_the_same_layout(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import os
    import shutil
    import sys

    from ontoloom import cli

    columns = ["SCORE", "ID", "TITLE", "MATCH"]
    rows = [
        ["1.50", "task_a", "Fix [bold]it[/bold]", "a snippet\n· blocks → B"],
        ["10.25", "task_long_identifier", "Café ☕ 日本", ""],
    ]
    # Private on purpose: the table every listing prints, given rows no command would make
    # (set scores, markup-like text, wide characters, a multi-line cell).
    cli._print_table(columns, rows, right=(0,))
    piped = capsys.readouterr().out
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(shutil, "get_terminal_size", lambda *a: os.terminal_size((200, 50)))
    cli._print_table(columns, rows, right=(0,))
    assert capsys.readouterr().out == piped
    header, first, second, third = piped.splitlines()
    assert header.index("MATCH") == first.index("a snippet") == second.index("· blocks")
    assert first.startswith(" 1.50  task_a ") and third.startswith("10.25  task_long_identifier")
    assert "Fix [bold]it[/bold]" in first
