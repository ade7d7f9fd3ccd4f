"""A bulk import into a SPARQL endpoint through a staging named graph (issue 34, item 2).

The endpoint's side of the journaled bulk load (:class:`ontoloom.store.base.Checkpoints`,
called by the commit function alone):

1. :func:`stage` writes a marker for the load into ontoloom's bookkeeping graph (stamped with
   the store's clock and a lease), then loads the delta's added quads — as the store keeps
   them, blank nodes skolemised, with the records of literals written in another form — into
   staging named graphs ``urn:ontoloom:staging:<write id>.<nonce>:<n>``, one per graph they go to:
   with the SPARQL 1.1 Graph Store HTTP Protocol (``POST ?graph=…`` of N-Triples) where
   ``[store] graph_store`` names the service, else in ``INSERT DATA`` batches (the gap of
   an engine without a Graph Store Protocol service: a slower load, same outcome).
2. The commit function validates the delta with the same evaluator and focus nodes as every
   write (the live graph read by the focus nodes' neighbourhoods, with the delta — the staged
   quads — laid over them; where a shape is global, a copy of the whole store with the delta
   applied, made only then).
3. :func:`switch` commits it in **one** SPARQL update request under the precondition every
   endpoint write has (the claim on the next generation, the generation still the one it was
   validated against, the schema unchanged, and this load's marker not taken away): the
   stamp and the write id (:meth:`SparqlEndpointBackend._guarded`), then, only if that
   stamp applied, each staging graph's triples moved into their graph and the change log
   and keys completed. Its outcome is read back, settled after a fault, never guessed.
4. :func:`drop` removes the staging graphs and the marker, always (refused, failed,
   interrupted or committed). A process killed meanwhile leaves them behind: the next bulk
   import finds staging graphs whose marker's lease ran out, or that have none, and drops
   them (:func:`drop_stale`), marking the load's key changed so that a load that was
   merely slow can never move an emptied staging graph in.

Gaps: on an engine whose default graph is the union of its named graphs, a query that
names no graph sees the staged triples while they are loaded (ontoloom's own reads leave
staging graphs out); the update that moves them is one request, atomic where the engine
runs a request as one transaction (oxigraph does).
"""

from __future__ import annotations

import contextlib
import uuid
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput, CommitConflict, OutcomeUnknown
from ontoloom.store import write_ids
from ontoloom.store.base import Delta
from ontoloom.store.reads import ReadSet, touched_keys
from ontoloom.terms import NamedNode, Quad, Term
from ontoloom.vocab import META, OL, SCHEMA_GRAPH

if TYPE_CHECKING:
    from ontoloom.store.endpoint import SparqlEndpointBackend

__all__ = ["STAGING_BASE", "Staged", "drop", "drop_stale", "stage", "switch"]

STAGING_BASE = "urn:ontoloom:staging:"
STAGED_AT = NamedNode(OL + "stagedAt")  # when the load last showed it was alive (store's clock)
STAGED_FOR = NamedNode(OL + "stagedFor")  # seconds after that it counts as left by a dead process
STAGING_LEASE = 900
GSP_BATCH = 50_000  # triples per Graph Store Protocol POST
INSERT_BATCH = 2_000  # quads per INSERT DATA (no Graph Store Protocol)
# Moved onto the key of a staging load dropped as stale: its precondition then fails.
_TAKEN = 1 << 62
_NTRIPLES = "application/n-triples"


class Staged:
    """A staged load: where its quads wait, and — read as a backend — the store with the
    delta applied (a copy in memory, made the first time validation asks for it)."""

    def __init__(
        self,
        backend: SparqlEndpointBackend,
        delta: Delta,
        write_id: str,
        inline: Delta,
        graphs: dict[Term, NamedNode],
        schema_at: int,
    ) -> None:
        self.staged_backend = backend
        self.staged_delta = delta
        self.staged_write_id = write_id
        self.staged_inline = inline  # committed in the guarded update itself
        self.staged_graphs = graphs  # graph the quads go to -> its staging graph
        self.staged_schema_at = schema_at
        # One load, however often its write id is tried: ``<write id>.<nonce>``.
        self.staged_load = f"{write_id}.{uuid.uuid4().hex[:12]}"
        self.staged_marker = marker(self.staged_load)
        self.staged_done = False
        self._applied: Any = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name.startswith("staged_"):
            raise AttributeError(name)
        if self._applied is None:
            from ontoloom.store.embedded import EmbeddedBackend

            applied = EmbeddedBackend.scratch(list(self.staged_backend.quads()))
            applied.patch(self.staged_delta)
            self._applied = applied
        return getattr(self._applied, name)


def marker(load: str) -> NamedNode:
    """The marker of a load (``<write id>.<nonce>``) in the bookkeeping graph."""
    return NamedNode(f"{STAGING_BASE}{load}")


def _graph_of(load: str, n: int) -> NamedNode:
    return NamedNode(f"{STAGING_BASE}{load}:{n}")


