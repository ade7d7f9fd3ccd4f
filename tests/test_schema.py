"""The schema reads types, relations, cardinality and acyclicity from the RDF files, and
the ontology's domain/range agrees with the shapes that enforce them."""

from __future__ import annotations

from ontoloom.schema import Schema
from ontoloom.terms import NamedNode
from ontoloom.vocab import OL

EXPECTED_RELATIONS = {
    # rel: (from, to, cardinality, acyclic)
    "has_owner": (["Project", "Task"], ["Person"], "many_to_one", False),
    "has_task": (["Project"], ["Task"], "one_to_many", False),
    "assigned_to": (["Task"], ["Person"], "many_to_one", False),
    "blocks": (["Task"], ["Task"], "many_to_many", True),
    "part_of": (["Task", "Document", "Event"], ["Project"], "many_to_one", False),
    "depends_on": (["Task", "Project"], ["Task", "Project", "Event"], "many_to_many", True),
    "member_of": (["Person"], ["Organization"], "many_to_many", False),
    "has_goal": (["Project"], ["Goal"], "one_to_many", False),
    "recurs-as": (["FailureOccurrence"], ["FailureClass"], "many_to_one", False),
    "covered-by": (["FailureOccurrence", "FailureClass"], ["Rule"], "many_to_many", False),
    "resolved-by": (["FailureOccurrence", "FailureClass"], ["Action"], "many_to_many", False),
    "applies": (["Decision"], ["Rule"], "many_to_many", False),
    "builds-on": (["Decision"], ["Decision"], "many_to_many", True),
    "sibling-of": (["Rule"], ["Rule"], "many_to_many", False),
    "enforced-by": (["Rule", "Decision"], ["Action", "Rule"], "many_to_many", False),
    "relates-to": (["Object"], ["Object"], "many_to_many", False),
    "mentions": (
        ["Document", "Message", "Note", "Record"],
        ["Person", "Project", "Task", "Event", "Record"],
        "many_to_many",
        False,
    ),
    "follows_up": (["Task", "Event"], ["Event", "Message"], "many_to_one", False),
    "attendee_of": (["Person"], ["Event"], "many_to_many", False),
}


def test_relations_as_the_issue_states_them() -> None:
    schema = Schema.load()
    for name, (frm, to, cardinality, acyclic) in EXPECTED_RELATIONS.items():
        spec = schema.relations[name]
        assert (spec.from_types, spec.to_types, spec.cardinality, spec.acyclic) == (
            frm,
            to,
            cardinality,
            acyclic,
        ), name


def test_types_required_properties_and_enums() -> None:
    types = Schema.load().types
    assert sorted(types["Task"].required) == ["status", "title"]
    assert types["Task"].enums["status"] == ["open", "in_progress", "blocked", "done", "cancelled"]
    assert types["Task"].enums["priority"] == ["low", "medium", "high", "urgent"]
    assert types["Project"].enums["status"] == [
        "planning",
        "active",
        "paused",
        "completed",
        "archived",
    ]
    assert sorted(types["Event"].required) == ["start", "title"]
    assert sorted(types["Credential"].required) == ["secret_ref", "service"]
    for name, prop in [
        ("Person", "name"),
        ("Project", "name"),
        ("Document", "title"),
        ("Goal", "description"),
        ("Note", "content"),
        ("Organization", "name"),
        ("Message", "content"),
    ]:
        assert prop in types[name].required


def test_every_relation_has_shapes_enforcing_its_ontology_domain_and_range() -> None:
    """Domain and range are stated twice (OWL for readers, SHACL for enforcement): they agree."""
    schema = Schema.load()
    for name, spec in schema.relations.items():
        domain = schema.shapes.shape(NamedNode(OL + name + "Domain"))
        range_ = schema.shapes.shape(NamedNode(OL + name + "Range"))
        assert _classes(schema, domain) == set(spec.from_types), name
        assert _classes(schema, range_) == set(spec.to_types), name


def _classes(schema: Schema, shape) -> set[str]:
    found = set()
    for c in shape.constraints:
        if c.name == "class":
            found.add(c.cls.value.removeprefix(OL))
        if c.name == "or":
            for member in c.members:
                found |= _classes(schema, schema.shapes.shape(member))
    return found


def test_title_name_start_end_align_to_standard_vocabularies() -> None:
    schema = Schema.load()
    sub = NamedNode("http://www.w3.org/2000/01/rdf-schema#subPropertyOf")
    aligned = {
        p: {o.value for o in schema.ontology.objects(NamedNode(OL + p), sub)}
        for p in ("title", "name", "start", "end")
    }
    assert "http://purl.org/dc/terms/title" in aligned["title"]
    assert "https://schema.org/name" in aligned["name"]
    assert "https://schema.org/startDate" in aligned["start"]
    assert "https://schema.org/endDate" in aligned["end"]
