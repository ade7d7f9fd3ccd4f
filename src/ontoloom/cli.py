"""The ``ontoloom`` command line: parse options, run the operation (:mod:`ontoloom.ops`,
where the data dir's graph is open: here, or in its owner), format what it answers.
Files a command names are read and written here, never by the owner.

Exit codes: 0 ok · 1 refused by validation (report printed) · 2 usage error, no store,
unknown id, bad input, busy. Never a traceback.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ontoloom.errors import (
    BadInput,
    OntoloomError,
    Stopped,
    ValidationFailed,
)
from ontoloom.findings import Finding
from ontoloom.model import parse_scalar
from ontoloom.secret_text import redact

__all__ = ["main"]


_TIME_FORMS = "an ISO 8601 date (2026-10-01) or date-time (2026-10-01T09:00:00Z)"


# -- shared options and error handling -------------------------------------------------------
def _common(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--data-dir`` and ``--json`` on every command (they also work before the command)."""
    f = click.option(
        "--json", "as_json", is_flag=True, default=None, help="Machine-readable JSON output."
    )(f)
    f = click.option(
        "--quiet", is_flag=True, default=None, help="No progress bar on stderr for long work."
    )(f)
    f = click.option(
        "--data-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Data dir (default: ONTOLOOM_HOME, else the enclosing instance's .ontoloom/, "
        "else the per-user data dir; `ontoloom where` says which).",
    )(f)

    @functools.wraps(f)
    def wrapper(
        *args: Any, data_dir: Path | None, as_json: bool | None, quiet: bool | None, **kwargs: Any
    ) -> Any:
        ctx = click.get_current_context()
        root = ctx.find_root().obj or {}
        ctx.obj = {
            "data_dir": data_dir or root.get("data_dir"),
            "json": bool(as_json if as_json is not None else root.get("json")),
            "quiet": bool(quiet if quiet is not None else root.get("quiet")),
        }
        try:
            return f(*args, **kwargs)
        except OntoloomError as exc:
            _fail(exc, ctx.obj["json"])

    return wrapper


def _fail(exc: OntoloomError, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(exc.to_json(), indent=2, ensure_ascii=False))
    else:
        prefix = "" if isinstance(exc, ValidationFailed) else "error: "
        click.echo(prefix + exc.message, err=True)
    sys.exit(exc.exit_code)


def _opts() -> dict[str, Any]:
    return click.get_current_context().obj


def _with_progress(f: Callable[..., Any]) -> Callable[..., Any]:
    """A progress bar on stderr while the command runs (terminal only; see progress.py)."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from ontoloom.progress import shown

        with shown(quiet=_opts()["quiet"], as_json=_opts()["json"]):
            return f(*args, **kwargs)

    return wrapper


def _emit(data: Any, text: Callable[[], None] | str) -> None:
    if _opts()["json"]:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    elif callable(text):
        text()
    else:
        click.echo(text)


STDIO = "-"  # as a file argument, standard input; as an -o argument, standard output


def _stdin_bytes() -> bytes:
    """Everything on standard input (a forwarded command gets what its client read)."""
    return sys.stdin.buffer.read()


def _is_stdio(path: Path | str | None) -> bool:
    return path is not None and str(path) == STDIO


def _output_format(fmt: str | None, default: str, option: str = "--format") -> str:
    """The format ``option`` names, json for ``--json``, else ``default``.

    :raises click.UsageError: ``--json`` with another format (one of them would be ignored).
    """
    if _opts()["json"]:
        if fmt not in (None, "json"):
            raise click.UsageError(f"--json and {option} {fmt} exclude each other: give one")
        return "json"
    return fmt or default


def _write_document(output: Path | None, text: str, what: str) -> None:
    """``text`` to the ``-o`` file, or to standard output when there is none or it is ``-``;
    the file's name and ``what`` it holds on stderr. The file is this user's alone (0600):
    a request quotes records and transcripts.

    :raises BadInput: the file cannot be written.
    """
    from ontoloom.records.writeback import atomic_write

    if output is None or _is_stdio(output):
        click.echo(text)
        return
    try:
        atomic_write(output, (text + "\n").encode("utf-8"), new_mode=0o600)
        output.chmod(0o600)
    except OSError as exc:
        raise BadInput(
            f"cannot write {output}: {exc.strerror or exc}; choose another file with -o"
        ) from None
    click.echo(f"wrote {what} to {output}", err=True)


_RICH_ROWS = 500  # rich lays out ~1 ms a row: past this many, the plain aligner does it


def _stdout_is_terminal() -> bool:
    """Whether output goes to a terminal."""
    return sys.stdout.isatty()


def _print_table(columns: list[str], rows: list[list[str]], *, right: tuple[int, ...] = ()) -> None:
    """Aligned columns headed by ``columns``, two spaces apart, no trailing spaces, no
    colour. On a terminal rich lays them out to its width (long cells wrap); piped, or past
    ``_RICH_ROWS`` rows, the same layout is written without wrapping, so nothing is cut."""
    if _stdout_is_terminal() and len(rows) <= _RICH_ROWS:
        _rich_table(columns, rows, right)
        return
    from rich.cells import cell_len

    grid = [[cell.split("\n") for cell in row] for row in [columns, *rows]]
    widths = [max(cell_len(line) for row in grid for line in row[i]) for i in range(len(columns))]
    for row in grid:
        for k in range(max(len(cell) for cell in row)):
            parts = []
            for i, cell in enumerate(row):
                text = cell[k] if k < len(cell) else ""
                pad = " " * (widths[i] - cell_len(text))
                parts.append(pad + text if i in right else text + pad)
            click.echo("  ".join(parts).rstrip())


def _rich_table(columns: list[str], rows: list[list[str]], right: tuple[int, ...]) -> None:
    import io
    import shutil

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, show_edge=False, pad_edge=False, header_style="")
    for i, column in enumerate(columns):
        table.add_column(column, justify="right" if i in right else "left", overflow="fold")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))  # Text: a "[tag]" in a title stays
    buffer = io.StringIO()
    width = shutil.get_terminal_size().columns
    Console(file=buffer, width=width, color_system=None, highlight=False).print(table)
    for line in buffer.getvalue().splitlines():
        click.echo(line.rstrip())


def _rel_text(rel: str, is_open: bool | None) -> str:
    """A relation's name; an open one (the agent's own words, maybe with spaces) quoted."""
    return f"{json.dumps(rel, ensure_ascii=False)} (open)" if is_open else rel


def _data_dir() -> Path:
    from ontoloom.config import resolve_data_dir

    return resolve_data_dir(_opts()["data_dir"])


def _run(name: str, arguments: dict[str, Any]) -> Any:
    """Run operation ``name`` where the data dir's graph is open — in this process, or in
    the data dir's owner (a running `ontoloom mcp` or `serve`) — and print its warnings on
    stderr; its :class:`ontoloom.ops.Result`."""
    from ontoloom.owner import run

    result = run(_data_dir(), name, arguments, checked=False)
    if isinstance(result.value, dict) and result.value.get("answer_lost"):
        # The owner died after committing it: its answer is lost, the write is not.
        _emit(result.value, result.note or "committed")
        sys.exit(0)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    return result


def _value(name: str, arguments: dict[str, Any]) -> Any:
    """:func:`_run`'s value."""
    return _run(name, arguments).value


def _read_file(path: Path | str, what: str = "file") -> bytes:
    """A file a command names (``-``: standard input), read here.

    :raises BadInput: it cannot be read.
    """
    if _is_stdio(path):
        return _stdin_bytes()
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInput(f"{path}: a directory, not a {what}") from None
    except OSError as exc:
        raise BadInput(f"{path}: cannot read it ({exc.strerror or exc})") from None


