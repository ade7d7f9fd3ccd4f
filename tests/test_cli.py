"""The CLI contract: commands, JSON shapes, refusals and exit codes (0 ok, 1 refused,
2 usage / no store / unknown id / bad input)."""

from __future__ import annotations

import json

import jsonschema
import pytest

from conftest import Cli, quads_of
from ontoloom.findings import FINDING_KEYS, SCHEMA


def make(cli: Cli, type_name: str, entity_id: str, **props: object) -> dict:
    result = cli.json("create", type_name, "--id", entity_id, "--props", json.dumps(props))
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture
def team(cli: Cli) -> Cli:
    make(cli, "Person", "pers_alice", name="Alice")
    make(cli, "Person", "pers_bob", name="Bob")
    make(cli, "Project", "proj_checkout", name="Checkout", status="active")
    make(cli, "Task", "task_a", title="Fix payment timeout", status="open", priority="urgent")
    make(cli, "Task", "task_b", title="Deploy checkout page", status="blocked")
    make(cli, "Task", "task_c", title="Write copy", status="open")
    return cli


def test_create_prints_the_entity_in_the_seed_encoding(cli: Cli) -> None:
    result = cli.json(
        "create", "Task", "-p", "title=Ship it", "-p", "status=open", "-p", "estimate=3"
    )
    assert result.exit_code == 0, result.output
    entity = json.loads(result.output)
    assert entity["type"] == "Task"
    assert entity["id"].startswith("task_") and len(entity["id"]) == 13
    assert entity["properties"] == {"title": "Ship it", "status": "open", "estimate": 3}


def test_values_keep_their_json_type(cli: Cli) -> None:
    props = {
        "title": "T",
        "status": "open",
        "n": 3,
        "x": 1.5,
        "ok": True,
        "due": "2026-12-01",
        "at": "2026-12-01T09:30:00Z",
        "tags": ["a", "b"],
    }
    entity = make(cli, "Task", "task_types", **props)
    assert entity["properties"] == props
    got = json.loads(cli.json("get", "task_types").output)
    assert got["properties"] == props


def test_tags_is_always_a_list(cli: Cli) -> None:
    entity = make(cli, "Task", "task_one_tag", title="T", status="open", tags=["solo"])
    assert entity["properties"]["tags"] == ["solo"]


def test_repeated_p_options_gather_a_list(cli: Cli) -> None:
    result = cli.json(
        "create", "Task", "-p", "title=T", "-p", "status=open", "-p", "tags=a", "-p", "tags=b"
    )
    assert json.loads(result.output)["properties"]["tags"] == ["a", "b"]


@pytest.mark.parametrize(
    ("args", "constraint", "path"),
    [
        (["Task", "-p", "status=open"], "minCount", "title"),
        (["Task", "-p", "title=T"], "minCount", "status"),
        (["Task", "-p", "title=T", "-p", "status=wip"], "in", "status"),
        (["Task", "-p", "title=T", "-p", "status=open", "-p", "priority=asap"], "in", "priority"),
        (["Person"], "minCount", "name"),
        (["Project", "-p", "name=P", "-p", "status=busy"], "in", "status"),
        (["Event", "-p", "title=E"], "minCount", "start"),
        (
            ["Event", "-p", "title=E", "-p", "start=2026-02-02", "-p", "end=2026-02-01"],
            "lessThanOrEquals",
            "start",
        ),
        (["Event", "-p", "title=E", "-p", "start=soon"], "or", "start"),
        (["Document"], "minCount", "title"),
        (["Goal"], "minCount", "description"),
        (["Note"], "minCount", "content"),
        (["Organization"], "minCount", "name"),
        (["Credential", "-p", "service=stripe"], "minCount", "secret_ref"),
        (["Message"], "minCount", "content"),
        (["Task", "-p", "title=T", "-p", "status=open", "-p", "tags=[1]"], "datatype", "tags"),
    ],
)
def test_invalid_entities_are_refused_with_a_report_and_exit_1(
    cli: Cli, args: list[str], constraint: str, path: str
) -> None:
    result = cli.json("create", *args)
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert report["error"] == "validation"
    assert {"constraint": constraint, "path": path} in [
        {"constraint": r["constraint"], "path": r["path"]} for r in report["results"]
    ]
    jsonschema.validate(report, SCHEMA)  # the one findings shape (README: Findings JSON)
    for r in report["results"]:
        assert set(r) == set(FINDING_KEYS)
        assert r["message"]
    assert cli.json("list").output.strip() == "[]"