def stage(backend: SparqlEndpointBackend, delta: Delta, write_id: str | None) -> Staged:
    """Load ``delta``'s added quads into staging graphs (module doc, 1); the removes and the
    schema's quads wait for the guarded update.

    :raises BadInput: two literals the store would keep as one value (nothing is staged).
    """
    from ontoloom import progress

    delta = delta.normalized()
    write_id = write_ids.valid(write_id) if write_id is not None else write_ids.new()
    drop_stale(backend)
    schema = {q for q in delta.adds if q.graph_name == SCHEMA_GRAPH}
    inline = Delta(adds=set(schema), removes=set(delta.removes))
    plan = backend._plan(Delta(adds=delta.adds - schema))  # raises BadInput before any write
    by_graph: dict[Term, list[Quad]] = defaultdict(list)
    for quad in plan["adds"]:
        by_graph[quad.graph_name].append(quad)
    schema_at = backend.versions()[1]
    staged = Staged(backend, delta, write_id, inline, {}, schema_at)
    for n, g in enumerate(sorted(by_graph, key=str)):
        staged.staged_graphs[g] = _graph_of(staged.staged_load, n)
    m = staged.staged_marker
    try:
        backend._update(
            f"INSERT {{ GRAPH {META} {{ {m} {STAGED_AT} ?now ; {STAGED_FOR} {STAGING_LEASE} }} }} "
            "WHERE { BIND(NOW() AS ?now) }",
            "marking a staging load",
        )
        total = len(plan["adds"])
        with progress.task("loading into staging graphs", total=total) as advance:
            done = 0
            for target, quads in by_graph.items():
                for chunk in _chunks(quads, _batch(backend)):
                    _load(backend, staged.staged_graphs[target], chunk)
                    done += len(chunk)
                    advance(done)
                    _renew(backend, m)
    except BaseException:
        drop(backend, staged)
        raise
    return staged


def _batch(backend: SparqlEndpointBackend) -> int:
    return GSP_BATCH if backend.config.store_url is not None else INSERT_BATCH


def _chunks(quads: list[Quad], size: int) -> Iterable[list[Quad]]:
    for i in range(0, len(quads), size):
        yield quads[i : i + size]


def _load(backend: SparqlEndpointBackend, graph: NamedNode, quads: list[Quad]) -> None:
    """One batch into one staging graph: a Graph Store Protocol POST (adds to the graph) of
    N-Triples, or an INSERT DATA where the store has no such service."""
    body = "".join(f"{q.subject} {q.predicate} {q.object} .\n" for q in quads)
    url = backend.config.store_url
    if url is None:
        backend._update(
            f"INSERT DATA {{ GRAPH {graph} {{ {body} }} }}", f"loading staging graph {graph}"
        )
        return
    backend._send(
        url,
        body.encode(),
        _NTRIPLES,
        f"loading {len(quads)} triples into staging graph {graph}",
        params={"graph": graph.value},
    )


def _renew(backend: SparqlEndpointBackend, m: NamedNode) -> None:
    """The load is alive: its marker's time is now (the store's clock)."""
    backend._update(
        f"DELETE {{ GRAPH {META} {{ {m} {STAGED_AT} ?old }} }} INSERT {{ GRAPH {META} {{ "
        f"{m} {STAGED_AT} ?now }} }} WHERE {{ GRAPH {META} {{ {m} {STAGED_AT} ?old }} "
        "BIND(NOW() AS ?now) }",
        "renewing a staging load's lease",
    )