def _json_file(path: Path | str) -> Any:
    """A JSON document a command names (``-``: standard input), read and parsed here.

    :raises BadInput: it cannot be read, or is not JSON.
    """
    try:
        return json.loads(_read_file(path).decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise BadInput(f"{path}: cannot read it ({exc})") from None
    except json.JSONDecodeError as exc:
        raise BadInput(f"{path}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg})") from None


def _file_arguments(path: Path) -> dict[str, str]:
    """A named RDF file as an operation's arguments: its content, its name and the base IRI
    its relative IRIs resolve against (the file's own URL; none for standard input)."""
    from ontoloom.ops.commands import content_arguments

    arguments = content_arguments(_read_file(path), str(path))
    if not _is_stdio(path):
        arguments["base"] = path.resolve().as_uri()
    return arguments


def _label(entity: dict[str, Any]) -> str:
    from ontoloom.model import label_of

    return label_of(entity.get("properties") or {}, entity["id"])


def parse_properties(
    pairs: tuple[str, ...], props_json: str | None, option: str = "-p"
) -> dict[str, Any]:
    """``--props`` JSON, then ``-p`` pairs on top; a key repeated with ``-p`` gathers a list."""
    props: dict[str, Any] = {}
    if props_json:
        try:
            loaded = json.loads(props_json)
        except json.JSONDecodeError as exc:
            raise BadInput(f"--props is not valid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(loaded, dict):
            raise BadInput('--props must be a JSON object, e.g. --props \'{"title": "Ship it"}\'')
        props.update(loaded)
    repeated: set[str] = set()
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise BadInput(f"{option} {pair!r}: write key=value, e.g. {option} status=open")
        value = parse_scalar(raw)
        if key in repeated:
            previous = props[key] if isinstance(props[key], list) else [props[key]]
            props[key] = [*previous, *(value if isinstance(value, list) else [value])]
        else:
            props[key] = value
            repeated.add(key)
    return props


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OntoloomError as exc:
            _fail(exc, bool((ctx.obj or {}).get("json")))
        except Stopped as exc:  # a signal: exits 128 + its number, saying what it left
            if exc.note:
                click.echo(f"stopped: {exc.note}", err=True)
            raise
        except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit):
            raise
        except BrokenPipeError:  # the reader went away (`| head`): nothing left to say
            sys.stderr.close()
            sys.exit(0)
        except Exception as exc:  # the last line of defence: never a traceback
            click.echo(redact(f"error: unexpected {type(exc).__name__}: {exc}"), err=True)
            sys.exit(2)


@click.group("ontoloom", cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Data dir (default: ONTOLOOM_HOME, else the enclosing instance's .ontoloom/, "
    "else the per-user data dir; `ontoloom where` says which).",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
@click.option("--quiet", is_flag=True, help="No progress bar on stderr for long work.")
@click.version_option(package_name="ontoloom", prog_name="ontoloom")
@click.pass_context
def main(ctx: click.Context, data_dir: Path | None, as_json: bool, quiet: bool) -> None:
    """ontoloom: a typed, validated knowledge graph shared by agents and people.

    \b
    Example:
      ontoloom init && ontoloom create Task -p title="Ship it" -p status=open
    """
    ctx.obj = {"data_dir": data_dir, "json": as_json, "quiet": quiet}
    # rdflib logs each ill-typed literal it converts ("zero"^^xsd:integer) with a traceback;
    # ontoloom judges literals itself, and a traceback on stderr reads as a crash.
    logging.getLogger("rdflib.term").setLevel(logging.ERROR)


# -- instance ----------------------------------------------------------------------------------
@main.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--endpoint", metavar="URL", help="Keep the graph in this SPARQL 1.1 store (its query URL)."
)
@click.option(
    "--update-endpoint", metavar="URL", help="The store's SPARQL update URL (default: --endpoint)."
)
@click.option(
    "--graph-store",
    metavar="URL",
    help="The store's Graph Store Protocol URL: export and audits read whole graphs through it.",
)
@_common
def init(
    directory: Path | None,
    endpoint: str | None,
    update_endpoint: str | None,
    graph_store: str | None,
) -> None:
    """Make DIRECTORY (default: here) an ontoloom instance with an empty store.

    With --endpoint, the graph lives in that SPARQL 1.1 store (see "Scaling out"): init
    asks it whether its default graph is the union of its graphs and what it answers
    otherwise than the embedded store (its gaps), prints that and records it in
    ontoloom.toml; `ontoloom status` shows it again.

    \b
    Examples:
      ontoloom init my-team
      ontoloom init my-team --endpoint http://localhost:7878/query --update-endpoint http://localhost:7878/update
    """
    from ontoloom.instance import init_instance

    result = init_instance(
        directory or Path.cwd(),
        _opts()["data_dir"],
        endpoint=endpoint,
        update_endpoint=update_endpoint,
        graph_store=graph_store,
    )
    text = (
        f"{'already initialised' if result['created'] is False else 'initialised'}: "
        f"{result['data_dir']}"
    )
    if "store" in result:
        text += "\n" + _store_text(result["store"])
    _emit(result, text)


def _store_text(store: dict[str, Any]) -> str:
    """What ``describe_store`` found, as lines for a person."""
    if store["store"] == "embedded":
        return f"  store: embedded, {store['path']}"
    union = store["default_graph"] == "union"
    lines = [
        f"  store: {store['endpoint']} ({store.get('engine') or 'engine not named'})",
        "  default graph: "
        + (
            "the union of the named graphs"
            if union
            else "a graph of its own: every query names ontoloom's graphs (one more round trip)"
        ),
    ]
    if not store["gaps"]:
        lines.append("  gaps: none found by init's probes")
    for gap in store["gaps"]:
        lines.append(f"  gap: {gap['gap']}: {gap['means']}")
    return "\n".join(lines)


@main.command()
@_common
def where() -> None:
    """Print the data dir this command line would use, and which rule chose it.

    The same rule holds for every command, `ontoloom mcp`, `serve` and the hooks:
    --data-dir, else ONTOLOOM_HOME, else the nearest enclosing instance's .ontoloom/, else a
    .ontoloom/ already here, else the per-user data dir ($XDG_DATA_HOME/ontoloom).

    \b
    Examples:
      ontoloom where
      ontoloom where --json | jq -r .data_dir
    """
    from ontoloom.locate import locate
    from ontoloom.store import exists

    found = locate(str(_opts()["data_dir"]) if _opts()["data_dir"] else None)
    data = found.to_json()
    state = "a store" if exists(Path(found.path)) else "no store yet"
    owner = "; kept open by a running owner (mcp or serve)" if data["owner"] else ""
    _emit(data, f"{found.path}\n  rule: {found.rule} — {found.reason}\n  {state}{owner}")


@main.command()
@click.option(
    "--write",
    "write_id",
    metavar="ID",
    help="The write id an 'outcome unknown' error named.",
)
@_common
def status(write_id: str | None) -> None:
    """Where the graph lives and what its store answers otherwise; or, with --write, whether
    a write was committed.

    Without --write: the store (embedded, or the SPARQL endpoint with its engine), whether
    its default graph is the union of its graphs, and each gap `init` found — what that
    engine answers otherwise than the embedded store. Read from ontoloom.toml.

    With --write: a write whose outcome could not be told (exit 4: the store stopped
    answering after the write went out) names its write id; ask here once the store answers.
    Exit 0: committed · 3: not committed · 4: unknown (the store cannot be asked now) · 2: bad
    input.

    \b
    Examples:
      ontoloom status
      ontoloom status --write 4f9c0e2a7d1b4c36a8e5f0d2b9c1a7e3
      ontoloom status --write 4f9c0e2a7d1b4c36a8e5f0d2b9c1a7e3 --json
    """
    from ontoloom.errors import Busy, NoStore, NotFound
    from ontoloom.store import write_ids

    if write_id is None:
        store = _value("store_status", {})
        _emit(store, "\n".join(line[2:] for line in _store_text(store).splitlines()))
        return
    write_ids.valid(write_id)
    try:
        answer = _value("write_status", {"write_id": write_id})
    except (BadInput, NoStore, NotFound, Busy):
        raise
    except OntoloomError as exc:  # the store (an endpoint) cannot be reached to ask
        answer = {"write_id": write_id, "status": "unknown", "reason": exc.message}
    state = answer["status"]
    if state == "committed":
        text = (
            f"write {write_id}: committed (generation {', '.join(map(str, answer['generations']))})"
        )
    elif state == "not committed":
        text = f"write {write_id}: not committed"
    else:
        text = f"write {write_id}: unknown — {answer['reason']}; ask again later"
    _emit(answer, text)
    sys.exit({"committed": 0, "not committed": 3}.get(state, 4))


# -- entities ----------------------------------------------------------------------------------
_PROPS = click.option(
    "-p",
    "--prop",
    "pairs",
    multiple=True,
    metavar="KEY=VALUE",
    help="A property; repeat it. Numbers, true/false and [lists] are typed.",
)
_PROPS_JSON = click.option(
    "--props", "props_json", metavar="JSON", help="Properties as a JSON object."
)


_VALID_FROM = click.option(
    "--valid-from",
    metavar="DATE",
    help="When it started to hold in the world (default now): " + _TIME_FORMS + ".",
)
_VALID_TO = click.option(
    "--valid-to", metavar="DATE", help="When it stops holding (default open): " + _TIME_FORMS + "."
)
_ENDED = click.option(
    "--valid-to", metavar="DATE", help="When it stopped holding (default now): " + _TIME_FORMS + "."
)
_PURGE = click.option(
    "--purge", is_flag=True, help="Also erase its history (mistakes, erasure requests)."
)
_AS_OF = click.option("--as-of", metavar="DATE", help="What was valid then: " + _TIME_FORMS + ".")
_RECORDED_AS_OF = click.option(
    "--recorded-as-of", metavar="DATE", help="What the store knew then: " + _TIME_FORMS + "."
)


@main.command()
@click.argument("type_name", metavar="TYPE")
@click.option("--id", "entity_id", help="Use this id instead of a generated one.")
@_PROPS
@_PROPS_JSON
@_VALID_FROM
@_VALID_TO
@_common
def create(
    type_name: str,
    entity_id: str | None,
    pairs: tuple[str, ...],
    props_json: str | None,
    valid_from: str | None,
    valid_to: str | None,
) -> None:
    """Create an entity of TYPE (validated before it is stored).

    \b
    Example:
      ontoloom create Task -p title="Fix payment timeout" -p status=open -p priority=high
    """
    props = parse_properties(pairs, props_json)
    entity = _value(
        "create_entity",
        {
            "type": type_name,
            "properties": props,
            "id": entity_id,
            "valid_from": valid_from,
            "valid_to": valid_to,
        },
    )
    _emit(entity, f"created {entity['id']} ({entity['type']})")


@main.command()
@click.argument("entity_id", metavar="ID")
@_AS_OF
@_RECORDED_AS_OF
@_common
def get(entity_id: str, as_of: str | None, recorded_as_of: str | None) -> None:
    """Show an entity with its outgoing and incoming relations (with --as-of or
    --recorded-as-of: as they were then, read from the history).

    \b
    Example:
      ontoloom get task_a1b2c3d4 --json
      ontoloom get task_a1b2c3d4 --as-of 2026-10-15
    """
    data = _value("get_entity", {"id": entity_id, "as_of": as_of, "recorded_as_of": recorded_as_of})

    def text() -> None:
        click.echo(f"{data['id']} ({data['type']})")
        for key, value in data["properties"].items():
            click.echo(f"  {key}: {json.dumps(value, ensure_ascii=False)}")
        for r in data["relations"]["outgoing"]:
            click.echo(f"  → {_rel_text(r['rel'], r.get('open'))} {r['to_id']} ({r['to_type']})")
        for r in data["relations"]["incoming"]:
            click.echo(
                f"  ← {_rel_text(r['rel'], r.get('open'))} {r['from_id']} ({r['from_type']})"
            )

    _emit(data, text)


@main.command()
@click.argument("entity_id", metavar="ID")
@_PROPS
@_PROPS_JSON
@click.option(
    "--unset", "unset", multiple=True, metavar="KEY", help="Remove a property; repeat it."
)
@_VALID_FROM
@_VALID_TO
@_common
def update(
    entity_id: str,
    pairs: tuple[str, ...],
    props_json: str | None,
    unset: tuple[str, ...],
    valid_from: str | None,
    valid_to: str | None,
) -> None:
    """Set or unset properties of an entity (each set replaces the previous values).

    \b
    Example:
      ontoloom update task_a1b2c3d4 -p status=done --unset priority
    """
    props = parse_properties(pairs, props_json)
    if not props and not unset:
        raise BadInput("nothing to change: give -p KEY=VALUE, --props JSON or --unset KEY")
    result = _run(
        "update_entity",
        {
            "id": entity_id,
            "properties": props,
            "unset": list(unset),
            "valid_from": valid_from,
            "valid_to": valid_to,
        },
    )
    # the operation says when nothing changed (only absent keys unset): its note
    _emit(result.value, result.note or f"updated {result.value['id']}")


@main.command()
@click.argument("entity_id", metavar="ID")
@_ENDED
@_PURGE
@_common
def delete(entity_id: str, valid_to: str | None, purge: bool) -> None:
    """Delete an entity and every relation touching it, in one atomic step. Their
    history stays, ended (`ontoloom history ID`); --purge erases it too.

    \b
    Example:
      ontoloom delete task_a1b2c3d4
    """
    data = _value("delete_entity", {"id": entity_id, "valid_to": valid_to, "purge": purge})
    entity, relations = data["deleted"], data["relations_removed"]
    _emit(data, f"deleted {entity['id']} ({entity['type']}) and {len(relations)} relation(s)")


# -- relations ---------------------------------------------------------------------------------
@main.command()
@click.argument("from_id", metavar="FROM")
@click.argument("rel", metavar="REL")
@click.argument("to_id", metavar="TO")
@_VALID_FROM
@_VALID_TO
@_common
def relate(
    from_id: str, rel: str, to_id: str, valid_from: str | None, valid_to: str | None
) -> None:
    """Relate FROM to TO by REL (checked: types, cardinality, cycles — at every instant).

    A many_to_one relation replaces FROM's previous one, and says so; the old one's
    validity ends when the new one starts (`ontoloom history FROM` shows both). A
    --valid-to before now records a fact that held only then.

    \b
    Example:
      ontoloom relate task_a1b2c3d4 blocks task_e5f6a7b8
      ontoloom relate task_a1b2c3d4 assigned_to pers_e5f6a7b8 --valid-from 2026-10-01
    """
    outcome = _value(
        "relate",
        {
            "from_id": from_id,
            "rel": rel,
            "to_id": to_id,
            "valid_from": valid_from,
            "valid_to": valid_to,
        },
    )

    def text() -> None:
        verb = "related" if outcome["created"] else "already related"
        click.echo(f"{verb}: {from_id} {rel} {to_id}")
        for old in outcome["replaced"]:
            click.echo(f"replaced: {old['from_id']} {old['rel']} {old['to_id']}")

    _emit(outcome, text)


@main.command()
@click.argument("from_id", metavar="FROM")
@click.argument("rel", metavar="REL")
@click.argument("to_id", metavar="TO")
@_ENDED
@_PURGE
@_common
def unrelate(from_id: str, rel: str, to_id: str, valid_to: str | None, purge: bool) -> None:
    """Remove the relation FROM REL TO: its validity ends, its history stays (--purge
    erases it too).

    \b
    Example:
      ontoloom unrelate task_a1b2c3d4 blocks task_e5f6a7b8
    """
    relation = _value(
        "unrelate",
        {"from_id": from_id, "rel": rel, "to_id": to_id, "valid_to": valid_to, "purge": purge},
    )
    _emit(relation, f"unrelated: {from_id} {rel} {to_id}")


@main.command()
@click.argument("entity_id", metavar="ID")
@click.option("--rel", help="Only this relation.")
@click.option(
    "--direction", type=click.Choice(["out", "in", "both"]), default="both", show_default=True
)
@_AS_OF
@_RECORDED_AS_OF
@_common
def relations(
    entity_id: str,
    rel: str | None,
    direction: str,
    as_of: str | None,
    recorded_as_of: str | None,
) -> None:
    """List the relations of an entity (with --as-of or --recorded-as-of: as they were).

    \b
    Example:
      ontoloom relations proj_a1b2c3d4 --rel has_task --direction out
    """
    found = _value(
        "relations",
        {
            "id": entity_id,
            "rel": rel,
            "direction": direction,
            "as_of": as_of,
            "recorded_as_of": recorded_as_of,
        },
    )

    def text() -> None:
        for r in found:
            click.echo(
                f"{r['from_id']} ({r['from_type']}) {_rel_text(r['rel'], r.get('open'))} "
                f"{r['to_id']} ({r['to_type']})"
            )
        if not found:
            click.echo("no relations")

    _emit(found, text)


@main.command()
@click.argument("entity_id", metavar="ID")
@_common
def history(entity_id: str) -> None:
    """Every version of every fact about ID (type, properties, relations either way), with
    when it held (valid from → to) and when the store recorded and retired it.

    \b
    Example:
      ontoloom history task_a1b2c3d4 --json
    """
    versions = _value("history", {"id": entity_id})

    def text() -> None:
        rows = [
            [
                v["subject"],
                v["predicate"],
                json.dumps(v["object"], ensure_ascii=False)
                if v["kind"] == "property"
                else str(v["object"]),
                v["valid_from"],
                v["valid_to"] or "(open)",
                v["recorded"],
                v["retired"] or "",
            ]
            for v in versions
        ]
        if rows:
            _print_table(
                ["subject", "fact", "object", "valid from", "valid to", "recorded", "retired"],
                rows,
            )
        else:
            click.echo("no history")

    _emit(versions, text)


@main.command()
@click.argument("entity_id", metavar="ID")
@click.option("--rel", help="Follow only this relation.")
@click.option("--direction", type=click.Choice(["out", "in"]), default="out", show_default=True)
@click.option(
    "--depth", type=click.IntRange(1, 5), default=1, show_default=True, help="Hops (1-5)."
)
@_AS_OF
@_RECORDED_AS_OF
@_common
def traverse(
    entity_id: str,
    rel: str | None,
    direction: str,
    depth: int,
    as_of: str | None,
    recorded_as_of: str | None,
) -> None:
    """Everything reachable from an entity within DEPTH hops, with distance and path (with
    --as-of or --recorded-as-of: over the graph as it was then).

    Each edge of a path is drawn the way it runs: `a -blocks-> b`, and `a <-blocks- b` for
    an edge from b to a (what --direction in follows).

    \b
    Example:
      ontoloom traverse task_a1b2c3d4 --rel blocks --depth 3
    """
    found = _value(
        "traverse",
        {
            "id": entity_id,
            "rel": rel,
            "direction": direction,
            "depth": depth,
            "as_of": as_of,
            "recorded_as_of": recorded_as_of,
        },
    )

    def text() -> None:
        for r in found:
            # Each edge drawn the way it runs: `a -blocks-> b`, or `a <-blocks- b` when the
            # walk goes against it (--direction in).
            steps = "".join(
                f" -{e['rel']}-> {node}" if e["to"] == node else f" <-{e['rel']}- {node}"
                for e, node in zip(r["edges"], r["path"][1:], strict=True)
            )
            click.echo(
                f"[{r['distance']}] {r['id']} ({r['type']}) {r['title']}   {r['path'][0]}{steps}"
            )
        if not found:
            click.echo("nothing reachable")

    _emit(found, text)


@main.command(name="list")
@click.option("--type", "type_name", help="Only entities of this type.")
@click.option(
    "--where", "where", multiple=True, metavar="KEY=VALUE", help="Property filter; repeat it."
)
@click.option(
    "--limit", type=int, help="A page of at most this many, in id order (1-1000); default: all."
)
@click.option("--after", metavar="ID", help="Start the page after this id (a page's last id).")
@_AS_OF
@_RECORDED_AS_OF
@_common
def list_(
    type_name: str | None,
    where: tuple[str, ...],
    limit: int | None,
    after: str | None,
    as_of: str | None,
    recorded_as_of: str | None,
) -> None:
    """List entities, optionally by type and property values (with --as-of or
    --recorded-as-of: the entities as they were then).

    All of them by type and id; with --limit, one page in id order whose cost does not
    grow with the graph, and a note on stderr giving the next page's --after.

    \b
    Examples:
      ontoloom list --type Task --where status=open
      ontoloom list --limit 100 --after task_a1b2c3d4
    """
    filters = parse_properties(where, None, option="--where")
    if limit is None and after is not None:
        limit = 100
    page = _run(
        "list_entities",
        {
            "type": type_name,
            "where": filters,
            "limit": limit,
            "after": after,
            "as_of": as_of,
            "recorded_as_of": recorded_as_of,
        },
    )
    found = page.value
    if page.cursor is not None:
        click.echo(f"note: more follow: --after {page.cursor}", err=True)

    def text() -> None:
        if found:
            _print_table(["ID", "TYPE", "TITLE"], [[e["id"], e["type"], _label(e)] for e in found])
        click.echo(f"{len(found)} entit{'y' if len(found) == 1 else 'ies'}")

    _emit(found, text)


# -- demo --------------------------------------------------------------------------------------
@main.command()
@click.option(
    "--keep",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[DIR]",
    help="Keep the demo instance: in DIR (new, empty or an earlier demo), or with no DIR in "
    "the temporary directory; its path is printed. Without it nothing is left behind.",
)
@_common
def demo(keep: str | None) -> None:
    """Build the bundled example instance and show what validation refuses.

    The demo uses its own data dir inside the instance; ONTOLOOM_HOME is not read.

    \b
    Example:
      ontoloom demo
      ontoloom demo --keep team-demo && cd team-demo && ontoloom list
    """
    from ontoloom.demo import render_text, run_demo

    if _opts()["data_dir"] is not None:
        raise click.UsageError(
            "demo builds its own instance and never uses a data dir: drop --data-dir "
            "(--keep DIR keeps the demo where you want it)"
        )
    result = run_demo(Path(keep) if keep else None, keep_temp=keep == "")
    _emit(result, lambda: render_text(result, echo=click.echo))


# -- audit and validation ----------------------------------------------------------------------
_SEVERITY_MARK = {"Violation": "✗", "Warning": "!", "Info": "i"}


@main.command()
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "turtle"]),
    default=None,
    help="Output format (default text; --json is the same as --format json).",
)
@click.option("--explain", is_flag=True, help="List which engine validated which shape.")
@click.option("--repair", is_flag=True, help="Propose repairs (a dry run unless --yes).")
@click.option(
    "--yes", is_flag=True, help="With --repair: apply the repairs through the write path."
)
@click.option(
    "--legacy-json",
    "legacy",
    metavar="FILE|-",
    help="Validate a sage-memory ontology JSON graph instead of the store.",
)
@click.option(
    "--check",
    "checks",
    multiple=True,
    metavar="NAME",
    help="With --legacy-json: required, enums, forbidden, event_times, cycles, cardinality, relation_types or all.",
)
@click.option(
    "--allow-unsupported",
    is_flag=True,
    help="Audit the rest when shapes use features ontoloom does not evaluate (named on stderr).",
)
@_common
@_with_progress
def check(
    fmt: str | None,
    explain: bool,
    repair: bool,
    yes: bool,
    legacy: str | None,
    checks: tuple[str, ...],
    allow_unsupported: bool,
) -> None:
    """Audit the whole graph: every shape, cycles, orphans. Exit 0 conforms, 1 violations,
    2 when shapes use a feature ontoloom does not evaluate (unless --allow-unsupported).

    Warnings and infos are shown but do not fail.

    \b
    Examples:
      ontoloom check
      ontoloom check --format turtle > report.ttl
      ontoloom check --repair          # then --repair --yes to apply
      ontoloom check --legacy-json graph.json --check cycles
    """
    if legacy is not None:
        # The sage-memory audit of a file: the store audit's options would be ignored.
        store_only = {
            "--repair": repair,
            "--yes": yes,
            "--explain": explain,
            "--allow-unsupported": allow_unsupported,
            f"--format {fmt}": fmt not in (None, "json"),
        }
        given = [name for name, on in store_only.items() if on]
        if given:
            raise click.UsageError(
                f"{', '.join(given)}: only for the store audit; --legacy-json audits a file "
                "and prints JSON"
            )
    elif checks:
        raise click.UsageError(
            "--check selects checks of --legacy-json; the store audit runs them all"
        )
    if yes and not repair:
        raise click.UsageError("--yes applies the repairs of --repair: add --repair")
    fmt = _output_format(fmt, "text")
    if legacy is not None:
        _legacy_check(legacy, checks)
        return
    arguments = {
        "explain": explain,
        "repair": repair,
        "allow_unsupported": allow_unsupported,
        "format": fmt,
    }
    data = _value("check_and_repair" if repair and yes else "check", arguments)
    turtle = data.pop("turtle", "")
    if fmt == "turtle":
        click.echo(turtle, nl=False)
    elif fmt == "json":
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        _audit_text(data, explain, yes)
    sys.exit(0 if data["conforms"] else 1)