@pytest.mark.parametrize(
    "name",
    [
        "password",
        "api_key",
        "token",
        "secret",
        "key",
        "access_token",
        "private_key",
        "client_secret",
        "apiKey",
        "db_password",
    ],
)
def test_secrets_are_refused_with_a_pointer_to_secret_ref(cli: Cli, name: str) -> None:
    result = cli.json(
        "create", "Credential", "-p", "service=s", "-p", "secret_ref=vault:x", "-p", f"{name}=v"
    )
    assert result.exit_code == 1
    finding = json.loads(result.output)["results"][0]
    assert finding["path"] == name and finding["constraint"] == "forbidden"
    assert "secret_ref" in finding["message"]


def test_secret_ref_and_harmless_names_are_allowed(cli: Cli) -> None:
    make(
        cli, "Credential", "cred_ok", service="s", secret_ref="vault:x", sort_key="a", token_count=3
    )


def test_unknown_type_is_refused_with_a_hint(cli: Cli) -> None:
    result = cli("create", "Taks", "-p", "title=x")
    assert result.exit_code == 1
    assert "unknown entity type 'Taks'" in result.output and "schema add-type" in result.output


def test_given_ids_are_validated_tokens(cli: Cli) -> None:
    for bad in ["bad id", "a<b>", "", "-dash", "x" * 300, 'quote"d']:
        result = cli("create", "Person", "--id", bad, "-p", "name=X")
        assert result.exit_code == 2, (bad, result.output)
        assert "invalid id" in result.output


def test_duplicate_id_is_refused(cli: Cli) -> None:
    make(cli, "Person", "pers_x", name="X")
    result = cli.json("create", "Person", "--id", "pers_x", "-p", "name=Y")
    assert result.exit_code == 1
    assert json.loads(result.output)["results"][0]["constraint"] == "unique"


def test_bad_properties_are_usage_errors(cli: Cli) -> None:
    assert cli("create", "Task", "--props", "{bad").exit_code == 2
    assert cli("create", "Task", "--props", "[1]").exit_code == 2
    assert cli("create", "Task", "-p", "novalue").exit_code == 2
    assert cli("create", "Task", "--props", '{"title": {"nested": 1}}').exit_code == 2
    assert cli("create", "Task", "-p", "bad name=x").exit_code == 2


def test_get_shows_outgoing_and_incoming_relations(team: Cli) -> None:
    assert team("relate", "task_a", "blocks", "task_b").exit_code == 0
    assert team("relate", "proj_checkout", "has_task", "task_a").exit_code == 0
    got = json.loads(team.json("get", "task_a").output)
    assert [r["to_id"] for r in got["relations"]["outgoing"]] == ["task_b"]
    assert [r["from_id"] for r in got["relations"]["incoming"]] == ["proj_checkout"]
    text = team("get", "task_a").output
    assert "blocks task_b" in text and "has_task proj_checkout" in text


def test_unknown_id_exits_2(cli: Cli) -> None:
    cli("init")
    for args in (
        ["get", "nope"],
        ["update", "nope", "-p", "a=1"],
        ["delete", "nope"],
        ["relations", "nope"],
        ["traverse", "nope"],
    ):
        result = cli(*args)
        assert result.exit_code == 2, args
        assert "no entity with id 'nope'" in result.output


def test_relate_prints_the_relation_with_its_id(team: Cli) -> None:
    result = team.json("relate", "task_a", "blocks", "task_b")
    assert result.exit_code == 0
    rel = json.loads(result.output)
    import hashlib

    assert rel["id"] == hashlib.sha256(b"task_a\nblocks\ntask_b").hexdigest()
    assert {k: rel[k] for k in ("from_id", "from_type", "rel", "to_id", "to_type")} == {
        "from_id": "task_a",
        "from_type": "Task",
        "rel": "blocks",
        "to_id": "task_b",
        "to_type": "Task",
    }


