"""Parsers are bounded: an input file, a literal and what RDF/XML entities expand to each
have a limit, and input past one is refused naming the file, the limit and how to raise it
(exit 2); nothing is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Cli, quads_of

RDF = 'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://ex.org/"'


def rdfxml(entities: str, value: str) -> str:
    return (
        f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [ {entities} ]>\n<rdf:RDF {RDF}>\n'
        f'<rdf:Description rdf:about="http://ex.org/s"><ex:p>{value}</ex:p></rdf:Description>\n'
        "</rdf:RDF>\n"
    )


def billion_laughs(levels: int = 9) -> str:
    entities = ['<!ENTITY a0 "lollollollollollollollollollol">'] + [
        f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, levels + 1)
    ]
    return rdfxml(" ".join(entities), f"&a{levels};")


@pytest.fixture
def store(cli: Cli) -> Cli:
    assert cli("init", str(cli.data_dir.parent)).exit_code == 0
    return cli


@pytest.mark.parametrize("command", ["import", "validate"])
def test_billion_laughs_is_refused_before_it_expands(
    store: Cli, tmp_path: Path, command: str
) -> None:
    bomb = tmp_path / "bomb.rdf"
    bomb.write_text(billion_laughs())
    before = quads_of(store.data_dir)
    result = store(command, str(bomb))
    assert result.exit_code == 2, result.output
    assert f"{bomb}: the entity a1 refers to another entity" in result.output
    assert "Traceback" not in result.output
    assert quads_of(store.data_dir) == before


def test_flat_entities_that_expand_past_the_input_limit_are_refused(
    store: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ONTOLOOM_MAX_INPUT_BYTES", "100000")
    wide = tmp_path / "wide.rdf"
    wide.write_text(rdfxml(f'<!ENTITY big "{"x" * 1000}">', "&big;" * 200))
    result = store("import", str(wide))
    assert result.exit_code == 2, result.output
    assert f"{wide}: its entities would expand to" in result.output
    assert "ONTOLOOM_MAX_INPUT_BYTES" in result.output


def test_entities_used_as_iri_prefixes_still_read(store: Cli, tmp_path: Path) -> None:
    owl = tmp_path / "onto.rdf"
    owl.write_text(rdfxml('<!ENTITY ex "http://ex.org/">', "v").replace("http://ex.org/s", "&ex;s"))
    result = store("import", str(owl))
    assert result.exit_code == 0, result.output
    assert store("query", "ASK { <http://ex.org/s> ?p 'v' }").output.strip() == "true"


def test_an_input_file_past_the_size_limit_is_refused_naming_it(
    store: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "big.nt"
    data.write_text("".join(f'<urn:x:n{i}> <urn:x:p> "v{i}" .\n' for i in range(100)))
    monkeypatch.setenv("ONTOLOOM_MAX_INPUT_BYTES", "1000")
    for command in ("import", "validate"):
        result = store(command, str(data))
        assert result.exit_code == 2, result.output
        assert f"{data}: " in result.output
        assert "more than the 1000 bytes an input file may hold" in result.output
        assert "ONTOLOOM_MAX_INPUT_BYTES" in result.output and "Traceback" not in result.output


def test_a_literal_past_the_size_limit_is_refused_naming_it(
    store: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "long.ttl"
    data.write_text(f'<urn:x:s> <urn:x:p> "{"é" * 600}" .\n', encoding="utf-8")
    monkeypatch.setenv("ONTOLOOM_MAX_LITERAL_BYTES", "1000")
    result = store("import", str(data))
    assert result.exit_code == 2, result.output
    assert f"{data}: a literal of <urn:x:s> <urn:x:p> holds 1200 bytes" in result.output
    assert "more than the 1000 bytes a literal may hold" in result.output
    assert "ONTOLOOM_MAX_LITERAL_BYTES" in result.output


def test_a_malformed_limit_is_a_usage_error(
    store: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "one.nt"
    data.write_text('<urn:x:s> <urn:x:p> "v" .\n')
    monkeypatch.setenv("ONTOLOOM_MAX_LITERAL_BYTES", "1MB")
    result = store("import", str(data))
    assert result.exit_code == 2 and "ONTOLOOM_MAX_LITERAL_BYTES='1MB'" in result.output


def test_every_door_has_the_literal_limit_and_what_it_stores_round_trips(
    store: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31 item 10: the API, plans and the drop-in tools refuse a literal an import would
    refuse (one limit, one place: the commit); a value within it exports and imports again."""
    from ontoloom import ops
    from ontoloom.errors import BadInput

    monkeypatch.setenv("ONTOLOOM_MAX_LITERAL_BYTES", "4096")
    before = quads_of(store.data_dir)
    big = "word " * 1000  # 5000 bytes
    calls = [
        ("create_entity", {"type": "Task", "properties": {"title": "t", "status": "open", "description": big}}),
        ("create_entities", {"entities": [{"name": "n", "entityType": "Thing", "observations": [big]}]}),
    ]  # fmt: skip
    for name, args in calls:
        with pytest.raises(BadInput, match="more than the 4096 bytes a literal may hold"):
            ops.call(store.data_dir, name, args)
    assert quads_of(store.data_dir) == before
    fits = "word " * 800  # 4000 bytes
    ops.call(
        store.data_dir,
        "create_entity",
        {"type": "Task", "id": "task_big", "properties": {"title": "t", "status": "open", "description": fits}},
    )  # fmt: skip
    for fmt in ("nquads", "turtle", "trig"):
        out = tmp_path / f"all.{fmt}"
        assert store("export", "--format", fmt, "-o", str(out)).exit_code == 0
        other = Cli(tmp_path / f"other-{fmt}" / ".ontoloom")
        assert other("init", str(tmp_path / f"other-{fmt}")).exit_code == 0
        result = other("import", str(out))
        assert result.exit_code == 0, result.output
        got = other.json("get", "task_big")
        assert fits.strip() in got.output.replace("\\n", "")