def _audit_text(data: dict[str, Any], explain: bool, yes: bool) -> None:
    by_focus: dict[str, list[dict[str, Any]]] = {}
    for f in data["results"]:
        by_focus.setdefault(f["focus"], []).append(f)
    for focus, findings in by_focus.items():
        click.echo(focus)
        for f in findings:
            where = f" {f['path']}" if f["path"] else ""
            value = (
                ""
                if f["value"] is None or f["value"] == f["focus"]
                else f" = {json.dumps(f['value'], ensure_ascii=False)}"
            )
            mark = _SEVERITY_MARK.get(f["severity"], "?")
            click.echo(f"  {mark}{where} [{f['constraint']}]{value}")
            click.echo(f"      {f['message']}")
    click.echo(
        f"{data['violations']} violation(s), {data['warnings']} warning(s), {data['infos']} info(s)"
        + (" — the graph conforms" if data["conforms"] else "")
    )
    if explain:
        _explain_engines(data["explain"])
    repairs = data.get("repairs") or []
    if repairs:
        click.echo(
            "repairs"
            + (" applied:" if yes else " (dry run; add --yes to apply the automatic ones):")
        )
        outcomes = iter(data.get("applied") or [])  # one per automatic repair, in order
        for r in repairs:
            mark = "auto " if r["automatic"] else "manual"
            status = ""
            if yes and r["automatic"]:
                outcome: dict[str, Any] = next(outcomes, {})
                why = outcome.get("refused")
                status = "  [done]" if why is None else f"  [refused: {why.splitlines()[0]}]"
            click.echo(f"  {mark} {r['description']}{status}")
    elif not data["conforms"]:
        click.echo("run `ontoloom check --repair` to see proposed repairs")


def _legacy_check(source: str, checks: tuple[str, ...]) -> None:
    from ontoloom.legacy import CHECKS, legacy_check

    unknown = [c for c in checks if c not in (*CHECKS, "all")]
    if unknown:
        raise click.UsageError(
            f"unknown check {unknown[0]!r}: use one of {', '.join((*CHECKS, 'all'))}"
        )
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
        result = legacy_check(json.loads(text), set(checks))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, BadInput) as exc:
        message = exc.message if isinstance(exc, BadInput) else str(exc)
        click.echo(
            json.dumps(
                {"valid": False, "errors": [f"bad input: {message}"], "warnings": []}, indent=2
            )
        )
        sys.exit(2)
    click.echo(json.dumps(result, indent=2, ensure_ascii=False))
    sys.exit(0 if result["valid"] else 1)


_FILE_FORMAT = click.Choice(
    [
        "auto",
        "turtle",
        "xml",
        "json-ld",
        "nt",
        "n3",
        "trig",
        "nquads",
        "ntriples",
        "jsonld",
        "rdfxml",
        "ttl",
    ],
    case_sensitive=False,
)


@main.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("data", nargs=-1, required=True, metavar="DATA...")
@click.option(
    "-s",
    "--shacl",
    "--shapes",
    "shapes",
    metavar="FILE|-",
    help="The shapes file (given twice, the last counts, as in pySHACL). Default: the data's "
    "own shapes, else ontoloom's.",
)
@click.option(
    "-e",
    "--ont-graph",
    "ontology",
    metavar="FILE|-",
    help="An ontology whose RDFS/OWL axioms are mixed into the data (as pySHACL does; given "
    "twice, the last counts).",
)
@click.option(
    "-i",
    "--inference",
    type=click.Choice(["none", "rdfs", "owlrl", "both"]),
    default="none",
    show_default=True,
    help="Inference (owlrl) on the data before validating.",
)
@click.option(
    "-m", "--metashacl", is_flag=True, help="Validate the shapes against shacl-shacl first."
)
@click.option(
    "-im", "--imports", is_flag=True, help="Follow owl:imports of the shapes and ontology."
)
@click.option(
    "-a", "--advanced", is_flag=True, help="Run SHACL-AF rules (sh:rule) before validating."
)
@click.option("--abort", is_flag=True, help="Report only the first failing shape's results.")
@click.option(
    "-w",
    "--allow-warnings",
    "--allow-warning",
    "allow_warnings",
    is_flag=True,
    help="Warnings and infos do not fail (exit 0, sh:conforms true).",
)
@click.option(
    "--allow-infos", "--allow-info", "allow_infos", is_flag=True, help="Infos do not fail."
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["human", "table", "turtle", "xml", "json-ld", "nt", "n3", "text", "json"]),
    default=None,
    help="Output: pySHACL's human (default) or table, the report graph (turtle|xml|json-ld|"
    "nt|n3); ontoloom's text (grouped by focus node) or json (the findings report; --json).",
)
@click.option(
    "-df",
    "--data-file-format",
    "--data-format",
    "data_format",
    type=_FILE_FORMAT,
    default=None,
    help="Format of the data files (default auto: by extension, else guessed).",
)
@click.option(
    "-sf", "--shacl-file-format", "shapes_format", type=_FILE_FORMAT, help="Format of -s files."
)
@click.option(
    "-ef", "--ont-file-format", "ontology_format", type=_FILE_FORMAT, help="Format of -e files."
)
@click.option("-o", "--output", metavar="FILE|-", help="Write the output there (- is stdout).")
@click.option("--explain", is_flag=True, help="List which engine validated which shape.")
@click.option(
    "--allow-unsupported",
    is_flag=True,
    help="Validate the rest when shapes use features ontoloom does not evaluate (named on stderr).",
)
@_common
def validate(
    data: tuple[str, ...],
    shapes: str | None,
    ontology: str | None,
    inference: str,
    metashacl: bool,
    imports: bool,
    advanced: bool,
    abort: bool,
    allow_warnings: bool,
    allow_infos: bool,
    fmt: str | None,
    data_format: str | None,
    shapes_format: str | None,
    ontology_format: str | None,
    output: str | None,
    explain: bool,
    allow_unsupported: bool,
) -> None:
    """Validate RDF files against SHACL shapes, with no store: pySHACL's command line
    (`pyshacl DATA -s SHAPES ...`), option for option. DATA `-` is standard input.

    Exit 0 conforms, 1 does not conform, 2 load or usage error, or shapes using a feature
    ontoloom does not evaluate (SHACL-JS…) without --allow-unsupported.

    \b
    Examples:
      ontoloom validate data.ttl -s shapes.ttl
      ontoloom validate data.ttl -s shapes.ttl -e ontology.ttl -i rdfs -f turtle -o report.ttl
      cat data.nt | ontoloom validate - -df nt -s shapes.ttl -w
    """
    from ontoloom.validation import Source, validate_files

    # pySHACL's default, so that `validate` is its drop-in to the byte
    fmt = _output_format(fmt, "human", "-f/--format")
    # one shapes graph and one ontology, as pySHACL's options take them
    shape_files, ontology_files = [shapes] if shapes else [], [ontology] if ontology else []
    named = [*data, *shape_files, *ontology_files]
    if named.count("-") > 1:
        raise click.UsageError("standard input (-) can be read once: give it to one option")
    stdin = _read_stdin() if "-" in named else None
    outcome = validate_files(
        [Source(d, "-df/--data-file-format", data_format, stdin) for d in data],
        [Source(s, "-sf/--shacl-file-format", shapes_format, stdin) for s in shape_files],
        ontology=[
            Source(e, "-ef/--ont-file-format", ontology_format, stdin) for e in ontology_files
        ],
        inference=inference,
        metashacl=metashacl,
        imports=imports,
        advanced=advanced,
        abort=abort,
        allow_warnings=allow_warnings,
        allow_infos=allow_infos,
        allow_unsupported=allow_unsupported,
    )
    for warning in outcome.warnings:
        click.echo(f"warning: {warning}", err=True)
    report = outcome.report
    if fmt == "json" and explain:
        import json as json_

        data_out = outcome.to_json()
        data_out["engines"] = report.engines
        data_out["as_written"] = report.as_written
        data_out["explain"] = report.explanation()
        text = json_.dumps(data_out, indent=2, ensure_ascii=False) + "\n"
    else:
        text = outcome.render(fmt)
    if output is not None and output != "-":
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise BadInput(f"-o {output}: cannot write ({exc.strerror or exc})") from None
    else:
        click.echo(text, nl=False)
    if explain and fmt != "json":
        _explain_engines(report.explanation())
    sys.exit(0 if outcome.conforms else 1)


