"""Export/import, SPARQL queries, summary, schema extensions, plans and inference."""

from __future__ import annotations

import json
from pathlib import Path

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


# -- export / import ---------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["trig", "nquads"])
def test_export_import_export_is_isomorphic(demo: Cli, tmp_path: Path, fmt: str) -> None:
    from rdflib import Dataset
    from rdflib.compare import isomorphic

    first = tmp_path / f"first.{fmt}"
    assert demo("export", "--format", fmt, "-o", str(first)).exit_code == 0
    other = Cli(tmp_path / "other" / ".ontoloom")
    result = other("import", str(first))
    assert result.exit_code == 0, result.output
    second = tmp_path / f"second.{fmt}"
    assert other("export", "--format", fmt, "-o", str(second)).exit_code == 0
    rdflib_format = {"trig": "trig", "nquads": "nquads"}[fmt]
    a, b = Dataset(), Dataset()
    a.parse(first, format=rdflib_format)
    b.parse(second, format=rdflib_format)
    assert len(a) > 100
    for g in a.graphs():
        assert isomorphic(g, b.graph(g.identifier)), g.identifier
    assert json.loads(other.json("get", "task_deploy").output)["properties"]["status"] == "blocked"


@pytest.mark.parametrize("fmt", ["turtle", "ntriples", "jsonld"])
def test_every_format_exports(demo: Cli, fmt: str) -> None:
    result = demo("export", "--format", fmt, "--graph", "facts")
    assert result.exit_code == 0 and "task_deploy" in result.output


