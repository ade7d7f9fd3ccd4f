"""`ontoloom validate` as a drop-in for the `pyshacl` command (README: Auditing, Findings JSON).

The oracle is pySHACL's own command line: the same argument lists run through `pyshacl`
(its `main`, in-process — one real subprocess checks the installed command) and through
`ontoloom validate` (click, in-process) on every SHACL case of tests/cases; exit codes and
conformance must agree. Then each option, `-` as stdin, the error paths, default messages
and the one findings schema across check, validate, refusals, plans and MCP.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner, Result

from ontoloom.cli import main
from ontoloom.findings import FINDING_KEYS, SCHEMA
from test_shacl_cases import CASES, oracle_shapes

HERE = Path(__file__).parent
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
PREFIXES = """@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ex: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""
# ex:tom lacks a name (a violation); ex:rex is a Dog, an Animal only through the ontology.
SHAPES = (
    PREFIXES
    + """
ex:S a sh:NodeShape ; sh:targetClass ex:Animal ; sh:property [ sh:path ex:name ; sh:minCount 1 ] .
ex:W a sh:NodeShape ; sh:targetClass ex:Animal ; sh:severity sh:Warning ;
  sh:property [ sh:path ex:age ; sh:minCount 1 ] .
"""
)
ONTOLOGY = PREFIXES + "ex:Dog a owl:Class ; rdfs:subClassOf ex:Animal . ex:Animal a owl:Class .\n"
DATA = PREFIXES + 'ex:rex a ex:Dog ; ex:age 3 .\nex:tom a ex:Animal ; ex:name "Tom" .\n'


def ours(*args: str, input: bytes | str | None = None) -> Result:
    return CliRunner().invoke(main, ["validate", *args], input=input)


def theirs(tmp_path: Path, *args: str) -> tuple[int, str]:
    """pySHACL's command line, in-process: (exit code, output)."""
    from pyshacl import cli

    out = tmp_path / "pyshacl.out"
    argv, sys.argv = sys.argv, ["pyshacl", *args, "-o", str(out)]
    try:
        cli.main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.argv = argv
    return code, out.read_text(encoding="utf-8") if out.exists() else ""


def conforms_of_theirs(output: str) -> bool | None:
    for line in output.splitlines():
        if line.startswith("Conforms: "):
            return line == "Conforms: True"
    return None


@pytest.fixture(scope="module")
def builtin_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """ontoloom's own shapes (as the pySHACL comparisons take them) and ontology, as files."""
    from ontoloom.schema import builtin_triples
    from ontoloom.terms import RdfFormat, serialize

    ontology, shapes = builtin_triples()
    where = tmp_path_factory.mktemp("builtin")
    serialize(oracle_shapes(shapes, ontology), str(where / "shapes.ttl"), RdfFormat.TURTLE)
    serialize(ontology, str(where / "ontology.ttl"), RdfFormat.TURTLE)
    return where / "shapes.ttl", where / "ontology.ttl"


def case_args(case: Path, builtin_files: tuple[Path, Path]) -> list[str]:
    if (case / "shapes.ttl").exists():
        return [str(case / "data.ttl"), "-s", str(case / "shapes.ttl"), "-a"]
    shapes, ontology = builtin_files
    return [str(case / "data.ttl"), "-s", str(shapes), "-e", str(ontology), "-a"]


# -a throughout: ontoloom always evaluates SPARQL-based targets, pySHACL only with -a.
@pytest.mark.parametrize("extra", [[], ["-w"], ["-i", "rdfs", "--abort"]], ids=" ".join)
@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_same_exit_code_and_conformance_as_pyshacl(
    case: Path, extra: list[str], builtin_files: tuple[Path, Path], tmp_path: Path
) -> None:
    args = [*case_args(case, builtin_files), *extra]
    code, output = theirs(tmp_path, *args)
    result = ours(*args, "-f", "json")
    assert result.exit_code == code, result.output
    assert json.loads(result.stdout)["conforms"] is conforms_of_theirs(output)


