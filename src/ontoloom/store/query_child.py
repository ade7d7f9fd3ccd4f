"""The child process of :mod:`ontoloom.store.isolated`: answer one read query, then exit.

It runs as a script (``python -P query_child.py``), not as part of the package: a query's
wall time includes starting this process, so on POSIX it imports nothing but the standard
library and pyoxigraph (the package's imports cost more than the query). It reads under its
parent's lock: the lock file's descriptor is inherited, and a ``flock`` belongs to the open
file, so the lock lasts while either process lives. Windows locks are not inherited: there
it takes its own shared lock.

Request (JSON on stdin): data_dir, store (a path, or null with ``dataset``: an N-Quads file
loaded into memory instead), sparql, prefixes (name → IRI, declared for the parser as
Oxigraph's ``prefixes`` argument; the query's own PREFIX lines add to them), bindings,
format, timeout, lock_fd. Answer (stdout): a
JSON header line, ``{"kind": …}`` or ``{"error": …, "message": …}``, then the results.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from io import BytesIO
from typing import Any

import pyoxigraph

_GRACE = 5.0  # seconds past the deadline after which an orphaned child ends itself
_NOT_PROJECTED = "does not contains variable"
_RESULTS = {
    "json": pyoxigraph.QueryResultsFormat.JSON,
    "csv": pyoxigraph.QueryResultsFormat.CSV,
    "tsv": pyoxigraph.QueryResultsFormat.TSV,
    "xml": pyoxigraph.QueryResultsFormat.XML,
}
_GRAPHS = {"ntriples": pyoxigraph.RdfFormat.N_TRIPLES, "nquads": pyoxigraph.RdfFormat.N_QUADS}
# What Store.query's substitutions take (its stub: RDF-star triples included).
_Bound = pyoxigraph.NamedNode | pyoxigraph.BlankNode | pyoxigraph.Literal | pyoxigraph.Triple


def main() -> None:
    request = json.loads(sys.stdin.buffer.read())
    # Should the parent die before it can kill us, end a little after the deadline anyway.
    watchdog = threading.Timer(float(request["timeout"]) + _GRACE, os._exit, args=(3,))
    watchdog.daemon = True
    watchdog.start()
    out = sys.stdout.buffer
    try:
        kind, payload = _answer(request)
    except SyntaxError as exc:  # the parent shows where, with the query's own line
        out.write(_header(error="syntax", message=str(exc)))
    except (RuntimeError, OSError, ValueError) as exc:
        out.write(_header(error="query", message=str(exc)))
    except Exception as exc:  # an OntoloomError (Busy, …) of the Windows lock
        out.write(_header(error=getattr(exc, "kind", "query"), message=str(exc)))
    else:
        out.write(_header(kind=kind) + payload)
    out.flush()
    os._exit(0)  # no interpreter teardown: the store goes with the process


def _header(**fields: str) -> bytes:
    return json.dumps(fields).encode("utf-8") + b"\n"


def _answer(request: dict[str, Any]) -> tuple[str, bytes]:
    if request["lock_fd"] is None and request["store"] is not None:
        from pathlib import Path

        from ontoloom.store.lock import DataDirLock

        lock = DataDirLock(Path(request["data_dir"]), exclusive=False, wait=request["timeout"])
        lock.acquire()  # released when the process ends
    if request["store"] is not None:
        store = pyoxigraph.Store.read_only(request["store"])
    else:
        store = pyoxigraph.Store()
        store.bulk_load(path=request["dataset"], format=pyoxigraph.RdfFormat.N_QUADS)
    terms = {k: _term(v) for k, v in request["bindings"].items()}
    bindings: dict[pyoxigraph.Variable, _Bound] = {
        pyoxigraph.Variable(k): v for k, v in terms.items()
    }
    sparql = request["sparql"]
    prefixes = request.get("prefixes") or None
    try:
        result = store.query(
            sparql, use_default_graph_as_union=True, substitutions=bindings, prefixes=prefixes
        )
    except RuntimeError as exc:
        if _NOT_PROJECTED not in str(exc) or not bindings:
            raise
        # Oxigraph substitutes only projected variables: the values open the WHERE group
        # instead, as for an endpoint, so its FILTERs see them (a VALUES after the group
        # would join after they ran, and a FILTER on an unbound variable drops every row).
        from ontoloom.store.endpoint import with_values

        result = store.query(
            with_values(sparql, terms), use_default_graph_as_union=True, prefixes=prefixes
        )
    out = BytesIO()
    if isinstance(result, pyoxigraph.QueryBoolean | pyoxigraph.QuerySolutions):
        result.serialize(out, _RESULTS.get(request["format"], pyoxigraph.QueryResultsFormat.JSON))
        return ("ask" if isinstance(result, pyoxigraph.QueryBoolean) else "select"), out.getvalue()
    pyoxigraph.serialize(result, out, _GRAPHS.get(request["format"], pyoxigraph.RdfFormat.TURTLE))
    return "graph", out.getvalue()


def _term(data: dict[str, str]) -> pyoxigraph.NamedNode | pyoxigraph.Literal:
    if "iri" in data:
        return pyoxigraph.NamedNode(data["iri"])
    if "language" in data:
        return pyoxigraph.Literal(data["value"], language=data["language"])
    return pyoxigraph.Literal(data["value"], datatype=pyoxigraph.NamedNode(data["datatype"]))


if __name__ == "__main__":
    main()