def test_an_invalid_import_stores_nothing(demo: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.ttl"
    bad.write_text(
        "@prefix ol: <https://ontoloom.dev/ns#> . @prefix id: <https://ontoloom.dev/id/> .\n"
        'id:task_new a ol:Task ; ol:title "New" ; ol:status "open" .\n'
        'id:task_broken a ol:Task ; ol:title "Broken" ; ol:status "someday" .\n'
        "id:task_deploy ol:blocks id:task_timeout .\n"
    )
    before = quads_of(demo.data_dir)
    result = demo.json("import", str(bad))
    assert result.exit_code == 1
    constraints = {r["constraint"] for r in json.loads(result.output)["results"]}
    assert constraints == {"in", "acyclic"}
    assert quads_of(demo.data_dir) == before


def test_parse_errors_give_file_line_and_column(demo: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "broken.ttl"
    bad.write_text('@prefix ex: <http://example.org/> .\nex:a ex:b ex:c .\nex:a ex:b "oops .\n')
    result = demo("import", str(bad))
    assert result.exit_code == 2
    assert "broken.ttl:3:" in result.output


@pytest.mark.parametrize("source", ["file", "stdin"])
def test_rdfxml_that_is_not_well_formed_xml_is_placed_by_line_and_column(
    demo: Cli, tmp_path: Path, source: str
) -> None:
    # Oxigraph's RDF/XML errors carry no position: the XML parser places them.
    text = (
        '<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"'
        ' xmlns:ol="https://ontoloom.dev/ns#">\n<rdf:Description rdf:about="https://ontoloom.dev/id/p">'
        "\n<ol:name>X</ol:name>\n</rdf:Descriptio>\n</rdf:RDF>\n"
    )
    bad = tmp_path / "broken.rdf"
    bad.write_text(text)
    result = (
        demo("import", str(bad))
        if source == "file"
        else demo("import", "-", "--format", "rdfxml", input=text)
    )
    assert result.exit_code == 2
    assert ("broken.rdf:5:3: " if source == "file" else ":5:3: ") in result.output
    assert "Traceback" not in result.output


def test_an_import_into_the_schema_graph_is_validated_with_the_rest(
    demo: Cli, tmp_path: Path
) -> None:
    # Data in the schema graph is still data: every shape sees it (issue 11, item 1).
    data = tmp_path / "smuggle.ttl"
    data.write_text(
        "@prefix ol: <https://ontoloom.dev/ns#> . @prefix id: <https://ontoloom.dev/id/> .\n"
        'id:task_x a ol:Task ; ol:status "wip" .\n'
    )
    before = quads_of(demo.data_dir)
    result = demo.json("import", str(data), "--graph", "schema")
    assert result.exit_code == 1
    assert {r["constraint"] for r in json.loads(result.output)["results"]} == {"in", "minCount"}
    assert quads_of(demo.data_dir) == before


def test_shapes_and_data_in_one_file_are_one_change(demo: Cli, tmp_path: Path) -> None:
    # The shapes a file brings apply to the data it brings; refused, neither is stored.
    mixed = tmp_path / "mixed.trig"
    mixed.write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ol: <https://ontoloom.dev/ns#> .\n"
        "@prefix id: <https://ontoloom.dev/id/> .\n"
        "<https://ontoloom.dev/graph/schema> { ol:TaskNeedsPriority a sh:PropertyShape ;"
        " sh:targetClass ol:Task ; sh:path ol:priority ; sh:minCount 1 . }\n"
        '<https://ontoloom.dev/graph/facts> { id:task_y a ol:Task ; ol:title "Y" ; ol:status "open" . }\n'
    )
    before = quads_of(demo.data_dir)
    result = demo.json("import", str(mixed))
    assert result.exit_code == 1
    assert "task_y" in {r["focus"] for r in json.loads(result.output)["results"]}
    assert quads_of(demo.data_dir) == before


def test_import_into_a_chosen_graph_and_inferred_is_not_a_target(demo: Cli, tmp_path: Path) -> None:
    good = tmp_path / "p.ttl"
    good.write_text(
        '@prefix ol: <https://ontoloom.dev/ns#> . <https://ontoloom.dev/id/pers_zed> a ol:Person ; ol:name "Zed" .'
    )
    assert demo("import", str(good), "--graph", "confirmed").exit_code == 0
    out = demo("export", "--graph", "confirmed", "--format", "ntriples").output
    assert "pers_zed" in out
    assert demo("import", str(good), "--graph", "inferred").exit_code == 2


def test_the_bookkeeping_graph_cannot_be_imported(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "meta.nq"
    path.write_text(
        '<https://ontoloom.dev/store> <https://ontoloom.dev/ns#generation> "99" '
        "<https://ontoloom.dev/graph/meta> .\n"
    )
    before = quads_of(cli.data_dir) if (cli.data_dir / "store").exists() else set()
    refused = cli("import", str(path))
    assert refused.exit_code == 2 and "bookkeeping graph" in refused.output
    after = quads_of(cli.data_dir) if (cli.data_dir / "store").exists() else set()
    assert after == before


# -- query -------------------------------------------------------------------------------------
def test_named_queries_are_listed_with_their_descriptions(demo: Cli) -> None:
    listed = json.loads(demo.json("query", "--list").output)
    names = {q["name"] for q in listed}
    assert {
        "open-tasks-by-project",
        "blocked-chains",
        "who-owns-what",
        "cycles",
        "orphans",
        "neighbourhood",
    } <= names
    assert all(q["description"] for q in listed)


def test_query_results_formats(demo: Cli) -> None:
    q = 'SELECT ?t WHERE { ?t ol:status "blocked" }'
    out = json.loads(demo("query", q, "--format", "json").output)
    assert out["head"]["vars"] == ["t"]
    assert out["results"]["bindings"][0]["t"]["value"].endswith("task_deploy")
    assert demo("query", q, "--format", "csv").output.splitlines()[0] == "t"
    assert demo("query", q, "--format", "tsv").output.splitlines()[0] == "?t"
    assert "task_deploy" in demo("query", q).output
    ask = json.loads(demo("query", 'ASK { ?t ol:status "blocked" }', "--format", "json").output)
    assert ask["boolean"] is True
    graph = demo(
        "query", "CONSTRUCT { ?t ol:status ?s } WHERE { ?t ol:status ?s }", "--format", "turtle"
    )
    assert "blocked" in graph.output


def test_parameters_are_bound_as_typed_terms_not_pasted(demo: Cli) -> None:
    q = "SELECT ?t ?s WHERE { ?t ol:status ?s }"
    out = json.loads(demo("query", q, "--param", "s=blocked", "--format", "json").output)
    assert [b["t"]["value"].rsplit("/", 1)[-1] for b in out["results"]["bindings"]] == [
        "task_deploy"
    ]
    evil = 'x" } ; DROP ALL ; SELECT * WHERE { "'
    result = demo("query", q, "--param", f"s={evil}", "--format", "json")
    assert result.exit_code == 0 and json.loads(result.output)["results"]["bindings"] == []
    hops = json.loads(
        demo(
            "query",
            "neighbourhood",
            "--param",
            "start=task_deploy",
            "--param",
            "hops=1",
            "--format",
            "json",
        ).output
    )
    nodes = {b["node"]["value"].rsplit("/", 1)[-1] for b in hops["results"]["bindings"]}
    assert {"task_timeout", "task_copy", "proj_checkout"} <= nodes


@pytest.mark.parametrize(
    "query",
    [
        "SELECT ?t WHERE { ?t ol:status ?o FILTER(?o = ?s) }",
        "SELECT ?t WHERE { ?t ol:status ?s }",
        "SELECT ?t WHERE { ?t ol:status ?o OPTIONAL { ?t ol:title ?x } FILTER(?o = ?s) }",
        "ASK { ?t ol:status ?s FILTER(?t = <https://ontoloom.dev/id/task_deploy>) }",
    ],
)
def test_a_parameter_binds_wherever_the_query_uses_it_projected_or_not(
    demo: Cli, query: str
) -> None:
    out = json.loads(demo("query", query, "--param", "s=blocked", "--format", "json").output)
    if "boolean" in out:
        assert out["boolean"] is True
        return
    assert [b["t"]["value"].rsplit("/", 1)[-1] for b in out["results"]["bindings"]] == [
        "task_deploy"
    ]


def test_updates_are_refused_and_the_store_is_unchanged(demo: Cli) -> None:
    before = quads_of(demo.data_dir)
    for update in [
        "INSERT DATA { <a:b> <a:c> <a:d> }",
        "PREFIX x: <a:> DELETE WHERE { ?s ?p ?o }",
        "CLEAR ALL",
    ]:
        result = demo("query", update)
        assert result.exit_code == 2 and "read-only" in result.output
    assert quads_of(demo.data_dir) == before


def test_unknown_named_query_and_missing_parameters(demo: Cli) -> None:
    assert demo("query", "no-such-query").exit_code == 2
    result = demo("query", "neighbourhood")
    assert result.exit_code == 2 and "--param start" in result.output


# -- summary -----------------------------------------------------------------------------------
def test_summary_counts_and_an_empty_graph_is_an_empty_summary(demo: Cli, tmp_path: Path) -> None:
    data = json.loads(demo.json("summary").output)
    assert data["types"]["Task"] == 4 and data["relations_by_type"]["blocks"] == 2
    assert data["objects"] == 16 and data["last_change"]
    empty = Cli(tmp_path / "e" / ".ontoloom")
    empty("init", str(tmp_path / "e"))
    result = empty.json("summary")
    assert result.exit_code == 0
    assert json.loads(result.output) | {"generation": 0, "last_change": None} == {
        "objects": 0,
        "relations": 0,
        "types": {},
        "relations_by_type": {},
        "properties": {},
        "generation": 0,
        "last_change": None,
    }


# -- schema extensions -------------------------------------------------------------------------
def test_add_type_applies_to_later_writes(demo: Cli) -> None:
    spec = '{"type":"Sprint","required":["name","start"],"enums":{"status":["planning","active","closed"]}}'
    assert demo("schema", "add-type", spec).exit_code == 0
    refused = demo.json(
        "create", "Sprint", "-p", "name=S1", "-p", "start=2026-12-01", "-p", "status=done"
    )
    assert refused.exit_code == 1 and json.loads(refused.output)["results"][0]["constraint"] == "in"
    assert demo("create", "Sprint", "-p", "name=S1", "-p", "start=2026-12-01").exit_code == 0
    assert (
        demo(
            "create", "Sprint", "-p", "name=S1", "-p", "start=2026-12-01", "-p", "token=x"
        ).exit_code
        == 1
    )
    listed = json.loads(demo.json("schema", "list").output)
    sprint = next(t for t in listed["types"] if t["type"] == "Sprint")
    assert sprint["builtin"] is False and sorted(sprint["required"]) == ["name", "start"]
    shown = json.loads(demo.json("schema", "show", "Sprint").output)
    assert shown["enums"]["status"] == ["planning", "active", "closed"]


def test_add_relation_with_cardinality_and_acyclicity(demo: Cli) -> None:
    spec = '{"rel":"mentors","from_types":["Person"],"to_types":["Person"],"cardinality":"many_to_one","acyclic":true}'
    assert demo("schema", "add-relation", spec).exit_code == 0
    assert demo("relate", "pers_alice", "mentors", "pers_bob").exit_code == 0
    assert demo("relate", "pers_bob", "mentors", "pers_alice").exit_code == 1
    replaced = json.loads(demo.json("relate", "pers_alice", "mentors", "pers_chloe").output)[
        "replaced"
    ]
    assert [r["to_id"] for r in replaced] == ["pers_bob"]
    assert demo("relate", "task_copy", "mentors", "pers_bob").exit_code == 1


@pytest.mark.parametrize(
    "spec",
    [
        '{"type":"lowercase"}',
        '{"type":"Task"}',
        "not json",
        '{"type":"X","weird":1}',
        '{"rel":"x","from_types":["Nope"],"to_types":["Task"]}',
        '{"rel":"blocks","from_types":["Task"],"to_types":["Task"]}',
    ],
)
def test_malformed_extensions_are_usage_errors(demo: Cli, spec: str) -> None:
    command = "add-relation" if '"rel"' in spec else "add-type"
    assert demo("schema", command, spec).exit_code == 2


def test_an_extension_that_existing_data_breaks_is_refused_with_the_data(
    demo: Cli, tmp_path: Path
) -> None:
    shapes = tmp_path / "rules.ttl"
    shapes.write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ol: <https://ontoloom.dev/ns#> .\n"
        "ol:TaskNeedsOwner a sh:PropertyShape ; sh:targetClass ol:Task ; sh:path ol:assigned_to ;\n"
        '  sh:minCount 1 ; sh:message "Every task has an assignee" .\n'
    )
    result = demo.json("schema", "add-shapes", str(shapes))
    assert result.exit_code == 1
    assert {r["focus"] for r in json.loads(result.output)["results"]} == {"task_copy"}
    assert demo("relate", "task_copy", "assigned_to", "pers_bob").exit_code == 0
    assert demo("schema", "add-shapes", str(shapes)).exit_code == 0
    assert demo("create", "Task", "-p", "title=T", "-p", "status=open").exit_code == 1


def test_shapes_files_are_checked_against_shacl_shacl(demo: Cli, tmp_path: Path) -> None:
    shapes = tmp_path / "bad-shapes.ttl"
    shapes.write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ex: <http://example.org/> .\n"
        'ex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:property [ sh:path ex:p ; sh:minCount "one" ] .\n'
    )
    result = demo("schema", "add-shapes", str(shapes))
    assert result.exit_code == 1 and "not a valid SHACL shapes graph" in result.output


