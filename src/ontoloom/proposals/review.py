"""Reviewing proposals: confirm (through the write path, into the confirmed graph, and back
into the record the evidence was quoted from) or reject (remembered, never proposed again)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput, NotFound
from ontoloom.model import vocab_iri
from ontoloom.proposals.store import Proposal, list_proposals, set_status
from ontoloom.records.writeback import write_back
from ontoloom.store.base import Delta
from ontoloom.store.terms import Quad
from ontoloom.vocab import CONFIRMED

if TYPE_CHECKING:
    from ontoloom.api import Graph

__all__ = ["CONVERSATIONS_RECORD", "confirm", "get_proposal", "reject"]

CONVERSATIONS_RECORD = "ontoloom/conversations.md"  # confirmed knowledge from transcripts


def get_proposal(graph: Graph, pid: str) -> Proposal:
    for p in list_proposals(graph):
        if p.id == pid:
            return p
    raise NotFound(f"no proposal {pid!r}: `ontoloom proposals --status pending` lists them")


def confirm(graph: Graph, pid: str) -> dict[str, Any]:
    """Confirm a pending proposal. :raises ValidationFailed: the relation breaks a rule."""
    proposal = get_proposal(graph, pid)
    if proposal.status != "pending":
        raise BadInput(f"proposal {pid} is {proposal.status}, not pending")
    spec = graph.schema.relations.get(proposal.rel)
    if spec is None:
        raise BadInput(
            f"proposal {pid} uses the relation {proposal.rel!r}, which the schema no longer has"
        )
    triple = Quad(
        graph.ids.iri(proposal.source), spec.iri, graph.ids.iri(proposal.target), CONFIRMED
    )
    graph.writes.commit(Delta(adds={triple}).merge(set_status(graph, pid, "confirmed")))
    proposal.status = "confirmed"
    return {"proposal": proposal.to_json(), "writeback": _write_back(graph, proposal)}


def _write_back(graph: Graph, proposal: Proposal) -> dict[str, Any] | None:
    instance = graph.data_dir.parent if graph.data_dir is not None else None
    if instance is None or not (instance / "ontoloom.toml").exists():
        return None
    today = dt.date.today().isoformat()
    source = proposal.evidence.get("source")
    if source:
        path = (instance / source).resolve()
        if not path.is_relative_to(instance.resolve()):
            return {"path": source, "written": False, "reason": "outside the instance"}
        if _collides(graph, source):
            return {
                "path": source,
                "written": False,
                "reason": "the record's id collides with another's; left untouched",
            }
    elif proposal.evidence.get("transcript"):
        source = CONVERSATIONS_RECORD
        path = instance / source
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text(
                "# Knowledge confirmed from conversations (written by ontoloom)\n", encoding="utf-8"
            )
    else:
        return None
    result = write_back(path, source, proposal.source, proposal.rel, proposal.target, today)
    return {"path": result.path, "written": result.written, "reason": result.reason}


def _collides(graph: Graph, path: str) -> bool:
    """A record whose object id another record already makes yields no object."""
    query = f"ASK {{ ?s {vocab_iri('source')} ?p }}"
    from ontoloom.store.terms import Literal

    return not graph.backend.ask(query, {"p": Literal(path)})


def reject(graph: Graph, pid: str, reason: str | None = None) -> Proposal:
    proposal = get_proposal(graph, pid)
    if proposal.status == "confirmed":
        raise BadInput(f"proposal {pid} is already confirmed: unrelate the relation instead")
    graph.writes.commit(set_status(graph, pid, "rejected", reason))
    proposal.status, proposal.reason = "rejected", reason
    return proposal
