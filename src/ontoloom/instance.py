"""Instances: a folder marked by ontoloom.toml, with its data dir."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ontoloom.config import DATA_DIR_NAME, INSTANCE_MARKER, resolve_data_dir
from ontoloom.errors import BadInput
from ontoloom.locate import owner_alive
from ontoloom.store import describe_store, initialised, open_backend, probe_endpoint

__all__ = ["init_instance"]

TEMPLATE = """\
# ontoloom instance (every key is optional; defaults shown)
[records]
failures  = "records/failures"
decisions = "records/decisions"
memory    = "records/memory"
runbooks  = "records/runbooks"

# [[documents]]
# root = "docs"
# privacy = "internal"
"""


def init_instance(
    directory: Path,
    data_dir: Path | None = None,
    *,
    endpoint: str | None = None,
    update_endpoint: str | None = None,
    graph_store: str | None = None,
) -> dict[str, Any]:
    """Mark ``directory`` as an instance and create its store; idempotent.

    ``endpoint`` (and ``update_endpoint``, when updates go elsewhere; ``graph_store``, its
    Graph Store Protocol service): keep the graph in that SPARQL 1.1 store, written to
    ``[store]`` in ontoloom.toml."""
    directory = directory.resolve()
    if directory.exists() and not directory.is_dir():
        raise BadInput(f"{directory} is a file, not a directory")
    target = resolve_data_dir(data_dir) if data_dir else None
    if target is None:
        import os

        target = (
            Path(os.environ["ONTOLOOM_HOME"]).resolve()
            if os.environ.get("ONTOLOOM_HOME")
            else (directory / DATA_DIR_NAME)
        )
    marker = directory / INSTANCE_MARKER
    # A failed init leaves the directory as it was: what it made goes, the marker is put back.
    made = [m for m in map(_first_missing, (directory, target)) if m is not None]
    marker_before = marker.read_bytes() if marker.exists() else None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if marker_before is None:
            marker.write_text(TEMPLATE, encoding="utf-8")
        found: dict[str, Any] | None = None
        if endpoint is not None:
            _set_endpoint(marker, endpoint, update_endpoint, graph_store)
            found = _record_probe(marker, target)
        elif update_endpoint is not None or graph_store is not None:
            option = "--update-endpoint" if update_endpoint is not None else "--graph-store"
            raise BadInput(f"{option} goes with --endpoint (the query endpoint)")
        created = not initialised(target)
        if created or not owner_alive(target):  # an owner keeps an existing store open
            with open_backend(target, write=True, create=True):
                pass
    except BaseException:
        _undo(made, marker, marker_before)
        raise
    gitignore = directory / ".gitignore"
    if target.parent == directory and not gitignore.exists():
        gitignore.write_text(f"{DATA_DIR_NAME}/\n", encoding="utf-8")
    result: dict[str, Any] = {"instance": str(directory), "data_dir": str(target)}
    result["created"] = created
    if found is not None:
        result["store"] = describe_store(target)
    return result


# Written by `init` from what it found the store to be, not by hand: a second `init` with the
# same URLs finds them again.
_PROBED = ("default_graph", "engine", "gaps")


def _record_probe(marker: Path, data_dir: Path) -> dict[str, Any]:
    """Ask the endpoint what it is and write that into ``[store]`` (keeping the file's
    comments and layout)."""
    import tomlkit

    found = probe_endpoint(data_dir)
    doc = tomlkit.parse(marker.read_text(encoding="utf-8"))
    table: Any = doc["store"]
    table["default_graph"] = found["default_graph"]
    if found["engine"]:
        table["engine"] = found["engine"]
    else:
        table.pop("engine", None)
    table["gaps"] = found["gaps"]
    marker.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return found


def _first_missing(path: Path) -> Path | None:
    """The outermost directory of ``path`` that does not exist yet (None: it exists)."""
    if path.exists():
        return None
    while not path.parent.exists():
        path = path.parent
    return path


def _undo(made: list[Path], marker: Path, marker_before: bytes | None) -> None:
    """Put a directory back as an init that failed found it: the marker as it was (or
    none), and the directories it made (the instance, the data dir) gone."""
    import shutil

    if marker_before is not None:
        marker.write_bytes(marker_before)
    else:
        marker.unlink(missing_ok=True)
    for path in made:
        shutil.rmtree(path, ignore_errors=True)


def _set_endpoint(
    marker: Path, endpoint: str, update_endpoint: str | None, graph_store: str | None
) -> None:
    """Write ``[store]`` into ontoloom.toml; the same endpoint again changes nothing, another
    one is refused (moving a graph is export, then import)."""
    import tomllib

    from ontoloom.store.endpoint import EndpointConfig

    table = {"endpoint": endpoint, "update_endpoint": update_endpoint or endpoint}
    if graph_store is not None:
        table["graph_store"] = graph_store
    EndpointConfig.from_table(table, "--endpoint")  # the URLs are checked before anything
    raw = tomllib.loads(marker.read_text(encoding="utf-8"))
    current = raw.get("store")
    if current is not None:
        held = {
            **{k: v for k, v in current.items() if k not in _PROBED},
            "update_endpoint": current.get("update_endpoint", current.get("endpoint")),
        }
        if graph_store is None:  # not given again: the one already named stays
            held.pop("graph_store", None)
        if held == table:
            return
        raise BadInput(
            f"{marker} already names a store ({current.get('endpoint')}); an instance keeps one "
            "store: move its graph with `ontoloom export` and `ontoloom import` into a new instance"
        )
    text = marker.read_text(encoding="utf-8")
    text += (
        "\n# The graph lives in this SPARQL 1.1 store (credentials: ONTOLOOM_ENDPOINT_TOKEN, or\n"
        "# ONTOLOOM_ENDPOINT_USER and ONTOLOOM_ENDPOINT_PASSWORD, or .ontoloom/endpoint.credentials)\n"
        f"[store]\nendpoint = {json.dumps(endpoint)}\n"
        f"update_endpoint = {json.dumps(update_endpoint or endpoint)}\n"
        + (f"graph_store = {json.dumps(graph_store)}\n" if graph_store is not None else "")
    )
    marker.write_text(text, encoding="utf-8")