def test_many_to_one_replaces_and_says_what_it_replaced(team: Cli) -> None:
    team("relate", "task_a", "assigned_to", "pers_alice")
    result = team.json("relate", "task_a", "assigned_to", "pers_bob")
    assert result.exit_code == 0
    replaced = json.loads(result.output)["replaced"]
    assert [(r["from_id"], r["rel"], r["to_id"]) for r in replaced] == [
        ("task_a", "assigned_to", "pers_alice")
    ]
    outgoing = json.loads(team.json("relations", "task_a", "--direction", "out").output)
    assert [(r["rel"], r["to_id"]) for r in outgoing] == [("assigned_to", "pers_bob")]
    assert (
        "replaced: task_a assigned_to pers_bob"
        in team("relate", "task_a", "assigned_to", "pers_alice").output
    )


def test_one_to_many_refuses_a_second_incoming_relation(team: Cli) -> None:
    make(team, "Project", "proj_other", name="Other")
    assert team("relate", "proj_checkout", "has_task", "task_a").exit_code == 0
    before = quads_of(team.data_dir)
    result = team.json("relate", "proj_other", "has_task", "task_a")
    assert result.exit_code == 1
    finding = json.loads(result.output)["results"][0]
    assert (finding["focus"], finding["path"], finding["constraint"]) == (
        "task_a",
        "has_task",
        "maxCount",
    )
    assert quads_of(team.data_dir) == before


def test_cycles_are_refused_naming_the_path(team: Cli) -> None:
    assert team("relate", "task_a", "blocks", "task_b").exit_code == 0
    assert team("relate", "task_b", "blocks", "task_c").exit_code == 0
    before = quads_of(team.data_dir)
    result = team.json("relate", "task_c", "blocks", "task_a")
    assert result.exit_code == 1
    finding = json.loads(result.output)["results"][0]
    assert finding["constraint"] == "acyclic"
    assert "task_c → task_a → task_b → task_c" in finding["message"]
    assert quads_of(team.data_dir) == before
    assert team("relate", "task_a", "blocks", "task_a").exit_code == 1


def test_depends_on_is_acyclic_across_types(team: Cli) -> None:
    make(team, "Project", "proj_two", name="Two")
    assert team("relate", "proj_checkout", "depends_on", "task_a").exit_code == 0
    assert team("relate", "task_a", "depends_on", "proj_two").exit_code == 0
    result = team("relate", "proj_two", "depends_on", "proj_checkout")
    assert result.exit_code == 1
    assert "proj_two → proj_checkout → task_a → proj_two" in result.output


@pytest.mark.parametrize(
    ("frm", "rel", "to", "constraint"),
    [
        ("pers_alice", "blocks", "task_a", "class"),  # domain
        ("task_a", "blocks", "pers_alice", "class"),  # range
        ("task_a", "assigned_to", "proj_checkout", "class"),
        ("task_a", "blocks", "task_missing", "exists"),
        ("task_missing", "blocks", "task_a", "exists"),
        ("task_a", "frobnicates", "task_b", "relation"),
        ("pers_alice", "has_owner", "pers_bob", "or"),  # multi-class domain
    ],
)
def test_relations_that_break_domain_range_or_existence_are_refused(
    team: Cli, frm: str, rel: str, to: str, constraint: str
) -> None:
    before = quads_of(team.data_dir)
    result = team.json("relate", frm, rel, to)
    assert result.exit_code == 1, result.output
    assert constraint in [r["constraint"] for r in json.loads(result.output)["results"]]
    assert quads_of(team.data_dir) == before


def test_relating_twice_is_idempotent(team: Cli) -> None:
    team("relate", "task_a", "blocks", "task_b")
    result = team.json("relate", "task_a", "blocks", "task_b")
    assert result.exit_code == 0 and json.loads(result.output)["created"] is False


def test_unrelate_removes_and_unknown_relation_exits_2(team: Cli) -> None:
    team("relate", "task_a", "blocks", "task_b")
    assert team("unrelate", "task_a", "blocks", "task_b").exit_code == 0
    assert json.loads(team.json("relations", "task_a").output) == []
    result = team("unrelate", "task_a", "blocks", "task_b")
    assert result.exit_code == 2 and "no relation" in result.output


