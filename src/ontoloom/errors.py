"""The exceptions ontoloom raises, and the exit code each front end maps them to.

    OntoloomError                 base; ``exit_code`` 2 unless a subclass says otherwise
    ├── BadInput                  malformed ids, properties, JSON, files (2)
    │   └── ParseError            RDF or record syntax error, with file:line:column (2)
    ├── NotFound                  an id, relation or named query that does not exist (2)
    ├── NoStore                   no data dir where one was expected (2)
    ├── Busy                      another process holds the data dir's lock (2)
    ├── UnsupportedQuery          a SPARQL update sent to a read-only entry point, or a
    │                             SERVICE call ontoloom.toml does not allow (2)
    ├── QueryTimeout              a query ran past its deadline and was stopped (2)
    ├── OutcomeUnknown            whether a write committed cannot be told now; carries its
    │                             write id, asked later with ``ontoloom status --write`` (4)
    ├── Forbidden                 outside a skill's contract or a token's scope (2, HTTP 403)
    └── ValidationFailed          a write broke a rule; carries the report; nothing stored (1)

    Stopped (a SystemExit)        SIGTERM or SIGINT: the command unwinds, 128 + the signal

Every message says what went wrong, where, and how to fix it. What a kind of error means to
each front end — the CLI's exit code, the HTTP status, and (for every one of them) an MCP tool
error — is one table, :data:`OUTCOMES`, keyed on the error's kind.
"""

from __future__ import annotations

from typing import Any

from ontoloom.findings import Finding, refusal_json
from ontoloom.secret_text import redact

__all__ = [
    "OUTCOMES",
    "BadInput",
    "Busy",
    "Forbidden",
    "NoStore",
    "NotFound",
    "OntoloomError",
    "OutcomeUnknown",
    "ParseError",
    "QueryTimeout",
    "Stopped",
    "UnsupportedQuery",
    "ValidationFailed",
    "revive",
]

#: An error's kind (its JSON ``"error"``) → (CLI exit code, HTTP status). Every front end
#: reads this one table; a kind that is not here is an internal error (2, 500).
OUTCOMES: dict[str, tuple[int, int]] = {
    "validation": (1, 422),  # refused by a rule, nothing stored
    "bad_input": (2, 400),
    "parse": (2, 400),
    "not_found": (2, 404),
    "no_store": (2, 404),
    "unsupported_query": (2, 400),
    "busy": (2, 503),
    "unauthorised": (2, 401),  # an HTTP request without the server's bearer token
    # outside a skill's contract or a scoped token's types (nothing stored), or a request
    # under a host name the server does not answer to
    "forbidden": (2, 403),
    "method_not_allowed": (2, 405),  # an HTTP method the path does not take (Allow says which)
    "not_acceptable": (2, 406),  # an Accept header no answer of the query can meet
    "timeout": (2, 504),
    "owner_gone": (2, 502),
    # a write whose commit cannot be told from its absence now (the store unreachable after
    # the request went out): never "refused", never retried; asked later by its write id
    "outcome_unknown": (4, 504),
    "read_only": (2, 409),  # a write through a graph or store opened for reading
    "storage": (2, 500),  # a file of the data dir that cannot be opened, locked or written
    "internal": (2, 500),
    # a signal stopped the command (Stopped, not an OntoloomError): Ctrl-C (SIGINT) exits 130,
    # SIGTERM 143 (128 + the signal); an import, rebuild or reindex stopped so leaves the
    # store as it was (or whole, once committed) and says which on stderr ("stopped: …")
    "stopped": (130, 503),
}


class OntoloomError(Exception):
    """Base of every error ontoloom raises on purpose; each is raised as one of the kinds
    below, so that its JSON names what went wrong (the base itself says ``internal``)."""

    kind = "internal"

    def __init__(self, message: str) -> None:
        # A message may quote what was given (a query, a file's line, a name): never a secret.
        message = redact(message)
        super().__init__(message)
        self.message = message

    @property
    def exit_code(self) -> int:
        return OUTCOMES.get(self.kind, OUTCOMES["internal"])[0]

    @property
    def http_status(self) -> int:
        return OUTCOMES.get(self.kind, OUTCOMES["internal"])[1]

    def to_json(self) -> dict[str, Any]:
        return {"error": self.kind, "message": self.message}


class BadInput(OntoloomError):
    kind = "bad_input"