def _read_stdin() -> bytes:
    """Standard input as bytes (RDF parsers sniff encodings themselves); a text-only stdin
    (one handed over as a string) is UTF-8."""
    buffer = getattr(sys.stdin, "buffer", None)
    return bytes(buffer.read()) if buffer is not None else sys.stdin.read().encode("utf-8")


def _explain_engines(explanation: dict[str, Any]) -> None:
    """Per shape: which engine evaluated it and in how long; where pySHACL judged some
    nodes on the terms as written, how many and why the queries could not."""
    click.echo("engines:")
    for shape, entry in explanation.items():
        click.echo(f"  {entry['engine']:<8} {entry['seconds']:>8.3f} s  {shape}")
    for shape, entry in explanation.items():
        if "pyshacl_nodes" in entry:
            nodes = entry["pyshacl_nodes"]
            which = "every target" if nodes < 0 else f"{nodes} focus node(s)"
            click.echo(
                f"  pyshacl  {shape}: {which} reading literals the store keeps by value, "
                f"judged on the terms as written ({entry['why']})"
            )


# -- plans -------------------------------------------------------------------------------------
@main.group()
def plan() -> None:
    """Plans: several operations validated and committed as one."""


@plan.command(name="apply")
@click.argument(
    "file", metavar="FILE|-", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path)
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Validate and say what each step would change (the ids the real run assigns); "
    "store nothing.",
)
@_common
def plan_apply(file: Path, dry_run: bool) -> None:
    """Apply a plan FILE (YAML or JSON; - reads standard input) atomically, or refuse it
    whole naming the failing step.

    \b
    Examples:
      ontoloom plan apply sprint.yaml --dry-run
      cat sprint.yaml | ontoloom plan apply -
    """
    from ontoloom.plans import load_plan

    if _is_stdio(file):
        try:
            plan_text = _stdin_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise BadInput("<stdin>: the plan is not UTF-8 text") from None
        steps = load_plan(None, text=plan_text)
    else:
        steps = load_plan(file)
    try:
        result = _value("plan_apply", {"plan": steps, "dry_run": dry_run})
    except ValidationFailed as refused:  # the plan would be refused: its report, exit 1
        result = refused.to_json()
        if "steps" not in result:
            raise

    def text() -> None:
        delta = result["delta"]
        adds, removes = (
            len(v) if isinstance(v, list) else v for v in (delta["adds"], delta["removes"])
        )
        quads = f"+{adds} -{removes} quads"
        if dry_run:
            verdict = "valid" if result["valid"] else "would be refused"
            click.echo(
                f"dry run: {result['steps']} step(s), {verdict}, {quads} (--json lists them); "
                "nothing stored"
            )
        else:
            click.echo(f"applied {result['steps']} step(s): {quads}")
        for change in result["changes"]:
            click.echo(f"  {change['step']}. {change['text']}")
        for f in result.get("results") or []:
            click.echo(f"  ✗ {Finding(**f).describe()}")
        for alias, entity_id in result["aliases"].items():
            click.echo(f"  {alias} = {entity_id}")

    _emit(result, text)
    if not result["valid"]:
        sys.exit(1)


# -- SPARQL, interchange, summary, inference ---------------------------------------------------
@main.command()
@click.argument("query_spec", metavar="QUERY|FILE.rq|NAME|-", required=False)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv", "tsv", "xml", "turtle", "ntriples"]),
    default=None,
    help="SPARQL 1.1 results format (table by default; RDF for CONSTRUCT).",
)
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="Bind ?NAME to a typed term; repeat it.",
)
@click.option("--list", "list_queries", is_flag=True, help="List the named queries.")
@click.option("--infer", is_flag=True, help="Include the inferred graph (see `ontoloom infer`).")
@click.option(
    "--timeout",
    type=float,
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="Stop the query after this long (exit 2).",
)
@click.option(
    "--as-of",
    metavar="DATE",
    help="Run it over the graph as it was then (the facts valid then, in a temporary store): "
    + _TIME_FORMS
    + ".",
)
@_RECORDED_AS_OF
@_common
def query(
    query_spec: str | None,
    fmt: str | None,
    params: tuple[str, ...],
    list_queries: bool,
    infer: bool,
    timeout: float,
    as_of: str | None,
    recorded_as_of: str | None,
) -> None:
    """Run a read-only SPARQL query: text, a .rq file, a named query, or - (standard input).

    The prefixes ol, rdf, rdfs, owl, xsd, sh, prov, dcterms and schema are declared; the
    query's own PREFIX lines add to them (and win for a name they redeclare).

    Every query runs under a deadline (--timeout) and is stopped when it passes it. SERVICE
    calls are refused unless ontoloom.toml lists the endpoint under [query] service_allow.

    \b
    Examples:
      ontoloom query --list
      ontoloom query open-tasks-by-project
      ontoloom query neighbourhood --param start=task_a1b2c3d4 --param hops=2 --format json
      ontoloom query 'SELECT ?t WHERE { ?t a ol:Task }' --format csv --timeout 60
      ontoloom query 'SELECT ?t ?who WHERE { ?t ol:assigned_to ?who }' --as-of 2026-10-15
    """
    from ontoloom.query import named_queries, resolve_query

    if list_queries and query_spec:
        raise click.UsageError("--list lists the named queries and runs none: drop the query")
    if list_queries:
        named = named_queries()
        data = [q.to_json() for q in named.values()]

        def listing() -> None:
            for q in named.values():
                args = " ".join(f"--param {k}=…" for k in q.params)
                click.echo(f"{q.name}  {args}".rstrip())
                click.echo(f"    {q.description}")

        _emit(data, listing)
        return
    if not query_spec:
        raise click.UsageError("give a query, a .rq file or a named query (see --list)")
    if _is_stdio(query_spec):
        try:
            query_spec = _stdin_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise BadInput("<stdin>: the query is not UTF-8 text") from None
        if not query_spec.strip():
            raise BadInput("no query on standard input: pipe SPARQL text into `query -`")
    fmt = _output_format(fmt, "table")
    bindings = {}
    for pair in params:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise BadInput(f"--param {pair!r}: write name=value")
        bindings[name.lstrip("?$")] = value
    arguments: dict[str, Any] = {
        "query": query_spec,
        "params": bindings,
        "format": fmt,
        "timeout": timeout,
        "infer": infer,
        "as_of": as_of,
        "recorded_as_of": recorded_as_of,
    }
    found = resolve_query(query_spec, read_files=True)  # a .rq file is read here
    if found.name != "(inline)" and found.name not in named_queries():
        arguments.update(query=found.text, file=found.name)
    result = _value("query_text", arguments)
    if result["format"] == "table":
        _table(result["columns"], result["rows"])
    else:  # every format ends its last line (SPARQL JSON and XML do not, as serialised)
        click.echo(result["text"], nl=not result["text"].endswith("\n"))


def _table(columns: list[str], cells: list[list[str]]) -> None:
    if not cells:
        click.echo("(no results)")
        return
    widths = [min(60, max(len(c), *(len(r[i]) for r in cells))) for i, c in enumerate(columns)]
    click.echo("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip())
    click.echo("  ".join("-" * w for w in widths))
    for r in cells:
        click.echo("  ".join(v[:60].ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
    click.echo(f"({len(cells)} row{'s' if len(cells) != 1 else ''})")


@main.command()
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["turtle", "trig", "nquads", "ntriples", "jsonld"]),
    default=None,
    help="Default: from the -o file's extension; Turtle on stdout.",
)
@click.option(
    "--graph",
    "which",
    type=click.Choice(
        ["facts", "records", "confirmed", "proposals", "history", "schema", "inferred", "all"]
    ),
    default="all",
    show_default=True,
)
@click.option(
    "-o",
    "--output",
    metavar="FILE|-",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    help="Write here instead of stdout (- is stdout).",
)
@click.option("--infer", is_flag=True, help="Add the inferred triples.")
@_common
@_with_progress
def export(fmt: str | None, which: str, output: Path | None, infer: bool) -> None:
    """Export graphs as RDF (TriG, N-Quads and JSON-LD keep the named graphs).

    Turtle and TriG declare the prefixes they use; JSON-LD is compacted with an @context.
    Without --format, the -o file's extension picks the format (.ttl .trig .nq .nt .jsonld),
    and standard output gets Turtle; --json is --format jsonld.

    \b
    Examples:
      ontoloom export --format trig --graph all -o backup.trig
      ontoloom export --format jsonld -o - | jq .
    """
    from ontoloom.interchange import EXPORT_FORMATS
    from ontoloom.store.rdfio import guess_format

    if _opts()["json"]:
        if fmt not in (None, "jsonld"):
            raise click.UsageError(f"--json (JSON-LD) and --format {fmt} exclude each other")
        fmt = "jsonld"
    if fmt is None and output is not None and not _is_stdio(output):
        guessed = guess_format(output)
        if guessed not in EXPORT_FORMATS:
            raise BadInput(
                f"cannot tell which format to write {output} in: pass --format "
                f"({', '.join(EXPORT_FORMATS)})"
            )
        fmt = guessed
    fmt = fmt or "turtle"
    text = _value("export", {"format": fmt, "graph": which, "infer": infer})["text"]
    if output is not None and not _is_stdio(output):
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise BadInput(
                f"cannot write {output}: {exc.strerror or exc}; choose another file with -o"
            ) from None
        click.echo(f"exported {which} to {output}", err=True)
    else:
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.flush()


@main.command(name="import")
@click.argument(
    "file", metavar="FILE|-", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path)
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["turtle", "trig", "nquads", "ntriples", "jsonld", "rdfxml"]),
    default=None,
    help="Default: from the file extension (required for -, standard input).",
)
@click.option(
    "--graph",
    "which",
    type=click.Choice(["facts", "confirmed", "proposals", "schema"]),
    default=None,
    help="Put every triple here (default: facts, or the graphs a TriG/N-Quads/JSON-LD file "
    "names, which must be ontoloom's own).",
)
@click.option(
    "--from",
    "source",
    type=click.Choice(["memory-jsonl", "sage-memory"]),
    default=None,
    help="Import another tool's memory instead of RDF: the reference MCP memory server's "
    "memory.jsonl, or sage-memory's SQLite database.",
)
@click.option(
    "--dry-run", is_flag=True, help="With --from: report what would happen; store nothing."
)
@_common
@_with_progress
def import_(
    file: Path, fmt: str | None, which: str | None, source: str | None, dry_run: bool
) -> None:
    """Import RDF, validated together with the store: all of it, or nothing.

    A file that holds no statement (an empty file, plain JSON read as JSON-LD) is refused.

    With --from, import the memory agents keep in another tool, mapped exactly as the
    memory-server tools map their calls; the report says what became typed, what stayed
    open and what was refused and why (refused items are left out, the rest is stored at
    once, or nothing is).

    \b
    Examples:
      ontoloom import team.ttl
      curl -s https://example.org/team.nt | ontoloom import - --format ntriples
      ontoloom import memory.jsonl --from memory-jsonl --dry-run
      ontoloom import .sage-memory/memory.db --from sage-memory --json
    """
    if source is None:
        if dry_run:
            raise click.UsageError("--dry-run goes with --from (an RDF import is all or nothing)")
        if not _is_stdio(file) and file.suffix.lower() in (".jsonl", ".db", ".sqlite", ".sqlite3"):
            hint = "memory-jsonl" if file.suffix.lower() == ".jsonl" else "sage-memory"
            raise click.UsageError(
                f"{file} is not RDF: to import another tool's memory, add --from {hint}"
            )
        result = _run("import_rdf", {**_file_arguments(file), "format": fmt, "graph": which})
        where = "standard input" if _is_stdio(file) else file
        _emit(result.value, f"imported {result.value['imported']} quads from {where}")
        return
    if _is_stdio(file):
        raise click.UsageError("--from reads a file (a database cannot come on standard input)")
    if fmt is not None or which is not None:
        raise click.UsageError("--format and --graph are for RDF files, not with --from")
    import tempfile

    from ontoloom import ops
    from ontoloom.migrate import read_memory, render
    from ontoloom.store import exists

    arguments: dict[str, Any] = {
        "content": read_memory(file, source),  # the file is read here, by whoever names it
        "name": str(file),
        "source": source,
        "dry_run": dry_run,
    }
    if dry_run and not exists(_data_dir()):  # no store yet: try it on an empty one
        with tempfile.TemporaryDirectory() as scratch:
            report = ops.call(Path(scratch) / "store", "import_memory", arguments).value
    else:
        report = _value("import_memory", arguments)
    _emit(report, lambda: click.echo(render(report)))