def test_an_unknown_type_hints_at_add_type(demo: Cli) -> None:
    result = demo("create", "Sprint", "-p", "name=x")
    assert result.exit_code == 1 and "schema add-type" in result.output


# -- plans -------------------------------------------------------------------------------------
def test_a_plan_applies_atomically_with_aliases(demo: Cli, tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "steps:\n"
        "  - {op: create, type: Task, as: fix, properties: {title: Fix flaky test, status: open}}\n"
        "  - {op: relate, from: fix, rel: blocks, to: task_deploy}\n"
        "  - {op: relate, from: fix, rel: assigned_to, to: pers_bob}\n"
        "  - {op: update, id: task_copy, properties: {status: done}}\n"
    )
    result = demo.json("plan", "apply", str(plan))
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    fix = out["aliases"]["fix"]
    assert out["applied"] is True
    assert [
        r["to_id"] for r in json.loads(demo.json("relations", fix, "--direction", "out").output)
    ] == ["pers_bob", "task_deploy"]


def test_a_plan_is_refused_whole_naming_the_failing_step(demo: Cli, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            [
                {
                    "op": "create",
                    "type": "Task",
                    "as": "a",
                    "properties": {"title": "A", "status": "open"},
                },
                {
                    "op": "create",
                    "type": "Task",
                    "as": "b",
                    "properties": {"title": "B", "status": "open"},
                },
                {"op": "relate", "from": "a", "rel": "blocks", "to": "b"},
                {"op": "relate", "from": "b", "rel": "blocks", "to": "a"},
            ]
        )
    )
    before = quads_of(demo.data_dir)
    result = demo.json("plan", "apply", str(plan))
    assert result.exit_code == 1
    findings = json.loads(result.output)["results"]
    assert [(f["constraint"], f["step"]) for f in findings] == [("acyclic", 4)]
    assert quads_of(demo.data_dir) == before
    dry = demo.json("plan", "apply", str(plan), "--dry-run")
    assert dry.exit_code == 1 and len(json.loads(dry.output)["delta"]["adds"]) > 6


