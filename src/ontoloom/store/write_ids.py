"""Write ids: every commit carries one, stored in the same atomic update as its delta.

After a fault whose outcome is unknown (the request went out, the answer did not come
back), the caller asks the store whether that id committed instead of guessing
(:meth:`ontoloom.store.base.Commits.committed`). The id is made by whoever starts the work —
a caller of :mod:`ontoloom.owner` sends it with the operation, so that it can ask after the
owner died — and is in force for the block of :func:`writing`; a commit made outside any
block gets a fresh one.

In the store (the bookkeeping graph): ``<urn:ontoloom:write:ID> ol:generation N ;
ol:lastChange TIME`` — the generation it made and the store's time. An operation that
commits several times (an import in parts) gives each commit its own id: the block's id,
then ``ID-2``, ``ID-3``…, so that an error names the very commit in doubt.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from ontoloom.errors import BadInput
from ontoloom.terms import NamedNode

__all__ = ["WRITE_BASE", "current", "new", "node", "take", "valid", "writing"]

WRITE_BASE = "urn:ontoloom:write:"
_SHAPE = re.compile(r"[A-Za-z0-9_-]{1,80}")
_GIVEN = 64  # the longest id a caller may give: room left for a commit's number
_current: ContextVar[list[Any] | None] = ContextVar("ontoloom_write_id", default=None)


def new() -> str:
    return uuid.uuid4().hex


def valid(write_id: str) -> str:
    """``write_id`` when it is one (1–64 letters, digits, ``_``, ``-``).

    :raises BadInput: it is not.
    """
    if not isinstance(write_id, str) or not _SHAPE.fullmatch(write_id):
        raise BadInput(
            "a write id is 1 to 80 letters, digits, '_' or '-' (as an error named it), "
            "e.g. 4f9c0e2a7d1b4c36a8e5f0d2b9c1a7e3"
        )
    return write_id


def node(write_id: str) -> NamedNode:
    return NamedNode(WRITE_BASE + valid(write_id))


def current() -> str | None:
    """The write id in force (:func:`writing`), if any."""
    scope = _current.get()
    return None if scope is None else str(scope[0])


def take() -> str:
    """The id of the next commit: in a :func:`writing` block, its id for the first commit
    and ``ID-2``, ``ID-3``… for the next ones; outside any, a fresh one.

    >>> with writing("w") as w:
    ...     take(), take(), take()
    ('w', 'w-2', 'w-3')
    """
    scope = _current.get()
    if scope is None:
        return new()
    scope[1] += 1
    return str(scope[0]) if scope[1] == 1 else f"{scope[0]}-{scope[1]}"


@contextmanager
def writing(write_id: str | None) -> Iterator[str]:
    """Commits made in the block carry ``write_id`` (a fresh one when None), numbered from
    the second on (:func:`take`)."""
    if write_id is not None and len(valid(write_id)) > _GIVEN:
        raise BadInput(f"a write id given is at most {_GIVEN} characters")
    given = write_id if write_id is not None else new()
    token = _current.set([given, 0])
    try:
        yield given
    finally:
        _current.reset(token)
