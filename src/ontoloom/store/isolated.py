"""A read query under a deadline: it runs in a child process, killed when time is up.

pyoxigraph 0.5 cannot cancel a running query: Oxigraph's cancellation token (oxigraph PR
#1409) reaches its Rust API and HTTP server only, not Python (oxigraph issue #1926), and a
``Store.query`` call takes no timeout. A query left running in a thread cannot be stopped
either, and it would go on reading the store after the lock is released, while a writer may
open it — undefined behaviour. So the query runs in a child process
(:mod:`ontoloom.store.query_child`) that opens the store read-only under the caller's lock;
at the deadline the parent kills it and waits for it to end, and only then may the caller
release the lock. Should the parent die first, the child still holds the lock (inherited on
POSIX, its own on Windows) and ends itself a little after the deadline.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from ontoloom.errors import (
    BadInput,
    Busy,
    Internal,
    NoStore,
    OntoloomError,
    ParseError,
    QueryTimeout,
)
from ontoloom.store.journal import StoreDirs
from ontoloom.terms import Literal, NamedNode, Quad, RdfFormat, Term, serialize

__all__ = ["parse_rows", "run_isolated", "syntax_error"]

_CHILD = Path(__file__).with_name("query_child.py")


def run_isolated(
    data_dir: Path,
    sparql: str,
    bindings: Mapping[str, Term] | None,
    format_name: str,
    *,
    timeout: float,
    lock_fd: int | None,
    dataset: Iterable[Quad] | None = None,
    prefixes: Mapping[str, str] | None = None,
) -> tuple[str, bytes]:
    """Run a read query over the store of ``data_dir`` — or, given ``dataset``, over those
    quads alone — in a child process, with ``prefixes`` declared for its parser (its own
    PREFIX lines add to them); return (kind, results) as
    :meth:`~ontoloom.store.embedded.EmbeddedBackend.serialize_results` does. The caller
    holds the data dir's lock, whose descriptor is ``lock_fd``, until this returns.

    :raises QueryTimeout: when it runs longer than ``timeout`` seconds (it is then stopped).
    :raises ParseError: a syntax error, shown at its line and column with a caret.
    :raises BadInput: an error while evaluating the query.
    :raises NoStore, Busy: as opening the store would.
    """
    deadline = time.monotonic() + timeout
    inherit = lock_fd is not None and os.name == "posix"
    with ExitStack() as stack:
        request: dict[str, Any] = {
            "data_dir": str(data_dir),
            "store": str(StoreDirs(data_dir).live()),
            "dataset": None,
            "sparql": sparql,
            "prefixes": dict(prefixes or {}),
            "bindings": {k: _term_json(v) for k, v in (bindings or {}).items()},
            "format": format_name,
            "timeout": timeout,
            "lock_fd": lock_fd if inherit else None,
        }
        if dataset is not None:
            handle = stack.enter_context(
                tempfile.NamedTemporaryFile("wb", suffix=".nq", delete=False)
            )
            stack.callback(os.unlink, handle.name)
            serialize(dataset, handle, RdfFormat.N_QUADS)
            handle.close()
            request.update(store=None, dataset=handle.name)
        fds = (lock_fd,) if inherit and lock_fd is not None else ()
        out = _spawn(json.dumps(request).encode("utf-8"), deadline, timeout, fds)
    header, _, payload = out.partition(b"\n")
    answer = json.loads(header)
    if answer.get("error") == "syntax":
        raise syntax_error(sparql, answer["message"])
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


def _spawn(request: bytes, deadline: float, timeout: float, fds: tuple[int, ...]) -> bytes:
    # -P: the script's directory (this package's) must not shadow modules on sys.path. On
    # Windows the child imports this package for its lock: point it at the copy we run from.
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    proc = subprocess.Popen(
        [sys.executable, "-P", str(_CHILD)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        pass_fds=fds,
    )
    try:
        out, err = proc.communicate(request, timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()  # SIGKILL / TerminateProcess; communicate() waits until it is gone
        proc.communicate()
        raise QueryTimeout(f"the query ran longer than {timeout:g} s and was stopped") from None
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    if not out.startswith(b"{"):
        detail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise Internal(
            f"the query process ended unexpectedly (exit {proc.returncode}): {detail[0]}"
        )
    return out


_AT = re.compile(r"error at (\d+):(\d+):\s*(.*)", re.DOTALL)


def syntax_error(sparql: str, message: str) -> ParseError:
    """Oxigraph's syntax error (``error at LINE:COLUMN: expected one of …``) as the line of
    the query it is on, with a caret under the column, instead of the grammar's list of
    what it expected there (a dump of character classes that says little to a person).

    >>> print(syntax_error("SELECT * {\\n  ?s ?p ?o FOO }", "error at 2:17: expected …").message)
    SPARQL syntax error at line 2, column 17:
      ?s ?p ?o FOO }
                    ^
    """
    found = _AT.match(message)
    if found is None:
        return ParseError(f"SPARQL syntax error: {message.splitlines()[0] if message else ''}")
    line, column, expected = int(found[1]), int(found[2]), found[3]
    lines = sparql.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    # The caret lines up under tabs too: copy them, make every other character a space.
    pad = "".join(c if c == "\t" else " " for c in text[: max(column - 1, 0)])
    parts = [f"SPARQL syntax error at line {line}, column {column}:", text, pad + "^"]
    if "Prefix not found" in expected:
        name = re.search(r"([A-Za-z][\w.-]*)?:[^\s:]*$", text[: max(column - 1, 0)])
        which = f"the prefix {name[1] or ''}:" if name else "a prefix"
        parts.append(f"{which} is not declared: add a PREFIX line for it")
    error = ParseError("\n  ".join(parts))
    error.line, error.column = line, column
    return error


def _term_json(term: Term) -> dict[str, str]:
    if isinstance(term, NamedNode):
        return {"iri": term.value}
    if isinstance(term, Literal):
        if term.language:
            return {"value": term.value, "language": term.language}
        return {"value": term.value, "datatype": term.datatype.value}
    raise BadInput(f"cannot bind a query variable to {term}")


def _error(kind: str, message: str) -> OntoloomError:
    known: dict[str, type[OntoloomError]] = {
        "busy": Busy,
        "no_store": NoStore,
        "bad_input": BadInput,
    }
    if kind in known:
        return known[kind](message)
    return BadInput(f"cannot run the query: {message}")
