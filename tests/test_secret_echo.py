"""Nothing echoes a secret (issue 31, items 1–2 and 4): a write refused for holding one, or for
another reason while holding one, never prints it back — not in another rule's finding (sh:in,
sh:maxLength), not in an id, a property name, a query's syntax error, an import's IRI or a
nested property — on the CLI, in MCP tool results or in an HTTP body. Each front end's output
is searched for the planted secret itself."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest

from conftest import Cli, quads_of
from test_mcp import Session, run
from test_serve import ONTOLOOM, Server

GITHUB = "ghp_" + "Zq9" * 12
AWS = "AKIAZ7VQ2WXYK3LMNP4R"
WRITTEN = "Hunter2-Corr3ct-Horse"
SEED = ["-p", "title=s", "-p", "status=open"]
ZERO_WIDTH = GITHUB[:4] + "\u200b" + GITHUB[4:]


def _silent(output: str, *secrets: str) -> None:
    for secret in (GITHUB, AWS, WRITTEN, *secrets):
        assert secret not in output and secret[6:] not in output, output


@pytest.mark.parametrize(
    "args",
    [
        # another rule of the same write quotes the value (sh:in on status)
        ["create", "Task", "-p", "title=t", "-p", f"status={GITHUB}"],
        ["create", "Task", "-p", "title=t", "-p", f"status=password: {WRITTEN}"],
        # a secret broken up by a zero-width space is the same secret
        ["create", "Task", "-p", f"title={ZERO_WIDTH}", "-p", "status=open"],
        # nested properties
        ["create", "Task", "--props", json.dumps({"title": "t", "status": "open", "x": [GITHUB]})],
        # a property named by a token
        ["update", "task_seed", "-p", f"{AWS}=1"],
        # a relation to an id that is a token
        ["relate", "task_seed", "blocks", GITHUB],
        # a SPARQL syntax error quotes the query
        ["query", f"SELECT * WHERE {{ ?s ?p '{GITHUB}' . FILTER( }}"],
        # a written secret in an update of an existing entity
        ["update", "task_seed", "-p", f"description=db: postgres://admin:{WRITTEN}@db.example/app"],
    ],
)
def test_a_refused_write_never_prints_the_secret(cli: Cli, args: list[str]) -> None:
    assert (
        cli("create", "Task", "--id", "task_seed", "-p", "title=s", "-p", "status=open").exit_code
        == 0
    )
    before = quads_of(cli.data_dir)
    for result in (cli(*args), cli.json(*args)):
        assert result.exit_code in (1, 2), result.output
        _silent(result.output, ZERO_WIDTH)
    assert quads_of(cli.data_dir) == before


def test_a_secret_as_a_property_name_or_an_iri_is_refused_by_import(
    cli: Cli, tmp_path: Path
) -> None:
    assert cli("create", "Task", "--id", "task_seed", *SEED).exit_code == 0
    before = quads_of(cli.data_dir)
    for body in (
        f'<https://ex.org/a> <https://ex.org/ns#{AWS}> "1" .',
        f"<https://ex.org/a> <https://ex.org/ns#link> <https://ex.org/{GITHUB}> .",
        f'<https://ex.org/a> <https://ex.org/ns#note> "secret: {WRITTEN}" .',
    ):
        path = tmp_path / "in.nt"
        path.write_text(body + "\n")
        result = cli("import", str(path))
        assert result.exit_code == 1, result.output
        assert "forbidden" in result.output
        _silent(result.output)
        assert quads_of(cli.data_dir) == before


def test_written_secret_forms_are_refused(cli: Cli) -> None:
    for text in (
        f"password: {WRITTEN.lower()}x9",
        "password: correcthorsebatterystaple",
        f'{{"password": "{WRITTEN}"}}',
        f"password:\n  {WRITTEN}",
        "Authorization: Bearer abcdefghijklmnop1234",
        "postgres://admin:pw@db.example.com:5432/app",
        "\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44\uff1a\uff48\uff55\uff4e\uff54\uff45\uff52\uff12",
    ):
        result = cli.json(
            "create", "Task", "-p", "title=t", "-p", "status=open", "-p", f"description={text}"
        )
        assert result.exit_code == 1, (text, result.output)
        assert json.loads(result.output)["results"][0]["constraint"] == "forbidden"


@pytest.mark.parametrize(
    "text",
    [
        "password: required",
        "Password: see the vault",
        "token: <redacted>",
        "api_key=${API_KEY}",
        "api_key = settings.API_KEY",
        "secret: {{ vault.secret }}",
        "password=*****",
        "pwd: ~/projects",
        "https://docs.example.com/guide?page=2&sort=asc",
        "risk-assessment-for-payments-team",
        "パスワードは保管庫にあります（vault）",
    ],
)
def test_text_about_secrets_is_kept(cli: Cli, text: str) -> None:
    result = cli(
        "create", "Task", "-p", "title=t", "-p", "status=open", "-p", f"description={text}"
    )
    assert result.exit_code == 0, result.output


def test_mcp_tool_errors_never_print_the_secret(data_dir: Path) -> None:
    async def body(s: Session) -> None:
        text, data = await s.refused(
            "create_entity", type="Task", properties={"title": "t", "status": GITHUB}
        )
        _silent(text + json.dumps(data))
        text, data = await s.refused(
            "query", sparql=f"SELECT * WHERE {{ ?s ?p '{GITHUB}' . FILTER( }}"
        )
        _silent(text + json.dumps(data))

    run(data_dir, body)


def test_http_bodies_never_print_the_secret(data_dir: Path) -> None:
    _seed(data_dir)
    server = Server(data_dir)
    try:
        for tool, args in (
            ("create_entity", {"type": "Task", "properties": {"title": "t", "status": GITHUB}}),
            ("update_entity", {"id": "task_seed", "properties": {AWS: 1}}),
        ):
            response = server.post(tool, args)
            assert response.status_code in (400, 422), response.text
            _silent(response.text)
        response = httpx.get(
            f"{server.url}/sparql",
            params={"query": f"SELECT * WHERE {{ ?s ?p '{GITHUB}' . FILTER( }}"},
            headers=server.headers,
        )
        assert response.status_code == 400
        _silent(response.text)
    finally:
        server.stop()
    assert server.proc.stderr is not None
    _silent(server.proc.stderr.read().decode())


def _seed(data_dir: Path) -> None:
    done = subprocess.run(
        [*ONTOLOOM, "--data-dir", str(data_dir), "create", "Task", "--id", "task_seed", *SEED],
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr


def test_rebuild_never_prints_a_secret_of_a_record_or_its_file_name(tmp_path: Path) -> None:
    root = tmp_path / "inst"
    (root / "records/memory").mkdir(parents=True)
    (root / "records/memory/rotate-keys.md").write_text(
        f"---\ntitle: Rotate keys\n---\nUse {GITHUB} for deploys.\n"
    )
    (root / f"records/memory/{GITHUB}.md").write_text("---\ntitle: Other\n---\nplain\n")
    cli = Cli(root / ".ontoloom")
    assert cli("init", str(root)).exit_code == 0
    for result in (cli("rebuild"), cli.json("rebuild")):
        assert "forbidden" in result.output
        _silent(result.output)
