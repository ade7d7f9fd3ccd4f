"""The ``ontoloom`` command line: parse options, call :mod:`ontoloom.api`, format output.

Exit codes: 0 ok · 1 refused by validation (report printed) · 2 usage error, no store,
unknown id, bad input, busy. Never a traceback.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ontoloom.errors import BadInput, OntoloomError, ValidationFailed

__all__ = ["main"]

_INT = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?\d+\.\d+$")


# -- shared options and error handling -------------------------------------------------------
def _common(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--data-dir`` and ``--json`` on every command (they also work before the command)."""
    f = click.option(
        "--json", "as_json", is_flag=True, default=None, help="Machine-readable JSON output."
    )(f)
    f = click.option(
        "--data-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Data dir (default: ONTOLOOM_HOME, else the enclosing instance's .ontoloom/).",
    )(f)

    @functools.wraps(f)
    def wrapper(*args: Any, data_dir: Path | None, as_json: bool | None, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        root = ctx.find_root().obj or {}
        ctx.obj = {
            "data_dir": data_dir or root.get("data_dir"),
            "json": bool(as_json if as_json is not None else root.get("json")),
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


def _emit(data: Any, text: Callable[[], None] | str) -> None:
    if _opts()["json"]:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    elif callable(text):
        text()
    else:
        click.echo(text)


def _graph(write: bool = False, create: bool = False):
    from ontoloom.api import Graph

    return Graph.open(_opts()["data_dir"], write=write, create=create)


def parse_value(text: str) -> Any:
    """A ``-p`` value: JSON literals (numbers, booleans, null, lists) or else a string.

    >>> parse_value("3"), parse_value("1.5"), parse_value("true"), parse_value("open")
    (3, 1.5, True, 'open')
    >>> parse_value('["a", "b"]')
    ['a', 'b']
    """
    if text in ("true", "false", "null") or _INT.match(text) or _FLOAT.match(text):
        return json.loads(text)
    if text.startswith("["):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text
    return text


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
        value = parse_value(raw)
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
        except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit):
            raise
        except Exception as exc:  # the last line of defence: never a traceback
            click.echo(f"error: unexpected {type(exc).__name__}: {exc}", err=True)
            sys.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Data dir (default: ONTOLOOM_HOME, else the enclosing instance's .ontoloom/).",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
@click.version_option(package_name="ontoloom")
@click.pass_context
def main(ctx: click.Context, data_dir: Path | None, as_json: bool) -> None:
    """ontoloom: a typed, validated knowledge graph shared by agents and people.

    \b
    Example:
      ontoloom init && ontoloom create Task -p title="Ship it" -p status=open
    """
    ctx.obj = {"data_dir": data_dir, "json": as_json}


# -- instance ----------------------------------------------------------------------------------
@main.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@_common
def init(directory: Path | None) -> None:
    """Make DIRECTORY (default: here) an ontoloom instance with an empty store.

    \b
    Example:
      ontoloom init my-team
    """
    from ontoloom.instance import init_instance

    result = init_instance(directory or Path.cwd(), _opts()["data_dir"])
    _emit(
        result,
        f"{'initialised' if result['created'] else 'already initialised'}: {result['data_dir']}",
    )


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


@main.command()
@click.argument("type_name", metavar="TYPE")
@click.option("--id", "entity_id", help="Use this id instead of a generated one.")
@_PROPS
@_PROPS_JSON
@_common
def create(
    type_name: str, entity_id: str | None, pairs: tuple[str, ...], props_json: str | None
) -> None:
    """Create an entity of TYPE (validated before it is stored).

    \b
    Example:
      ontoloom create Task -p title="Fix payment timeout" -p status=open -p priority=high
    """
    props = parse_properties(pairs, props_json)
    with _graph(write=True, create=True) as g:
        entity = g.create(type_name, props, id=entity_id)
    _emit(entity.to_json(), f"created {entity.id} ({entity.type})")


@main.command()
@click.argument("entity_id", metavar="ID")
@_common
def get(entity_id: str) -> None:
    """Show an entity with its outgoing and incoming relations.

    \b
    Example:
      ontoloom get task_a1b2c3d4 --json
    """
    with _graph() as g:
        entity = g.get(entity_id)
        relations = g.relations(entity_id)
    out = [r for r in relations if r.from_id == entity_id]
    inc = [r for r in relations if r.from_id != entity_id]
    data = entity.to_json()
    data["relations"] = {
        "outgoing": [r.to_json() for r in out],
        "incoming": [r.to_json() for r in inc],
    }

    def text() -> None:
        click.echo(f"{entity.id} ({entity.type})")
        for key, value in entity.properties.items():
            click.echo(f"  {key}: {json.dumps(value, ensure_ascii=False)}")
        for r in out:
            click.echo(f"  → {r.rel} {r.to_id} ({r.to_type})")
        for r in inc:
            click.echo(f"  ← {r.rel} {r.from_id} ({r.from_type})")

    _emit(data, text)


@main.command()
@click.argument("entity_id", metavar="ID")
@_PROPS
@_PROPS_JSON
@click.option(
    "--unset", "unset", multiple=True, metavar="KEY", help="Remove a property; repeat it."
)
@_common
def update(
    entity_id: str, pairs: tuple[str, ...], props_json: str | None, unset: tuple[str, ...]
) -> None:
    """Set or unset properties of an entity (each set replaces the previous values).

    \b
    Example:
      ontoloom update task_a1b2c3d4 -p status=done --unset priority
    """
    props = parse_properties(pairs, props_json)
    if not props and not unset:
        raise BadInput("nothing to change: give -p KEY=VALUE, --props JSON or --unset KEY")
    with _graph(write=True) as g:
        entity = g.update(entity_id, props, unset)
    _emit(entity.to_json(), f"updated {entity.id}")


@main.command()
@click.argument("entity_id", metavar="ID")
@_common
def delete(entity_id: str) -> None:
    """Delete an entity and every relation touching it, in one atomic step.

    \b
    Example:
      ontoloom delete task_a1b2c3d4
    """
    with _graph(write=True) as g:
        entity, relations = g.delete(entity_id)
    data = {"deleted": entity.to_json(), "relations_removed": [r.to_json() for r in relations]}
    _emit(data, f"deleted {entity.id} ({entity.type}) and {len(relations)} relation(s)")


# -- relations ---------------------------------------------------------------------------------
@main.command()
@click.argument("from_id", metavar="FROM")
@click.argument("rel", metavar="REL")
@click.argument("to_id", metavar="TO")
@_common
def relate(from_id: str, rel: str, to_id: str) -> None:
    """Relate FROM to TO by REL (checked: types, cardinality, cycles).

    A many_to_one relation replaces FROM's previous one, and says so.

    \b
    Example:
      ontoloom relate task_a1b2c3d4 blocks task_e5f6a7b8
    """
    with _graph(write=True) as g:
        outcome = g.relate(from_id, rel, to_id)

    def text() -> None:
        verb = "related" if outcome.created else "already related"
        click.echo(f"{verb}: {from_id} {rel} {to_id}")
        for old in outcome.replaced:
            click.echo(f"replaced: {old.from_id} {old.rel} {old.to_id}")

    _emit(outcome.to_json(), text)


@main.command()
@click.argument("from_id", metavar="FROM")
@click.argument("rel", metavar="REL")
@click.argument("to_id", metavar="TO")
@_common
def unrelate(from_id: str, rel: str, to_id: str) -> None:
    """Remove the relation FROM REL TO.

    \b
    Example:
      ontoloom unrelate task_a1b2c3d4 blocks task_e5f6a7b8
    """
    with _graph(write=True) as g:
        relation = g.unrelate(from_id, rel, to_id)
    _emit(relation.to_json(), f"unrelated: {from_id} {rel} {to_id}")


@main.command()
@click.argument("entity_id", metavar="ID")
@click.option("--rel", help="Only this relation.")
@click.option(
    "--direction", type=click.Choice(["out", "in", "both"]), default="both", show_default=True
)
@_common
def relations(entity_id: str, rel: str | None, direction: str) -> None:
    """List the relations of an entity.

    \b
    Example:
      ontoloom relations proj_a1b2c3d4 --rel has_task --direction out
    """
    with _graph() as g:
        found = g.relations(entity_id, rel, direction)

    def text() -> None:
        for r in found:
            click.echo(f"{r.from_id} ({r.from_type}) {r.rel} {r.to_id} ({r.to_type})")
        if not found:
            click.echo("no relations")

    _emit([r.to_json() for r in found], text)


@main.command()
@click.argument("entity_id", metavar="ID")
@click.option("--rel", help="Follow only this relation.")
@click.option("--direction", type=click.Choice(["out", "in"]), default="out", show_default=True)
@click.option(
    "--depth", type=click.IntRange(1, 5), default=1, show_default=True, help="Hops (1-5)."
)
@_common
def traverse(entity_id: str, rel: str | None, direction: str, depth: int) -> None:
    """Everything reachable from an entity within DEPTH hops, with distance and path.

    \b
    Example:
      ontoloom traverse task_a1b2c3d4 --rel blocks --depth 3
    """
    with _graph() as g:
        found = g.traverse(entity_id, rel, direction, depth)

    def text() -> None:
        for r in found:
            steps = "".join(
                f" -{rel}-> {node}" for rel, node in zip(r["rels"], r["path"][1:], strict=True)
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
@_common
def list_(type_name: str | None, where: tuple[str, ...]) -> None:
    """List entities, optionally by type and property values.

    \b
    Example:
      ontoloom list --type Task --where status=open
    """
    filters = parse_properties(where, None, option="--where")
    with _graph() as g:
        found = g.entities(type_name, filters)

    def text() -> None:
        for e in found:
            click.echo(f"{e.id}  {e.type:<12} {e.label}")
        click.echo(f"{len(found)} entit{'y' if len(found) == 1 else 'ies'}")

    _emit([e.to_json() for e in found], text)


# -- demo --------------------------------------------------------------------------------------
@main.command()
@click.option(
    "--keep",
    type=click.Path(file_okay=False, path_type=Path),
    help="Build the demo here and keep it.",
)
@_common
def demo(keep: Path | None) -> None:
    """Build the bundled example instance and show what validation refuses.

    \b
    Example:
      ontoloom demo
    """
    from ontoloom.demo import run_demo

    run_demo(keep, echo=click.echo)