def test_update_sets_and_unsets_with_validation(team: Cli) -> None:
    result = team.json("update", "task_a", "-p", "status=done", "--unset", "priority")
    assert result.exit_code == 0
    assert json.loads(result.output)["properties"] == {
        "title": "Fix payment timeout",
        "status": "done",
    }
    refused = team.json("update", "task_a", "--unset", "title")
    assert refused.exit_code == 1
    assert json.loads(refused.output)["results"][0]["constraint"] == "minCount"
    assert (
        json.loads(team.json("get", "task_a").output)["properties"]["title"]
        == "Fix payment timeout"
    )
    assert team("update", "task_a").exit_code == 2


def test_delete_removes_every_touching_relation_at_once(team: Cli) -> None:
    team("relate", "task_a", "blocks", "task_b")
    team("relate", "proj_checkout", "has_task", "task_a")
    team("relate", "task_a", "assigned_to", "pers_bob")
    result = team.json("delete", "task_a")
    assert result.exit_code == 0
    out = json.loads(result.output)
    assert out["deleted"]["id"] == "task_a" and len(out["relations_removed"]) == 3
    assert team("get", "task_a").exit_code == 2
    assert json.loads(team.json("relations", "task_b").output) == []
    assert json.loads(team.json("relations", "pers_bob").output) == []


def test_relations_filters_by_rel_and_direction(team: Cli) -> None:
    team("relate", "task_a", "blocks", "task_b")
    team("relate", "task_c", "blocks", "task_b")
    team("relate", "task_b", "assigned_to", "pers_bob")
    incoming = json.loads(team.json("relations", "task_b", "--direction", "in").output)
    assert sorted(r["from_id"] for r in incoming) == ["task_a", "task_c"]
    only = json.loads(team.json("relations", "task_b", "--rel", "assigned_to").output)
    assert [r["to_id"] for r in only] == ["pers_bob"]


def test_traverse_gives_distance_and_path_and_is_cycle_safe(team: Cli) -> None:
    make(team, "Task", "task_d", title="D", status="open")
    for a, b in [("task_a", "task_b"), ("task_b", "task_c"), ("task_c", "task_d")]:
        assert team("relate", a, "blocks", b).exit_code == 0
    team("relate", "task_a", "depends_on", "task_c")  # a second route to task_c
    hits = json.loads(team.json("traverse", "task_a", "--depth", "5").output)
    by_id = {h["id"]: h for h in hits}
    assert by_id["task_b"]["distance"] == 1
    assert by_id["task_c"]["distance"] == 1 and by_id["task_c"]["path"] == ["task_a", "task_c"]
    assert by_id["task_d"]["distance"] == 2
    only_blocks = json.loads(
        team.json("traverse", "task_a", "--rel", "blocks", "--depth", "3").output
    )
    assert [(h["id"], h["distance"]) for h in only_blocks] == [
        ("task_b", 1),
        ("task_c", 2),
        ("task_d", 3),
    ]
    assert only_blocks[-1]["path"] == ["task_a", "task_b", "task_c", "task_d"]
    back = json.loads(
        team.json(
            "traverse", "task_d", "--direction", "in", "--rel", "blocks", "--depth", "2"
        ).output
    )
    assert [h["id"] for h in back] == ["task_c", "task_b"]
    assert team("traverse", "task_a", "--depth", "6").exit_code == 2


def test_list_filters_by_type_and_where(team: Cli) -> None:
    tasks = json.loads(team.json("list", "--type", "Task").output)
    assert [t["id"] for t in tasks] == ["task_a", "task_b", "task_c"]
    open_tasks = json.loads(team.json("list", "--type", "Task", "--where", "status=open").output)
    assert [t["id"] for t in open_tasks] == ["task_a", "task_c"]
    assert len(json.loads(team.json("list").output)) == 6


@pytest.mark.parametrize(
    "filters", [[], ["--type", "Task"], ["--type", "Task", "--where", "status=open"]]
)
@pytest.mark.parametrize("size", [1, 2, 5])
def test_pages_of_a_listing_add_up_to_the_whole_listing(
    team: Cli, filters: list[str], size: int
) -> None:
    """The unpaged listing is the oracle: pages in id order, each cursor from the note."""
    whole = sorted(t["id"] for t in json.loads(team.json("list", *filters).output))
    seen: list[str] = []
    after: list[str] = []
    while True:
        result = team.json("list", *filters, "--limit", str(size), *after)
        assert result.exit_code == 0, result.output
        page = [t["id"] for t in json.loads(result.stdout)]
        assert len(page) <= size
        seen += page
        if "more follow" not in result.stderr:
            break
        after = ["--after", result.stderr.split("--after ")[1].strip()]
        assert after[1] == page[-1]
    assert seen == whole


