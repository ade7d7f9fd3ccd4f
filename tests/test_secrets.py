"""The secret rule (issue 11): names and values, in every namespace and on untyped subjects;
refusals never print the value back; the rule cannot be switched off from the schema graph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import Cli, quads_of
from test_fast_path_vs_pyshacl import shape_subset

AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
STRIPE = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"


def _refused(result, secret: str | None = None) -> dict:
    assert result.exit_code == 1, result.output
    finding = json.loads(result.output)["results"][0]
    assert finding["constraint"] == "forbidden"
    if secret is not None:
        assert secret not in result.output
    return finding


@pytest.mark.parametrize(
    "name",
    [
        "credential",
        "tokens",
        "auth",
        "authorization",
        "cookie",
        "jwt",
        "bearer",
        "pin",
        "github_pat",
        "private_key_pem",
        "dsn",
        "Password",
        "API-KEY",
        "aws_secret_access_key",
        "refreshTokens",
    ],
)
def test_names_like_a_secret_are_refused_whatever_their_spelling(cli: Cli, name: str) -> None:
    result = cli.json("create", "Person", "-p", "name=A", "-p", f"{name}=x")
    assert _refused(result)["path"] == name


@pytest.mark.parametrize(
    "title",
    [
        "risk-assessment-for-payments-team",
        "mask-card-numbers-in-logs",
        "task-force-on-flaky-tests",
        "disk-usage-alert-on-db-primary",
        "ask-the-platform-team-about-quotas",
        "task_test_suite_runner_for_ci",
        "desk_live_support_rotation_2026",
    ],
)
def test_a_word_holding_sk_or_a_stripe_prefix_is_no_secret(cli: Cli, title: str) -> None:
    """Regression (issue 31): the key formats start at a token boundary, not inside a word."""
    result = cli.json("create", "Task", "-p", f"title={title}", "-p", "status=open")
    assert result.exit_code == 0, result.output
    as_id = cli.json("create", "Task", "--id", title, "-p", "title=t", "-p", "status=open")
    assert as_id.exit_code == 0, as_id.output


@pytest.mark.parametrize("name", ["sort_key", "token_count", "secret_ref", "author", "path"])
def test_harmless_names_are_allowed(cli: Cli, name: str) -> None:
    assert cli("create", "Person", "-p", "name=A", "-p", f"{name}=x").exit_code == 0


@pytest.mark.parametrize(
    "value", [AWS, GITHUB, STRIPE, PEM, JWT, "password: hunter2", "notes: API_KEY=Zx81kq"]
)
def test_values_that_are_secrets_are_refused_and_never_printed(cli: Cli, value: str) -> None:
    result = cli.json("create", "Person", "-p", "name=A", "-p", f"bio={value}")
    finding = _refused(result, value)
    assert "(redacted)" in finding["value"]
    plain = cli("create", "Person", "-p", "name=A", "-p", f"bio={value}")
    assert plain.exit_code == 1 and value not in plain.output and "redacted" in plain.output


def test_an_observation_holding_a_secret_is_refused(cli: Cli) -> None:
    assert cli("create", "Person", "--id", "pers_a", "-p", "name=A").exit_code == 0
    result = cli.json("update", "pers_a", "-p", "observations=the password: hunter2 works")
    _refused(result, "hunter2")


@pytest.mark.parametrize("value", ["password: $DB_PASSWORD", "token: <your token>", "see vault"])
def test_placeholders_are_not_secrets(cli: Cli, value: str) -> None:
    assert cli("create", "Person", "-p", "name=A", "-p", f"bio={value}").exit_code == 0


def test_imports_check_every_namespace_and_untyped_subjects(cli: Cli, tmp_path: Path) -> None:
    assert cli("create", "Person", "--id", "pers_a", "-p", "name=A").exit_code == 0
    before = quads_of(cli.data_dir)
    for body in [
        '<http://example.org/x> <http://example.org/password> "hunter2" .',
        f'<http://example.org/x> <http://example.org/note> "{STRIPE}" .',
    ]:
        path = tmp_path / "in.nt"
        path.write_text(body + "\n")
        result = cli("import", str(path))
        assert result.exit_code == 1, result.output
        assert "hunter2" not in result.output and STRIPE not in result.output
        assert quads_of(cli.data_dir) == before


def test_the_schema_graph_cannot_switch_the_secret_rule_off(cli: Cli, tmp_path: Path) -> None:
    assert cli("create", "Person", "--id", "pers_a", "-p", "name=A").exit_code == 0
    before = quads_of(cli.data_dir)
    for body in [
        "<https://ontoloom.dev/ns#NoSecrets> <http://www.w3.org/ns/shacl#deactivated> true .",
        "<https://ontoloom.dev/ns#NoSecrets> <http://www.w3.org/ns/shacl#severity> "
        "<http://www.w3.org/ns/shacl#Info> .",
    ]:
        shapes = tmp_path / "off.ttl"
        shapes.write_text(body + "\n")
        result = cli("schema", "add-shapes", str(shapes))
        assert result.exit_code != 0
        assert "built-in shape" in result.output
        assert quads_of(cli.data_dir) == before
    assert cli("create", "Person", "-p", "name=B", "-p", "password=hunter2").exit_code == 1


def test_a_new_type_holding_a_secret_is_refused_for_its_own_text(cli: Cli) -> None:
    token = "ghp_" + "a1B2" * 9
    spec = {"type": "Sprint", "description": f"uses {token}", "enums": {"status": [token, "b"]}}
    assert cli("create", "Person", "--id", "pers_a", "-p", "name=A").exit_code == 0
    before = quads_of(cli.data_dir)
    result = cli("schema", "add-type", json.dumps(spec))
    assert result.exit_code == 1 and token not in result.output
    first = result.output.splitlines()[0]
    assert first == "refused: add-type Sprint itself holds a value that breaks a rule"
    assert "ol:Sprint · rdfs:comment [forbidden]" in result.output
    assert "https://" not in result.output and "_:" not in result.output
    assert quads_of(cli.data_dir) == before


def test_the_secret_rule_judges_as_pyshacl_does() -> None:
    # The oracle: pySHACL (with SHACL-AF, for the SPARQL target) on the secret rule alone.
    from ontoloom.schema import builtin_triples
    from ontoloom.shacl import Validator
    from ontoloom.shacl.oracle import pyshacl_results
    from ontoloom.shacl.rdfgraph import TripleIndex
    from ontoloom.store.base import Delta
    from ontoloom.store.embedded import EmbeddedBackend
    from ontoloom.store.rdfio import read_triples
    from ontoloom.terms import DefaultGraph, Literal, NamedNode, Quad, Triple
    from ontoloom.vocab import OL
    from shacl_keys import result_keys

    _, shapes = builtin_triples()
    shapes = shape_subset(shapes, only=NamedNode(OL + "NoSecrets"))
    data = read_triples(
        data=f"""@prefix ex: <http://example.org/> . @prefix ol: <https://ontoloom.dev/ns#> .
        ex:a ol:name "Ann" ; ol:sort_key "k" ; ex:apiKey "v" ; ex:note "{STRIPE}" .
        ex:b ex:github_pat "x" ; ex:bio "password: hunter2" ; ex:ok "password: $PW" .
        ex:c ex:token_count 3 ; ex:refreshTokens "t" ; ex:jwt "{JWT}" .
        _:d ex:cookie "c" ; ex:author "Ann" .""",
        format_name="turtle",
    )
    # What people write in JSON, logs and configs: refused, and what they write instead of
    # a secret: kept.
    refused = [
        json.dumps({"step": 6, "data": json.dumps({"user": "admin", "password": "f?PID6&Ad.M4"})}),
        json.dumps({"value": "password:\n    w+6=B_LyKw^PcNA4"}),
        "Password: eirzfgfcty",
        "PASSWORD : XOn.CuhE55iD",
        "\uff41\uff50\uff49\uff3f\uff4b\uff45\uff59\uff1d\uff02\uff52\uff55\uff41\uff47\uff5a\uff4c\uff47\uff53\uff58\uff54\uff49\uff4a\uff02",
    ]
    kept = [
        "password: required",
        "password: vault:secret/data/db#password",
        "API_KEY=env:DB_PASSWORD",
        "password: settings.API_KEY",
        "token: op://Private/db/password",
    ]
    e = NamedNode("http://example.org/e")
    data += [
        Triple(e, NamedNode(f"http://example.org/v{n}"), Literal(text))
        for n, text in enumerate(refused + kept)
    ]
    backend = EmbeddedBackend.memory()
    backend.apply(
        Delta(adds={Quad(t.subject, t.predicate, t.object, DefaultGraph()) for t in data})
    )
    ours = Validator(shapes).validate(backend)
    _, theirs, _ = pyshacl_results(data, shapes, advanced=True)
    index = TripleIndex(shapes)
    assert set(result_keys(ours.results, index)) == set(result_keys(theirs, index))
    # apiKey, note, github_pat, bio, refreshTokens, jwt ×2, cookie, and the refused texts
    assert len(ours.results) == 8 + len(refused)


def test_the_demo_never_prints_the_secret_it_tries_to_store(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ontoloom.cli import main

    result = CliRunner().invoke(main, ["demo"])
    assert result.exit_code == 0, result.output
    assert "sk_live_123" not in result.output and "(redacted)" in result.output


def test_the_shipped_rule_is_the_one_the_tables_generate() -> None:
    """shapes/core.ttl holds ol:NoSecrets' queries as ``no_secrets_selects()`` writes them
    (scripts/write_secret_rule.py), and each judge is registered under its query's digest:
    the SHACL rule and the Python judge are one rule (tests/test_native.py holds the judges
    to the store's evaluation of these queries)."""
    from ontoloom.schema import builtin_triples
    from ontoloom.secret_text import NO_SECRETS_JUDGES, no_secrets_selects
    from ontoloom.shacl.native import digest
    from ontoloom.terms import NamedNode
    from ontoloom.vocab import OL

    _, shapes = builtin_triples()
    rule = shape_subset(shapes, only=NamedNode(OL + "NoSecrets"))
    shipped = {
        str(t.object.value)
        for t in rule
        if t.predicate == NamedNode("http://www.w3.org/ns/shacl#select")
        and "$this" in t.object.value
    }
    generated = no_secrets_selects()
    assert shipped == set(generated), "run scripts/write_secret_rule.py"
    names, values = generated
    assert {k: v.__name__ for k, v in NO_SECRETS_JUDGES.items()} == {
        digest(names): "secret_property",
        digest(values): "secret_value",
    }


@pytest.mark.parametrize("secret", [AWS, GITHUB, STRIPE, JWT, "password=hunter2hunter2"])
def test_an_id_that_is_a_secret_is_refused_and_never_printed(cli: Cli, secret: str) -> None:
    # An id is part of an IRI, shown by every listing: a token there is stored by value.
    assert cli("create", "Task", "-p", "title=t", "-p", "status=open").exit_code == 0
    before = cli("export", "--format", "nquads").output
    for args in (
        ["create", "Task", "--id", secret, "-p", "title=t", "-p", "status=open"],
        ["get", secret],
        ["relate", secret, "blocks", "task_00000000"],
    ):
        result = cli(*args, "--json")
        assert result.exit_code == 2, result.output
        assert json.loads(result.output)["error"] in {"bad_input", "not_found"}
        assert secret not in result.output
    assert cli("export", "--format", "nquads").output == before


def test_ids_that_merely_mention_a_secret_word_are_allowed(cli: Cli) -> None:
    for entity_id in ("rule:rotate-api-keys", "task_token_refresh", "doc:password-policy"):
        result = cli("create", "Task", "--id", entity_id, "-p", "title=t", "-p", "status=open")
        assert result.exit_code == 0, result.output


def test_an_import_naming_an_id_that_holds_a_token_is_refused_and_never_printed(
    cli: Cli, tmp_path: Path
) -> None:
    token = "ghp_" + "A1b2C3d4E5" * 3 + "f6G7h8"
    data = tmp_path / "t.ttl"
    data.write_text(
        f"<https://ontoloom.dev/id/{token}> a <https://ontoloom.dev/ns#Task> ; "
        '<https://ontoloom.dev/ns#title> "x" ; <https://ontoloom.dev/ns#status> "open" .\n'
    )
    assert cli("create", "Person", "--id", "pers_a", "-p", "name=A").exit_code == 0
    before = quads_of(cli.data_dir)
    result = cli("import", str(data))
    # The secret rule's refusal, as for a token in a value (exit 1: a rule broken).
    assert result.exit_code == 1 and token not in result.output
    assert "holds a token" in result.output and quads_of(cli.data_dir) == before
    for args in (["why", token], ["hints", token], ["proposals", "show", token]):
        looked_up = cli(*args)
        assert looked_up.exit_code == 2 and token not in looked_up.output, args


def test_a_new_data_dir_and_mining_files_are_this_users_alone(tmp_path: Path) -> None:
    """The store, the index and the mining requests quote private text: a new data dir is
    0700, and the files mining writes are 0600 whatever the umask."""
    import os
    import stat

    from ontoloom.api import Graph
    from ontoloom.records.writeback import atomic_write

    data_dir = tmp_path / "team" / ".ontoloom"
    with Graph.open(data_dir, write=True, create=True):
        pass
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "request.json", b"{}", new_mode=0o600)
        atomic_write(tmp_path / "record.md", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "request.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "record.md").stat().st_mode) == 0o644  # records as ever


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:7878/query?access_token=s3cr3t-value",
        "http://localhost:7878/query?api_key=s3cr3t-value",
        "http://localhost:7878/query#token=s3cr3t-value",
        "http://admin:s3cr3t-value@localhost:7878/query",
    ],
)
def test_an_endpoint_url_carrying_credentials_is_refused_unquoted(tmp_path: Path, url: str) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "ontoloom", "init", str(tmp_path / "i"), "--endpoint", url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "carries credentials" in done.stderr
    assert "s3cr3t-value" not in done.stderr + done.stdout
    toml = tmp_path / "i" / "ontoloom.toml"
    assert not toml.exists() or "s3cr3t-value" not in toml.read_text()