@main.command()
@_common
def summary() -> None:
    """Counts per type and relation, the vocabulary in use, and the last change.

    \b
    Example:
      ontoloom summary --json
    """
    data = _value("summary", {})

    def text() -> None:
        click.echo(
            f"{data['objects']} objects, {data['relations']} relations (last change: {data['last_change'] or 'never'})"
        )
        for title, key in (
            ("TYPE", "types"),
            ("RELATION", "relations_by_type"),
            ("PROPERTY", "properties"),
        ):
            if data[key]:
                click.echo()
                _print_table(
                    [title, "COUNT"], [[k, str(v)] for k, v in data[key].items()], right=(1,)
                )

    _emit(data, text)


@main.command()
@_common
@_with_progress
def infer() -> None:
    """Materialise OWL RL consequences (inverses, alignments) into the inferred graph.

    Validation never sees it; `query --infer` and `export --infer` add it.

    \b
    Example:
      ontoloom infer && ontoloom query --infer 'SELECT ?p WHERE { ?t ol:part_of ?p }'
    """
    data = _value("infer", {})
    _emit(
        data,
        lambda: click.echo(
            f"inferred {data['inferred']} triples: "
            + ", ".join(f"{k} {v}" for k, v in data["by_predicate"].items())
        ),
    )


# -- schema --------------------------------------------------------------------------------
@main.group()
def schema() -> None:
    """The schema: list it, show a type, extend it (stored as OWL + SHACL)."""


@schema.command(name="list")
@_common
def schema_list() -> None:
    """List every type and relation, built in or added.

    \b
    Example:
      ontoloom schema list --json
    """
    data = _value("schema_list", {})

    def text() -> None:
        _print_table(
            ["TYPE", "REQUIRED", "ORIGIN"],
            [
                [
                    t["type"],
                    ", ".join(t["required"]) or "-",
                    "built in" if t["builtin"] else "extension",
                ]
                for t in data["types"]
            ],
        )
        click.echo()
        _print_table(
            ["RELATION", "FROM", "TO", "CARDINALITY", "ACYCLIC"],
            [
                [
                    r["rel"],
                    ", ".join(r["from_types"]),
                    ", ".join(r["to_types"]),
                    r["cardinality"],
                    "yes" if r["acyclic"] else "no",
                ]
                for r in data["relations"]
            ],
        )

    _emit(data, text)


@schema.command(name="show")
@click.argument("type_name", metavar="TYPE")
@_common
def schema_show(type_name: str) -> None:
    """Show one type: required properties, enums, relations and every rule.

    \b
    Example:
      ontoloom schema show Task
    """
    data = _value("schema_show", {"type": type_name})

    def text() -> None:
        click.echo(
            f"{data['type']}" + (f": {data['description']}" if data.get("description") else "")
        )
        click.echo(f"  required: {', '.join(data['required']) or '-'}")
        for prop, values in data["enums"].items():
            click.echo(f"  {prop} ∈ {', '.join(values)}")
        click.echo(f"  relations from: {', '.join(data['relations_from']) or '-'}")
        click.echo(f"  relations to:   {', '.join(data['relations_to']) or '-'}")
        for rule in data["rules"]:
            click.echo(f"  rule {rule['shape'].rsplit('#', 1)[-1]}: {rule['message']}")

    _emit(data, text)


@schema.command(name="add-type")
@click.argument("spec", metavar="JSON")
@_common
def schema_add_type(spec: str) -> None:
    """Add an entity type: required properties and enums become shapes.

    \b
    Example:
      ontoloom schema add-type '{"type":"Sprint","required":["name","start"],"enums":{"status":["planning","active","closed"]}}'
    """
    from ontoloom.extensions import parse_spec

    data = _value("schema_add_type", parse_spec(spec, "add-type"))
    _emit(data, f"added type {data['type']}")


@schema.command(name="add-relation")
@click.argument("spec", metavar="JSON")
@_common
def schema_add_relation(spec: str) -> None:
    """Add a relation: domain, range, cardinality and acyclicity become shapes.

    \b
    Example:
      ontoloom schema add-relation '{"rel":"mentors","from_types":["Person"],"to_types":["Person"],"cardinality":"many_to_many","acyclic":false}'
    """
    from ontoloom.extensions import parse_spec

    data = _value("schema_add_relation", parse_spec(spec, "add-relation"))
    _emit(data, f"added relation {data['rel']}")


@schema.command(name="add-shapes")
@click.argument(
    "file", metavar="FILE|-", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path)
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["turtle", "trig", "nquads", "ntriples", "jsonld", "rdfxml"]),
    default=None,
    help="Default: from the file extension (required for -, standard input).",
)
@_common
def schema_add_shapes(file: Path, fmt: str | None) -> None:
    """Add a SHACL shapes file (checked against SHACL-SHACL and the data already stored).

    \b
    Examples:
      ontoloom schema add-shapes team-rules.ttl
      cat team-rules.ttl | ontoloom schema add-shapes - --format turtle
    """
    data = _value("schema_add_shapes", {**_file_arguments(file), "format": fmt})
    lines = [f"added {data['triples']} shape triples from {data['file']}"]
    lines += [f"  {c['shape']}: {c['how']}" for c in data["checks"]]
    _emit(data, "\n".join(lines))


# -- search ------------------------------------------------------------------------------------
@main.command()
@click.argument("text", metavar="QUERY")
@click.option(
    "--type", "types", multiple=True, metavar="T", help="Only this type; repeat for several."
)
@click.option(
    "--tag",
    "tags",
    multiple=True,
    metavar="T",
    help="Only objects with this tag; repeat to require several.",
)
@click.option("--rel", help="Only objects with a relation of this kind (either direction).")
@click.option("--limit", type=int, default=10, show_default=True)
@_AS_OF
@_RECORDED_AS_OF
@_common
def search(
    text: str,
    types: tuple[str, ...],
    tags: tuple[str, ...],
    rel: str | None,
    limit: int,
    as_of: str | None,
    recorded_as_of: str | None,
) -> None:
    """Search the graph in words (BM25): ids, titles, every property, tags, relations (with
    --as-of or --recorded-as-of: over the graph as it was then).

    Any text is a safe query: quotes, colons, AND/OR/NOT, * and ^ are just words.

    \b
    Examples:
      ontoloom search "payment timeout"
      ontoloom search checkout --type Task --tag payments
      ontoloom search task_a1b2c3d4
    """
    found = _run(
        "search",
        {
            "query": text,
            "type": list(types),
            "tag": list(tags),
            "rel": rel,
            "limit": limit,
            "as_of": as_of,
            "recorded_as_of": recorded_as_of,
        },
    )
    hits = found.value

    def show() -> None:
        if not hits:
            click.echo("no matches")
            return
        rows = []
        for hit in hits:
            flag = " [private]" if hit["private"] else ""
            snippet = hit["snippet"]
            context = [snippet] if snippet and snippet != hit["title"] else []
            context += [f"· {label}" for label in hit["relations"][:3]]
            rows.append(
                [
                    f"{hit['score']:.2f}",
                    hit["id"],
                    hit["type"],
                    hit["title"] + flag,
                    "\n".join(context),
                ]
            )
        _print_table(["SCORE", "ID", "TYPE", "TITLE", "MATCH"], rows, right=(0,))

    if found.note:
        click.echo(f"note: {found.note}", err=True)
    _emit(hits, show)


@main.command()
@_common
@_with_progress
def reindex() -> None:
    """Rebuild the full-text search index from the store, and read the opted-in conversation
    transcripts again (the passages the prompt hook may quote).

    \b
    Example:
      ontoloom reindex
    """
    data = _value("reindex", {})
    said = data["conversations"]
    text = f"indexed {data['indexed']} objects"
    if said["transcripts"]:
        text += f", and {said['passages']} passages of {said['transcripts']} opted-in transcript(s)"
    for problem in [said["problem"], *said["unreadable"]]:
        if problem:
            click.echo(f"note: transcripts not indexed: {redact(problem)}", err=True)
    _emit(data, text)


# -- records -----------------------------------------------------------------------------------
_NOTE_TITLES = {
    "rejected": "rejected",
    "malformed": "malformed frontmatter",
    "encoding": "not UTF-8",
    "collision": "id collisions",
    "ambiguous": "two frontmatter blocks (only the first read)",
    "orphan": "orphaned targets",
    "unresolved-wikilink": "unresolved wikilinks",
    "skipped": "skipped files and fields",
    "writeback": "pending writebacks (left by an interrupted confirmation)",
}


@main.command()
@click.option(
    "--full", is_flag=True, help="Re-read every record (default: only those whose content changed)."
)
@_common
@_with_progress
def rebuild(full: bool) -> None:
    """Read the instance's records (failures, decisions, rules, runbooks, documents) into the graph.

    Exit 0 done with nothing rejected, 1 done but something was rejected, 2 could not run.

    \b
    Example:
      ontoloom rebuild && ontoloom rebuild --full
    """
    from ontoloom.records.frontmatter import Note

    report = _value("rebuild", {"full": full})

    def text() -> None:
        if report["nothing_changed"]:
            click.echo(f"nothing changed ({report['files']} record files, all up to date)")
        else:
            click.echo(
                f"rebuilt {len(report['changed'])} of {report['files']} record files"
                + (f", removed {len(report['removed'])}" if report["removed"] else "")
            )
        if report["objects"]:
            click.echo("objects:   " + ", ".join(f"{k} {v}" for k, v in report["objects"].items()))
        if report["relations"]:
            click.echo(
                "relations: " + ", ".join(f"{k} {v}" for k, v in report["relations"].items())
            )
        for kind, title in _NOTE_TITLES.items():
            notes = report["notes"].get(kind) or []
            if notes:
                click.echo(f"{title} ({len(notes)}):")
                for note in notes:
                    click.echo(f"  {Note(**note)}")

    _emit(report, text)
    sys.exit(1 if report["rejected"] else 0)


@main.command()
@click.argument("text", required=False)
@click.option(
    "--class",
    "class_ref",
    metavar="SLUG",
    help="Look up this failure class instead of matching text.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="At most this many failure classes.",
)
@_common
def guard(text: str | None, class_ref: str | None, limit: int) -> None:
    """Is this a known recurring failure? Its recurrences and the remedy (rules, runbooks).

    Exit 0 on a hit, 3 on no hit, so scripts and hooks can branch.

    \b
    Examples:
      ontoloom guard "ANSI escape codes ended up in the changelog"
      ontoloom guard --class literal-control-bytes --json
    """
    if not text and not class_ref:
        raise click.UsageError("give the TEXT of what went wrong, or --class SLUG")
    data = _value("guard", {"text": text, "class": class_ref, "limit": limit})
    found = data["classes"]

    def show() -> None:
        if not found:
            click.echo("no known recurring failure matches")
        for hit in found:
            click.echo(
                f"{hit['class']}: {hit['title']} — recurred {hit['recurrences']} time(s) "
                f"(matched by {hit['matched_by']})"
            )
            for o in hit["latest"]:
                click.echo(f"  {o['date'] or '????-??-??'}  {o['id']}: {o['title']}")
            for r in hit["rules"]:
                click.echo(f"  rule:   {r['id']}: {r['title']}")
            for a in hit["actions"]:
                click.echo(f"  action: {a['id']}: {a['title']}")

    _emit(data, show)
    sys.exit(0 if found else 3)


@main.command()
@click.argument("target")
@_common
def why(target: str) -> None:
    """Decision archaeology: the decisions behind TARGET, up to 3 hops, evidence first.

    \b
    Example:
      ontoloom why rule:no-raw-control-bytes
    """
    data = _value("why", {"target": target})

    def show() -> None:
        t = data["target"]
        if not data["decisions"]:
            click.echo(f"no decision is behind {t['id']} ({t['title']})")
        for d in data["decisions"]:
            click.echo(f"{d['id']}: {d['title']} ({d['date'] or 'undated'}, {d['hops']} hop(s))")
            for step in d["path"]:
                ev = step["evidence"]
                where = f"{ev['source']}:{ev['line']}" if ev.get("source") else "(written directly)"
                click.echo(f"  {where}: {ev.get('quote') or ''}")
                click.echo(f"      {step['from']} {step['rel']} {step['to']}")

    _emit(data, show)


@main.command()
@click.argument("target")
@_common
def hints(target: str) -> None:
    """Unconfirmed proposals touching TARGET, labelled as unconfirmed.

    \b
    Example:
      ontoloom hints rule:no-raw-control-bytes
    """
    shown = _value("hints", {"target": target})

    def show() -> None:
        for p in shown:
            if p["confidence"]:  # mined: hedged, labelled by confidence, never a fact
                what = (
                    f"{p['source']} may be a {p['target']}"
                    if p["rel"] == "a"
                    else f"perhaps {p['source']} {p['rel']} {p['target']}"
                )
                ev = p["evidence"]
                click.echo(
                    f"[unconfirmed, {p['confidence']} confidence, mined] {p['id']}: {what} "
                    f'— "{ev.get("quote", "")}" ({ev.get("transcript")}, {(ev.get("time") or "")[:10]})'
                )
                continue
            click.echo(
                f"[unconfirmed] {p['id']}: {p['source']} {p['rel']} {p['target']} ({p['origin']}, tier {p['tier']})"
            )
        if not shown:
            click.echo("no unconfirmed proposals")

    _emit(shown, show)