def test_the_installed_pyshacl_command_and_ours_agree_as_processes() -> None:
    case = HERE / "cases" / "counts-and-values"
    args = [str(case / "data.ttl"), "-s", str(case / "shapes.ttl"), "-f", "turtle"]
    pyshacl = Path(sys.executable).with_name("pyshacl")
    ontoloom = Path(sys.executable).with_name("ontoloom")
    theirs_ = subprocess.run([str(pyshacl), *args], capture_output=True, timeout=300)
    ours_ = subprocess.run([str(ontoloom), "validate", *args], capture_output=True, timeout=300)
    assert theirs_.returncode == ours_.returncode == 1
    assert b"sh:conforms false" in ours_.stdout


# -- each option, against pySHACL where it has an answer ------------------------------------------
@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "shapes.ttl").write_text(SHAPES, encoding="utf-8")
    (tmp_path / "ontology.ttl").write_text(ONTOLOGY, encoding="utf-8")
    (tmp_path / "data.ttl").write_text(DATA, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    "extra",
    [
        [],
        ["-e", "ontology.ttl"],
        ["--ont-graph", "ontology.ttl", "-i", "rdfs"],
        ["-i", "owlrl"],
        ["-e", "ontology.ttl", "--inference", "both"],
        ["-w"],  # ex:W is a Warning shape: its nested property shape's result does not fail
        ["-e", "ontology.ttl", "--allow-warnings"],  # ex:rex lacks a name: a violation
        ["--allow-infos"],
        ["-e", "ontology.ttl", "--abort"],
        ["-m"],
        ["-a"],
    ],
    ids=" ".join,
)
def test_each_option_as_pyshacl_answers(files: Path, extra: list[str]) -> None:
    args = [str(files / "data.ttl"), "--shacl", str(files / "shapes.ttl")]
    args += [str(files / a) if a.endswith(".ttl") else a for a in extra]
    code, output = theirs(files, *args)
    result = ours(*args, "-f", "human")
    assert result.exit_code == code
    assert conforms_of_theirs(result.stdout) is conforms_of_theirs(output)
    if "--abort" not in extra:  # the same results, worded the same, in the same order
        assert result.stdout.count("\n\tMessage: ") == output.count("\n\tMessage: ")
        assert _messages(result.stdout) == _messages(output)


def _messages(human: str) -> list[str]:
    return sorted(line for line in human.splitlines() if "Message: Less than" in line)


def test_ontology_is_mixed_in_and_inference_runs(files: Path) -> None:
    base = [str(files / "data.ttl"), "-s", str(files / "shapes.ttl"), "-f", "json"]
    without = json.loads(ours(*base).stdout)
    assert {r["focus"] for r in without["results"]} == {"<http://example.org/tom>"}
    mixed = json.loads(ours(*base, "-e", str(files / "ontology.ttl")).stdout)
    assert "<http://example.org/rex>" in {r["focus"] for r in mixed["results"]}
    # rdfs: the domain of ex:barks makes ex:fido an Animal, which then lacks a name.
    (files / "more.ttl").write_text(
        PREFIXES + "ex:barks rdfs:domain ex:Animal . ex:fido ex:barks true ; ex:age 1 .",
        encoding="utf-8",
    )
    plain = json.loads(
        ours(str(files / "more.ttl"), "-s", str(files / "shapes.ttl"), "-f", "json").stdout
    )
    inferred = ours(
        str(files / "more.ttl"), "-s", str(files / "shapes.ttl"), "-i", "rdfs", "-f", "json"
    )
    assert plain["conforms"] is True and inferred.exit_code == 1
    assert json.loads(inferred.stdout)["results"][0]["focus"] == "<http://example.org/fido>"


def test_metashacl_refuses_an_ill_formed_shapes_graph_naming_the_option(files: Path) -> None:
    (files / "bad.ttl").write_text(
        PREFIXES + "ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:nodeKind ex:Bogus .",
        encoding="utf-8",
    )
    args = [str(files / "data.ttl"), "-s", str(files / "bad.ttl"), "-m"]
    assert theirs(files, *args)[0] == 2
    result = ours(*args)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("error: -m/--metashacl: the shapes graph does not validate")
    assert "ex:Bogus" in result.stderr and "Traceback" not in result.stderr


