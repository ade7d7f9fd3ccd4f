"""The Python API: a :class:`Graph` is a session on one data dir's graph with the features
on top (plans, records) — what a program uses where a person uses the CLI.

>>> import tempfile
>>> with Graph.open(tempfile.mkdtemp(), write=True, create=True) as g:
...     alice = g.create("Person", {"name": "Alice"})
...     task = g.create("Task", {"title": "Ship it", "status": "open"}, id="task_ship")
...     g.relate("task_ship", "assigned_to", alice.id).relation.rel
'assigned_to'
"""

from __future__ import annotations

from typing import Any

from ontoloom.plans import PlanResult, apply_plan, steps_of
from ontoloom.records.rebuild import RebuildReport, rebuild
from ontoloom.session import MAX_DEPTH, RelateOutcome, Session

__all__ = ["MAX_DEPTH", "Graph", "RelateOutcome"]


class Graph(Session):
    """A typed, validated graph in one data dir, with every operation a program needs."""

    def apply_plan(self, steps: list[dict[str, Any]], *, dry_run: bool = False) -> PlanResult:
        """Apply a plan (see :mod:`ontoloom.plans`) as one validated, atomic delta."""
        return apply_plan(self, steps_of(steps), dry_run=dry_run)

    def rebuild(self, *, full: bool = False, progress: Any = None) -> RebuildReport:
        """Read the instance's records into the graph (see :mod:`ontoloom.records.rebuild`)."""
        with self.writes.noting_stops(
            stored="the rebuild was stored whole",
            nothing="nothing was rebuilt: the graph is as it was",
        ):
            return rebuild(self, full=full, progress=progress)