@main.group(invoke_without_command=True)
@click.pass_context
@_common
def links(ctx: click.Context) -> None:
    """The wikilink worklist: [[links]] in records waiting to be typed.

    \b
    Examples:
      ontoloom links
      ontoloom links type 3f2a9c1b0d4e mentions
      ontoloom links dismiss 3f2a9c1b0d4e
    """
    if ctx.invoked_subcommand is not None:
        return
    items = _value("links_list", {})

    def show() -> None:
        for item in items:
            click.echo(
                f"{item['id']}  {item['source']} → {item['target']}   {item['path']}:{item['line']}"
            )
            click.echo(f"    {item['sentence']}")
        if not items:
            click.echo("the worklist is empty")

    _emit(items, show)


@links.command(name="type")
@click.argument("candidate")
@click.argument("rel")
@_common
def links_type(candidate: str, rel: str) -> None:
    """Type a candidate as relation REL: it becomes a pending proposal.

    \b
    Example:
      ontoloom links type 3f2a9c1b0d4e mentions
    """
    p = _value("links_type", {"id": candidate, "rel": rel})
    _emit(p, f"proposed (pending): {p['source']} {p['rel']} {p['target']} [{p['id']}]")


@links.command(name="dismiss")
@click.argument("candidate")
@_common
def links_dismiss(candidate: str) -> None:
    """Dismiss a candidate (until its sentence is rewritten).

    \b
    Example:
      ontoloom links dismiss 3f2a9c1b0d4e
    """
    item = _value("links_dismiss", {"id": candidate})
    _emit(item, f"dismissed {item['id']}: {item['source']} → {item['target']}")


@main.command()
@click.option("--yes", is_flag=True, help="Remove what is listed (through the write path).")
@_common
def gc(yes: bool) -> None:
    """List relations and proposals whose endpoints vanished; remove them with --yes.

    \b
    Example:
      ontoloom gc && ontoloom gc --yes
    """
    garbage = _value("gc_apply" if yes else "gc", {})
    relations, proposals = garbage["relations"], garbage["proposals"]

    def show() -> None:
        for r in relations:
            click.echo(f"relation {r['from_id']} {r['rel']} {r['to_id']}")
        for p in proposals:
            click.echo(f"proposal {p['id']}: {p['source']} {p['rel']} {p['target']}")
        if not relations and not proposals:
            click.echo("nothing to collect")
        elif yes:
            click.echo(f"removed {len(relations)} relation(s) and {len(proposals)} proposal(s)")
        else:
            click.echo("(dry run: add --yes to remove them)")

    _emit(garbage, show)


# -- proposals and enrichment ------------------------------------------------------------------
@main.command()
@click.option(
    "--emit", "emit", is_flag=True, help="Write an extraction request for an agent to answer."
)
@click.option(
    "--ingest",
    "ingest",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    metavar="FILE|-",
    help="Check and store an agent's answer (a response JSON file, or - for stdin).",
)
@click.option(
    "--resolve-model", "resolve", is_flag=True, help="Print the model id for --role on --backend."
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="With --emit: at most this many items.",
)
@click.option(
    "--for", "for_target", metavar="TARGET", help="With --emit: only what is about TARGET."
)
@click.option(
    "-o",
    "--output",
    metavar="FILE|-",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    help="With --emit: write here (- is stdout).",
)
@click.option("--backend", type=click.Choice(["claude", "codex"]), help="With --resolve-model.")
@click.option(
    "--role", help="With --resolve-model: economy, standard, or one defined in ontoloom.toml."
)
@_common
def enrich(
    emit: bool,
    ingest: Path | None,
    resolve: bool,
    limit: int,
    for_target: str | None,
    output: Path | None,
    backend: str | None,
    role: str | None,
) -> None:
    """LLM enrichment without an LLM here: emit a request, ingest the agent's answer.

    Ingested candidates become tiered proposals (HIGH, MEDIUM, LOW; rejected when two models
    disagree) — never facts until a person confirms them. Forged or paraphrased quotes are
    dropped. Exit 0 when the file was processed, 2 when it is unreadable or breaks the schema.

    \b
    Examples:
      ontoloom enrich --emit --limit 20 -o request.json
      ontoloom enrich --ingest response.json --json
      ontoloom enrich --resolve-model --backend claude --role economy
    """
    chosen = [x for x in (emit, ingest is not None, resolve) if x]
    if len(chosen) != 1:
        raise click.UsageError("choose one of --emit, --ingest FILE, --resolve-model")
    # An option of another mode would be ignored: say so instead.
    from click.core import ParameterSource

    ctx = click.get_current_context()
    modes = {
        "--emit": (emit, {"limit": "--limit", "for_target": "--for", "output": "-o/--output"}),
        "--resolve-model": (resolve, {"backend": "--backend", "role": "--role"}),
    }
    for mode, (on, options) in modes.items():
        stray = [
            flag
            for name, flag in options.items()
            if not on and ctx.get_parameter_source(name) is not ParameterSource.DEFAULT
        ]
        if stray:
            raise click.UsageError(f"{', '.join(stray)}: used only with {mode}")
    if resolve:
        from ontoloom.config import load_config, resolve_data_dir
        from ontoloom.proposals.policy import resolve_model

        if not backend or not role:
            raise click.UsageError("--resolve-model needs --backend and --role")
        overrides = load_config(resolve_data_dir(_opts()["data_dir"])).raw.get("models")
        model = resolve_model(role, backend, overrides)
        _emit({"role": role, "backend": backend, "model": model}, model)
        return
    if emit:
        from ontoloom.egress import describe

        request = _value("enrich_emit", {"limit": limit, "for": for_target})
        text = json.dumps(request, indent=2, ensure_ascii=False)
        _write_document(output, text, f"{len(request['items'])} item(s)")
        click.echo(describe(request["withheld"]), err=True)
        return
    assert ingest is not None
    summary = _value("enrich_ingest", {"answer": _json_file(ingest)})

    def show() -> None:
        stored = summary["stored"]
        click.echo(
            f"{summary['candidates']} candidate(s): stored HIGH {stored['HIGH']}, MEDIUM {stored['MEDIUM']}, "
            f"LOW {stored['LOW']}, rejected {stored['rejected']}; dropped {summary['dropped']}; "
            f"refused {sum(summary['refused'].values())}; duplicate {sum(summary['duplicate'].values())}"
        )
        for o in summary["outcomes"]:
            detail = f" — {o['detail']}" if o.get("detail") else ""
            click.echo(
                f"  [{o['outcome']}:{o['reason']}] {o['source']} {o['relation']} {o['target']}{detail}"
            )

    _emit(summary, show)


@main.group(invoke_without_command=True)
@click.option(
    "--scan",
    "do_scan",
    is_flag=True,
    help="Request extraction of closed transcripts not yet mined.",
)
@click.option(
    "--emit", "do_emit", is_flag=True, help="Print (or -o) the request document for the agent."
)
@click.option(
    "--ingest",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Check and store the agent's answer (a response JSON file, or - for stdin).",
)
@click.option("--review", "do_review", is_flag=True, help="List mined proposals with confidence.")
@click.option("--confirm", "confirm_id", metavar="ID", help="Confirm a mined proposal.")
@click.option("--reject", "reject_id", metavar="ID", help="Reject a mined proposal.")
@click.option("--reason", help="With --reject (or --correct): why.")
@click.option(
    "--correct", "correct_id", metavar="ID", help="Object to mined knowledge: its confidence drops."
)
@click.option(
    "--write-record", "do_write", is_flag=True, help="Rewrite records/ontoloom/conversations.md."
)
@click.option(
    "--cross-vendor-egress",
    "cross_vendor",
    is_flag=True,
    default=None,
    help="With --ingest: honour a second model's verdicts on what passes the egress gate; "
    "with --emit: write the verification request (only triples and quotes).",
)
@click.option(
    "--limit",
    type=int,
    default=20,
    show_default=True,
    help="With --scan/--emit: at most N transcripts.",
)
@click.option(
    "--status",
    type=click.Choice(["pending", "confirmed", "rejected", "all"]),
    default="pending",
    show_default=True,
    help="With --review.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --emit: write here.",
)
@click.pass_context
@_common
def mine(
    ctx: click.Context,
    do_scan: bool,
    do_emit: bool,
    ingest: Path | None,
    do_review: bool,
    confirm_id: str | None,
    reject_id: str | None,
    reason: str | None,
    correct_id: str | None,
    do_write: bool,
    cross_vendor: bool | None,
    limit: int,
    status: str,
    output: Path | None,
) -> None:
    """Mine closed conversation transcripts for proposals (opt-in: [mining] enabled = true).

    Agent-mediated, as `enrich`: scan/emit write extraction requests, the agent answers,
    ingest checks every quote against its transcript and stores proposals (LOW, or MEDIUM at
    most), review lists them, confirm/reject decide. Confirmed knowledge is written to
    records/ontoloom/conversations.md, which `rebuild` reads back. With mining off, scan and
    emit record "skipped: off by design" (exit 0). Exit 2 on bad input.

    The mode flags (--scan, --emit, --ingest FILE, --review, --confirm ID…) still work, for
    this release, as the subcommands of the same names.

    \b
    Examples:
      ontoloom mine scan --limit 5
      ontoloom mine emit -o request.json
      ontoloom mine ingest response.json --json
      ontoloom mine review
      ontoloom mine confirm 1a2b3c4d5e6f
    """
    if ctx.invoked_subcommand is not None:
        return

    chosen = [
        x
        for x in (
            do_scan,
            do_emit,
            ingest is not None,
            do_review,
            confirm_id,
            reject_id,
            correct_id,
            do_write,
        )
        if x
    ]
    if len(chosen) != 1:
        raise click.UsageError(
            "choose one of scan, emit, ingest FILE, review, confirm ID, reject ID, correct ID, "
            "write-record (`ontoloom mine --help`)"
        )
    if limit < 0:
        raise click.UsageError("--limit must be 0 or more")
    if do_scan:
        _mine_scan(limit)
    elif do_emit and cross_vendor:
        _mine_verification(output)
    elif do_emit:
        _mine_emit(limit, output)
    elif ingest is not None:
        _mine_ingest(ingest, cross_vendor)
    elif do_review:
        _mine_review(status)
    elif confirm_id:
        _mine_confirm(confirm_id)
    elif reject_id:
        _mine_reject(reject_id, reason)
    elif correct_id:
        _mine_correct(correct_id, reason)
    else:
        _mine_write_record()


_LIMIT = click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="At most N transcripts.",
)
_REASON = click.option("--reason", help="Why (kept with it).")


@mine.command(name="scan")
@_LIMIT
@_common
def mine_scan(limit: int) -> None:
    """Request extraction of closed transcripts not yet mined.

    \b
    Example:
      ontoloom mine scan --limit 5
    """
    _mine_scan(limit)


@mine.command(name="emit")
@_LIMIT
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write here.")
@click.option(
    "--cross-vendor-egress",
    "cross_vendor",
    is_flag=True,
    help="Write the verification request instead (only triples and quotes).",
)
@_common
def mine_emit(limit: int, output: Path | None, cross_vendor: bool) -> None:
    """Print (or -o) the request document for the agent.

    \b
    Example:
      ontoloom mine emit -o request.json
    """
    if cross_vendor:
        _mine_verification(output)
    else:
        _mine_emit(limit, output)


@mine.command(name="ingest")
@click.argument("file", metavar="FILE|-", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--cross-vendor-egress",
    "cross_vendor",
    is_flag=True,
    default=None,
    help="Honour a second model's verdicts on what passes the egress gate.",
)
@_common
def mine_ingest(file: Path, cross_vendor: bool | None) -> None:
    """Check and store the agent's answer (a response JSON file, or - for stdin).

    \b
    Example:
      ontoloom mine ingest response.json --json
    """
    _mine_ingest(file, cross_vendor)


@mine.command(name="review")
@click.option(
    "--status",
    type=click.Choice(["pending", "confirmed", "rejected", "all"]),
    default="pending",
    show_default=True,
)
@_common
def mine_review(status: str) -> None:
    """List mined proposals with their confidence.

    \b
    Example:
      ontoloom mine review --status all
    """
    _mine_review(status)


@mine.command(name="confirm")
@click.argument("proposal_id", metavar="ID")
@_common
def mine_confirm(proposal_id: str) -> None:
    """Confirm a mined proposal.

    \b
    Example:
      ontoloom mine confirm 1a2b3c4d5e6f
    """
    _mine_confirm(proposal_id)


@mine.command(name="reject")
@click.argument("proposal_id", metavar="ID")
@_REASON
@_common
def mine_reject(proposal_id: str, reason: str | None) -> None:
    """Reject a mined proposal.

    \b
    Example:
      ontoloom mine reject 1a2b3c4d5e6f --reason "not said"
    """
    _mine_reject(proposal_id, reason)


@mine.command(name="correct")
@click.argument("proposal_id", metavar="ID")
@_REASON
@_common
def mine_correct(proposal_id: str, reason: str | None) -> None:
    """Object to mined knowledge: its confidence drops.

    \b
    Example:
      ontoloom mine correct 1a2b3c4d5e6f --reason "outdated"
    """
    _mine_correct(proposal_id, reason)