def test_imports_are_followed_with_im_only(files: Path) -> None:
    (files / "main.ttl").write_text(
        PREFIXES + "<> a owl:Ontology ; owl:imports <shapes.ttl> .", encoding="utf-8"
    )
    args = [str(files / "data.ttl"), "-s", str(files / "main.ttl")]
    assert ours(*args).exit_code == theirs(files, *args)[0] == 0  # no shapes without -im
    assert ours(*args, "-im").exit_code == theirs(files, *args, "-im")[0] == 1
    (files / "main.ttl").write_text(
        PREFIXES + "<> a owl:Ontology ; owl:imports <missing.ttl> .", encoding="utf-8"
    )
    result = ours(*args, "--imports")
    assert result.exit_code == 2
    assert "-im/--imports" in result.stderr and "missing.ttl" in result.stderr


def test_abort_keeps_the_first_failing_shape_and_says_so(files: Path) -> None:
    args = [
        str(files / "data.ttl"),
        "-s",
        str(files / "shapes.ttl"),
        "-e",
        str(files / "ontology.ttl"),
    ]
    full = json.loads(ours(*args, "-f", "json").stdout)
    aborted = ours(*args, "--abort", "-f", "json")
    assert aborted.exit_code == 1
    kept = json.loads(aborted.stdout)["results"]
    assert 0 < len(kept) < len(full["results"])
    assert len({r["source_shape"] for r in kept}) == 1
    assert "--abort: stopped at the first failing shape" in aborted.stderr


def test_allow_warnings_reports_conforms_true_beside_the_results(files: Path) -> None:
    args = [str(files / "data.ttl"), "-s", str(files / "shapes.ttl")]
    result = ours(*args, "-w", "-f", "turtle")
    assert result.exit_code == 0
    assert "sh:conforms true" in result.stdout and "sh:result" in result.stdout
    assert json.loads(ours(*args, "-w", "--json").stdout)["conforms"] is True
    assert ours(*args).exit_code == 1


@pytest.mark.parametrize("fmt", ["turtle", "xml", "json-ld", "nt", "n3"])
def test_graph_formats_parse_back_to_the_same_report(files: Path, fmt: str) -> None:
    import rdflib
    from rdflib.compare import isomorphic

    args = [str(files / "data.ttl"), "-s", str(files / "shapes.ttl")]
    reference = rdflib.Graph().parse(data=ours(*args, "-f", "turtle").stdout, format="turtle")
    result = ours(*args, "-f", fmt)
    assert result.exit_code == 1
    graph = rdflib.Graph().parse(data=result.stdout, format=fmt)
    assert isomorphic(graph, reference)


def test_human_and_table_formats(files: Path) -> None:
    args = [str(files / "data.ttl"), "-s", str(files / "shapes.ttl")]
    human = ours(*args, "-f", "human").stdout
    assert human.startswith("Validation Report\nConforms: False\nResults (1):\n")
    assert "Constraint Violation in MinCountConstraintComponent" in human
    assert "\tMessage: Less than 1 values on ex:tom->ex:age\n" in human
    table = ours(*args, "-f", "table").stdout
    assert "Conforms" in table and "False" in table and "Less than 1 values" in table
    assert "…" not in table  # cells fold, never cut


def test_a_table_shows_user_text_as_written_not_as_console_markup(tmp_path: Path) -> None:
    """A pattern's message, a value and an IRI holding ``[a-z]`` or ``[bold]`` stay whole."""
    shapes = PREFIXES + (
        "ex:S a sh:NodeShape ; sh:targetClass ex:Animal ; sh:property [ sh:path ex:name ;\n"
        '  sh:pattern "^[a-z]+$" ; sh:message "the name is [a-z]+ and [bold]lower[/bold]" ] .\n'
    )
    (tmp_path / "shapes.ttl").write_text(shapes, encoding="utf-8")
    (tmp_path / "data.ttl").write_text(
        PREFIXES + 'ex:tom a ex:Animal ; ex:name "[red]Tom" .\n', encoding="utf-8"
    )
    args = [str(tmp_path / "data.ttl"), "-s", str(tmp_path / "shapes.ttl"), "-f", "table"]
    table = ours(*args).stdout
    assert "the name is [a-z]+ and [bold]lower[/bold]" in table, table
    assert '"[red]Tom"' in table, table


