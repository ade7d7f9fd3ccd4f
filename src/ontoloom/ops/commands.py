"""The operations only the command line and the pages call: each answers a document for its
caller to print or write (an export, a page's data, an extraction request), reads the
instance's own files (a rebuild from the records), or takes a file its caller has read (an
import, an answer to ingest). They are not offered as agent tools.

Files: whoever names a file reads it, and the operation gets its content (``text`` — or
``base64`` for bytes that are not UTF-8 — and ``name``, the name to report): a data dir's
owner never opens a path on another process's behalf with its own rights.
"""

from __future__ import annotations

import base64
import io
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput
from ontoloom.ops.describe import api_document, tool_list
from ontoloom.ops.spec import Access, Handler, Operation

if TYPE_CHECKING:
    from pathlib import Path

    from ontoloom.api import Graph

__all__ = ["command_operations", "content_arguments", "content_of"]


def content_arguments(data: bytes, name: str) -> dict[str, str]:
    """A file's bytes as an operation's arguments: UTF-8 text as it is, other bytes base64.

    >>> content_arguments(b"<a> <b> <c> .", "x.nt")
    {'name': 'x.nt', 'text': '<a> <b> <c> .'}
    >>> content_arguments(b"\\xff", "x")
    {'name': 'x', 'base64': '/w=='}
    """
    try:
        return {"name": name, "text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"name": name, "base64": base64.b64encode(data).decode("ascii")}


def content_of(a: dict[str, Any]) -> bytes:
    """The bytes :func:`content_arguments` carried."""
    if isinstance(a.get("text"), str):
        return str(a["text"]).encode("utf-8")
    if isinstance(a.get("base64"), str):
        return base64.b64decode(a["base64"])
    raise BadInput("give the file's content (text or base64): the caller reads the file")


# -- audit, interchange, inference -----------------------------------------------------------
def _check_and_repair(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.ops.typed import audited

    return audited(g, {**a, "repair": True}, apply=True)


def _export(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.interchange import export_graph

    out = io.BytesIO()
    export_graph(g, out, a["format"], a.get("graph", "all"), bool(a.get("infer")))
    return {"format": a["format"], "text": out.getvalue().decode("utf-8")}


def _import_rdf(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.interchange import import_file

    return import_file(
        g,
        None,
        a.get("format"),
        a.get("graph"),
        data=content_of(a),
        label=a.get("name"),
        base_iri=a.get("base"),
    ).to_json()


def _import_memory(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.migrate import import_memory

    return import_memory(
        g, a["content"], a["source"], file=a.get("name", ""), dry_run=bool(a.get("dry_run"))
    )


def _infer(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.infer import infer

    return infer(g)


def _in_time(a: dict[str, Any]) -> bool:
    return a.get("as_of") is not None or a.get("recorded_as_of") is not None


def _query_text(g: Graph, a: dict[str, Any]) -> Any:
    """A query's results as the command line prints them: SPARQL results (or RDF) as text,
    or for ``table`` the columns and each row's cells as the graph names them (ids, not
    IRIs)."""
    from ontoloom.query import NamedQuery, run_query, show_term

    spec: Any = a["query"]
    if a.get("file") is not None:  # a .rq file its caller read
        spec = NamedQuery.parse(a["file"], a["query"])
    _, result = run_query(
        g,
        spec,
        dict(a.get("params") or {}),
        a.get("format", "table"),
        timeout=a.get("timeout", 30.0),
        infer=bool(a.get("infer")),
        then=g.then(a.get("as_of"), a.get("recorded_as_of")) if _in_time(a) else None,
    )
    if isinstance(result, list):
        columns = list(result[0]) if result else []
        rows = [[show_term(g, row.get(c)) for c in columns] for row in result]
        return {"format": "table", "columns": columns, "rows": rows}
    # SPARQL results (or RDF) as text; for ``table``, an ASK's true/false, a CONSTRUCT's Turtle
    return {"format": "text", "text": result.decode("utf-8")}


# -- schema, search index, records -----------------------------------------------------------
def _schema_show(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.extensions import show_type

    return show_type(g, a["type"])


def _schema_add_shapes(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.extensions import add_shapes

    return add_shapes(
        g,
        None,
        a.get("format"),
        data=content_of(a),
        label=a.get("name"),
        base_iri=a.get("base"),
    )


def _reindex(g: Graph, a: dict[str, Any]) -> Any:
    indexed = g.reindex(conversations=False)
    return {"indexed": indexed, "conversations": g.index_conversations(full=True).to_json()}


def _rebuild(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.progress import task

    with task("reading records") as advance:
        report = g.rebuild(
            full=bool(a.get("full")), progress=lambda done, total: advance(done, total)
        )
    return report.to_json()


def _gc(apply: bool) -> Handler:
    def run(g: Graph, a: dict[str, Any]) -> Any:
        from ontoloom.gc import collect_garbage

        return collect_garbage(g, apply=apply).to_json()

    return run


# -- wikilinks, proposals, enrichment, mining ------------------------------------------------
def _links(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.proposals.worklist import worklist

    return [item.to_json() for item in worklist(g)]


def _links_type(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.proposals.worklist import type_candidate

    return type_candidate(g, a["id"], a["rel"]).to_json()


def _links_dismiss(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.proposals.worklist import dismiss

    return dismiss(g, a["id"]).to_json()


def _proposal_show(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.proposals.review import get_proposal

    return get_proposal(g, a["id"]).to_json()


def _enrich_emit(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.proposals.enrich import emit_request

    return emit_request(g, a.get("limit", 50), a.get("for"))


def _enrich_ingest(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.proposals.enrich import ingest_response

    return ingest_response(g, a["answer"]).to_json()


def _mining(step: str) -> Handler:
    """One step of conversation mining (:mod:`ontoloom.proposals.mine`), its JSON."""

    def run(g: Graph, a: dict[str, Any]) -> Any:
        from ontoloom.proposals import mine

        if step == "scan":
            return mine.scan(g, a.get("limit", 20)).to_json()
        if step == "emit":
            return mine.emit(g, a.get("limit", 20))
        if step == "verification":
            return mine.verification_request(g)
        if step == "ingest":
            return mine.ingest(g, a["answer"], cross_vendor=a.get("cross_vendor")).to_json()
        if step == "review":
            status = a.get("status", "pending")
            return mine.review(g, None if status == "all" else status)
        if step == "confirm":
            return mine.confirm(g, a["id"])
        if step == "reject":
            return mine.reject(g, a["id"], a.get("reason"))
        if step == "correct":
            return mine.correct(g, a["id"], a.get("reason"))
        return mine.write_record(g)

    return run


# -- pages and instructions ------------------------------------------------------------------
def _view(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.view import view_data

    return view_data(
        g,
        focus=a.get("focus"),
        depth=a.get("depth", 1),
        types=tuple(a.get("types") or ()),
        include_private=bool(a.get("include_private")),
    )


def _skill(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.skill import skill_text

    return {"skill": skill_text(g.schema, frontmatter=not a.get("plain"))}


def _hook_text(which: str) -> Handler:
    """What a hook prints (:mod:`ontoloom.context`), asked of the data dir's owner: the
    search index caught up with its last commits first, as a hook process reads the file."""

    def run(g: Graph, a: dict[str, Any]) -> Any:
        import contextlib

        from ontoloom.context import context, status

        with contextlib.suppress(Exception):  # the index as it is, then
            g.catch_up_index()
        assert g.data_dir is not None
        if which == "prompt":
            return {"text": context(g.data_dir, str(a.get("prompt") or ""))}
        return {"text": status(g.data_dir)}

    return run


def _write_status(g: Graph, a: dict[str, Any]) -> Any:
    """Whether the commit carrying write id ``write_id`` is in the store."""
    from ontoloom.errors import OntoloomError
    from ontoloom.store import write_ids

    write_id = write_ids.valid(a.get("write_id"))  # type: ignore[arg-type]
    try:
        generations = g.backend.committed(write_id)
    except OntoloomError as exc:  # the store cannot be asked now
        return {"write_id": write_id, "status": "unknown", "reason": exc.message}
    if generations:
        return {"write_id": write_id, "status": "committed", "generations": generations}
    return {"write_id": write_id, "status": "not committed"}


WRITE_STATUS = Operation(
    "write_status",
    "write status",
    "Whether a write was committed, by the write id an 'outcome unknown' error named: "
    "'committed' (with the generations it made), 'not committed', or 'unknown' (the store "
    "cannot be asked now).",
    {"write_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,80}$"}},
    _write_status,
    required=("write_id",),
)


def _store_status(data_dir: Path, a: dict[str, Any]) -> Any:
    """Where the graph lives (:func:`ontoloom.store.describe_store`): read from ontoloom.toml,
    no request to the store."""
    from ontoloom.store import describe_store

    return describe_store(data_dir)


def _store_status_open(g: Graph, a: dict[str, Any]) -> Any:
    assert g.data_dir is not None
    return _store_status(g.data_dir, a)


STORE_STATUS = Operation(
    "store_status",
    "store status",
    "Where the graph lives: the embedded store (its path) or the SPARQL endpoint, whether its "
    "default graph is the union of its graphs, its engine, and each gap init found (what "
    "that engine answers otherwise than the embedded store). Read from ontoloom.toml.",
    {},
    _store_status_open,
    tool=False,  # the command line's `ontoloom status`
    on_files=_store_status,
)


# -- scoped HTTP tokens ----------------------------------------------------------------------
def _token_types(g: Graph, a: dict[str, Any], key: str) -> frozenset[str] | None:
    """``reads`` or ``writes`` of a token: "*" (every type), else types of the schema."""
    from ontoloom.suggest import did_you_mean

    value = a.get(key) or []
    if value == "*" or value == ["*"]:
        return None
    if isinstance(value, str) or not isinstance(value, list):
        raise BadInput(f'--{key}: type names, or "*" for every type')
    for name in value:
        if name not in g.schema.types:
            hint = did_you_mean(str(name), g.schema.types) if isinstance(name, str) else ""
            raise BadInput(
                f"--{key}: the schema has no type {str(name)[:40]!r}{hint} (`ontoloom schema "
                "list` shows them)"
            )
    return frozenset(value)


def _token_add(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.tokens import add_token

    reads, writes = _token_types(g, a, "reads"), _token_types(g, a, "writes")
    if reads == frozenset() and writes == frozenset():
        raise BadInput('a token for no type could do nothing: give --reads or --writes ("*": all)')
    assert g.data_dir is not None
    token, entry = add_token(g.data_dir, str(a.get("name", "")), reads, writes)
    return {**entry.to_json(), "token": token}


def _token_list(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.tokens import list_tokens

    assert g.data_dir is not None
    return [e.to_json() for e in list_tokens(g.data_dir)]


def _token_revoke(g: Graph, a: dict[str, Any]) -> Any:
    from ontoloom.tokens import revoke_token

    assert g.data_dir is not None
    return revoke_token(g.data_dir, str(a.get("name", ""))).to_json()


def _command(name: str, description: str, handler: Handler, access: Access = "read") -> Operation:
    return Operation(
        name,
        name.replace("_", " "),
        description,
        {},
        handler,
        access=access,
        strict=False,  # their callers (the CLI, the pages) build the arguments themselves
        destructive=access != "read",
        idempotent=access == "read",
        tool=False,
    )


def command_operations() -> list[Operation]:
    """The operations of the command line and the pages, not offered as tools."""
    return [
        WRITE_STATUS,
        STORE_STATUS,
        _command(
            "check_and_repair",
            "Audit, apply the automatic repairs, audit again.",
            _check_and_repair,
            "write",
        ),
        _command("export", "The graphs as an RDF document.", _export),
        _command("import_rdf", "Import an RDF document, all or nothing.", _import_rdf, "create"),
        _command("import_memory", "Import another tool's memory.", _import_memory, "create"),
        _command("infer", "Materialise the OWL RL consequences.", _infer, "write"),
        _command("query_text", "A query's results as the CLI prints them.", _query_text),
        _command("schema_show", "One type with its rules.", _schema_show),
        _command("schema_add_shapes", "Add a SHACL shapes document.", _schema_add_shapes, "create"),
        _command("reindex", "Rebuild the search index.", _reindex, "write"),
        _command("rebuild", "Read the instance's records.", _rebuild, "create"),
        _command("gc", "What garbage collection would remove.", _gc(False)),
        _command("gc_apply", "Remove the garbage.", _gc(True), "write"),
        _command("links_list", "The wikilink worklist.", _links),
        _command("links_type", "Type a wikilink candidate.", _links_type, "write"),
        _command("links_dismiss", "Dismiss a wikilink candidate.", _links_dismiss, "write"),
        _command("proposals_show", "One proposal with its evidence.", _proposal_show),
        _command("enrich_emit", "An extraction request for an agent.", _enrich_emit),
        _command("enrich_ingest", "Store an agent's answer.", _enrich_ingest, "write"),
        _command("mine_scan", "Request extraction of transcripts.", _mining("scan"), "create"),
        _command("mine_emit", "The mining request document.", _mining("emit"), "create"),
        _command("mine_verification", "The verification request.", _mining("verification")),
        _command("mine_ingest", "Store a mining answer.", _mining("ingest"), "write"),
        _command("mine_review", "Mined proposals.", _mining("review")),
        _command("mine_confirm", "Confirm a mined proposal.", _mining("confirm"), "write"),
        _command("mine_reject", "Reject a mined proposal.", _mining("reject"), "write"),
        _command("mine_correct", "Object to mined knowledge.", _mining("correct"), "write"),
        _command(
            "mine_write_record", "Rewrite the conversations record.", _mining("record"), "write"
        ),
        _command("view_data", "The data the graph view draws.", _view),
        _command("tool_list", "The tools, as MCP lists them.", lambda g, a: tool_list(g.schema)),
        _command(
            "api_document",
            "The HTTP API as an OpenAPI 3.1 document.",
            lambda g, a: api_document(g.schema),
        ),
        _command("skill", "The instructions for agents, from the live schema.", _skill),
        _command("token_add", "Make a scoped HTTP token (shown once).", _token_add, "create"),
        _command("token_list", "The scoped HTTP tokens (never the token).", _token_list),
        _command("token_revoke", "Revoke a scoped HTTP token.", _token_revoke, "write"),
        _command("hook_prompt_context", "The facts a prompt points at.", _hook_text("prompt")),
        _command("hook_session_start", "The session's status line.", _hook_text("status")),
    ]