@mine.command(name="write-record")
@_common
def mine_write_record() -> None:
    """Rewrite records/ontoloom/conversations.md from the confirmed mined knowledge.

    \b
    Example:
      ontoloom mine write-record
    """
    _mine_write_record()


def _mine_scan(limit: int) -> None:
    from ontoloom.proposals import mine as mining

    result = _value("mine_scan", {"limit": limit})

    def show_scan() -> None:
        if result["state"] == "skipped":
            click.echo(f"mining {mining.SKIPPED}: set [mining] enabled = true in ontoloom.toml")
            return
        click.echo(
            f"{result['transcripts']} transcript(s): requested {len(result['requested'])}, "
            f"already mined {result['already_mined']}, requested earlier "
            f"{result['requested_earlier']}, still open {result['open']}, deferred "
            f"{result['deferred']}, failed {len(result['failed'])}"
            + (
                f"; edited {len(result['edited'])}, purged {result['purged']}"
                if result["edited"]
                else ""
            )
        )
        for path in result["files"]:
            click.echo(f"  request: {path}")
        for failure in result["failed"]:
            click.echo(f"  failed: {failure}", err=True)

    _emit(result, show_scan)


def _mine_verification(output: Path | None) -> None:
    document = _value("mine_verification", {})
    text = json.dumps(document, indent=2, ensure_ascii=False)
    _write_document(output, text, f"{len(document['items'])} item(s)")
    click.echo(
        f"egress: {len(document['items'])} released, {document['withheld']['withheld']} withheld "
        f"{document['withheld']['reasons'] or ''}",
        err=True,
    )


def _mine_emit(limit: int, output: Path | None) -> None:
    from ontoloom.proposals import mine as mining

    document = _value("mine_emit", {"limit": limit})
    text = json.dumps(document, indent=2, ensure_ascii=False)
    if document["state"] == "skipped":
        click.echo(
            f"mining {mining.SKIPPED}: set [mining] enabled = true in ontoloom.toml", err=True
        )
    _write_document(output, text, f"{len(document['requests'])} request(s)")


def _mine_ingest(ingest: Path, cross_vendor: bool | None) -> None:
    answer = _json_file(ingest)
    summary = _value("mine_ingest", {"answer": answer, "cross_vendor": cross_vendor})

    def show_ingest() -> None:
        stored = summary["stored"]
        click.echo(
            f"{summary['candidates']} candidate(s): stored MEDIUM {stored['MEDIUM']}, LOW "
            f"{stored['LOW']}, rejected {stored['rejected']}; dropped {summary['dropped']} "
            f"{summary['dropped_by_reason'] or ''}; refused {summary['refused']}; merges "
            f"{summary['merged']}; corroborated {summary['corroborated']}; duplicate "
            f"{summary['duplicate']}; demoted {summary['demoted']}"
        )
        click.echo(f"watermark: {summary['watermark']}")
        for o in summary["outcomes"]:
            what = (
                f"{o.get('type')} {o.get('title')!r}"
                if o["kind"] in ("object", "merge") and "type" in o
                else f"{o.get('source')} {o.get('relation')} {o.get('target')}"
            )
            detail = f" — {o['detail']}" if o.get("detail") else ""
            click.echo(f"  [{o['outcome']}:{o['reason']}] {what}{detail}")

    _emit(summary, show_ingest)


def _mine_review(status: str) -> None:
    found = _value("mine_review", {"status": status})

    def show_review() -> None:
        if not found:
            click.echo("no mined proposals")
        for p in found:
            label = "unconfirmed" if p["status"] == "pending" else p["status"]
            what = (
                f'new {p["target"]} {p["source"]} "{p["properties"].get("title")}"'
                if p["kind"] == "object"
                else f'merge "{p["properties"].get("mention")}" into {p["source"]}'
                if p["kind"] == "merge"
                else f"{p['source']} {p['rel']} {p['target']}"
            )
            ev = p["evidence"]
            click.echo(
                f"{p['id']}  [{label}, {p['confidence']} confidence, {p['tier']}, "
                f"{p['corroboration']} transcript(s)] {what}"
            )
            click.echo(
                f'    "{ev.get("quote")}" — {ev.get("transcript")} #{ev.get("message")} ({p["date"] or "no date"})'
            )

    _emit(found, show_review)


def _mine_confirm(confirm_id: str) -> None:
    result = _value("mine_confirm", {"id": confirm_id})
    p = result["proposal"]
    record = result["record"]
    text = ("already confirmed: " if result["already"] else "confirmed: ") + (
        f"{p['source']} {p['rel']} {p['target']}"
    )
    if record and record["written"]:
        text += f"\nwritten to {record['path']}"
    _emit(result, text)


def _mine_reject(reject_id: str, reason: str | None) -> None:
    result = _value("mine_reject", {"id": reject_id, "reason": reason})
    _emit(result, ("already rejected " if result["already"] else "rejected ") + reject_id)


def _mine_correct(correct_id: str, reason: str | None) -> None:
    result = _value("mine_correct", {"id": correct_id, "reason": reason})
    _emit(result, f"corrected {correct_id}: confidence now {result['confidence']}")


def _mine_write_record() -> None:
    record = _value("mine_write_record", {})
    _emit(record, f"{'wrote' if record['written'] else 'unchanged'}: {record['path']}")


def _proposal_line(p: dict[str, Any]) -> str:
    label = "unconfirmed" if p["status"] == "pending" else p["status"]
    return (
        f"{p['id']}  [{label}, {p['tier']}] {p['source']} {p['rel']} {p['target']}  ({p['origin']})"
    )


@main.group(invoke_without_command=True)
@click.option(
    "--status",
    type=click.Choice(["pending", "confirmed", "rejected", "all"]),
    default="pending",
    show_default=True,
)
@click.option("--tier", type=click.Choice(["HIGH", "MEDIUM", "LOW", "rejected"]))
@click.pass_context
@_common
def proposals(ctx: click.Context, status: str, tier: str | None) -> None:
    """Review proposals: list them, show one, confirm or reject.

    \b
    Examples:
      ontoloom proposals --status pending --tier HIGH
      ontoloom proposals confirm 1a2b3c4d5e6f
    """
    if ctx.invoked_subcommand is not None:
        return
    found = _value("proposals_list", {"status": status, "tier": tier})
    _emit(found, lambda: click.echo("\n".join(map(_proposal_line, found)) or "no proposals"))


@proposals.command(name="show")
@click.argument("proposal_id", metavar="ID")
@_common
def proposals_show(proposal_id: str) -> None:
    """Show one proposal with its evidence.

    \b
    Example:
      ontoloom proposals show 1a2b3c4d5e6f
    """
    p = _value("proposals_show", {"id": proposal_id})

    def show() -> None:
        click.echo(_proposal_line(p))
        for key, value in (p.get("evidence") or {}).items():
            click.echo(f"  {key}: {value}")

    _emit(p, show)


@proposals.command(name="confirm")
@click.argument("proposal_id", metavar="ID")
@_common
def proposals_confirm(proposal_id: str) -> None:
    """Confirm a proposal: validated, into the confirmed graph, written back to its record.

    Idempotent: confirming a confirmed proposal says so and exits 0. The record is replaced
    whole (never cut short); if writing it fails after the confirmation was stored, the
    writeback stays pending and the next `proposals` or `rebuild` command finishes it.

    \b
    Example:
      ontoloom proposals confirm 1a2b3c4d5e6f
    """
    result = _value("proposals_confirm", {"id": proposal_id})
    _recovered(result["recovered"])

    def show() -> None:
        p = result["proposal"]
        if result["already"]:
            click.echo(f"already confirmed: {p['source']} {p['rel']} {p['target']} (nothing to do)")
            return
        click.echo(f"confirmed: {p['source']} {p['rel']} {p['target']}")
        wb = result["writeback"]
        if wb and wb["written"]:
            click.echo(f"written back to {wb['path']}")
        elif wb and wb["pending"]:
            click.echo(f"not yet written back to {wb['path']}: {wb['reason']}", err=True)
        elif wb:
            click.echo(f"not written back to {wb['path']}: {wb['reason']}")

    _emit(result, show)


@proposals.command(name="reject")
@click.argument("proposal_id", metavar="ID")
@click.option("--reason", help="Why (kept with the proposal).")
@_common
def proposals_reject(proposal_id: str, reason: str | None) -> None:
    """Reject a proposal; it is remembered and never proposed again.

    Idempotent: rejecting a rejected proposal says so and exits 0 (its first reason stays);
    a confirmed proposal cannot be rejected (exit 2).

    \b
    Example:
      ontoloom proposals reject 1a2b3c4d5e6f --reason "not what the sentence says"
    """
    result = _value("proposals_reject", {"id": proposal_id, "reason": reason})
    _recovered(result["recovered"])
    pid = result["id"]
    _emit(
        result,
        f"already rejected {pid} (nothing to do)" if result["already"] else f"rejected {pid}",
    )


def _recovered(messages: list[str]) -> None:
    """What the command finished (or dropped) that an interrupted confirmation left."""
    for message in messages:
        click.echo(f"note: {message}", err=True)


# -- the viewer --------------------------------------------------------------------------------
@main.command()
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The file to write (FILE.html, or FILE.json with --format json; default "
    "ontoloom-view.html or .json); - writes to stdout.",
)
@click.option("--focus", metavar="ID", help="Show this object (id, slug, title or alias) first.")
@click.option(
    "--depth",
    type=click.IntRange(0, 10),
    default=None,
    help="With --focus: show what lies within N relations of it first (default 1).",
)
@click.option(
    "--type",
    "types",
    multiple=True,
    metavar="T",
    help="Only objects of this type (and its subtypes); repeatable.",
)
@click.option(
    "--include-private",
    is_flag=True,
    help='Show private objects in full (by default each is shown only as "private").',
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["html", "json"]),
    default="html",
    show_default=True,
    help="html: the page; json: the data it draws.",
)
@click.option(
    "--3d",
    "three_d",
    is_flag=True,
    help="Open in 3D (WebGL2); the file then carries both drawings and a 2D/3D "
    "switch (about 90 kB more).",
)
@_common
def view(
    output: Path | None,
    focus: str | None,
    depth: int | None,
    types: tuple[str, ...],
    include_private: bool,
    fmt: str,
    three_d: bool,
) -> None:
    """Write the graph as one self-contained HTML file that works offline.

    A force-directed drawing coloured by type, with a legend, a search box (ids, titles,
    aliases), type and relation filters and a details panel (properties, relations with
    their evidence, privacy class, expand neighbours). Pending proposals are drawn dashed and
    labelled unconfirmed. Private objects appear only as "private" unless --include-private.
    --3d draws the same data in 3D (WebGL), with a switch back to 2D on the page.

    \b
    Examples:
      ontoloom view -o graph.html
      ontoloom view --3d -o graph3d.html
      ontoloom view --focus rule:no-raw-control-bytes --depth 2 --type Rule --type Decision
    """
    from ontoloom.view import render_page

    if depth is not None and focus is None:
        raise BadInput("--depth N goes with --focus ID: it says how far from ID to show first")
    if three_d and fmt != "html":
        raise BadInput("--3d says how the page draws the graph; --format json writes no page")
    output = output or Path(f"ontoloom-view.{fmt}")
    suffixes = {"html": (".html", ".htm"), "json": (".json",)}[fmt]
    if str(output) != "-" and output.suffix.lower() not in suffixes:
        # a page written under another name opens as text (or not at all): say so instead
        named = " or ".join(f"FILE{x}" for x in suffixes)
        raise BadInput(
            f"-o {output}: --format {fmt} writes {fmt.upper()}, so the file is {named} "
            "(or - for standard output)"
        )
    data = _value(
        "view_data",
        {
            "focus": focus,
            "depth": 1 if depth is None else depth,
            "types": list(types),
            "include_private": include_private,
        },
    )
    if fmt == "html":
        text = render_page("view", data, mode="3d" if three_d else "2d")
    else:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    meta = data["meta"]
    if str(output) == "-":
        click.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise BadInput(
            f"cannot write {output}: {exc.strerror or exc}; choose another file with -o"
        ) from None
    report = {
        "path": str(output),
        "format": fmt,
        "drawing": ("3d" if three_d else "2d") if fmt == "html" else None,
        "bytes": len(text.encode("utf-8")),
        "nodes": meta["nodes"],
        "links": meta["links"],
        "unconfirmed": meta["unconfirmed"],
        "private_hidden": meta["private_hidden"],
    }
    hidden = (
        f'; {meta["private_hidden"]} private object(s) shown only as "private"'
        if meta["private_hidden"]
        else ""
    )
    _emit(
        report,
        f"wrote {output}: {meta['nodes']} objects, {meta['links']} relations "
        f"({meta['unconfirmed']} unconfirmed){hidden}",
    )