@pytest.mark.parametrize(
    "name",
    [
        "password2",
        "apiKey2",
        "secret1",
        "token1",
        "passwort",
        "otp_seed",
        "credentials_json",
        "private_key_file",
    ],
)
def test_a_credential_name_with_a_number_or_a_file_suffix_is_refused(cli: Cli, name: str) -> None:
    result = cli.json("create", "Person", "-p", "name=A", "-p", f"{name}=hunter2-but-longer")
    assert _refused(result)["path"] == name
    assert "hunter2-but-longer" not in result.output


@pytest.mark.parametrize(
    "name", ["author1", "pattern2", "passenger1", "monkey1", "version2", "keyboard", "profile"]
)
def test_a_name_that_only_contains_a_credential_word_is_kept(cli: Cli, name: str) -> None:
    result = cli("create", "Person", "-p", "name=A", "-p", f"{name}=plain")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("npm_" + "a1B2c3D4e5" * 3 + "f6G7h8", "an npm access token"),
        ("token hf_" + "abcdefghij" * 3 + "klmn in the notes", "a Hugging Face token"),
    ],
)
def test_npm_and_hugging_face_tokens_are_refused(cli: Cli, value: str, kind: str) -> None:
    result = cli.json("create", "Note", "-p", f"content={value}")
    assert result.exit_code == 1 and kind in result.output
    assert value.split()[0 if value.startswith("npm") else 1] not in result.output


