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
    └── ValidationFailed          a write broke a rule; carries the report; nothing stored (1)

    Stopped (a SystemExit)        SIGTERM or SIGINT: the command unwinds, 128 + the signal

Every message says what went wrong, where, and how to fix it.
"""

from __future__ import annotations

from typing import Any

from ontoloom.findings import Finding, refusal_json

__all__ = [
    "BadInput",
    "Busy",
    "NoStore",
    "NotFound",
    "OntoloomError",
    "ParseError",
    "QueryTimeout",
    "RetryThroughOwner",
    "Stopped",
    "UnsupportedQuery",
    "ValidationFailed",
]


class OntoloomError(Exception):
    """Base of every error ontoloom raises on purpose."""

    exit_code = 2
    kind = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

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


class ValidationFailed(OntoloomError):
    """A write was refused; ``findings`` say what broke and how to fix it."""

    exit_code = 1
    kind = "validation"

    def __init__(self, findings: list[Finding], summary: str | None = None) -> None:
        self.findings = findings
        lines = [summary or f"refused: {len(findings)} rule(s) broken; nothing was stored"]
        lines += [f"  - {f.describe()}" for f in findings]
        super().__init__("\n".join(lines))

    def to_json(self) -> dict[str, Any]:
        return refusal_json(self.findings, self.message)


class RetryThroughOwner(SystemExit):
    """A command line met an owner that took the data dir over (:class:`OwnerTookOver`)
    before this process had opened any store: nothing was done, so :func:`ontoloom.entry.main`
    runs it again through the owner. Carries the :class:`OwnerTookOver` to report if it
    cannot."""

    def __init__(self, error: OwnerTookOver) -> None:
        super().__init__(error.exit_code)
        self.error = error


class Stopped(SystemExit):
    """A signal asked the process to stop (see :func:`ontoloom.entry.main`): raised where the
    process is, so every ``finally`` runs — locks released, the store closed, an owner's
    socket removed — and it exits 128 + the signal's number (a server catches it: 0)."""
