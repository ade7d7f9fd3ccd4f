"""Reviewing proposals: confirm (through the write path, into the confirmed graph, and back
into the record the evidence was quoted from) or reject (remembered, never proposed again)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput, NotFound
from ontoloom.model import shown_id, vocab_iri
from ontoloom.proposals.store import Proposal, list_proposals, node_of, set_status
from ontoloom.records.writeback import (
    Pending,
    WritebackResult,
    complete_pending,
    discard_pending,
    finish_writebacks,
    marker,
    plan_write_back,
    record_pending,
)
from ontoloom.store.base import Delta
from ontoloom.terms import Literal, Quad
from ontoloom.vocab import CONFIRMED, PROPOSALS

if TYPE_CHECKING:
    from pathlib import Path

    from ontoloom.session import Session

__all__ = ["CONVERSATIONS_RECORD", "confirm", "get_proposal", "reject"]

CONVERSATIONS_RECORD = "records/ontoloom/conversations.md"  # confirmed knowledge from transcripts
CONVERSATIONS_HEADER = "# Knowledge confirmed from conversations (written by ontoloom)\n"


def get_proposal(graph: Session, pid: str) -> Proposal:
    for p in list_proposals(graph):
        if p.id == pid:
            return p
    raise NotFound(f"no proposal {shown_id(pid)}: `ontoloom proposals --status pending` lists them")


def confirm(graph: Session, pid: str) -> dict[str, Any]:
    """Confirm a proposal: through the write path into the confirmed graph, then written back
    into the record its evidence was quoted from. Idempotent: a confirmed proposal is
    reported as such (``already``), nothing else happens.

    The writeback is journalled in the data dir before the commit, so a crash or a write
    error after the commit leaves it pending — the next command that writes finishes it —
    and the record is only ever replaced whole.

    :raises ValidationFailed: the relation breaks a rule (nothing stored, nothing written).
    :raises BadInput: the proposal was rejected, or its relation left the schema.
    :raises OntoloomError: the writeback could not be journalled (nothing stored).
    """
    recovered = [str(n) for n in finish_writebacks(graph)]
    proposal = get_proposal(graph, pid)
    if proposal.status == "confirmed":
        return {
            "proposal": proposal.to_json(),
            "already": True,
            "writeback": None,
            "recovered": recovered,
        }
    if proposal.kind != "relation" and proposal.status == "pending":
        return {**_confirm_mined(graph, pid), "recovered": recovered}
    if proposal.status == "rejected":
        why = f" ({proposal.reason})" if proposal.reason else ""
        raise BadInput(
            f"proposal {pid} was rejected{why}, so it cannot be confirmed: a rejected proposal "
            "stays rejected; if the relation holds after all, write it into the record's "
            "relations: and run `ontoloom rebuild`"
        )
    spec = graph.schema.relations.get(proposal.rel)
    if spec is None:
        raise BadInput(
            f"proposal {pid} uses the relation {proposal.rel!r}, which the schema no longer has"
        )
    triple = Quad(
        graph.ids.iri(proposal.source), spec.iri, graph.ids.iri(proposal.target), CONFIRMED
    )
    delta = Delta(adds={triple}).merge(set_status(graph, pid, "confirmed"))
    status = Quad(node_of(pid), vocab_iri("status"), Literal("confirmed"), PROPOSALS)
    writeback, pending, journal = _plan_writeback(graph, proposal, [triple, status])
    written = _commit_then_write_back(graph, delta, pending, journal)
    if written is not None:
        writeback = written
    proposal.status = "confirmed"
    return {
        "proposal": proposal.to_json(),
        "already": False,
        "writeback": writeback.to_json() if writeback is not None else None,
        "recovered": recovered,
    }


def _confirm_mined(graph: Session, pid: str) -> dict[str, Any]:
    """An object or merge mined from a conversation: confirmed where mining keeps them."""
    from ontoloom.proposals.mine import confirm as confirm_mined

    done = confirm_mined(graph, pid)
    record = done["record"]
    return {
        "proposal": done["proposal"],
        "already": False,
        "writeback": {
            "path": record["path"],
            "written": record["written"],
            "reason": record["reason"],
            "pending": False,
        }
        if record
        else None,
    }


def _plan_writeback(
    graph: Session, proposal: Proposal, quads: list[Quad]
) -> tuple[WritebackResult | None, Pending | None, Path | None]:
    """The writeback of a confirmation whose commit adds ``quads``: why there is none (a
    :class:`WritebackResult`) or its pending entry — journalled in the data dir, before the
    commit, when there is something to write."""
    target = _writeback_target(graph, proposal)
    if isinstance(target, WritebackResult):
        return target, None, None
    if target is None:
        return None, None, None
    assert graph.data_dir is not None
    label, initial = target
    pending = Pending(
        proposal.id,
        label,
        proposal.source,
        proposal.rel,
        proposal.target,
        dt.date.today().isoformat(),
        [marker(q) for q in quads],
        initial,
    )
    writeback, data = plan_write_back(
        graph.data_dir.parent / label,
        label,
        pending.source,
        pending.relation,
        pending.target,
        pending.confirmed,
        initial,
    )
    journal = None
    if data is not None:  # something to write: journalled before the commit
        journal = record_pending(graph.data_dir, pending)
    return writeback, pending, journal


def _commit_then_write_back(
    graph: Session, delta: Delta, pending: Pending | None, journal: Path | None
) -> WritebackResult | None:
    """Commit ``delta`` (a failed commit discards the journal), then finish the journalled
    writeback (None: nothing was journalled)."""
    try:
        graph.writes.commit(delta)
    except BaseException:
        if journal is not None:
            discard_pending(journal)
        raise
    if journal is None or pending is None:
        return None
    # The commit reaches the disk before the record changes (a writer flushes).
    flush = getattr(graph.backend, "flush", None)
    if flush is not None:
        flush()
    assert graph.data_dir is not None
    return complete_pending(graph.data_dir.parent, journal, pending)


def _writeback_target(
    graph: Session, proposal: Proposal
) -> tuple[str, str | None] | WritebackResult | None:
    """Where the confirmation is written back: (record path relative to the instance, the
    text of a tool-owned record not yet there), why it cannot be, or None (no record)."""
    instance = graph.data_dir.parent if graph.data_dir is not None else None
    if instance is None or not (instance / "ontoloom.toml").exists():
        return None
    source = proposal.evidence.get("source")
    if source:
        if not (instance / source).resolve().is_relative_to(instance.resolve()):
            return WritebackResult(source, False, "outside the instance")
        if _collides(graph, source):
            return WritebackResult(
                source, False, "the record's id collides with another's; left untouched"
            )
        return source, None
    if proposal.evidence.get("transcript"):
        return CONVERSATIONS_RECORD, CONVERSATIONS_HEADER
    return None


def _collides(graph: Session, path: str) -> bool:
    """A record whose object id another record already makes yields no object."""
    query = f"ASK {{ ?s {vocab_iri('source')} ?p }}"
    return not graph.backend.ask(query, {"p": Literal(path)})


def reject(graph: Session, pid: str, reason: str | None = None) -> dict[str, Any]:
    """Reject a proposal: remembered, never proposed again. Idempotent: a rejected proposal
    is reported as such (``already``) and keeps its first reason. Returns the proposal's JSON
    (the shape this returned before) with ``already`` and ``recovered`` added.

    :raises BadInput: the proposal is already confirmed.
    """
    recovered = [str(n) for n in finish_writebacks(graph)]
    proposal = get_proposal(graph, pid)
    if proposal.status == "rejected":
        return {**proposal.to_json(), "already": True, "recovered": recovered}
    if proposal.status == "confirmed":
        raise BadInput(
            f"proposal {pid} is already confirmed, so it cannot be rejected: unrelate "
            f"{proposal.source} {proposal.rel} {proposal.target} and remove its entry from the "
            "record's ontoloom: block instead"
        )
    graph.writes.commit(set_status(graph, pid, "rejected", reason))
    proposal.status, proposal.reason = "rejected", reason
    return {**proposal.to_json(), "already": False, "recovered": recovered}
