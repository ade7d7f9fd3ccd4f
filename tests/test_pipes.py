"""Pipes (issue 15, item 2): `-` is standard input for every file argument and standard
output for every `-o`; a format that cannot be told is an error naming `--format` and its
choices; input that holds nothing is an error, never "imported 0 quads". With an owner
running, the client reads standard input and the command sees it the same way."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import Cli, quads_of

TASK_TTL = (
    "@prefix ol: <https://ontoloom.dev/ns#> . @prefix id: <https://ontoloom.dev/id/> .\n"
    'id:task_piped a ol:Task ; ol:title "Piped" ; ol:status "open" .\n'
)
PLAN_YAML = (
    "steps:\n"
    "  - {op: create, type: Task, as: fix, properties: {title: Fix it, status: open}}\n"
    "  - {op: create, type: Task, as: ship, properties: {title: Ship it, status: open}}\n"
    "  - {op: relate, from: fix, rel: blocks, to: ship}\n"
)
SHAPES_TTL = (
    "@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ol: <https://ontoloom.dev/ns#> .\n"
    "ol:TaskTitleShort a sh:NodeShape ; sh:targetClass ol:Task ;\n"
    "  sh:property [ sh:path ol:title ; sh:maxLength 200 ] .\n"
)


@pytest.fixture
def store(cli: Cli) -> Cli:
    made = cli("create", "Person", "--id", "pers_ann", "-p", "name=Ann")
    assert made.exit_code == 0, made.output
    return cli


# -- standard input ------------------------------------------------------------------------------
def test_import_reads_standard_input(store: Cli) -> None:
    result = store("import", "-", "--format", "turtle", "--json", input=TASK_TTL)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["imported"] == 3
    assert json.loads(store.json("get", "task_piped").output)["properties"]["title"] == "Piped"


def test_import_from_standard_input_needs_a_format_and_says_which(store: Cli) -> None:
    before = quads_of(store.data_dir)
    result = store("import", "-", input=TASK_TTL)
    assert result.exit_code == 2
    assert "standard input" in result.output and "--format" in result.output
    for choice in ("turtle", "trig", "nquads", "ntriples", "jsonld", "rdfxml"):
        assert choice in result.output
    assert "Traceback" not in result.output
    assert quads_of(store.data_dir) == before


def test_a_file_whose_format_cannot_be_told_is_refused_naming_the_options(
    store: Cli, tmp_path: Path
) -> None:
    odd = tmp_path / "team.data"
    odd.write_text(TASK_TTL)
    result = store("import", str(odd))
    assert result.exit_code == 2
    assert "team.data" in result.output and "--format" in result.output
    assert store("import", str(odd), "--format", "turtle").exit_code == 0


def test_plain_json_is_refused_not_imported_as_nothing(store: Cli) -> None:
    from ontoloom.resources import resource_dir

    before = quads_of(store.data_dir)
    entities = resource_dir("examples") / "team" / "entities.json"
    result = store("import", str(entities))
    assert result.exit_code == 2
    assert "imported 0" not in result.output
    assert "entities.json" in result.output and "no RDF statement" in result.output
    assert "nothing was imported" in result.output
    assert quads_of(store.data_dir) == before


@pytest.mark.parametrize(
    "text", ["", "@prefix ex: <http://example.org/> .\n", "# only a comment\n"]
)
def test_input_that_parses_to_nothing_is_an_error(store: Cli, tmp_path: Path, text: str) -> None:
    empty = tmp_path / "empty.ttl"
    empty.write_text(text)
    assert store("import", str(empty)).exit_code == 2
    piped = store("import", "-", "--format", "turtle", "--json", input=text)
    assert piped.exit_code == 2
    assert json.loads(piped.output)["error"] == "bad_input"


def test_plan_apply_reads_yaml_or_json_from_standard_input(store: Cli) -> None:
    result = store("plan", "apply", "-", "--json", input=PLAN_YAML)
    assert result.exit_code == 0, result.output
    aliases = json.loads(result.output)["aliases"]
    assert set(aliases) == {"fix", "ship"}
    steps = {"steps": [{"op": "update", "id": aliases["fix"], "properties": {"status": "done"}}]}
    again = store("plan", "apply", "-", "--json", input=json.dumps(steps))
    assert again.exit_code == 0, again.output
    got = json.loads(store.json("get", aliases["fix"]).output)
    assert got["properties"]["status"] == "done"


def test_an_empty_or_broken_plan_on_standard_input_is_located(store: Cli) -> None:
    empty = store("plan", "apply", "-", input="")
    assert empty.exit_code == 2 and "<stdin>" in empty.output
    broken = store("plan", "apply", "-", input="steps:\n  - {op: create\n")
    assert broken.exit_code == 2 and "<stdin>:" in broken.output


def test_schema_add_shapes_reads_standard_input(store: Cli) -> None:
    unknown = store("schema", "add-shapes", "-", input=SHAPES_TTL)
    assert unknown.exit_code == 2 and "--format" in unknown.output
    result = store("schema", "add-shapes", "-", "--format", "turtle", "--json", input=SHAPES_TTL)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["file"] == "standard input"
    nothing = store("schema", "add-shapes", "-", "--format", "turtle", input="")
    assert nothing.exit_code == 2 and "no shapes were added" in nothing.output


def test_query_reads_its_text_from_standard_input(store: Cli) -> None:
    result = store("query", "-", "--json", input="SELECT ?n WHERE { ?p ol:name ?n }")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["results"]["bindings"]
    assert [r["n"]["value"] for r in rows] == ["Ann"]
    empty = store("query", "-", input="  \n")
    assert empty.exit_code == 2 and "standard input" in empty.output


# -- standard output -----------------------------------------------------------------------------
def test_export_dash_o_dash_writes_standard_output(store: Cli, tmp_path: Path) -> None:
    result = store("export", "--format", "nquads", "--graph", "facts", "-o", "-")
    assert result.exit_code == 0, result.output
    assert "pers_ann" in result.stdout
    assert not (tmp_path / "-").exists()
    assert not (Path.cwd() / "-").exists()
    into = tmp_path / "out.nq"
    assert store("export", "--format", "nquads", "-o", str(into)).exit_code == 0
    assert "pers_ann" in into.read_text()


def test_export_takes_its_format_from_the_output_file_or_refuses(
    store: Cli, tmp_path: Path
) -> None:
    import pyoxigraph

    nq = tmp_path / "out.nq"
    assert store("export", "--graph", "facts", "-o", str(nq)).exit_code == 0
    assert list(pyoxigraph.parse(path=str(nq), format=pyoxigraph.RdfFormat.N_QUADS))
    for name in ("out.rdf", "out.txt", "out"):
        refused = store("export", "-o", str(tmp_path / name))
        assert refused.exit_code == 2, name
        assert "--format" in refused.output and "trig" in refused.output
        assert not (tmp_path / name).exists()
    forced = tmp_path / "out.txt"
    assert store("export", "--format", "trig", "-o", str(forced)).exit_code == 0
    assert list(pyoxigraph.parse(path=str(forced), format=pyoxigraph.RdfFormat.TRIG))


def test_enrich_emit_dash_o_dash_writes_standard_output(tmp_path: Path) -> None:
    root = tmp_path / "inst"
    inst = Cli(root / ".ontoloom")
    assert inst("init", str(root)).exit_code == 0
    result = inst("enrich", "--emit", "-o", "-")
    assert result.exit_code == 0, result.output
    assert "items" in json.loads(result.stdout)
    assert not (Path.cwd() / "-").exists()


# -- through a real pipe, with and without an owner ----------------------------------------------
@pytest.mark.skipif(sys.platform == "win32", reason="owners need local sockets")
def test_pipes_work_alone_and_through_an_owner(data_dir: Path, tmp_path: Path) -> None:
    from test_owner import McpProcess, cli

    alone = cli(data_dir, "import", "-", "--format", "turtle", stdin=TASK_TTL)
    assert alone.returncode == 0, alone.stderr
    assert "imported 3 quads from standard input" in alone.stdout
    server = McpProcess(data_dir)
    try:
        server.tool("get_entity", id="task_piped")  # up, and owning the data dir
        other = TASK_TTL.replace("task_piped", "task_owned")
        owned = cli(data_dir, "--json", "import", "-", "--format", "turtle", stdin=other)
        assert owned.returncode == 0, owned.stderr
        assert json.loads(owned.stdout)["imported"] == 3
        planned = cli(data_dir, "--json", "plan", "apply", "-", stdin=PLAN_YAML)
        assert planned.returncode == 0, planned.stderr
        assert set(json.loads(planned.stdout)["aliases"]) == {"fix", "ship"}
        asked = cli(data_dir, "query", "-", "--format", "csv", stdin="SELECT ?t { ?x ol:title ?t }")
        assert asked.returncode == 0, asked.stderr
        assert {"Piped", "Fix it", "Ship it"} <= set(asked.stdout.splitlines())
        dumped = cli(data_dir, "export", "--format", "nquads", "-o", "-")
        assert dumped.returncode == 0 and "task_owned" in dumped.stdout
        assert not (Path.cwd() / "-").exists()
        refused = cli(data_dir, "import", "-", stdin=TASK_TTL)
        assert refused.returncode == 2 and "--format" in refused.stderr
    finally:
        server.close()