def test_output_file_and_stdout(files: Path) -> None:
    args = [str(files / "data.ttl"), "-s", str(files / "shapes.ttl"), "-f", "json"]
    written = ours(*args, "-o", str(files / "report.json"))
    assert written.exit_code == 1 and written.stdout == ""
    assert json.loads((files / "report.json").read_text())["conforms"] is False
    assert json.loads(ours(*args, "--output", "-").stdout)["conforms"] is False
    bad = ours(*args, "-o", str(files / "no" / "such" / "dir.json"))
    assert bad.exit_code == 2 and bad.stderr.startswith("error: -o ")


def test_explicit_file_formats(files: Path) -> None:
    (files / "data.graph").write_text(
        f"<http://example.org/tom> <{RDF_TYPE}> <http://example.org/Animal> .\n", encoding="utf-8"
    )
    (files / "shapes.graph").write_text(SHAPES, encoding="utf-8")
    (files / "ont.graph").write_text(ONTOLOGY, encoding="utf-8")
    args = [
        str(files / "data.graph"),
        "-s",
        str(files / "shapes.graph"),
        "-e",
        str(files / "ont.graph"),
    ]
    assert ours(*args, "-df", "nt", "-sf", "turtle", "-ef", "turtle").exit_code == 1
    # As pySHACL: an unknown extension is read for what it holds.
    assert ours(*args).exit_code == 1
    refused = ours(*args, "-df", "xml")
    assert refused.exit_code == 2 and "data.graph" in refused.stderr


# -- standard input ---------------------------------------------------------------------------------
def test_stdin_data_guessed_or_given(files: Path) -> None:
    shapes = ["-s", str(files / "shapes.ttl")]
    assert ours("-", *shapes, input=DATA).exit_code == 1
    nt = f"<http://example.org/tom> <{RDF_TYPE}> <http://example.org/Animal> .\n"
    assert ours("-", *shapes, "-df", "nt", input=nt).exit_code == 1
    assert ours("-", *shapes, input=nt).exit_code == 1  # N-Triples is Turtle too
    xml = (
        '<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
        '<rdf:Description rdf:about="http://example.org/tom">'
        '<rdf:type rdf:resource="http://example.org/Animal"/></rdf:Description></rdf:RDF>'
    )
    assert ours("-", *shapes, input=xml).exit_code == 1
    jsonld = '{"@id": "http://example.org/tom", "@type": "http://example.org/Animal"}'
    assert ours("-", *shapes, input=jsonld).exit_code == 1
    shapes_from_stdin = ours(str(files / "data.ttl"), "-s", "-", input=SHAPES)
    assert shapes_from_stdin.exit_code == 1


def test_stdin_that_cannot_be_guessed_names_df(files: Path) -> None:
    result = ours("-", "-s", str(files / "shapes.ttl"), input="this is { not rdf")
    assert result.exit_code == 2
    assert "<stdin>:1:" in result.stderr and "pass -df/--data-file-format" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("where", ["data", "shapes", "ontology", "stdin"])
@pytest.mark.parametrize(
    ("name", "text"),
    [("empty.ttl", ""), ("prefixes.ttl", "@prefix ex: <http://e/> .\n"), ("plain.json", "{}")],
)
def test_input_that_holds_no_statement_is_refused_not_read_as_an_empty_graph(
    files: Path, where: str, name: str, text: str
) -> None:
    nothing = files / name
    nothing.write_text(text, encoding="utf-8")
    data, shapes = str(files / "data.ttl"), str(files / "shapes.ttl")
    args = {
        "data": [str(nothing), "-s", shapes],
        "shapes": [data, "-s", str(nothing)],
        "ontology": [data, "-s", shapes, "-e", str(nothing)],
        "stdin": ["-", "-s", shapes, "-df", "json-ld" if name.endswith("json") else "turtle"],
    }[where]
    result = ours(*args, input=text if where == "stdin" else None)
    assert result.exit_code == 2, result.output
    assert "holds no RDF statement" in result.stderr
    assert result.stderr.rstrip().endswith("nothing was validated")
    assert ("JSON-LD?" in result.stderr) == name.endswith(".json")


def test_stdin_is_read_once() -> None:
    result = ours("-", "-s", "-", input=SHAPES)
    assert result.exit_code == 2 and "standard input (-) can be read once" in result.stderr


