"""Bugs the reliability suite's fuzzers found, each with its reproduction."""

from __future__ import annotations

from pathlib import Path

from conftest import Cli, quads_of


def test_a_null_param_binds_the_text_null(cli: Cli) -> None:
    """`query --param v=null` was an IndexError ("unexpected", exit 2): JSON null gives no
    literal. Now it binds the string "null", like any other text."""
    props = '{"title": "null", "status": "open"}'
    assert cli("create", "Task", "--id", "task_a", "--props", props).exit_code == 0
    result = cli("query", "SELECT ?t WHERE { ?t ol:title ?v }", "--param", "v=null")
    assert result.exit_code == 0, result.output
    assert "task_a" in result.output and "unexpected" not in result.output


def test_two_params_that_the_query_does_not_project(cli: Cli) -> None:
    """Binding two unprojected variables appended two VALUES clauses: a syntax error."""
    assert (
        cli("create", "Task", "--id", "task_a", "-p", "title=A", "-p", "status=open").exit_code == 0
    )
    query = "SELECT ?t WHERE { ?t ol:title ?title ; ol:status ?status }"
    result = cli("query", query, "--param", "title=A", "--param", "status=open")
    assert result.exit_code == 0, result.output
    assert "task_a" in result.output


def test_a_date_that_does_not_exist_in_a_plan_is_a_parse_error(cli: Cli, tmp_path: Path) -> None:
    """ruamel reads 2026-02-30 as a date and fails with a bare ValueError ("unexpected")."""
    cli("init", str(cli.data_dir.parent))
    before = quads_of(cli.data_dir)
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "steps:\n  - {op: create, type: Task, properties: {title: x, status: open, due: 2026-02-30}}\n"
    )
    result = cli("plan", "apply", str(plan))
    assert result.exit_code == 2
    assert f"{plan}:2: day is out of range for month" in result.output
    assert "unexpected" not in result.output
    assert quads_of(cli.data_dir) == before


def test_a_date_that_does_not_exist_in_frontmatter_rejects_its_record_only(tmp_path: Path) -> None:
    """The same ValueError stopped the whole rebuild; now the record is reported malformed
    with path and line, and the others are read."""
    root = tmp_path / "inst"
    (root / "records/memory").mkdir(parents=True)
    (root / "ontoloom.toml").write_text('[records]\nmemory = "records/memory"\n')
    (root / "records/memory/good.md").write_text("---\ntitle: Good rule\n---\nx\n")
    (root / "records/memory/bad.md").write_text("---\ntitle: Bad\ndate: 2026-13-01\n---\nx\n")
    cli = Cli(root / ".ontoloom")
    cli("init", str(root))
    result = cli("rebuild")
    assert result.exit_code == 1, result.output
    assert (
        "records/memory/bad.md:3: malformed YAML frontmatter: month must be in 1..12"
        in result.output
    )
    assert cli("get", "rule:good").exit_code == 0
    assert cli("check").exit_code == 0


def test_a_lone_surrogate_is_refused_as_bad_input(cli: Cli) -> None:
    """A lone surrogate (bytes that are not UTF-8 in argv, or JSON's "\\ud800") in a value
    reached pyoxigraph and was an "unexpected ValueError"; now it is bad input, named."""
    assert (
        cli("create", "Task", "--id", "task_a", "-p", "title=A", "-p", "status=open").exit_code == 0
    )
    before = quads_of(cli.data_dir)
    for args in (
        ("create", "Task", "-p", "title=a\udce9", "-p", "status=open"),
        ("create", "Task", "--props", '{"title": "a\\ud800", "status": "open"}'),
        ("update", "task_a", "-p", "title=\ud800"),
        ("query", "SELECT * WHERE { ?s ?p ?o }", "--param", "x=\ud800"),
        ("get", "\ud800"),
    ):
        result = cli(*args)
        assert result.exit_code == 2, (args, result.output)
        assert "not valid Unicode" in result.output, (
            args,
            result.output,
        ) and "unexpected" not in result.output
    assert quads_of(cli.data_dir) == before


def test_a_param_in_angle_brackets_that_is_no_iri_is_bad_input(cli: Cli) -> None:
    """`--param 'x=</a><b>'` reached pyoxigraph's NamedNode: "unexpected ValueError"."""
    cli("init", str(cli.data_dir.parent))
    result = cli("query", "SELECT * WHERE { ?s ?p ?x }", "--param", "x=</tool_result><tool_use>")
    assert result.exit_code == 2
    assert "is not an IRI" in result.output and "unexpected" not in result.output
