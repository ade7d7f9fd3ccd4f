"""`query` and its prefixes (issue 15, item 3): the built-in prefixes reach the engine as
prefixes, whatever the text says; the query's own PREFIX lines add to them; a syntax error
shows its line, column and a caret, not the grammar."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import Cli


@pytest.fixture
def store(cli: Cli) -> Cli:
    for args in (
        ["Task", "--id", "task_a", "-p", "title=the prefix problem", "-p", "status=open"],
        ["Task", "--id", "task_b", "-p", "title=Other", "-p", "status=done"],
    ):
        made = cli("create", *args)
        assert made.exit_code == 0, made.output
    return cli


def titles(result: Any) -> list[str]:
    assert result.exit_code == 0, result.output
    return sorted(r["t"]["value"] for r in json.loads(result.output)["results"]["bindings"])


def test_the_word_prefix_in_a_query_keeps_the_built_in_prefixes(store: Cli) -> None:
    found = store.json("query", 'SELECT ?t WHERE { ?x ol:title ?t FILTER(CONTAINS(?t, "prefix")) }')
    assert titles(found) == ["the prefix problem"]


def test_user_prefix_lines_combine_with_the_built_in_ones(store: Cli) -> None:
    text = (
        "PREFIX ex: <http://example.org/>\n"
        "SELECT ?t WHERE { ?x ol:title ?t ; ol:status ?s FILTER(?s != ex:nothing) "
        'FILTER(?s = "open"^^xsd:string) }'
    )
    assert titles(store.json("query", text)) == ["the prefix problem"]
    lower = "prefix ex: <http://example.org/> SELECT ?t WHERE { ?x a ol:Task ; ol:title ?t }"
    assert titles(store.json("query", lower)) == ["Other", "the prefix problem"]


def test_a_prefix_the_query_redeclares_is_its_own(store: Cli) -> None:
    text = "PREFIX ol: <http://example.org/other#> SELECT ?t WHERE { ?x ol:title ?t }"
    assert titles(store.json("query", text)) == []


def test_the_text_goes_to_the_engine_unchanged_with_the_prefixes_beside_it(
    store: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ontoloom.query as query
    from ontoloom.vocab import PREFIXES

    seen: dict[str, Any] = {}
    real = query.run_isolated

    def spy(data_dir: Any, sparql: str, *args: Any, **kwargs: Any) -> Any:
        seen["sparql"], seen["prefixes"] = sparql, kwargs.get("prefixes")
        return real(data_dir, sparql, *args, **kwargs)

    monkeypatch.setattr(query, "run_isolated", spy)
    text = "PREFIX ex: <http://example.org/>\nSELECT ?t WHERE { ?x ol:title ?t }"
    assert store.json("query", text).exit_code == 0
    assert seen == {"sparql": text, "prefixes": PREFIXES}


def test_a_syntax_error_shows_line_column_and_a_caret(store: Cli) -> None:
    text = "SELECT ?t WHERE {\n  ?x ol:title ?t .\n  FILTR(?t) }"
    result = store("query", text)
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert lines[0].startswith("error: SPARQL syntax error at line 3, column ")
    column = int(lines[0].rsplit("column ", 1)[1].rstrip(":"))
    assert lines[1].strip() == "FILTR(?t) }"
    caret = lines[2]
    assert caret.strip() == "^"
    # The line is shown indented by two spaces; the caret sits under the column it names.
    assert lines[1] == "  " + text.splitlines()[2]
    assert caret.index("^") == 2 + column - 1
    assert "expected" not in result.output and "Traceback" not in result.output


def test_a_syntax_error_in_json_is_a_parse_error(store: Cli) -> None:
    result = store.json("query", "SELECT ?t WHERE { ?x ol:title ?t ")
    assert result.exit_code == 2
    error = json.loads(result.output)
    assert error["error"] == "parse" and "line 1, column" in error["message"]


def test_an_undeclared_prefix_is_named(store: Cli) -> None:
    result = store("query", "SELECT ?t WHERE { ?x foo:title ?t }")
    assert result.exit_code == 2
    assert "the prefix foo: is not declared" in result.output


def test_a_service_is_still_refused_when_the_query_declares_its_own_prefixes(store: Cli) -> None:
    text = "PREFIX ex: <http://example.org/> SELECT * WHERE { SERVICE <http://x.test/> { ?s ol:p ex:o } }"
    result = store("query", text)
    assert result.exit_code == 2 and "SERVICE <http://x.test/> is refused" in result.output