# -- error paths --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["missing.ttl"], "missing.ttl: no such file"),
        (["data.ttl", "-df", "bogus"], "'-df' / '--data-file-format'"),
        (["data.ttl", "-i", "bogus"], "'-i' / '--inference'"),
        (["data.ttl", "-f", "bogus"], "'-f' / '--format'"),
        ([], "Missing argument 'DATA...'"),
    ],
)
def test_errors_exit_2_with_one_readable_message(files: Path, args: list[str], says: str) -> None:
    result = ours(*[str(files / a) if a.endswith(".ttl") else a for a in args])
    assert result.exit_code == 2
    assert says in result.stderr and "Traceback" not in result.output


# -- messages and the findings schema -------------------------------------------------------------
def test_every_result_has_a_message_worded_as_pyshacl_words_it() -> None:
    case = HERE / "cases" / "default-messages"
    result = ours(str(case / "data.ttl"), "-s", str(case / "shapes.ttl"), "--json")
    report = json.loads(result.stdout)
    jsonschema.validate(report, SCHEMA)
    messages = {r["constraint"]: r["message"] for r in report["results"]}
    assert messages["minCount"] == "Less than 1 values on ex:bob->ex:name"
    assert all(r["message"] for r in report["results"])
    components = {r["component"].rsplit("#", 1)[-1] for r in report["results"]}
    assert len(components) >= 26  # every core component the case exercises


def test_a_sparql_constraint_without_message_still_has_one(tmp_path: Path) -> None:
    (tmp_path / "g.ttl").write_text(
        PREFIXES
        + """ex:S a sh:NodeShape ; sh:targetNode ex:a ;
  sh:sparql [ sh:select "SELECT $this WHERE { FILTER NOT EXISTS { $this <http://example.org/p> ?x } }" ] .
""",
        encoding="utf-8",
    )
    report = json.loads(ours(str(tmp_path / "g.ttl"), "--json").stdout)
    jsonschema.validate(report, SCHEMA)
    # terms as the file's prefixes write them, the focus as the shape
    assert report["results"][0]["message"] == (
        "Node ex:a does not conform to the SPARQL constraint of shape ex:S"
    )
    text = ours(str(tmp_path / "g.ttl"), "-f", "text").stdout
    assert "http://example.org/" not in text and "\nex:a\n" in text
    # pySHACL's own report (the default) prints no message where the shape gives none
    assert "Message:" not in ours(str(tmp_path / "g.ttl")).stdout


def test_one_findings_schema_for_check_validate_refusals_plans_and_mcp(cli, data_dir: Path) -> None:
    from ontoloom.mcp_server import call

    refused = cli.json("create", "Task", "-p", "title=T", "-p", "status=bogus")
    assert refused.exit_code == 1
    refusal = json.loads(refused.stdout)
    assert refusal["error"] == "validation" and refusal["conforms"] is False and refusal["message"]
    assert (
        cli("create", "Task", "--id", "task_a", "-p", "title=A", "-p", "status=open").exit_code == 0
    )
    checked = json.loads(cli.json("check").stdout)
    plan = data_dir.parent / "plan.json"
    plan.write_text(json.dumps([{"op": "create", "type": "Task", "properties": {"title": "x"}}]))
    planned = json.loads(cli.json("plan", "apply", str(plan)).stdout)
    tool = call(data_dir, "create_entity", {"type": "Task", "properties": {"title": "No status"}})
    assert tool.isError
    case = HERE / "cases" / "core-task-required" / "data.ttl"
    validated = json.loads(ours(str(case), "--json").stdout)
    reports = [refusal, checked, planned, tool.structuredContent, validated]
    for report in reports:
        jsonschema.validate(report, SCHEMA)
    for report in (refusal, planned, tool.structuredContent, validated):
        assert report["results"], report
        assert all(tuple(r) == FINDING_KEYS for r in report["results"])
        assert {"conforms", "violations", "warnings", "infos", "unsupported"} <= set(report)