# -- agent integration: MCP server, Claude Code hooks, install ---------------------------------
@main.command()
@click.option(
    "--http",
    is_flag=True,
    help="Serve MCP over streamable HTTP at /mcp/ instead of stdio: `ontoloom serve` (its API "
    "and SPARQL endpoint too, the same bearer token).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="With --http: address.")
@click.option(
    "--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="With --http."
)
@click.option(
    "--skill",
    "skill_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="SKILL.md",
    help="Bind the session to this skill's contract (its frontmatter's ontology: reads, "
    "writes): only those types are offered, and a call beyond them is refused.",
)
@_common
def mcp(http: bool, host: str, port: int, skill_file: Path | None) -> None:
    """Serve the graph to an agent over MCP (stdio): typed tools and memory-server tools.

    The first server of a data dir becomes its owner: it keeps the store open and the CLI,
    hooks and other servers work through it (see the README's Concurrency section).
    With --skill, the session is bound to that skill's contract; a SKILL.md without a valid
    ontology: block is refused at start (exit 2, with its file and line).

    \b
    Example (an MCP client's config):
      {"mcpServers": {"ontoloom": {"command": "ontoloom", "args": ["mcp"]}}}
      ontoloom mcp --http --port 8765   # MCP at http://127.0.0.1:8765/mcp/
      ontoloom mcp --skill .claude/skills/triage/SKILL.md
    """
    ctx = click.get_current_context()
    given = [
        name
        for name in ("host", "port")
        if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT
    ]
    if given and not http:
        raise click.UsageError(f"--{given[0]} is for --http: without it the server speaks stdio")
    if http and skill_file is not None:
        raise click.UsageError(
            "--skill binds a stdio session; over HTTP each caller's scope is its token's: "
            "`ontoloom token add NAME --reads … --writes …`"
        )
    scope = None
    if skill_file is not None:
        from ontoloom.ops import Scope
        from ontoloom.skills import check_types, read_contract

        contract = read_contract(skill_file)
        check_types(contract, _schema_types())
        scope = Scope.of_contract(contract)
    if http:
        from ontoloom.config import resolve_data_dir
        from ontoloom.serve import serve as run

        with contextlib.suppress(Stopped):  # a signal is how a server ends: exit 0
            run(resolve_data_dir(_opts()["data_dir"]), host, port)
        return
    from ontoloom.mcp_server import serve

    try:
        serve(_opts()["data_dir"], scope)
    except Stopped:  # how a server ends, as when stdin closes: exit 0
        # All is closed (the store flushed, the owner's socket gone); only the thread reading
        # stdin may still wait there, and the interpreter would wait for it at exit.
        sys.stdout.flush()
        os._exit(0)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--ui",
    is_flag=True,
    help="Also serve the graph view and the review page at /ui/ (same token).",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="Also answer requests for this host name (besides IPs and localhost); repeatable.",
)
@_common
def serve(host: str, port: int, ui: bool, allow_hosts: tuple[str, ...]) -> None:
    """Serve the graph over HTTP: MCP at /mcp, SPARQL (read-only) at /sparql, JSON at /api/TOOL.

    GET /api is the OpenAPI 3.1 document of the tools; GET / lists the endpoints.
    Every request needs `Authorization: Bearer TOKEN`: ONTOLOOM_TOKEN, else the data dir's
    serve.token (made 0600 on first start). Listens on loopback unless --host says otherwise,
    and refuses a non-loopback address without a token set up beforehand.

    \b
    Example:
      ontoloom serve --port 8765 &
      curl -H "Authorization: Bearer $(cat .ontoloom/serve.token)" \\
           -d '{"query": "payment"}' http://127.0.0.1:8765/api/search
      ontoloom serve --ui   # then open http://127.0.0.1:8765/ui/ and give the token
    """
    from ontoloom.config import resolve_data_dir
    from ontoloom.serve import serve as run

    with contextlib.suppress(Stopped):  # a signal is how a server ends: exit 0
        run(resolve_data_dir(_opts()["data_dir"]), host, port, ui=ui, allow_hosts=allow_hosts)


def _schema_types() -> list[str]:
    """The types of the live schema: the store's (where it is open: here or in its owner),
    else the shipped one's, which a new store starts with."""
    from ontoloom.errors import NoStore

    try:
        return [t["type"] for t in _value("schema_list", {})["types"]]
    except NoStore:
        from ontoloom.schema import Schema

        return sorted(Schema.load().types)


def _type_option(values: tuple[str, ...]) -> list[str] | str:
    """``--reads``/``--writes`` values: repeated or comma-separated type names, or "*"."""
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    return "*" if names == ["*"] else names


@main.command()
@click.argument("folders", nargs=-1, type=click.Path(path_type=Path))
@_common
def skills(folders: tuple[Path, ...]) -> None:
    """Print the coordination map of the skills: which skill writes each type, which read it,
    the types read that no skill writes, and those written that no other skill reads.

    Reads every SKILL.md under FOLDERS (default: the project's and the user's
    .claude/skills). A skill without an ontology: block makes no claim and is only counted;
    a malformed block, or one naming a type the schema lacks, is reported as FILE:LINE and
    the command exits 2 (after printing the map of the rest).

    \b
    Examples:
      ontoloom skills
      ontoloom skills examples/skills --json
    """
    from ontoloom.install import skill_folders
    from ontoloom.skills import coordination_map, find_skill_files

    for folder in folders:
        if not folder.exists():
            raise BadInput(f"{folder}: no such folder")
    where = list(folders) or skill_folders()
    found = coordination_map(find_skill_files(where), _schema_types())
    data = found.to_json()

    def text() -> None:
        if not found.skills:
            shown = ", ".join(str(w) for w in where)
            click.echo(f"no skill declares an ontology: block under {shown}")
        else:
            rows = [
                [t, ", ".join(who["writers"]) or "-", ", ".join(who["readers"]) or "-"]
                for t, who in found.types.items()
            ]
            _print_table(["type", "written by", "read by"], rows)
            click.echo("")
            click.echo(f"read, written by no skill: {', '.join(found.unwritten) or 'none'}")
            click.echo(f"written, read by no other skill: {', '.join(found.unread) or 'none'}")
        if found.undeclared:
            click.echo(f"{len(found.undeclared)} skill(s) without an ontology: block (no claim)")

    _emit(data, text)
    for error in found.malformed:
        click.echo(f"error: {error.message}", err=True)
    if found.malformed:
        sys.exit(2)


@main.group()
def token() -> None:
    """Scoped bearer tokens for `ontoloom serve` and `ontoloom mcp --http`: each reads and
    writes only the types it was made for (403 beyond them); the server's own token still
    does everything. Stored as a SHA-256 hash in the data dir's tokens.json (0600)."""


@token.command(name="add")
@click.argument("name")
@click.option(
    "--reads", multiple=True, metavar="TYPE", help='Types it reads (repeat, or a,b; "*": all).'
)
@click.option(
    "--writes", multiple=True, metavar="TYPE", help='Types it writes, and so reads ("*": all).'
)
@_common
def token_add(name: str, reads: tuple[str, ...], writes: tuple[str, ...]) -> None:
    """Make a token named NAME and print it, once: it is kept only as a hash.

    \b
    Example:
      ontoloom token add triage --reads Project --writes Task
    """
    arguments = {"name": name, "reads": _type_option(reads), "writes": _type_option(writes)}
    data = _value("token_add", arguments)

    def text() -> None:
        click.echo(data["token"])
        click.echo(
            f"token {name!r} reads {_types_text(data['reads'])} and writes "
            f"{_types_text(data['writes'])}: shown this once (only its hash is kept); send it "
            "as Authorization: Bearer TOKEN",
            err=True,
        )

    _emit(data, text)


def _types_text(types: list[str] | str) -> str:
    return "every type" if types == "*" else (", ".join(types) or "no type")


@token.command(name="list")
@_common
def token_list() -> None:
    """The tokens: their names and types (never the token).

    \b
    Example:
      ontoloom token list
    """
    data = _value("token_list", {})

    def text() -> None:
        if not data:
            click.echo("no tokens: `ontoloom token add NAME --reads … --writes …` makes one")
            return
        rows = [
            [t["name"], _types_text(t["reads"]), _types_text(t["writes"]), t["created"]]
            for t in data
        ]
        _print_table(["name", "reads", "writes", "created"], rows)

    _emit(data, text)


@token.command(name="revoke")
@click.argument("name")
@_common
def token_revoke(name: str) -> None:
    """Revoke the token NAME: it stops working at once (401).

    \b
    Example:
      ontoloom token revoke triage
    """
    data = _value("token_revoke", {"name": name})
    _emit(data, f"revoked token {name!r}")


@main.group()
def hook() -> None:
    """Claude Code hooks: JSON on stdin, context on stdout; silent (exit 0) on any failure."""


@hook.command(name="prompt-context")
@_common
def hook_prompt_context() -> None:
    """UserPromptSubmit: facts the prompt points at (objects, relations, failures, proposals).

    \b
    Example:
      echo '{"prompt": "the payment timeout is back"}' | ontoloom hook prompt-context
    """
    from ontoloom.hooks import prompt_context

    prompt_context(sys.stdin, sys.stdout, _opts()["data_dir"])


@hook.command(name="session-start")
@_common
def hook_session_start() -> None:
    """SessionStart: one status line, or a cue to run `ontoloom rebuild`.

    \b
    Example:
      echo '{}' | ontoloom hook session-start
    """
    from ontoloom.hooks import session_start

    session_start(sys.stdin, sys.stdout, _opts()["data_dir"])


@main.group()
def install() -> None:
    """Wire ontoloom into an agent: its MCP server (and hooks), and its instructions."""


_PROJECT_FILES = {
    "claude-code": (
        ".claude/settings.json, .mcp.json and .claude/skills/ontoloom/SKILL.md",
        "~/.claude/settings.json, ~/.claude.json and ~/.claude/skills/ontoloom/SKILL.md",
    ),
    "cursor": (".cursor/mcp.json and .cursor/rules/ontoloom.mdc", "~/.cursor/mcp.json"),
    "codex": (".codex/config.toml and AGENTS.md", "~/.codex/config.toml and ~/.codex/AGENTS.md"),
    "gemini": (
        ".gemini/settings.json and GEMINI.md",
        "~/.gemini/settings.json and ~/.gemini/GEMINI.md",
    ),
    "opencode": (
        "opencode.json and AGENTS.md",
        "~/.config/opencode/opencode.json and ~/.config/opencode/AGENTS.md",
    ),
}
_SUMMARIES = {
    "claude-code": "Add the MCP server, both hooks and the skill to Claude Code (merged, idempotent).",
    "cursor": "Add the MCP server and a rule with the instructions to Cursor (merged, idempotent).",
    "codex": "Add the MCP server to Codex CLI's config.toml and the instructions to AGENTS.md.",
    "gemini": "Add the MCP server to Gemini CLI's settings.json and the instructions to GEMINI.md.",
    "opencode": "Add the MCP server to OpenCode's opencode.json and the instructions to AGENTS.md.",
}


def _install_command(client: str) -> None:
    project_files, global_files = _PROJECT_FILES[client]

    @click.option(
        "--project", "project", is_flag=True, help=f"This project: {project_files} (default)."
    )
    @click.option("--global", "global_", is_flag=True, help=f"Every project: {global_files}.")
    @click.option("--dry-run", is_flag=True, help="Print the diff; change nothing.")
    @_common
    def command(project: bool, global_: bool, dry_run: bool) -> None:
        from ontoloom.install import install as run_install
        from ontoloom.skill import live_schema, skill_text

        if project and global_:
            # Two flags for one choice: the last one must not silently win (it writes to $HOME).
            raise click.UsageError("--project and --global exclude each other: give one")
        scope = "global" if global_ else "project"
        skill = skill_text(live_schema(_opts()["data_dir"]))
        result = run_install(client, scope=scope, dry_run=dry_run, skill=skill)
        _emit(result.to_json(), result.text)

    command.__doc__ = (
        f"{_SUMMARIES[client]}\n\n    \b\n    Examples:\n"
        f"      ontoloom install {client} --dry-run\n      ontoloom install {client} --global\n"
    )
    install.command(name=client)(command)


for _client in _PROJECT_FILES:
    _install_command(_client)


@install.command(name="claude-desktop")
@click.option("--dry-run", is_flag=True, help="Print the diff; change nothing.")
@_common
def install_claude_desktop(dry_run: bool) -> None:
    """Add the MCP server to Claude Desktop's claude_desktop_config.json (one per user).

    Inside an instance, the server entry gets ONTOLOOM_HOME set to that instance's data dir:
    Claude Desktop starts servers outside any project.

    \b
    Examples:
      ontoloom install claude-desktop --dry-run
    """
    from ontoloom.install import install as run_install
    from ontoloom.skill import live_schema, skill_text

    skill = skill_text(live_schema(_opts()["data_dir"]))
    result = run_install("claude-desktop", scope="global", dry_run=dry_run, skill=skill)
    _emit(result.to_json(), result.text)


@main.command()
@click.option("--plain", is_flag=True, help="Without the skill frontmatter (name, description).")
@_common
def skill(plain: bool) -> None:
    """Print the instructions for agents: what the tools are for, how refusals read, the schema
    in brief — generated from the live schema (the store's, else the shipped one).

    \b
    Examples:
      ontoloom skill > .claude/skills/ontoloom/SKILL.md
      ontoloom skill --plain
    """
    from ontoloom.schema import Schema
    from ontoloom.skill import skill_text
    from ontoloom.store import exists

    if exists(_data_dir()):  # the store's schema, else the shipped one a new store starts with
        text = _value("skill", {"plain": plain})["skill"]
    else:
        text = skill_text(Schema.load(), frontmatter=not plain)
    _emit({"skill": text}, text.rstrip("\n"))
