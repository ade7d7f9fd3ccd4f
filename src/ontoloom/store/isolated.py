"""A read query under a deadline: it runs in a child process, killed when time is up.

pyoxigraph 0.5 cannot cancel a running query: Oxigraph's cancellation token (oxigraph PR
#1409) reaches its Rust API and HTTP server only, not Python (oxigraph issue #1926), and a
``Store.query`` call takes no timeout. A query left running in a thread cannot be stopped
either, and it would go on reading the store after the lock is released, while a writer may
open it — undefined behaviour. So the query runs in a child process that opens the store
read-only under its own shared lock; at the deadline the parent kills it, which closes its
store and releases its lock, and raises :class:`~ontoloom.errors.QueryTimeout`. Should the
parent die first, the child ends itself a little after the deadline.

The child speaks one request (JSON on stdin) and one answer (a JSON header line on stdout,
then the serialised results).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from ontoloom.errors import BadInput, Busy, NoStore, OntoloomError, QueryTimeout
from ontoloom.store.terms import Literal, NamedNode, Quad, RdfFormat, Term, serialize

__all__ = ["parse_rows", "run_isolated"]

_GRACE = 5.0  # seconds past the deadline after which an orphaned child ends itself
_NOT_PROJECTED = "does not contains variable"


def run_isolated(
    data_dir: Path,
    sparql: str,
    bindings: Mapping[str, Term] | None,
    format_name: str,
    *,
    timeout: float,
    extra: Iterable[Quad] = (),
) -> tuple[str, bytes]:
    """Run a read query over the store of ``data_dir`` (and the ``extra`` quads, if any, as if
    stored) in a child process; return (kind, results) as
    :meth:`~ontoloom.store.embedded.EmbeddedBackend.serialize_results` does.

    :raises QueryTimeout: when it runs longer than ``timeout`` seconds (it is then stopped).
    :raises BadInput: a syntax error, or an error while evaluating the query.
    :raises NoStore, Busy: as opening the store would.
    """
    deadline = time.monotonic() + timeout
    with ExitStack() as stack:
        extra_file = None
        extra = list(extra)
        if extra:
            handle = stack.enter_context(
                tempfile.NamedTemporaryFile("wb", suffix=".nq", delete=False)
            )
            stack.callback(os.unlink, handle.name)
            serialize(extra, handle, RdfFormat.N_QUADS)
            handle.close()
            extra_file = handle.name
        request = {
            "data_dir": str(data_dir),
            "sparql": sparql,
            "bindings": {k: _term_json(v) for k, v in (bindings or {}).items()},
            "format": format_name,
            "timeout": timeout,
            "extra": extra_file,
        }
        out = _spawn(json.dumps(request).encode("utf-8"), deadline, timeout)
    header, _, payload = out.partition(b"\n")
    answer = json.loads(header)
    if "error" in answer:
        raise _error(answer["error"], answer["message"])
    return answer["kind"], payload


def parse_rows(results: bytes) -> list[dict[str, Any]]:
    """SPARQL JSON results (of a SELECT) as rows of terms."""
    import pyoxigraph

    solutions = pyoxigraph.parse_query_results(results, format=pyoxigraph.QueryResultsFormat.JSON)
    assert isinstance(solutions, pyoxigraph.QuerySolutions)
    names = [v.value for v in solutions.variables]
    return [{name: solution[name] for name in names} for solution in solutions]


def _spawn(request: bytes, deadline: float, timeout: float) -> bytes:
    # The child imports this very package: point it at the copy we run from.
    package_root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    proc = subprocess.Popen(
        [sys.executable, "-c", "from ontoloom.store.isolated import main; main()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        out, err = proc.communicate(request, timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()  # SIGKILL / TerminateProcess: its store closes, its lock is released
        proc.communicate()
        raise QueryTimeout(f"the query ran longer than {timeout:g} s and was stopped") from None
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    if not out.startswith(b"{"):
        detail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise OntoloomError(
            f"the query process ended unexpectedly (exit {proc.returncode}): {detail[0]}"
        )
    return out


def _term_json(term: Term) -> dict[str, str]:
    if isinstance(term, NamedNode):
        return {"iri": term.value}
    if isinstance(term, Literal):
        if term.language:
            return {"value": term.value, "language": term.language}
        return {"value": term.value, "datatype": term.datatype.value}
    raise BadInput(f"cannot bind a query variable to {term}")


def _term_of(data: dict[str, str]) -> Term:
    if "iri" in data:
        return NamedNode(data["iri"])
    if "language" in data:
        return Literal(data["value"], language=data["language"])
    return Literal(data["value"], datatype=NamedNode(data["datatype"]))


def _error(kind: str, message: str) -> OntoloomError:
    known: dict[str, type[OntoloomError]] = {"busy": Busy, "no_store": NoStore}
    if kind in known:
        return known[kind](message)
    if kind == "bad_input":
        return BadInput(message)
    return BadInput(f"cannot run the query: {message}")


# -- the child -----------------------------------------------------------------------------
def main() -> None:
    """The child: read the request, answer it, exit."""
    request = json.loads(sys.stdin.buffer.read())
    # Should the parent die before it can kill us, end a little after the deadline anyway.
    watchdog = threading.Timer(float(request["timeout"]) + _GRACE, os._exit, args=(3,))
    watchdog.daemon = True
    watchdog.start()
    out = sys.stdout.buffer
    try:
        kind, payload = _answer(request)
    except OntoloomError as exc:
        out.write(json.dumps({"error": exc.kind, "message": exc.message}).encode() + b"\n")
    except (RuntimeError, OSError, ValueError) as exc:
        out.write(json.dumps({"error": "query", "message": str(exc)}).encode() + b"\n")
    else:
        out.write(json.dumps({"kind": kind}).encode() + b"\n")
        out.write(payload)
    out.flush()
    os._exit(0)  # no interpreter teardown: the store handle goes with the process


def _answer(request: dict[str, Any]) -> tuple[str, bytes]:
    from ontoloom.store import open_backend
    from ontoloom.store.embedded import EmbeddedBackend
    from ontoloom.store.rdfio import read_quads
    from ontoloom.vocab import META

    bindings = {k: _term_of(v) for k, v in request["bindings"].items()}
    sparql, fmt = request["sparql"], request["format"]
    with open_backend(Path(request["data_dir"]), write=False, wait=request["timeout"]) as backend:
        target = backend
        if request["extra"]:
            extra = read_quads(path=request["extra"], format_name="nquads")
            stored = (q for q in backend.quads() if q.graph_name != META)
            target = EmbeddedBackend.scratch([*stored, *extra])
        try:
            return target.serialize_results(sparql, bindings or None, fmt)
        except RuntimeError as exc:
            if _NOT_PROJECTED not in str(exc) or not bindings:
                raise
            # Oxigraph substitutes only projected variables: join the values instead.
            values = " ".join(f"VALUES ?{k} {{ {t} }}" for k, t in bindings.items())
            return target.serialize_results(f"{sparql}\n{values}", None, fmt)