# -- found by running pySHACL's own test resources through both (a differential run) -----------
_AGAINST_PYSHACL = {
    # a shape known by its target alone, no rdf:type: the data file is the shapes graph
    "untyped shape in the data": (
        "ex:A ex:p 1 .\nex:S sh:targetNode ex:A ; sh:nodeKind sh:BlankNode .\n",
        [],
    ),
    "shape known by sh:property alone": (
        "ex:a a ex:C .\nex:S sh:targetClass ex:C ; sh:property [ sh:path ex:p ; sh:minCount 1 ] .\n",
        [],
    ),
    # $this pre-bound where a bare term does not parse (GROUP BY, ORDER BY)
    "GROUP BY $this": (
        "ex:a a ex:C ; ex:p 1 .\nex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:sparql [ sh:select "
        '"SELECT $this WHERE { $this <http://example.org/p> ?v } GROUP BY $this" ] .\n',
        [],
    ),
    "GROUP BY $this HAVING": (
        "ex:a a ex:C ; ex:p 1, 2 .\nex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:sparql [ "
        'sh:select "SELECT $this (COUNT(?v) AS ?n) WHERE { $this <http://example.org/p> ?v } '
        'GROUP BY $this HAVING (COUNT(?v) > 1) ORDER BY $this" ] .\n',
        [],
    ),
    # every resource is an rdfs:Resource under RDFS inference: pySHACL's closed shapes allow it
    "closed shape under -i rdfs": (
        "ex:S a sh:NodeShape ; sh:closed true ; sh:property [ sh:path ex:p ] ; sh:targetNode ex:a .\n"
        "ex:a ex:p 3 .\n",
        ["-i", "rdfs"],
    ),
}


@pytest.mark.parametrize("name", sorted(_AGAINST_PYSHACL))
def test_found_by_the_differential_run_answers_as_pyshacl(name: str, tmp_path: Path) -> None:
    text, extra = _AGAINST_PYSHACL[name]
    path = tmp_path / "graph.ttl"
    path.write_text(PREFIXES + text, encoding="utf-8")
    code, output = theirs(tmp_path, str(path), *extra)
    result = ours(str(path), *extra, "-f", "json")
    assert result.exit_code == code, result.output
    assert json.loads(result.stdout)["conforms"] is conforms_of_theirs(output)


def test_a_value_in_a_string_or_an_iri_is_not_taken_for_this(tmp_path: Path) -> None:
    """Pre-binding writes the focus node in for $this as a variable only: not inside a
    string or an IRI that happen to hold the text."""
    (tmp_path / "g.ttl").write_text(
        PREFIXES
        + """ex:a a ex:C ; ex:p "?this", <http://example.org/page?this> .
ex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:sparql [ sh:select
  "SELECT $this WHERE { $this <http://example.org/p> \\"?this\\" , <http://example.org/page?this> }" ] .
""",
        encoding="utf-8",
    )
    result = ours(str(tmp_path / "g.ttl"), "-f", "json")
    assert result.exit_code == 1, result.output
    assert [r["focus"] for r in json.loads(result.stdout)["results"]] == ["<http://example.org/a>"]


def test_a_function_no_engine_here_knows_is_named_as_unsupported(tmp_path: Path) -> None:
    """SPARQL makes a call of an unknown function an evaluation error, so the constraint
    could never fire: refused by name (exit 2), or with --allow-unsupported validated
    without it and named."""
    (tmp_path / "g.ttl").write_text(
        PREFIXES
        + """ex:a a ex:C .
ex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:sparql [ sh:select
  "SELECT $this WHERE { $this a ?x . FILTER <http://example.org/f>(?x) }" ] .
""",
        encoding="utf-8",
    )
    refused = ours(str(tmp_path / "g.ttl"))
    assert refused.exit_code == 2
    assert "<http://example.org/f>" in refused.stderr and "not well-formed" not in refused.stderr
    allowed = ours(str(tmp_path / "g.ttl"), "--allow-unsupported")
    assert allowed.exit_code == 0, allowed.output
    assert "<http://example.org/f>" in allowed.output


def test_inference_over_ill_typed_literals_prints_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "g.ttl").write_text(
        PREFIXES
        + """ex:a ex:p "zero"^^xsd:integer .
ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:property [ sh:path ex:p ; sh:datatype xsd:integer ] .
""",
        encoding="utf-8",
    )
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("ontoloom")),
            "validate",
            str(tmp_path / "g.ttl"),
            "-i",
            "rdfs",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