def switch(backend: SparqlEndpointBackend, staged: Staged, expected: int) -> int:
    """Commit the staged load (module doc, 3); return the new generation.

    :raises CommitConflict: the generation is no longer ``expected``, the schema changed, or
        the load was dropped as stale meanwhile: nothing was committed.
    :raises OutcomeUnknown: whether it committed cannot be told now (the write id named).
    :raises EndpointError: the endpoint failed and nothing was committed.
    """
    from ontoloom.store.endpoint import (
        CHANGE_BASE,
        CHANGED_AT,
        COMMIT,
        TOUCHED,
        EndpointError,
        _string,
        _touched,
    )
    from ontoloom.store.endpoint import skolem as _skolem

    new = expected + 1
    change = NamedNode(f"{CHANGE_BASE}{new}")
    token = uuid.uuid4().hex
    m = staged.staged_marker
    backend._claim(expected, token)
    reads = ReadSet(staged.staged_schema_at, keys={m.value})
    ours = f'GRAPH {META} {{ {change} {COMMIT} "{token}" }}'
    ops = [
        backend._guarded(
            expected, token, staged.staged_inline, staged.staged_write_id, reads, expected
        )
    ]
    # Only once the stamp above applied (its token is there), in the same request:
    ops += [
        f"INSERT {{ GRAPH {target} {{ ?s ?p ?o }} }} WHERE {{ {ours} GRAPH {graph} {{ ?s ?p ?o }} }}"
        for target, graph in staged.staged_graphs.items()
    ]
    whole = staged.staged_delta
    ops.append(
        f"DELETE {{ GRAPH {META} {{ {change} {TOUCHED} ?t }} }} INSERT {{ GRAPH {META} {{ "
        f"{change} {TOUCHED} {_string(_touched(whole))} }} }} WHERE {{ {ours} "
        f"GRAPH {META} {{ {change} {TOUCHED} ?t }} }}"
    )
    keys = "".join(f" <{k}> {CHANGED_AT} {new} ." for k in sorted(touched_keys(whole, _skolem)))
    ops.append(f"INSERT {{ GRAPH {META} {{ {keys} }} }} WHERE {{ {ours} }}")
    try:
        backend._update(" ;\n".join(ops), f"the bulk commit of generation {new}")
    except BadInput as exc:  # refused before it ran: nothing applied
        backend._withdraw(expected, token)
        raise EndpointError(
            f"{backend.engine} at {backend.config.update_url} refused the bulk commit of "
            f"generation {new}: {getattr(exc, 'detail', '')[:200]}; nothing was committed"
        ) from None
    except EndpointError as exc:
        outcome = backend._settle(expected, token)
        if outcome is None:
            raise OutcomeUnknown(exc.message, staged.staged_write_id) from None
        if not outcome:
            raise EndpointError(f"{exc.message}; nothing was committed") from None
        staged.staged_done = True
        return new
    committed = backend._read_back(change, token)
    if committed is None:
        raise OutcomeUnknown(
            f"the SPARQL endpoint {backend.config.query_url} took the bulk commit of "
            f"generation {new} and then could not be asked whether it applied",
            staged.staged_write_id,
        )
    if not committed:
        backend._withdraw(expected, token)
        raise CommitConflict(
            f"the store at {backend.config.update_url} moved on from generation {expected} "
            "while the import was loaded and validated (or its staging graph was dropped as "
            "stale): nothing was imported; import again"
        )
    staged.staged_done = True
    return new


def drop(backend: SparqlEndpointBackend, staged: Staged) -> None:
    """Remove the staging graphs and the marker (committed or not: what was moved is in its
    graphs). A failure here leaves them to :func:`drop_stale`."""
    from ontoloom.store.endpoint import EndpointError

    with contextlib.suppress(EndpointError):
        _drop(backend, staged.staged_marker, list(staged.staged_graphs.values()), taken=False)


def _drop(
    backend: SparqlEndpointBackend, m: NamedNode, graphs: list[NamedNode], *, taken: bool
) -> None:
    from ontoloom.store.endpoint import CHANGED_AT

    ops = [f"DROP SILENT GRAPH {g}" for g in graphs]
    ops.append(f"DELETE WHERE {{ GRAPH {META} {{ {m} ?p ?o }} }}")
    if taken:  # a load that was only slow must not commit an emptied staging graph
        ops.append(f"INSERT DATA {{ GRAPH {META} {{ {m} {CHANGED_AT} {_TAKEN} }} }}")
    backend._update(" ;\n".join(ops), "dropping a staging load")


def staging_graphs(backend: SparqlEndpointBackend) -> dict[str, list[NamedNode]]:
    """The staging graphs in the store, by their load (``<write id>.<nonce>``)."""
    from ontoloom.store.endpoint import _JSON_RESULTS

    # Asked of the store as it is (no dataset: a store whose default graph is its own would
    # otherwise be asked about ontoloom's graphs alone, which leave staging graphs out).
    response = backend._post(
        backend.config.query_url,
        {
            "query": "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } "
            f'FILTER(STRSTARTS(STR(?g), "{STAGING_BASE}")) }}'
        },
        _JSON_RESULTS,
        "a query listing staging graphs",
    )
    backend._refuse_capped(response)
    rows = backend._rows(backend._parse_results(response.content))
    found: dict[str, list[NamedNode]] = defaultdict(list)
    for row in rows:
        name = row["g"].value
        write_id = name[len(STAGING_BASE) :].rpartition(":")[0]
        found[write_id].append(NamedNode(name))
    return found


def drop_stale(backend: SparqlEndpointBackend) -> list[str]:
    """Drop the staging loads left by dead processes (module doc, 4): those whose marker's
    lease ran out by the store's clock, and staging graphs without a marker. The loads
    dropped (``<write id>.<nonce>``)."""
    from ontoloom.store.endpoint import _age

    rows = backend.select(
        f"SELECT ?m ?at ?for ?now WHERE {{ GRAPH {META} {{ ?m {STAGED_AT} ?at ; "
        f"{STAGED_FOR} ?for }} BIND(NOW() AS ?now) }}"
    )
    live: set[str] = set()
    stale: dict[str, NamedNode] = {}
    for row in rows:
        write_id = row["m"].value[len(STAGING_BASE) :]
        age = _age(row["at"], row["now"])
        if age is not None and age < float(row["for"].value):
            live.add(write_id)
        else:
            stale[write_id] = row["m"]
    graphs = staging_graphs(backend)
    dropped = []
    for write_id in sorted((set(graphs) | set(stale)) - live):
        _drop(backend, marker(write_id), graphs.get(write_id, []), taken=True)
        dropped.append(write_id)
    return dropped