def test_a_plan_step_that_cannot_be_staged_is_named(demo: Cli, tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text("- {op: update, id: task_missing, properties: {status: done}}\n")
    result = demo("plan", "apply", str(plan))
    assert result.exit_code == 2 and "step 1" in result.output
    plan.write_text("- {op: create, type: Task, properties: {title: T, status: later}}\n")
    result = demo.json("plan", "apply", str(plan))
    assert result.exit_code == 1 and json.loads(result.output)["results"][0]["step"] == 1
    plan.write_text("steps: [\n")
    assert "plan.yaml:" in demo("plan", "apply", str(plan)).output


@pytest.mark.parametrize(
    ("steps", "blamed"),
    [
        # the bad value came from the create, not from a later step touching the same task
        (
            [
                "{op: create, type: Task, id: task_a, properties: {title: A, status: wip}}",
                "{op: update, id: task_deploy, properties: {priority: high}}",
                "{op: update, id: task_a, properties: {priority: low}}",
            ],
            {("task_a", "status"): 1},
        ),
        (
            [
                "{op: create, type: Task, id: task_a, properties: {title: A, status: wip}}",
                "{op: relate, from: task_a, rel: blocks, to: task_deploy}",
            ],
            {("task_a", "status"): 1},
        ),
        # a property missing since the create; one a later update unset
        (
            [
                "{op: create, type: Task, id: task_a, properties: {title: A}}",
                "{op: update, id: task_a, properties: {priority: low}}",
            ],
            {("task_a", "status"): 1},
        ),
        (
            [
                "{op: update, id: task_deploy, properties: {priority: low}}",
                "{op: update, id: task_deploy, unset: [status]}",
                "{op: update, id: task_deploy, properties: {priority: high}}",
            ],
            {("task_deploy", "status"): 2},
        ),
        # a bad value set by an update, after a create that was fine
        (
            [
                "{op: create, type: Task, id: task_a, properties: {title: A, status: open}}",
                "{op: update, id: task_a, properties: {status: later}}",
                "{op: update, id: task_a, properties: {priority: low}}",
            ],
            {("task_a", "status"): 2},
        ),
    ],
)
def test_a_refused_plan_blames_the_step_that_brought_the_broken_value(
    demo: Cli, tmp_path: Path, steps: list[str], blamed: dict[tuple[str, str], int]
) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text("".join(f"- {s}\n" for s in steps))
    result = demo.json("plan", "apply", str(plan))
    assert result.exit_code == 1, result.output
    findings = json.loads(result.output)["results"]
    assert {(f["focus"], f["path"]): f["step"] for f in findings} == blamed


def test_a_plan_step_with_an_unknown_key_is_refused_not_ignored(demo: Cli, tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text("- {op: create, type: Person, props: {name: Carol}}\n")
    result = demo("plan", "apply", str(plan))
    assert result.exit_code == 2
    assert "step 1: unknown key 'props' for create" in result.output


def test_plans_work_from_the_api(demo: Cli) -> None:
    from ontoloom.api import Graph

    with Graph.open(demo.data_dir, write=True) as g:
        result = g.apply_plan(
            [
                {"create": "Person", "as": "p", "properties": {"name": "Dora"}},
                {"relate": ["p", "member_of", "org_acme"]},
            ]
        )
        assert result.applied and g.get(result.aliases["p"]).properties["name"] == "Dora"


# -- inference ---------------------------------------------------------------------------------
def test_inference_is_queried_on_request_and_never_validated(demo: Cli) -> None:
    q = "SELECT ?p WHERE { <https://ontoloom.dev/id/task_copy> ol:part_of ?p }"
    assert "(no results)" in demo("query", q).output
    result = demo.json("infer")
    assert result.exit_code == 0 and json.loads(result.output)["by_predicate"]["ol:part_of"] >= 3
    assert "proj_checkout" in demo("query", q, "--infer").output
    assert "(no results)" in demo("query", q).output
    assert demo("check").exit_code == 0
    exported = demo("export", "--graph", "inferred", "--format", "nquads").output
    assert "dc/terms/title" in exported and "graph/inferred" in exported