@pytest.mark.parametrize("value", ["run npm_install_hook first", "the shf_table and hf_small"])
def test_words_near_npm_or_hf_prefixes_are_kept(cli: Cli, value: str) -> None:
    assert cli("create", "Note", "-p", f"content={value}").exit_code == 0


def _judged_in_full(text: str) -> str | None:
    """secret_kind without its prefilter: every judge asked."""
    from ontoloom.secret_text import _token_kind, _written_kind, normalised

    plain = normalised(text)
    return _token_kind(plain) or _written_kind(plain)


def test_the_prefilter_never_lets_a_secret_of_the_bench_corpus_go() -> None:
    """The prefilter before the judges (one scan for the characters every secret holds) says
    "no secret" only where the judges in full say so: the whole corpus of
    `make bench-secrets`, fakes in every carrier and ordinary text alike, gets the same
    answer with it as without it."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import secrets_corpus
    from ontoloom.secret_text import _MAY_HOLD, normalised, secret_kind

    items = secrets_corpus.corpus().items
    let_go = 0
    for item in items:
        expected = _judged_in_full(item.text)
        assert secret_kind(item.text) == expected, item
        let_go += _MAY_HOLD.search(normalised(item.text)) is None
    assert 0 < let_go < len(items)  # the prefilter decides some, not all


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [":", "=", "://", "@", "AKIA", "ghp_", "sk-", "password", "Authorization", "\uff1a"]
            ),
            st.text(min_size=0, max_size=12),
        ),
        max_size=8,
    ).map("".join)
)
def test_the_prefilter_agrees_with_the_judges_on_any_text(text: str) -> None:
    from ontoloom.secret_text import secret_kind

    assert secret_kind(text) == _judged_in_full(text)
