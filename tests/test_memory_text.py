"""The drop-in tools' text is the reference server's: ``JSON.stringify(value, null, 2)``, which
Python writes as ``json.dumps(value, indent=2, ensure_ascii=False)``; ontoloom builds it from
the C encoder's strings (ontoloom.ops.memory.indented_json) and must give the same bytes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ontoloom.ops.memory import indented_json

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),  # any code point: quotes, controls, line separators, surrogates
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=5), inner, max_size=4),
        st.dictionaries(st.integers(), inner, max_size=2),  # keys json.dumps writes as strings
    ),
    max_leaves=30,
)


@settings(max_examples=500, deadline=None)
@given(values)
def test_the_text_is_json_dumps_indented_byte_for_byte(value: Any) -> None:
    assert indented_json(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_a_graph_answer_reads_as_the_reference_writes_it() -> None:
    graph = {
        "entities": [{"name": "Ada", "entityType": "person", "observations": ["a\nb", "é"]}],
        "relations": [{"from": "Ada", "to": "Bob", "relationType": "knows"}],
    }
    assert indented_json(graph) == (
        '{\n  "entities": [\n    {\n      "name": "Ada",\n      "entityType": "person",\n'
        '      "observations": [\n        "a\\nb",\n        "é"\n      ]\n    }\n  ],\n'
        '  "relations": [\n    {\n      "from": "Ada",\n      "to": "Bob",\n'
        '      "relationType": "knows"\n    }\n  ]\n}'
    )


def test_output_schemas_are_declared_draft_07_as_the_reference_declares_them() -> None:
    """The official client checks every structured result against the tool's output schema;
    an undeclared one is read as 2020-12, which its jsonschema checks ten times slower. The
    reference server's zod schemas are draft-07; so are these, and they hold as such."""
    import jsonschema

    from ontoloom.ops.describe import tool_list
    from ontoloom.schema import Schema

    declared = {
        t["name"]: t["outputSchema"] for t in tool_list(Schema.load()) if "outputSchema" in t
    }
    assert {"create_entities", "search_nodes", "open_nodes", "read_graph"} <= declared.keys()
    for schema in declared.values():
        assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
        jsonschema.Draft7Validator.check_schema(schema)
    answer = {
        "entities": [{"name": "Ada", "entityType": "person", "observations": []}],
        "relations": [{"from": "Ada", "to": "Bob", "relationType": "knows"}],
    }
    jsonschema.validate(answer, declared["open_nodes"])
    broken = {**answer, "relations": [{"from": "Ada", "to": 3, "relationType": "knows"}]}
    assert not jsonschema.Draft7Validator(declared["open_nodes"]).is_valid(broken)