class ParseError(BadInput):
    """A syntax error in a file, located as ``file:line:column``."""

    kind = "parse"

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        where = ":".join(str(part) for part in (file, line, column) if part is not None)
        super().__init__(f"{where}: {message}" if where else message)
        self.file, self.line, self.column = file, line, column


class NotFound(OntoloomError):
    kind = "not_found"


class NoStore(OntoloomError):
    kind = "no_store"


class Busy(OntoloomError):
    kind = "busy"


class OwnerTookOver(Busy):
    """A live owner holds the lock this process waits for (it took the data dir over, or
    was there first): it keeps the lock, so waiting on is pointless; nothing was done."""


class CommitConflict(Busy):
    """Another writer committed between a delta's validation and its commit: validate
    again against the new state and retry."""


class UnsupportedQuery(OntoloomError):
    kind = "unsupported_query"


class QueryTimeout(OntoloomError):
    kind = "timeout"


class Forbidden(OntoloomError):
    """A call outside the caller's scope (a skill's contract, a scoped token): refused
    before anything ran, naming the scope and the type."""

    kind = "forbidden"


class ValidationFailed(OntoloomError):
    """A write was refused; ``findings`` say what broke and how to fix it."""

    kind = "validation"

    def __init__(self, findings: list[Finding], summary: str | None = None) -> None:
        self.findings = findings
        lines = [summary or f"refused: {len(findings)} rule(s) broken; nothing was stored"]
        lines += [f"  - {f.describe()}" for f in findings]
        super().__init__("\n".join(lines))

    def to_json(self) -> dict[str, Any]:
        return refusal_json(self.findings, self.message)


class OwnerGone(OntoloomError):
    """The owner took a request and died before answering: it may have been applied."""

    kind = "owner_gone"


class OutcomeUnknown(OntoloomError):
    """A write went out and whether it committed cannot be told now (the store stopped
    answering): it was neither refused nor retried. ``write_id`` names it, for
    ``ontoloom status --write ID`` once the store answers."""

    kind = "outcome_unknown"

    def __init__(self, message: str, write_id: str) -> None:
        self.write_id = write_id
        super().__init__(
            f"{message}; whether write {write_id} was committed is unknown: it was not "
            f"retried — ask later with `ontoloom status --write {write_id}`"
        )

    def to_json(self) -> dict[str, Any]:
        return {"error": self.kind, "message": self.message, "write_id": self.write_id}


class ReadOnly(OntoloomError):
    """A write through a graph or store opened for reading: nothing was stored."""

    kind = "read_only"


class StorageError(OntoloomError):
    """A file of the data dir that cannot be opened, locked or written."""

    kind = "storage"


class Internal(OntoloomError):
    """A bug met while doing the work (reported, never a traceback)."""

    kind = "internal"


class _Revived:
    """An error another process reported as JSON, raised here as the same kind, its JSON
    kept as reported (a refusal's whole report)."""

    payload: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return dict(self.payload)


def _kinds() -> dict[str, type[OntoloomError]]:
    found: dict[str, type[OntoloomError]] = {}
    todo: list[type[OntoloomError]] = [OntoloomError]
    while todo:
        cls = todo.pop()
        found.setdefault(cls.kind, cls)  # the most general class of a kind
        todo.extend(cls.__subclasses__())
    return found


def revive(payload: dict[str, Any]) -> OntoloomError:
    """The error an answer's JSON reports (``{"error": kind, "message": …}``), as its class.

    >>> revive({"error": "not_found", "message": "no entity with id x"}).exit_code
    2
    >>> type(revive({"error": "validation", "message": "refused", "results": []})).__name__
    'ValidationFailed'
    """
    kind = str(payload.get("error") or "internal")
    base = _kinds().get(kind, Internal)
    revived: type[Any] = type(base.__name__, (_Revived, base), {"kind": kind})
    error: Any = Exception.__new__(revived)
    OntoloomError.__init__(error, str(payload.get("message", "")))
    error.payload = payload
    if isinstance(error, ValidationFailed):
        error.findings = [Finding(**r) for r in payload.get("results", [])]
    if isinstance(error, OutcomeUnknown):
        error.write_id = str(payload.get("write_id", ""))
    revived_error: OntoloomError = error
    return revived_error


class Stopped(SystemExit):
    """A signal asked the process to stop (see :func:`ontoloom.entry.main`): raised where the
    process is, so every ``finally`` runs — locks released, the store closed, an owner's
    socket removed — and it exits 128 + the signal's number (a server catches it: 0).
    ``note`` says what the stopped work left behind, when that work knows (an import: stored
    or not); the command line prints it."""

    note: str | None = None
