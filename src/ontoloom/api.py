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

from ontoloom.config import INSTANCE_MARKER
from ontoloom.plans import PlanResult, apply_plan, steps_of
from ontoloom.recall import Indexed, index_conversations
from ontoloom.records.frontmatter import Note
from ontoloom.records.rebuild import RebuildReport, rebuild
from ontoloom.session import MAX_DEPTH, RelateOutcome, Session

__all__ = ["MAX_DEPTH", "Graph", "RelateOutcome"]


class Graph(Session):
    """A typed, validated graph in one data dir, with every operation a program needs."""

    def apply_plan(self, steps: list[dict[str, Any]], *, dry_run: bool = False) -> PlanResult:
        """Apply a plan (see :mod:`ontoloom.plans`) as one validated, atomic delta."""
        return apply_plan(self, steps_of(steps), dry_run=dry_run)

    def rebuild(self, *, full: bool = False, progress: Any = None) -> RebuildReport:
        """Read the instance's records into the graph (see :mod:`ontoloom.records.rebuild`),
        and the opted-in conversation transcripts into the search index (:mod:`ontoloom.recall`;
        what could not be read is a ``skipped`` note)."""
        with self.writes.noting_stops(
            stored="the rebuild was stored whole",
            nothing="nothing was rebuilt: the graph is as it was",
        ):
            report = rebuild(self, full=full, progress=progress)
        said = self.index_conversations(full=full)
        if said.problem:
            message = f"{said.problem} (transcripts not indexed for the prompt hook)"
            report.notes.append(Note(INSTANCE_MARKER, None, "skipped", message))
        for why in said.unreadable:
            label, _, reason = why.partition(": ")
            report.notes.append(Note(label, None, "skipped", f"transcript not indexed: {reason}"))
        return report

    def reindex(self, *, conversations: bool = True) -> int:
        """Rebuild the search index from the store, and (unless ``conversations`` is false)
        read the opted-in transcripts again; returns the number of objects indexed."""
        count = super().reindex()
        if conversations:
            self.index_conversations(full=True)
        return count

    def index_conversations(self, *, full: bool = False) -> Indexed:
        """Bring the index's conversation passages in step with the opted-in transcripts
        (see :mod:`ontoloom.recall`)."""
        return index_conversations(self, full=full)