def test_list_entities_over_mcp_pages_with_a_note(team: Cli) -> None:
    from ontoloom.mcp_server import call

    first = call(team.data_dir, "list_entities", {"limit": 4})
    ids = [e["id"] for e in first.structuredContent["result"]]
    assert len(ids) == 4 and ids == sorted(ids)
    note = first.content[1].text
    assert f'"after": "{ids[-1]}"' in note
    rest = call(team.data_dir, "list_entities", {"limit": 4, "after": ids[-1]})
    assert len(rest.structuredContent["result"]) == 2 and len(rest.content) == 1
    assert team.json("list", "--limit", "0").exit_code == 2


def test_read_only_commands_never_create_a_store(cli: Cli) -> None:
    for args in (["list"], ["get", "x"], ["relations", "x"], ["traverse", "x"]):
        result = cli(*args)
        assert result.exit_code == 2 and "no ontoloom store" in result.output
    assert not cli.data_dir.exists()


def test_errors_are_json_with_json(cli: Cli) -> None:
    result = cli.json("get", "nope")
    assert result.exit_code == 2
    assert json.loads(result.output)["error"] == "no_store"


def test_init_is_idempotent_and_marks_the_instance(tmp_path) -> None:
    from click.testing import CliRunner

    from ontoloom.cli import main

    runner = CliRunner()
    first = runner.invoke(main, ["init", str(tmp_path / "inst"), "--json"])
    assert first.exit_code == 0 and json.loads(first.output)["created"] is True
    assert (tmp_path / "inst" / "ontoloom.toml").exists()
    again = runner.invoke(main, ["init", str(tmp_path / "inst"), "--json"])
    assert json.loads(again.output)["created"] is False


def test_every_command_has_help_with_an_example() -> None:
    import click
    from click.testing import CliRunner

    from ontoloom.cli import main

    runner = CliRunner()

    def leaves(group: click.Group, prefix: list[str]):  # type: ignore[no-untyped-def]
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                yield from leaves(command, [*prefix, name])
            else:
                yield [*prefix, name], command

    for path, command in leaves(main, []):
        result = runner.invoke(main, [*path, "--help"])
        assert result.exit_code == 0, path
        assert "Example" in result.output, f"{path} --help has no example"
        assert "--json" in result.output, f"{path} has no --json"
        assert command.help


def test_a_number_written_with_a_leading_zero_stays_as_written(cli: Cli) -> None:
    made = cli("--json", "create", "Task", "-p", "title=t", "-p", "status=open", "--id", "task_z")
    assert made.exit_code == 0, made.output
    changed = cli("--json", "update", "task_z", "-p", "beta=01", "-p", "n=-0", "-p", "k=10")
    assert changed.exit_code == 0, changed.output  # was: unexpected JSONDecodeError
    props = json.loads(changed.output)["properties"]
    assert (props["beta"], props["n"], props["k"]) == ("01", "-0", 10)


def test_unsetting_an_absent_property_says_nothing_was_unset(team: Cli) -> None:
    """Unsetting what is not there is no error (a retried call is harmless) but is said."""
    assert team("update", "task_a", "--unset", "priority").exit_code == 0
    again = team("update", "task_a", "--unset", "priority")
    assert again.exit_code == 0
    assert "task_a has no 'priority': nothing to unset" in again.output
    assert "task_a unchanged" in again.output and "updated" not in again.output
    # a no-op writes nothing: the entity keeps its "updated" time
    before = json.loads(team("--json", "get", "task_a").stdout)["updated"]
    team("update", "task_a", "--unset", "priority")
    assert json.loads(team("--json", "get", "task_a").stdout)["updated"] == before
    typo = team("update", "task_a", "--unset", "prority")
    assert typo.exit_code == 0 and "task_a has no 'prority'" in typo.output
    refused = team("update", "task_a", "--unset", "blocks")
    assert refused.exit_code == 2 and "is a relation" in refused.output
