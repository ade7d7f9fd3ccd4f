"""Python stand-ins for the filters of chosen SPARQL-based constraints, on the write path.

Planning a query costs Oxigraph time in proportion to its expressions, paid again on every
call (pyoxigraph has no prepared queries): a constraint whose FILTERs and BINDs run to dozens
of string tests costs a write more to plan than to evaluate. For such a constraint the caller
may give a *judge*: a Python function of one solution of the graph pattern ``$this ?path
?value``, returning the constraint's other projected variables when the solution is a
violation and None when it is not.

The store still does all the graph matching: the unit's own compiled query, targets and focus
restriction included, with the constraint's SELECT replaced by :data:`PATTERN`; only the
expressions are evaluated in Python. A judge is chosen by the SHA-256 of the sh:select text it
stands in for, so an edited query is never judged by a stale stand-in. Whole-store validation
is judged too (the secret rule's normalising REPLACEs cost Oxigraph ten times what the judge
costs, per literal), and so are the solutions whose value the store keeps in another form
than written (``"1.50"`` kept as ``1.5``): the judge decides those on the value as written,
which no SELECT can see. The differential tests hold every judge to the store's own evaluation of
its SELECT.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping

from ontoloom.store.base import Row
from ontoloom.terms import Term

__all__ = ["PATTERN", "Judge", "digest", "judged"]

#: The graph pattern a judged constraint must have; the judge evaluates everything else.
PATTERN = "SELECT $this ?path ?value WHERE { $this ?path ?value }"

#: (path, value) → the other projected variables of a violation, or None: no violation.
Judge = Callable[[Term, Term], Mapping[str, Term] | None]


def digest(select: str) -> str:
    """The key a judge is registered under: the SHA-256 of the sh:select text, as written."""
    return hashlib.sha256(select.encode("utf-8")).hexdigest()


def judged(rows: Iterable[Row], judge: Judge) -> Iterator[Row]:
    """The rows of :data:`PATTERN` that the judge finds violations, with its variables."""
    for row in rows:
        path, value = row.get("path"), row.get("value")
        if path is None or value is None:
            continue
        extra = judge(path, value)
        if extra is not None:
            yield {**row, **extra}
