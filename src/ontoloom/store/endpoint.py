"""The endpoint backend: any SPARQL 1.1 store behind the :class:`Backend` seam, over HTTP.

What crosses the wire is standard SPARQL 1.1 (Query and Update protocols) and nothing that
depends on one engine's defaults:

* any default-graph semantics: :meth:`SparqlEndpointBackend.probe` (run by ``init``) finds
  whether the store's default graph is the union of its named graphs (oxigraph serve
  ``--union-default-graph``, Virtuoso, GraphDB) or a graph of its own (oxigraph serve
  without it, Fuseki, Stardog by default); on the latter every query is sent with
  ontoloom's graphs as its dataset (``default-graph-uri``/``named-graph-uri``), so it reads
  the same union either way; the probe also names the engine's gaps (:data:`ENGINE_GAPS`);
* bindings are written in as a ``VALUES`` block opening the query's WHERE group (there is no
  SEP-0007 substitution over HTTP);
* blank nodes never cross: they are skolemised to well-known IRIs on the way in and turned
  back on the way out (:func:`skolem`, :func:`unskolem`);
* every commit is one SPARQL update guarded by what its validation read — it applies only
  if none of the versions of what was read (the focus nodes' neighbourhoods, the relations
  a property path walked, the schema) moved since the generation it was validated against
  (:mod:`ontoloom.store.reads`), so writes to disjoint parts of the graph go in one after
  the other without validating again — and stamped with a commit token that is read back
  afterwards, so a lost answer never leaves the caller in doubt
  (:meth:`SparqlEndpointBackend.apply`);
* each commit leaves a change-log entry (the generation, the token and the nodes it
  touched) in the bookkeeping graph, so derived indexes on any gateway can catch up.

Literals are kept as written as the embedded backend keeps them (:mod:`ontoloom.store.lexical`);
records are keyed by the literal as Oxigraph would store it, whatever form this store
returns, so the lookup holds for any engine's canonical forms.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import random
import re
import ssl
import stat
import time
import uuid
from collections.abc import Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, overload
from urllib.parse import urlsplit

import httpx
import pyoxigraph

from ontoloom.errors import (
    BadInput,
    CommitConflict,
    OntoloomError,
    OutcomeUnknown,
    QueryTimeout,
    ReadOnly,
)
from ontoloom.store import lock_timeout, write_ids
from ontoloom.store.base import Delta, Row
from ontoloom.store.lexical import (
    DATATYPE,
    LEXICAL_FORM,
    RECORD_OBJECT,
    RECORD_PREDICATE,
    RECORD_SUBJECT,
    record_key,
    record_quads,
    stored_form,
    stored_quads,
    written_literal,
)
from ontoloom.store.reads import ReadSet, Recording, touched_keys
from ontoloom.terms import (
    BlankNode,
    DefaultGraph,
    Literal,
    NamedNode,
    Quad,
    RdfFormat,
    Subject,
    Term,
    Triple,
    graph_name,
    named,
    serialize,
    spo,
    subject,
)
from ontoloom.vocab import (
    GENERATION,
    GRAPH_BASE,
    LAST_CHANGE,
    META,
    OL,
    SCHEMA_GENERATION,
    SCHEMA_GRAPH,
    STORE_NODE,
    XSD,
)

if TYPE_CHECKING:
    from ontoloom.store.lock import DataDirLock

__all__ = ["EndpointConfig", "EndpointError", "SparqlEndpointBackend", "skolem", "unskolem"]

_AROUND_BATCH = 400  # terms per VALUES block of a walk's read

GENID = "https://ontoloom.dev/.well-known/genid/"
CREDENTIALS_FILE = "endpoint.credentials"
COMMIT = NamedNode(OL + "commit")
TOUCHED = NamedNode(OL + "touched")
# The generation that last changed a key of what validations read (ontoloom.store.reads).
CHANGED_AT = NamedNode(OL + "changedAt")
# A commit whose reads still hold but whose generation moved on is claimed again on top of
# the new one, without validating again, this many times at most.
MOVE_ATTEMPTS = 40
CHANGE_BASE = "urn:ontoloom:change:"
CHANGES_KEPT = 1000  # change-log entries kept; an index further behind rebuilds
# A writer claims the next generation before its guarded commit (see _claim): engines that
# do not isolate concurrent updates (oxigraph 0.5, Virtuoso at read committed) would
# otherwise apply two guarded commits against one generation.
CLAIM_BASE = "urn:ontoloom:claim:"
CLAIM_OF = NamedNode(OL + "claimOf")  # the generation the claim would commit on top of
CLAIM_FOR = NamedNode(OL + "claimFor")  # seconds it may be held: after that, it is stale
CLAIM_AT = NamedNode(OL + "claimAt")  # when it was taken, by the store's clock (NOW())
READ_BACK_WAITS = (0.05, 0.1, 0.2, 0.4, 0.8)  # seconds between asks when a read-back fails
_UNION_PROBE = NamedNode("urn:ontoloom:union-probe")
_LITERAL_PROBE = NamedNode("urn:ontoloom:literal-probe")
_XSD_STRING = NamedNode(XSD + "string")
_INTEGER = NamedNode(XSD + "integer")
_JSON_RESULTS = "application/sparql-results+json"
READ_ATTEMPTS = 6  # a query the engine aborts in a race with a writer is asked again
PAGE = 10000  # rows asked for at once by bulk reads (Debian's Virtuoso answers at most 10,000)
_NTRIPLES = "application/n-triples"
# Asked for a graph (CONSTRUCT, DESCRIBE): N-Triples first, else what most engines write.
_GRAPH_ACCEPT = f"{_NTRIPLES}, text/turtle;q=0.9, application/rdf+xml;q=0.8"


class EndpointError(OntoloomError):
    """The SPARQL endpoint failed, named with what failed; nothing was committed unless the
    message says so. ``status``: the HTTP status it answered with (None: no answer)."""

    status: int | None = None
    detail = ""  # the engine's first line about it


# -- configuration ------------------------------------------------------------------------------
@dataclass(frozen=True)
class EndpointConfig:
    """Where the store is: ``[store]`` in ontoloom.toml (``endpoint``, ``update_endpoint``,
    ``graph_store`` — its Graph Store Protocol URL, optional — and ``timeout``). Credentials never come from ontoloom.toml: ``ONTOLOOM_ENDPOINT_TOKEN`` (a
    bearer token) or ``ONTOLOOM_ENDPOINT_USER`` and ``ONTOLOOM_ENDPOINT_PASSWORD`` (basic),
    else the data dir's ``endpoint.credentials`` (JSON, readable by its owner only)."""

    query_url: str
    update_url: str
    timeout: float = 30.0
    store_url: str | None = None  # the Graph Store Protocol service: whole graphs read at once
    # What ``init`` found the store to be (:meth:`SparqlEndpointBackend.probe`): whether its
    # default graph is the union of its named graphs ("union") or a graph of its own
    # ("named": every query then names ontoloom's graphs as its dataset), the engine's name
    # and what it answers otherwise than the embedded store (keys of :data:`ENGINE_GAPS`).
    default_graph: str = "union"
    engine: str | None = None
    gaps: tuple[str, ...] = ()

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str) -> EndpointConfig:
        for key in table:
            if key not in _STORE_KEYS:
                lowered = key.lower()
                if any(w in lowered for w in ("password", "token", "secret", "user", "auth")):
                    raise BadInput(
                        f"{where}: [store] {key}: credentials are never kept in ontoloom.toml; "
                        "set ONTOLOOM_ENDPOINT_TOKEN (or ONTOLOOM_ENDPOINT_USER and "
                        f"ONTOLOOM_ENDPOINT_PASSWORD), or write them to the data dir's "
                        f"{CREDENTIALS_FILE} (mode 0600)"
                    )
                raise BadInput(f"{where}: [store] {key}: unknown key; use {', '.join(_STORE_KEYS)}")
        query = _url(table.get("endpoint"), f"{where}: [store] endpoint")
        update = _url(table.get("update_endpoint", query), f"{where}: [store] update_endpoint")
        store = table.get("graph_store")
        if store is not None:
            store = _url(store, f"{where}: [store] graph_store")
        timeout = table.get("timeout", 30.0)
        if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
            raise BadInput(f"{where}: [store] timeout must be a number of seconds above 0")
        semantics = table.get("default_graph", "union")
        if semantics not in ("union", "named"):
            raise BadInput(
                f'{where}: [store] default_graph is "union" or "named" (`ontoloom init '
                "--endpoint URL` again finds out which)"
            )
        engine = table.get("engine")
        gaps = table.get("gaps", [])
        if (
            not isinstance(gaps, list)
            or not all(isinstance(g, str) for g in gaps)
            or not isinstance(engine, str | None)
        ):
            raise BadInput(
                f"{where}: [store] engine is a name and gaps a list of names (`ontoloom init "
                "--endpoint URL` writes both)"
            )
        return cls(query, update, float(timeout), store, semantics, engine, tuple(gaps))


_STORE_KEYS = (
    "endpoint",
    "update_endpoint",
    "graph_store",
    "timeout",
    "default_graph",
    "engine",
    "gaps",
)

# What an engine answers otherwise than the embedded store, found by `init` (probe) and
# named there and by `ontoloom status`: each key with what it means for a user.
ENGINE_GAPS = {
    "unbound-transitive-path": (
        "a property path with + or * whose two ends are both unbound (`?a ol:blocks+ ?b`) "
        "is refused by the engine; bind one end, or write `?a ol:blocks ?m . ?m ol:blocks* ?b`"
    ),
    "transitive-path-to-itself": (
        "a property path with + or * from a variable back to the same variable (`?t "
        "ol:blocks+ ?t`, the cycles query) is refused by the engine; write `?t ol:blocks ?m . "
        "?m ol:blocks* ?t` from a bound ?t"
    ),
    "booleans-as-integers": (
        "the engine answers a boolean (`true`, `isBlank(?x)`, a stored xsd:boolean) as the "
        "integer 1 or 0 in query results; compare with 1 and 0, or ask with FILTER"
    ),
    "result-cap": (
        "the engine cuts an answer at {cap} rows: `ontoloom query` refuses a SELECT past it "
        "(never returned in part) and a CONSTRUCT or DESCRIBE answer of {cap} triples or more "
        "(the engine cuts those without a sign); ontoloom's own reads page; narrow the query "
        "(LIMIT, FILTER) or raise the engine's limit (Virtuoso: ResultSetMaxRows)"
    ),
}


def gap_text(gap: str) -> str:
    """What a recorded gap (``key`` or ``key=value``) means, in words.

    >>> gap_text("result-cap=10000")[:44]
    'the engine cuts an answer at 10000 rows: `on'
    """
    key, _, value = gap.partition("=")
    text = ENGINE_GAPS.get(key)
    if text is None:
        return f"{gap} (a gap this ontoloom does not know: `ontoloom init --endpoint URL` again)"
    return text.format(cap=value or "some number of")


def result_cap(gaps: Iterable[str]) -> int | None:
    """The row limit a ``result-cap=N`` gap names, if any."""
    for gap in gaps:
        key, _, value = gap.partition("=")
        if key == "result-cap" and value.isdigit():
            return int(value)
    return None


def _url(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise BadInput(f"{where}: give the endpoint's URL, e.g. http://localhost:7878/query")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        # not quoted: a mistyped URL may hold a secret
        raise BadInput(f"{where}: the value is not an http(s) URL (http://host:port/path)")
    if parts.username is not None or parts.password is not None or _credential_in(parts):
        raise BadInput(
            f"{where}: the URL carries credentials (in its user part, a query parameter or "
            "its fragment); remove them from the URL, which ontoloom.toml keeps in plain "
            "text, and set ONTOLOOM_ENDPOINT_USER and ONTOLOOM_ENDPOINT_PASSWORD (or "
            "ONTOLOOM_ENDPOINT_TOKEN)"
        )
    return value


_CREDENTIAL_PARAMETER = re.compile(
    r"(?i)(?:pass(?:word|wd)?|pwd|secret|token|api[-_]?key|key|auth\w*|access[-_]?token|"
    r"sig(?:nature)?|session|sid|credential\w*)"
)


def _credential_in(parts: Any) -> bool:
    """Whether an endpoint URL's query or fragment holds a credential: a parameter named
    like one (``?token=…``, ``&api_key=…``), or text the secret judge recognises. An
    endpoint URL needs neither for a credential: they go in the environment.

    >>> from urllib.parse import urlsplit
    >>> _credential_in(urlsplit("http://h/sparql?default-graph-uri=urn:x"))
    False
    >>> _credential_in(urlsplit("http://h/sparql?access_token=abc")), _credential_in(urlsplit("http://h/q#key=1"))
    (True, True)
    """
    from urllib.parse import parse_qsl

    from ontoloom.secret_text import holds_secret

    for text in (parts.query, parts.fragment):
        if not text:
            continue
        if holds_secret(text):
            return True
        for name, _ in parse_qsl(text, keep_blank_values=True):
            if _CREDENTIAL_PARAMETER.fullmatch(name.strip()):
                return True
    return False


def credentials(data_dir: Path | None) -> httpx.Auth | None:
    """The endpoint's credentials: from the environment, else the data dir's file."""
    token = os.environ.get("ONTOLOOM_ENDPOINT_TOKEN")
    user = os.environ.get("ONTOLOOM_ENDPOINT_USER")
    if token:
        return _Bearer(token)
    if user:
        return httpx.BasicAuth(user, os.environ.get("ONTOLOOM_ENDPOINT_PASSWORD", ""))
    if data_dir is None:
        return None
    path = data_dir / CREDENTIALS_FILE
    if not path.exists():
        return None
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise BadInput(
            f"{path}: readable by others (mode {mode:o}); `chmod 600 {path}` and try again"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput(
            f"{path}: not JSON ({type(exc).__name__}); write "
            '{"user": …, "password": …} or {"token": …}'
        ) from None
    if isinstance(data, dict) and isinstance(data.get("token"), str):
        return _Bearer(data["token"])
    if isinstance(data, dict) and isinstance(data.get("user"), str):
        return httpx.BasicAuth(data["user"], str(data.get("password", "")))
    raise BadInput(f'{path}: write {{"user": …, "password": …}} or {{"token": …}}')


class _Bearer(httpx.Auth):
    def __init__(self, token: str) -> None:
        self._header = f"Bearer {token}"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = self._header
        yield request


# -- blank nodes and bindings -------------------------------------------------------------------
@overload
def skolem(term: Subject) -> Subject: ...
@overload
def skolem(term: Term) -> Term: ...
def skolem(term: Term) -> Term:
    """A blank node as the well-known IRI that stands for it in the store."""
    return NamedNode(GENID + term.value) if isinstance(term, BlankNode) else term


@overload
def unskolem(term: Subject) -> Subject: ...
@overload
def unskolem(term: Term) -> Term: ...
def unskolem(term: Term) -> Term:
    if isinstance(term, NamedNode) and term.value.startswith(GENID):
        return BlankNode(term.value[len(GENID) :])
    return term


def _skolem_quad(quad: Quad) -> Quad:
    s, p, o = spo(quad)
    return Quad(skolem(s), p, skolem(o), quad.graph_name)


def _unskolem_quad(quad: Quad) -> Quad:
    s, p, o = spo(quad)
    return Quad(unskolem(s), p, unskolem(o), quad.graph_name)


def with_values(sparql: str, bindings: Mapping[str, Term] | None) -> str:
    """``sparql`` with ``bindings`` as a VALUES block opening its WHERE group.

    The group is found by reading the text as SPARQL tokens (comments, strings and IRIs are
    skipped): the first top-level ``{`` — the second for a CONSTRUCT with a template.

    >>> with_values('SELECT ?o WHERE { ?s ?p ?o } # {', {"s": NamedNode("http://a")})
    'SELECT ?o WHERE { VALUES (?s) { (<http://a>) } ?s ?p ?o } # {'
    """
    if not bindings:
        return sparql
    names = sorted(bindings)
    row = " ".join(str(skolem(bindings[n])) for n in names)
    block = f" VALUES ({' '.join('?' + n for n in names)}) {{ ({row}) }}"
    opening = _where_brace(sparql)
    return sparql[: opening + 1] + block + sparql[opening + 1 :]


def _where_brace(text: str) -> int:
    keyword_construct = False
    seen_groups = 0
    i, n = 0, len(text)
    word = ""
    while i < n:
        c = text[i]
        if c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if c in "\"'":
            quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else c
            i += len(quote)
            while i < n and not text.startswith(quote, i):
                i += 2 if text[i] == "\\" else 1
            i += len(quote)
            continue
        if c == "<":
            end = i + 1
            while end < n and text[end] not in '<>"{}|^`\\ \t\r\n':
                end += 1
            if end < n and text[end] == ">":
                i = end + 1
                continue
        if c.isalpha():
            start = i
            while i < n and (text[i].isalnum() or text[i] == "_"):
                i += 1
            word = text[start:i].upper()
            if word == "CONSTRUCT":
                keyword_construct = True
            continue
        if c == "{":
            if keyword_construct and seen_groups == 0 and word != "WHERE":
                seen_groups = 1
                depth, i = 1, i + 1
                while i < n and depth:  # skip the template
                    depth += {"{": 1, "}": -1}.get(text[i], 0)
                    i += 1
                word = ""
                continue
            return i
        i += 1
    raise BadInput("a query with bindings needs a WHERE group")


def _names_dataset(text: str) -> bool:
    """Whether a query names its own dataset (``FROM``, ``FROM NAMED``), which the SPARQL
    Protocol's dataset would override.

    >>> _names_dataset("PREFIX from: <urn:x#> SELECT * WHERE { ?s from:p ?o }")
    False
    >>> _names_dataset("SELECT * FROM <urn:g> WHERE { ?s ?p ?o }")
    True
    """
    return any(word == "FROM" and not prefix for word, prefix in _tokens(text))


_FORMS = ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")


def _query_form(text: str) -> str | None:
    """The form of a SPARQL query (SELECT, ASK, CONSTRUCT or DESCRIBE): its first such
    keyword, the prologue (PREFIX, BASE) aside; None when it has none.

    >>> _query_form('PREFIX select: <urn:x#> # SELECT\\nCONSTRUCT { ?s a select:X } WHERE { }')
    'CONSTRUCT'
    """
    return next((w for w, prefix in _tokens(text) if w in _FORMS and not prefix), None)


def _tokens(text: str) -> Iterator[tuple[str, bool]]:
    """The keywords and names of a SPARQL text in order, upper-cased, each with whether it
    is a prefix name (``ex`` in ``ex:a``); comments, strings, IRIs and variables skipped."""
    i, n = 0, len(text)
    while i < n:
        kind, end = _lexeme(text, i)
        if kind == "word" and text[i - 1 : i] not in ("?", "$", ":"):
            yield text[i:end].upper(), text[end : end + 1] == ":"
        i = end


def _lexeme(text: str, i: int) -> tuple[str, int]:
    """What starts at ``i`` in a SPARQL text — a ``comment``, a ``string``, an ``iri``, a
    ``word`` (letters, digits, ``_``) or one ``other`` character — and where it ends: the one
    scanner of this module's text rewrites, so none reads inside a string or an IRI."""
    c, n = text[i], len(text)
    if c == "#":
        end = text.find("\n", i)
        return "comment", n if end < 0 else end
    if c in "\"'":
        quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else c
        end = i + len(quote)
        while end < n and not text.startswith(quote, end):
            end += 2 if text[end] == "\\" else 1
        return "string", min(end + len(quote), n)
    if (
        c == "<"
        and (close := text.find(">", i)) > 0
        and not any(ch in text[i + 1 : close] for ch in ' \t\r\n"{}|^`<')
    ):
        return "iri", close + 1
    if c.isalpha():
        end = i
        while end < n and (text[end].isalnum() or text[end] == "_"):
            end += 1
        return "word", end
    return "other", i + 1


_TYPED = re.compile(r'"((?:[^"\\\n]|\\.)*)"\^\^<(' + re.escape(XSD) + r"[A-Za-z]+)>")


def _typed_literals(sparql: str) -> list[Literal]:
    """The XSD-typed literals written out in full in a SPARQL text (as ontoloom writes
    them): the candidates when an engine refuses the text for a value."""
    found = []
    for match in _TYPED.finditer(sparql):
        with contextlib.suppress(SyntaxError, ValueError):
            term = pyoxigraph.parse(
                f"<urn:x> <urn:x> {match.group(0)} .".encode(), format=RdfFormat.N_TRIPLES
            )
            found += [t.object for t in term if isinstance(t.object, Literal)]
    return found


_GENID_BYTES = GENID.encode()


def _unskolem_results(body: bytes) -> bytes:
    """A JSON results document with the store's skolem IRIs as the blank nodes they stand
    for (as :func:`unskolem` turns them back in rows)."""
    if _GENID_BYTES not in body:
        return body
    try:
        doc = json.loads(body)
    except ValueError:
        return body  # the parser names what is wrong with it
    for row in doc.get("results", {}).get("bindings", []):
        for term in row.values():
            value = term.get("value", "")
            if term.get("type") == "uri" and value.startswith(GENID):
                term["type"], term["value"] = "bnode", value[len(GENID) :]
    return json.dumps(doc).encode()


_BLANK_TESTS = {"ISBLANK": "|| ", "ISIRI": "&& !", "ISURI": "&& !"}


def blank_aware(text: str) -> str:
    """``text`` with each ``isBlank(E)`` also true, and each ``isIRI(E)``/``isURI(E)`` false,
    for a skolem IRI — the store's stand-in for a blank node — so that they answer as over
    the blank nodes written. Comments, strings and IRIs are left alone.

    >>> blank_aware('SELECT * WHERE { ?s ?p ?o FILTER(isBlank(?o) && "isIRI(" != STR(?s)) }')
    'SELECT * WHERE { ?s ?p ?o FILTER((isBlank(?o) || STRSTARTS(STR(?o), "https://ontoloom.dev/.well-known/genid/")) && "isIRI(" != STR(?s)) }'
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        kind, end = _lexeme(text, i)
        if kind == "word":
            word = text[i:end]
            test = _BLANK_TESTS.get(word.upper())
            opening = end
            while opening < n and text[opening].isspace():
                opening += 1
            called = test is not None and text[opening : opening + 1] == "("
            closing = _closing(text, opening) if called else None
            if closing is not None and text[i - 1 : i] not in ("?", "$", ":"):
                argument = blank_aware(text[opening + 1 : closing])
                out.append(f'({word}({argument}) {test}STRSTARTS(STR({argument}), "{GENID}"))')
                i = closing + 1
                continue
        out.append(text[i:end])
        i = end
    return "".join(out)


def _closing(text: str, opening: int) -> int | None:
    """Where the parenthesis at ``opening`` closes (strings, IRIs and comments skipped), or
    None."""
    depth, i, n = 0, opening, len(text)
    while i < n:
        kind, end = _lexeme(text, i)
        if kind == "other" and text[i] == "(":
            depth += 1
        elif kind == "other" and text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
        i = end
    return None


def _standard_results(body: bytes) -> bytes:
    """A JSON results document as the standard has it, from engines that depart from it:
    Virtuoso answers an ASK as one binding ``__ASK_RETVAL`` (1 when true, no row when false)
    and names blank nodes ``nodeID://…``, which no standard parser accepts."""
    if b"__ASK_RETVAL" not in body and b"nodeID://" not in body:
        return body
    try:
        doc = json.loads(body)
    except ValueError:
        return body  # the parser names what is wrong with it
    head_vars = doc.get("head", {}).get("vars")
    if head_vars == ["__ASK_RETVAL"] and "boolean" not in doc:
        rows = doc.get("results", {}).get("bindings", [])
        true = any(r.get("__ASK_RETVAL", {}).get("value", "0") not in ("0", "") for r in rows)
        return json.dumps({"head": {}, "boolean": true}).encode()
    for row in doc.get("results", {}).get("bindings", []):
        for term in row.values():
            if term.get("type") == "bnode" and term.get("value", "").startswith("nodeID://"):
                term["value"] = term["value"][len("nodeID://") :]
    return json.dumps(doc).encode()


# -- the backend --------------------------------------------------------------------------------
def _int_header(response: httpx.Response, name: str) -> int | None:
    value = response.headers.get(name)
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx's default TLS context, made once: loading the CA bundle took 20 ms, which every
    command paid when opening the store, for an http:// endpoint too."""
    return httpx.create_ssl_context()


class SparqlEndpointBackend:
    """A SPARQL 1.1 endpoint behind the :class:`~ontoloom.store.base.Backend` seam."""

    union = True
    # Another engine, over the network: validation runs on a local copy (its compiled shape
    # queries then mean what they mean on a scratch copy, and cost no round trip each). A
    # query runs in the engine's own process, stopped at its deadline by the client.
    validates_in_place = False
    stops_queries_at_deadline = True

    def __init__(
        self,
        config: EndpointConfig,
        *,
        writable: bool,
        auth: httpx.Auth | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.config = config
        self.writable = writable
        self.lock: DataDirLock | None = None
        self.engine = "the SPARQL engine"  # its Server header once it has answered
        self._page_size = PAGE  # rows a bulk read asks for at once (less, once capped)
        # Who this is among the gateways (its data dir's id): one writer at a time per data
        # dir, so a claim of its own that failed but may have landed is never in its way.
        self.gateway = uuid.uuid4().hex
        self._commit_time = 0.02  # seconds one narrow commit took here lately (claim to read-back)
        self._client = httpx.Client(
            auth=auth,
            timeout=config.timeout,
            transport=transport,
            follow_redirects=False,
            verify=_tls_context(),
        )

    # -- HTTP ----------------------------------------------------------------------------------
    def _post(
        self,
        url: str,
        data: dict[str, Any] | None,
        accept: str | None,
        what: str,
        timeout: float | None = None,
        params: dict[str, str] | None = None,
    ) -> httpx.Response:
        """POST ``data`` as a form (a GET of ``params`` when there is none); the answer, or
        one error naming the endpoint and what failed."""
        headers = {"Accept": accept} if accept else {}
        try:
            limit = httpx.USE_CLIENT_DEFAULT if timeout is None else timeout
            method = "GET" if data is None else "POST"
            response = self._client.request(
                method, url, data=data, params=params, headers=headers, timeout=limit
            )
            body = response.read()
        except httpx.TimeoutException:
            if timeout is not None:
                raise QueryTimeout(
                    f"the query ran longer than {timeout:g} s and was stopped (waiting for it: "
                    f"the store at {url} may finish it under its own time limit)"
                ) from None
            raise EndpointError(
                f"the SPARQL endpoint {url} did not answer {what} within "
                f"{self.config.timeout:g} s ([store] timeout in ontoloom.toml)"
            ) from None
        except httpx.HTTPError as exc:
            raise EndpointError(
                f"the SPARQL endpoint {url} cannot be reached for {what}: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        server = response.headers.get("server", "").split(" ")[0]
        if server:
            self.engine = server  # named in messages about what this engine refuses
        if response.status_code in (401, 403):
            raise EndpointError(
                f"the SPARQL endpoint {url} refused {what} (HTTP {response.status_code}): "
                "check ONTOLOOM_ENDPOINT_TOKEN / ONTOLOOM_ENDPOINT_USER or the data dir's "
                f"{CREDENTIALS_FILE}"
            )
        if response.status_code == 400:
            detail = body.decode("utf-8", "replace").strip().splitlines()[:1]
            malformed = BadInput(
                f"the SPARQL endpoint {url} rejected {what} as malformed: {' '.join(detail)[:300]}"
            )
            malformed.status = 400  # type: ignore[attr-defined]
            malformed.detail = " ".join(detail)  # type: ignore[attr-defined]
            raise malformed
        if response.status_code >= 300:
            # The engine's own words (first line: Virtuoso echoes the whole query after it).
            detail = body.decode("utf-8", "replace").strip().splitlines()[:1]
            said = f": {detail[0][:200]}" if detail else ""
            failed = EndpointError(
                f"the SPARQL endpoint {url} failed {what} (HTTP {response.status_code}){said}"
            )
            failed.status, failed.detail = response.status_code, " ".join(detail)
            raise failed
        return response

    def _query(
        self,
        sparql: str,
        accept: str,
        timeout: float | None = None,
        dataset: list[Term] | None = None,
    ) -> httpx.Response:
        form: dict[str, Any] = {"query": sparql}
        if dataset is None and self.config.default_graph == "named" and not _names_dataset(sparql):
            # The store's default graph is a graph of its own: the query reads the union of
            # the named graphs, each named in its dataset (one more round trip to list them;
            # META when there is none, as no dataset at all would mean the store's own).
            dataset = self._graphs(ours=False) or [META]
        if dataset is not None:  # SPARQL 1.1 Protocol: the default graph and the named graphs
            form["default-graph-uri"] = form["named-graph-uri"] = [g.value for g in dataset]
        for attempt in range(READ_ATTEMPTS):
            try:
                return self._post(self.config.query_url, form, accept, "a query", timeout)
            except EndpointError as exc:
                # A read the engine aborted in a race with a writer (SQLSTATE 40001, Virtuoso
                # at repeatable read: "Transaction deadlocked") changed nothing: ask again.
                if "40001" in exc.detail and attempt + 1 < READ_ATTEMPTS:
                    time.sleep(random.uniform(0, 0.01 * 2**attempt))
                    continue
                if exc.status is not None:  # the engine answered: a value?
                    self._refuse_literals(_typed_literals(sparql), queried=True)
                raise
            except BadInput as exc:
                if getattr(exc, "status", None) is not None:  # the engine answered: a value?
                    self._refuse_literals(_typed_literals(sparql), queried=True)
                raise
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _update(self, sparql: str, what: str = "an update") -> None:
        if not self.writable:
            raise ReadOnly("this store is open read-only: nothing was stored")
        self._post(self.config.update_url, {"update": sparql}, None, what)

    def _results(self, sparql: str, *, capped_ok: bool = False) -> Any:
        """The parsed answer to a SELECT or ASK; never a silently cut one."""
        response = self._query(sparql, _JSON_RESULTS)
        if not capped_ok:
            self._refuse_capped(response)
        return self._parse_results(response.content)

    def _refuse_capped(self, response: httpx.Response) -> None:
        """An answer the engine cut short says so in a header (Virtuoso: ``X-SPARQL-MaxRows``
        past its ResultSetMaxRows, ``X-SQL-State`` for an "anytime" partial answer): refuse
        it rather than return part of the answer as if it were all of it."""
        cap = response.headers.get("x-sparql-maxrows")
        if cap is not None:
            raise EndpointError(
                f"the SPARQL endpoint {self.config.query_url} ({self.engine}) cut its answer "
                f"at {cap} rows (its result limit); narrow the query (LIMIT, a FILTER), or "
                "raise the engine's limit (Virtuoso: ResultSetMaxRows in virtuoso.ini [SPARQL])"
            )
        state = response.headers.get("x-sql-state")
        if state is not None:
            message = response.headers.get("x-sql-message", "")
            raise EndpointError(
                f"the SPARQL endpoint {self.config.query_url} ({self.engine}) sent a partial "
                f"answer ({state} {message}".rstrip()
                + "): the query hit its time limit"
            )

    def _parse_results(self, body: bytes) -> Any:
        try:
            return pyoxigraph.parse_query_results(
                _standard_results(body), format=pyoxigraph.QueryResultsFormat.JSON
            )
        except (SyntaxError, ValueError) as exc:
            raise EndpointError(
                f"the SPARQL endpoint {self.config.query_url} sent an incomplete or "
                f"unreadable answer ({exc})"
            ) from None

    def _all_rows(self, head: str, where: str) -> list[Row]:
        """Every row of ``head WHERE { where }``, fetched in pages (an engine may cap one
        answer: Virtuoso at 10,000 rows by default) and checked complete against a count
        of the same pattern: a page lost or repeated is an error, never a partial answer.
        The count and the pages are several requests, so a writer landing in between makes
        them disagree: the read, harmless to repeat, is asked again before giving up."""
        for attempt in range(READ_ATTEMPTS):
            rows = self._rows_as_counted(head, where)
            if isinstance(rows, list):
                return rows
            if attempt + 1 < READ_ATTEMPTS:
                time.sleep(random.uniform(0, 0.01 * 2**attempt))
        raise EndpointError(
            f"the SPARQL endpoint {self.config.query_url} answered {rows} when read in pages "
            f"of {self._page_size}, {READ_ATTEMPTS} times (the store changes faster than it "
            "can be read, or the engine pages unstably): try again"
        )

    def _rows_as_counted(self, head: str, where: str) -> list[Row] | str:
        """The rows, or what was wrong with them (``"9 distinct rows of 5"``). One page is
        one answer, as the engine saw the store at one moment; rows read in several pages
        are only one store's if no commit landed meanwhile (the generation did not move)."""
        counted = list(
            self.select(
                f"SELECT ?n ?g WHERE {{ {{ SELECT (COUNT(*) AS ?n) WHERE {{ {where} }} }} "
                f"OPTIONAL {{ GRAPH {META} {{ {STORE_NODE} {GENERATION} ?g }} }} }}"
            )
        )
        total = int(counted[0]["n"].value)
        before = max((int(r["g"].value) for r in counted if r["g"] is not None), default=0)
        out: list[Row] = []
        size = self._page_size
        while len(out) < total:
            response = self._query(
                f"{head} WHERE {{ {where} }} LIMIT {size} OFFSET {len(out)}", _JSON_RESULTS
            )
            cap = _int_header(response, "x-sparql-maxrows")
            if cap is not None and cap < size:
                # The engine cut the page at its own limit: a cut page comes in an order of
                # its own (Virtuoso), so pages of its size are asked for, from the start.
                self._page_size = size = cap
                out = []
                continue
            page = self._rows(self._parse_results(response.content))
            if not page:
                break
            out += page
        distinct = {tuple(sorted(r.items(), key=lambda kv: kv[0])) for r in out}
        if len(out) != total or len(distinct) != total:
            return f"{len(distinct)} distinct rows of {total}"
        if total > size and self.generation() != before:  # read in several pages
            return f"{total} rows while a commit landed"
        return out

    # -- reads ---------------------------------------------------------------------------------
    def select(self, sparql: str, bindings: Mapping[str, Term] | None = None) -> Iterator[Row]:
        return iter(self._rows(self._results(with_values(sparql, bindings))))

    @staticmethod
    def _rows(solutions: Any) -> list[Row]:
        names = [v.value for v in solutions.variables]
        return [
            {name: None if solution[name] is None else unskolem(solution[name]) for name in names}
            for solution in solutions
        ]

    def ask(self, sparql: str, bindings: Mapping[str, Term] | None = None) -> bool:
        answer = self._results(with_values(sparql, bindings))
        if not isinstance(answer, pyoxigraph.QueryBoolean):
            raise EndpointError(
                f"the SPARQL endpoint {self.config.query_url} answered an ASK with solutions"
            )
        return bool(answer)

    def construct(
        self, sparql: str, bindings: Mapping[str, Term] | None = None
    ) -> Iterator[Triple]:
        response = self._query(with_values(sparql, bindings), _GRAPH_ACCEPT)
        self._refuse_capped(response)
        return iter(_graph_answer(response, f"the SPARQL endpoint {self.config.query_url}"))

    def serialize_results(
        self,
        sparql: str,
        bindings: Mapping[str, Term] | None,
        format_name: str,
        timeout: float | None = None,
    ) -> tuple[str, bytes]:
        # Parsed and written again by the local serialisers: the same bytes as embedded.
        # Asked over ontoloom's graphs only (a store may hold others: Virtuoso its own system
        # graphs), unless the query names its dataset itself (FROM, FROM NAMED).
        # A graph is asked for by the query's form: an engine offered both answers a
        # CONSTRUCT with whichever it likes (Virtuoso: a JSON table of ?s ?p ?o).
        from ontoloom.store.embedded import FORMATS

        graph_form = _query_form(sparql) in ("CONSTRUCT", "DESCRIBE")
        accept = _GRAPH_ACCEPT if graph_form else f"{_JSON_RESULTS}, {_NTRIPLES};q=0.9"
        dataset = None if _names_dataset(sparql) else list(self.named_graphs())
        # Blank nodes are IRIs in the store (skolemised): isBlank and isIRI are asked so that
        # they answer as they would of the blank nodes written.
        sparql = blank_aware(with_values(sparql, bindings))
        response = self._query(sparql, accept, timeout, dataset)
        self._refuse_capped(response)
        media = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if "json" in media and media != "application/ld+json":
            parsed = self._parse_results(_unskolem_results(response.content))
        else:
            graph = _graph_answer(response, f"the SPARQL endpoint {self.config.query_url}")
            cap = result_cap(self.config.gaps)
            if cap is not None and len(graph) >= cap:
                raise EndpointError(
                    f"the SPARQL endpoint {self.config.query_url} ({self.config.engine or self.engine}) "
                    f"answered {len(graph)} triples, and it cuts a graph answer at {cap} without "
                    "a sign (its result limit): this one may be cut, so it is not returned; narrow "
                    "the query, or raise the engine's limit (Virtuoso: ResultSetMaxRows in "
                    "virtuoso.ini [SPARQL])"
                )
            out = BytesIO()
            serialize(graph, out, FORMATS.get(format_name, RdfFormat.TURTLE))
            return "graph", out.getvalue()
        out = BytesIO()
        fmt_results = {
            "csv": pyoxigraph.QueryResultsFormat.CSV,
            "tsv": pyoxigraph.QueryResultsFormat.TSV,
            "xml": pyoxigraph.QueryResultsFormat.XML,
        }.get(format_name, pyoxigraph.QueryResultsFormat.JSON)
        parsed.serialize(out, fmt_results)
        kind = "ask" if isinstance(parsed, pyoxigraph.QueryBoolean) else "select"
        return kind, out.getvalue()

    def around(
        self, nodes: Iterable[Term], predicate: Term | None = None, *, incoming: bool = False
    ) -> Iterator[Quad]:
        near = "o" if incoming else "s"
        p, projected = ("?p", "?s ?p") if predicate is None else (str(predicate), "?s")
        query = (
            f"SELECT {projected} ?o ?g WHERE {{ VALUES ?{near} {{ %s }} GRAPH ?g {{ ?s {p} ?o }} }}"
        )
        nodes = list(nodes)
        iris = [n for n in nodes if not isinstance(n, BlankNode)]
        rows: list[Iterator[Row]] = [
            self.select(query % " ".join(map(str, iris[i : i + _AROUND_BATCH])))
            for i in range(0, len(iris), _AROUND_BATCH)
        ]
        # VALUES cannot hold a blank node: each is bound on its own
        rows += [self.select(query % "UNDEF", {near: n}) for n in nodes if isinstance(n, BlankNode)]
        for row in (r for batch in rows for r in batch):
            yield Quad(
                row["s"], row["p"] if predicate is None else named(predicate), row["o"], row["g"]
            )

    def mentioning(self, node: Term, limit: int) -> list[Quad]:
        # Both directions in one round trip; the two branches bind apart (no BIND in a
        # UNION: beyond Virtuoso's compiler). A quad from the node to itself comes in both:
        # twice the rows hold ``limit`` distinct quads whenever there are that many.
        query = (
            "SELECT ?n ?p ?o ?g ?s ?q ?h WHERE { { GRAPH ?g { ?n ?p ?o } } UNION "
            f"{{ GRAPH ?h {{ ?s ?q ?n }} }} FILTER(COALESCE(?g, ?h) != {META}) }} "
            f"LIMIT {2 * limit}"
        )
        rows = list(self.select(query, {"n": node}))
        found = [Quad(subject(node), r["p"], r["o"], r["g"]) for r in rows if r["o"] is not None]
        found += [Quad(r["s"], r["q"], node, r["h"]) for r in rows if r["o"] is None]
        return list(dict.fromkeys(found))[:limit]

    def quads(self, graph: Term | None = None) -> Iterator[Quad]:
        """Every quad of ontoloom's graphs (or of one), as written: read graph by graph, so
        no engine's cap on one answer can cut it short unnoticed."""
        graphs = list(self.named_graphs()) if graph is None else [graph]
        quads: list[Quad] = []
        for g in graphs:
            name = graph_name(g)
            quads += [Quad(t.subject, t.predicate, t.object, name) for t in self._triples(g)]
        return self.as_written(quads)

    def _triples(self, graph: Term) -> list[Triple]:
        """One graph's triples: in one Graph Store Protocol GET when ``[store] graph_store``
        names the service, else in pages of a SELECT; either way checked against a count of
        the graph, so a capped or cut answer is an error, never a partial graph."""
        where = f"GRAPH {skolem(graph)} {{ ?s ?p ?o }}"
        if self.config.store_url is None:
            rows = self._all_rows("SELECT ?s ?p ?o", where)
            return [Triple(r["s"], r["p"], r["o"]) for r in rows]
        total = int(next(self.select(f"SELECT (COUNT(*) AS ?n) WHERE {{ {where} }}"))["n"].value)
        if total == 0:
            return []  # an empty graph is one the Graph Store Protocol may answer 404 for
        url = self.config.store_url
        response = self._post(
            url, None, _NTRIPLES, f"reading graph {graph}", params={"graph": skolem(graph).value}
        )
        triples = set(_graph_answer(response, f"the Graph Store Protocol service {url}", graph))
        if len(triples) != total:
            raise EndpointError(
                f"the Graph Store Protocol service {url} sent {len(triples)} triples of graph "
                f"{graph}, which holds {total} (cut at a limit, or changed meanwhile): try "
                "again, or leave graph_store out of [store] to read it in pages"
            )
        return list(triples)

    def named_graphs(self) -> Iterator[Term]:
        """ontoloom's named graphs that hold anything: those under its graph namespace (a
        store may hold others — Virtuoso its own system graphs — that are none of ours)."""
        return iter(sorted(self._graphs(), key=str))

    def _graphs(self, *, ours: bool = True) -> list[Term]:
        """:meth:`named_graphs` (with ``ours=False``, every named graph that holds anything,
        as a union default graph would show), asked of the store as it is (no dataset)."""
        only = f'FILTER(STRSTARTS(STR(?g), "{GRAPH_BASE}"))' if ours else ""
        response = self._post(
            self.config.query_url,
            {"query": f"SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ ?s ?p ?o }} {only} }}"},
            _JSON_RESULTS,
            "a query listing ontoloom's graphs",
        )
        self._refuse_capped(response)
        return [r["g"] for r in self._rows(self._parse_results(response.content))]

    def _records(self) -> dict[Term, Literal]:
        rows = self._all_rows(
            "SELECT ?r ?l ?d", f"GRAPH {META} {{ ?r {LEXICAL_FORM} ?l ; {DATATYPE} ?d }}"
        )
        return {r["r"]: written_literal(r["l"], r["d"]) for r in rows}

    def as_written(self, quads: Iterable[Quad]) -> Iterator[Quad]:
        quads = list(quads)
        records = self._records()
        if not records:
            return iter(quads)
        out = []
        for quad in quads:
            key = _record_of(quad)
            literal = records.get(key) if key is not None else None
            out.append(
                quad
                if literal is None
                else Quad(quad.subject, quad.predicate, literal, quad.graph_name)
            )
        return iter(out)

    def keeps_literals_as_written(self) -> bool:
        # unknown without a round trip, and nothing asks it of a store not validated in place
        return False

    def rewritten(self) -> list[Quad]:
        records = self._records()
        if not records:
            return []
        out = []
        for quad in self.quads():
            if quad.graph_name != META and _record_of(quad) in records:
                out.append(quad)
        return out

    def data_quads(self) -> Iterator[Quad]:
        return iter([q for g in self.named_graphs() if g != META for q in self.quads(g)])

    def generation(self) -> int:
        rows = self.select(f"SELECT ?n WHERE {{ GRAPH {META} {{ {STORE_NODE} {GENERATION} ?n }} }}")
        return max((int(r["n"].value) for r in rows), default=0)

    def last_change(self) -> str | None:
        rows = self.select(
            f"SELECT ?t WHERE {{ GRAPH {META} {{ {STORE_NODE} {LAST_CHANGE} ?t }} }}"
        )
        return max((r["t"].value for r in rows), default=None)

    def changes_since(self, generation: int) -> list[tuple[int, list[Term]]] | None:
        """The nodes each commit after ``generation`` touched, oldest first; None when the
        change log no longer reaches back that far (a derived index then rebuilds)."""
        rows = self.select(
            f"SELECT ?n ?t WHERE {{ GRAPH {META} {{ ?c {GENERATION} ?n ; {TOUCHED} ?t "
            f'FILTER(STRSTARTS(STR(?c), "{CHANGE_BASE}") && ?n > {int(generation)}) }} }}'
        )
        found = sorted((int(r["n"].value), r["t"].value) for r in rows)
        current = self.generation()
        if current > generation and (not found or found[0][0] != generation + 1):
            return None
        out = []
        for n, text in found:
            nodes = [
                unskolem(t.subject)
                for t in pyoxigraph.parse(text.encode(), format=RdfFormat.N_TRIPLES)
            ]
            out.append((n, nodes))
        return out

    # -- writes --------------------------------------------------------------------------------
    def initialise(self) -> None:
        """Give a store that has never held ontoloom data its generation 0."""
        self._update(
            f"INSERT {{ GRAPH {META} {{ {STORE_NODE} {GENERATION} 0 }} }} WHERE {{ "
            f"FILTER NOT EXISTS {{ GRAPH {META} {{ {STORE_NODE} {GENERATION} ?n }} }} }}",
            "setting the generation up",
        )

    def is_initialised(self) -> bool:
        """Whether the store holds ontoloom's bookkeeping graph.

        :raises EndpointError: ``init`` found the default graph to be the union of the named
            graphs and it no longer is (the engine was restarted otherwise): every query
            this gateway sends as is would read an empty graph.
        """
        if self.config.default_graph == "named":
            return self.ask(f"ASK {{ GRAPH {META} {{ {STORE_NODE} {GENERATION} ?n }} }}")
        rows = list(
            self.select(
                f"SELECT ?n ?seen WHERE {{ GRAPH {META} {{ {STORE_NODE} {GENERATION} ?n }} "
                f"OPTIONAL {{ {STORE_NODE} {GENERATION} ?seen }} }}"
            )
        )
        if rows and all(r["seen"] is None for r in rows):
            raise EndpointError(
                f"the SPARQL endpoint {self.config.query_url} no longer shows its named graphs "
                "in its default graph, as it did when this instance was initialised: run "
                "`ontoloom init --endpoint URL` again (ontoloom then names its graphs in every "
                "query), or start the store as before (oxigraph: `serve --union-default-graph`)"
            )
        return bool(rows)

    def probe(self) -> dict[str, Any]:
        """What this store is, found by asking it (``init`` records it in ``[store]``):

        * ``default_graph``: "union" when a triple written to a scratch named graph shows in
          the default graph, else "named" (queries then name ontoloom's graphs);
        * ``engine``: its ``Server`` header;
        * ``gaps``: what it answers otherwise than the embedded store (:data:`ENGINE_GAPS`),
          each found by a request that changes nothing.
        """
        probe = Quad(_UNION_PROBE, _UNION_PROBE, Literal("probe"), _UNION_PROBE)
        self._update(f"INSERT DATA {{ {_data(probe)} }}", "a probe of the default graph")
        try:
            seen = self._probe_query(f'ASK {{ {_UNION_PROBE} {_UNION_PROBE} "probe" }}')
        finally:
            self._update(f"DELETE DATA {{ {_data(probe)} }}", "removing the probe")
        if seen is None:
            raise EndpointError(
                f"the SPARQL endpoint {self.config.query_url} refused a plain ASK of its "
                "default graph"
            )
        answer = self._parse_results(seen.content)
        union = isinstance(answer, pyoxigraph.QueryBoolean) and bool(answer)
        gaps = []
        path = NamedNode("urn:ontoloom:path-probe")
        if self._probe_query(f"SELECT ?a ?b WHERE {{ ?a {path}+ ?b }} LIMIT 1") is None:
            gaps.append("unbound-transitive-path")
        if self._probe_query(f"SELECT ?a WHERE {{ ?a {path}+ ?a }} LIMIT 1") is None:
            gaps.append("transitive-path-to-itself")
        truth = self._probe_query("SELECT ?t WHERE { VALUES ?t { true } }")
        if truth is not None:
            answered = self._rows(self._parse_results(truth.content))
            if answered and answered[0]["t"] != Literal(True):
                gaps.append("booleans-as-integers")
        # PAGE + 2 rows, as a join of two short VALUES (Virtuoso refuses one of that length)
        side = " ".join(str(n) for n in range(int(PAGE**0.5) + 1))
        many = self._probe_query(
            f"SELECT * WHERE {{ VALUES ?a {{ {side} }} VALUES ?b {{ {side} }} }}"
        )
        cap = None if many is None else _int_header(many, "x-sparql-maxrows")
        if cap is not None:
            gaps.append(f"result-cap={cap}")
        return {"default_graph": "union" if union else "named", "engine": self.engine, "gaps": gaps}

    def _probe_query(self, sparql: str) -> httpx.Response | None:
        """The engine's answer to a query sent as is (no dataset of ours), or None when it
        refuses the query; an endpoint that cannot be reached is an error."""
        try:
            return self._post(self.config.query_url, {"query": sparql}, _JSON_RESULTS, "a probe")
        except (BadInput, EndpointError) as exc:
            if getattr(exc, "status", None) is None:
                raise
            return None

    def recording(self, reads: ReadSet) -> Recording:
        """This store as one validation reads it, noting what it read into ``reads``."""
        return Recording(self, reads, skolem)

    def apply(
        self,
        delta: Delta,
        expected: int | None = None,
        *,
        write_id: str | None = None,
        reads: ReadSet | None = None,
    ) -> int:
        """Commit ``delta`` in one SPARQL update that applies only while what its validation
        read is as it was at generation ``expected`` (the current one when None), stamped
        with ``write_id`` and a commit token that is read back afterwards. Returns the new
        generation.

        What was read is ``reads`` (:mod:`ontoloom.store.reads`); when None, or when it was
        the whole store, the update applies only while the generation is still ``expected``.
        Otherwise commits to other parts of the graph in between do not count: the commit
        goes in on top of the generation they made, claimed anew, without validating again.
        Either way the commits form one sequence of generations (the change log follows it).

        After a fault whose outcome is unknown (the update failed or timed out without a
        clear answer, its read-back failed) the store is asked, never guessed: a commit it
        holds is acknowledged once, one it surely does not hold (fenced off) is reported
        as not committed, and when it cannot be asked :class:`OutcomeUnknown` names the
        write id. Nothing here applies a delta twice.

        :raises CommitConflict: another gateway changed what this one read (or kept
            committing first); nothing was committed (the caller validates again and retries).
        :raises EndpointError: the endpoint failed and nothing was committed.
        :raises OutcomeUnknown: whether it was committed cannot be told now.
        """
        delta = delta.normalized()
        write_id = write_ids.valid(write_id) if write_id is not None else write_ids.new()
        if expected is None:
            expected = self.generation()
        if reads is None or reads.whole:
            return self._commit_on(expected, delta, write_id, None, expected)
        on = expected
        # As long as a writer waits for the lock (ONTOLOOM_LOCK_TIMEOUT), then the caller
        # validates again (and says "busy" in the end): a claim held by a dead gateway stays
        # live until the store's clock expires it.
        deadline, stalled = time.monotonic() + lock_timeout(), 0
        seen = expected  # the store's generation as last read
        for attempt in range(MOVE_ATTEMPTS):
            began = time.monotonic()
            if attempt and began > deadline:
                break
            try:
                generation = self._commit_on(on, delta, write_id, reads, expected)
            except _Moved as moved:
                # Another writer is committing on top of this generation, or has. Rather
                # than wait for its commit and then contend for the next one, queue behind
                # it at once: claim the generation after it (what the other writer's commit
                # will make), which is contended for while that commit is in flight; the
                # guarded update is sent once the store is there (:meth:`_commit_on`). The
                # store's generation, when a try read it, says where to go instead. A
                # generation that does not move (a claim whose holder died, or writers that
                # keep meeting) is left to the caller.
                if moved.generation is not None:
                    stalled = stalled + 1 if moved.generation <= seen else 0
                    seen = moved.generation
                    if stalled >= 3:
                        break
                on = moved.to if moved.to is not None else on + 1
                continue
            self._commit_time += (time.monotonic() - began - self._commit_time) / 4
            return generation
        raise CommitConflict(
            f"other gateways kept committing to {self.config.update_url} first "
            f"({attempt + 1} tries, what this write read unchanged)"
        )

    def _until(self, expected: int, token: str) -> None:
        """Holding the claim on ``expected``: return once the store's generation is
        ``expected`` (the commit this writer queued behind is in). If it is past it, or is
        below it with no live claim on it (the writer ahead gave up) or stays there for
        several commits' time (it died), the claim is withdrawn and :class:`_Moved` says
        which generation to claim instead."""
        wait = max(0.002, self._commit_time / 8)
        patience = time.monotonic() + max(0.25, 8 * self._commit_time)
        last = None
        while True:
            try:
                rows = list(
                    self.select(
                        f"SELECT ?gen ?c ?for ?at ?now WHERE {{ GRAPH {META} {{ {STORE_NODE} "
                        f"{GENERATION} ?gen }} OPTIONAL {{ GRAPH {META} {{ ?c {CLAIM_OF} ?gen ; "
                        f"{CLAIM_FOR} ?for OPTIONAL {{ ?c {CLAIM_AT} ?at }} }} }} "
                        "BIND(NOW() AS ?now) }"
                    )
                )
            except EndpointError:
                self._withdraw(expected, token)
                raise
            now = max((int(r["gen"].value) for r in rows), default=0)
            if now == expected:
                return
            ahead = self._live(rows, f"{CLAIM_BASE}{now}:{self.gateway}:")
            if now > expected:  # nothing can commit on it any more: the claim is left
                raise _Moved(to=now, generation=now)
            if not ahead or (now == last and time.monotonic() > patience):
                self._withdraw(expected, token)
                raise _Moved(to=now, generation=now)
            if now != last:  # the line moves: wait on
                last, patience = now, time.monotonic() + max(0.25, 8 * self._commit_time)
            time.sleep(wait)

    @staticmethod
    def _live(rows: Iterable[Row], own: str) -> list[str]:
        """The claims (``?c``, ``?for``, ``?at``, with the store's ``?now``) of ``rows`` that
        are live and not this gateway's (named ``own``…)."""
        live = []
        for row in rows:
            if row["c"] is None:
                continue
            other = row["c"].value
            if other.startswith(own):
                continue
            age = _age(row["at"], row["now"])
            # A claim without the store's time (left by an older ontoloom) has no age to
            # judge: never live, or it would block every writer for good.
            if age is not None and age < float(row["for"].value):
                live.append(other)
        return live

    def _commit_on(
        self,
        expected: int,
        delta: Delta,
        write_id: str,
        reads: ReadSet | None,
        since: int,
    ) -> int:
        """One try of :meth:`apply`: the commit of generation ``expected + 1``, guarded by
        ``reads`` as of generation ``since`` (None: by ``expected`` alone). The claim on
        ``expected`` reads the store's generation too: when the store is past it, the claim
        is given up for the store's generation; when it is behind (a writer queued behind
        another's commit in flight), the guarded update is sent once the store's generation
        is ``expected`` (:meth:`_until`).

        :raises _Moved: (``reads`` given) the generation moved on, what was read did not.
        """
        new = expected + 1
        change = NamedNode(f"{CHANGE_BASE}{new}")
        token = uuid.uuid4().hex
        try:
            now = self._claim(expected, token)
        except CommitConflict:
            if reads is not None:
                raise _Moved from None
            raise
        if reads is not None and now > expected:  # behind the store: claim where it is
            # (the claim is left: nothing can commit on a generation gone by; _compact
            # drops it)
            raise _Moved(to=now, generation=now)
        if reads is not None and now < expected:  # queued behind a commit in flight
            self._until(expected, token)
        try:
            self._update(
                self._guarded(expected, token, delta, write_id, reads, since),
                f"the commit of generation {new}",
            )
        except BadInput as exc:  # refused before it ran: nothing applied
            self._withdraw(expected, token)  # the generation stands: others may go on
            self._refuse_literals(delta)
            size = len(delta.adds) + len(delta.removes)
            raise EndpointError(
                f"{self.engine} at {self.config.update_url} refused the commit of generation "
                f"{new} ({size} quads in one SPARQL update): {getattr(exc, 'detail', '')[:200]}; "
                "nothing was committed. Every commit is one update, so that it applies whole "
                "or not at all; an engine that limits the size of one update (Virtuoso 7: a "
                "few thousand triples) takes a larger import only in parts: split the file "
                "and import each part (README, Scaling out)"
            ) from None
        except EndpointError as exc:
            # The answer was lost, not necessarily the commit: settle it with the store.
            outcome = self._settle(expected, token)
            if outcome is None:
                raise OutcomeUnknown(exc.message, write_id) from None
            if not outcome:
                if "40001" in exc.detail:  # SQLSTATE serialization failure: a lost race
                    raise CommitConflict(
                        f"{self.engine} at {self.config.update_url} aborted the commit in a "
                        f"race with another writer ({exc.detail[:120]})"
                    ) from None
                if exc.status is not None:  # the engine answered: maybe a value it refuses
                    self._refuse_literals(delta)
                raise EndpointError(f"{exc.message}; nothing was committed") from None
            return new
        # The update was answered: it applied, or its guard found the generation moved on.
        # Which of the two, only the store can say; a read-back that fails is asked again,
        # and never taken for "not committed" (that would validate and apply it again).
        committed = self._read_back(change, token)
        if committed is None:
            raise OutcomeUnknown(
                f"the SPARQL endpoint {self.config.query_url} took the commit of generation "
                f"{new} and then could not be asked whether it applied",
                write_id,
            )
        if committed:
            self._compact(new)
            return new
        if reads is not None:
            # The guard held it back: the generation moved on, or what was read changed.
            if self._reads_hold(reads, since):
                raise _Moved
            self._withdraw(expected, token)  # the generation may still stand: free it
            raise CommitConflict(
                f"another gateway changed what this write read at {self.config.update_url} "
                f"(since generation {since})"
            )
        raise CommitConflict(
            f"another gateway committed to {self.config.update_url} first (generation "
            f"{expected} is gone)"
        )

    def _read_back(self, change: NamedNode, token: str) -> bool | None:
        """:meth:`_committed`, asked again a few times (waits of :data:`READ_BACK_WAITS`)
        while the store cannot answer; None when it never did."""
        for wait in (*READ_BACK_WAITS, None):
            found = self._committed(change, token)
            if found is not None or wait is None:
                return found
            time.sleep(wait)
        return None

    def committed(self, write_id: str) -> list[int]:
        rows = self.select(
            f"SELECT ?n WHERE {{ GRAPH {META} {{ {write_ids.node(write_id)} {GENERATION} ?n }} }}"
        )
        return sorted(int(r["n"].value) for r in rows)

    def versions(self) -> tuple[int, int]:
        rows = list(
            self.select(
                f"SELECT ?n ?s WHERE {{ GRAPH {META} {{ {STORE_NODE} {GENERATION} ?n "
                f"OPTIONAL {{ {STORE_NODE} {SCHEMA_GENERATION} ?s }} }} }}"
            )
        )
        generation = max((int(r["n"].value) for r in rows), default=0)
        schema = max((int(r["s"].value) for r in rows if r["s"] is not None), default=0)
        return generation, schema

    def _claim(self, expected: int, token: str) -> int:
        """Be the one writer committing on top of generation ``expected``, or raise
        CommitConflict. A guarded update alone is no compare-and-swap on an engine that
        runs concurrent updates on snapshots without detecting their conflicts (oxigraph
        0.5 does: both apply). So each writer first adds its claim, then reads the claims:
        of two writers, at least one reads the other's claim (each request is atomic and
        visible once answered), and a writer that sees another live claim withdraws and
        tries again. At most one goes on to the guarded commit, which stays the check that
        the generation is still ``expected``.

        A claim is a lease timed by the store's clock: it is stamped with ``NOW()`` in the
        update that takes it, and read back with the store's ``NOW()``, so every gateway
        judges its age alike (no process's clock, no "first seen"): a writer that died
        holding one stops blocking the others ``CLAIM_FOR`` seconds after it took it (its
        holder's commit is one request, bounded by the endpoint timeout).

        Returns the store's generation, read with the claims."""
        node, hold = self._claim_node(expected, token), self._hold()
        try:
            self._update(
                f"INSERT {{ GRAPH {META} {{ {node} {CLAIM_OF} {expected} . {node} {CLAIM_FOR} "
                f"{hold} . {node} {CLAIM_AT} ?at }} }} WHERE {{ BIND(NOW() AS ?at) }}",
                f"a claim on generation {expected + 1}",
            )
        except EndpointError as exc:
            if "40001" in exc.detail:  # aborted in a race with another writer: none made
                raise CommitConflict(f"{self.engine} aborted a claim in a race") from None
            raise
        # The claims, and in the same read the store's generation (where a queued writer
        # stands: behind, at, or past the generation it claimed).
        rows = list(
            self.select(
                f"SELECT ?c ?for ?at ?now ?gen WHERE {{ GRAPH {META} {{ {STORE_NODE} "
                f"{GENERATION} ?gen }} OPTIONAL {{ GRAPH {META} {{ ?c {CLAIM_OF} {expected} ; "
                f"{CLAIM_FOR} ?for OPTIONAL {{ ?c {CLAIM_AT} ?at }} }} }} BIND(NOW() AS ?now) }}"
            )
        )
        own = f"{CLAIM_BASE}{expected}:{self.gateway}:"
        live = self._live(rows, own)
        if live:
            self._withdraw(expected, token)
            raise CommitConflict(
                f"another gateway is committing to {self.config.update_url} on top of "
                f"generation {expected}"
            )
        return max((int(r["gen"].value) for r in rows if r["gen"] is not None), default=0)

    def _hold(self) -> int:
        """Seconds a claim is live: the commit it guards is one request (the timeout)."""
        return int(self.config.timeout) + 10

    def _claim_node(self, expected: int, token: str) -> NamedNode:
        return NamedNode(f"{CLAIM_BASE}{expected}:{self.gateway}:{token}")

    def _withdraw(self, expected: int, token: str) -> None:
        with contextlib.suppress(EndpointError):  # else it goes stale for the others
            node = self._claim_node(expected, token)
            self._update(
                f"DELETE WHERE {{ GRAPH {META} {{ {node} ?p ?o }} }}", "withdrawing a claim"
            )

    def _reads_hold(self, reads: ReadSet, since: int) -> bool:
        """Whether nothing ``reads`` names changed after generation ``since`` (False when the
        store cannot say: the caller then validates again, which is never wrong)."""
        try:
            return self.ask(f"ASK {{ {self._unchanged(reads, since)} }}")
        except EndpointError:
            return False

    @staticmethod
    def _unchanged(reads: ReadSet, since: int) -> str:
        """Patterns that hold while no key of ``reads`` moved past generation ``since`` and
        the schema generation is still ``reads.schema_at``."""
        held = (
            f"FILTER NOT EXISTS {{ GRAPH {META} {{ {STORE_NODE} {SCHEMA_GENERATION} ?readSchema "
            f"}} FILTER(?readSchema != {int(reads.schema_at)}) }}"
        )
        # One test a key, each a lookup by its subject (a VALUES block joined in instead is
        # read as a scan of every key on oxigraph: tens of ms a commit).
        for n, key in enumerate(sorted(reads.keys)):
            held += (
                f" FILTER NOT EXISTS {{ GRAPH {META} {{ <{key}> {CHANGED_AT} ?read{n} }} "
                f"FILTER(?read{n} > {int(since)}) }}"
            )
        return held

    def _guarded(
        self,
        expected: int,
        token: str,
        delta: Delta,
        write_id: str | None,
        reads: ReadSet | None = None,
        since: int | None = None,
    ) -> str:
        """One update: ``delta``, the next generation's stamp and the write id, applied
        only while the generation is ``expected`` and (``reads`` given) nothing read moved
        past generation ``since``; it moves the keys the delta touches to the new
        generation. The times are the store's (``NOW()``)."""
        new = expected + 1
        plan = self._plan(delta)
        change = NamedNode(f"{CHANGE_BASE}{new}")
        claim = self._claim_node(expected, token)
        delete = [f"GRAPH {META} {{ {STORE_NODE} {GENERATION} ?gen }}"]
        delete += [f"GRAPH {META} {{ {STORE_NODE} {LAST_CHANGE} ?last }}"]
        delete += [  # done with the claim
            f"GRAPH {META} {{ {claim} {CLAIM_OF} {expected} . {claim} {CLAIM_FOR} "
            f"{self._hold()} . {claim} {CLAIM_AT} ?claimAt }}"
        ]
        delete += [_data(q) for q in plan["removes"]]
        where_records = [f"OPTIONAL {{ GRAPH {META} {{ {claim} {CLAIM_AT} ?claimAt }} }}"]
        for i, record in enumerate(plan["drops"]):
            pattern = f"{record} {LEXICAL_FORM} ?l{i} . {record} {DATATYPE} ?d{i}"
            # the stored triple a record belongs to, apart: records made before lack it
            triple = (
                f"{record} {RECORD_SUBJECT} ?rs{i} . {record} {RECORD_PREDICATE} ?rp{i} . "
                f"{record} {RECORD_OBJECT} ?ro{i}"
            )
            delete += [f"GRAPH {META} {{ {pattern} }}", f"GRAPH {META} {{ {triple} }}"]
            where_records += [
                f"OPTIONAL {{ GRAPH {META} {{ {pattern} }} }}",
                f"OPTIONAL {{ GRAPH {META} {{ {triple} }} }}",
            ]
        stamp = (
            f"{STORE_NODE} {GENERATION} {new} . {STORE_NODE} {LAST_CHANGE} ?now . "
            f'{change} {GENERATION} {new} ; {COMMIT} "{token}" ; '
            f"{TOUCHED} {_string(_touched(delta))} ."
        )
        if write_id is not None:
            write = write_ids.node(write_id)
            stamp += f" {write} {GENERATION} {new} ; {LAST_CHANGE} ?now ."
        if any(q.graph_name == SCHEMA_GRAPH for q in (*delta.adds, *delta.removes)):
            delete += [f"GRAPH {META} {{ {STORE_NODE} {SCHEMA_GENERATION} ?schemaGen }}"]
            where_records += [
                f"OPTIONAL {{ GRAPH {META} {{ {STORE_NODE} {SCHEMA_GENERATION} ?schemaGen }} }}"
            ]
            stamp += f" {STORE_NODE} {SCHEMA_GENERATION} {new} ."
        # Each key the delta touches now says this generation too: added beside what it said
        # (a precondition asks whether any of a key's generations is past the one it read),
        # never deleted here — a row per old value would multiply every template of this
        # update; _compact drops the older ones.
        touched = sorted(touched_keys(delta, skolem))
        stamp += "".join(f" <{k}> {CHANGED_AT} {new} ." for k in touched)
        # The preconditions in a group of their own, tested once (its one row), before the
        # row per key found joins it (in the same group, an engine may test them per row).
        guard = f"GRAPH {META} {{ {STORE_NODE} {GENERATION} ?gen }} FILTER(?gen = {expected})"
        if reads is not None:
            guard += " " + self._unchanged(reads, expected if since is None else since)
        insert = [f"GRAPH {META} {{ {stamp} }}"]
        insert += [_data(q) for q in plan["adds"]]
        return (
            f"DELETE {{ {' '.join(delete)} }}\nINSERT {{ {' '.join(insert)} }}\n"
            f"WHERE {{ {{ {guard} }} "
            f"OPTIONAL {{ GRAPH {META} {{ {STORE_NODE} {LAST_CHANGE} ?last }} }} "
            f"{' '.join(where_records)} BIND(NOW() AS ?now) }}"
        )

    def _refuse_literals(self, delta: Delta | list[Literal], *, queried: bool = False) -> None:
        """After the engine refused an update or a query (which applied nothing): if the
        cause is a literal it cannot take (Virtuoso: an ill-typed or beyond-64-bit integer,
        an xsd:duration), refuse naming that literal and the engine. Found by probing the
        typed literals with requests that can never apply (an update ``WHERE { FILTER(false)
        }``, or a query of the values alone: an engine that refuses a value refuses it as it
        reads the request), halving the set until one literal is left; returns when none is
        refused."""
        if isinstance(delta, Delta):
            forms = stored_quads(delta.adds)
            found = [q.object for q in forms.values() if isinstance(q.object, Literal)]
        else:
            found = delta
        typed = sorted(
            {
                lit
                for lit in found
                if not lit.language
                and lit.datatype.value.startswith(XSD)
                and lit.datatype != _XSD_STRING
            },
            key=str,
        )
        if not typed or self._probe(typed, queried) is None:
            return
        while len(typed) > 1:
            half = typed[: len(typed) // 2]
            typed = half if self._probe(half, queried) is not None else typed[len(half) :]
        said = self._probe(typed, queried)
        if said is None:  # the engine changed its mind (or went away): say nothing new
            return
        raise BadInput(
            f"{self.engine} at {self.config.update_url} cannot take the literal {typed[0]} "
            f"({said}); nothing was committed: write the value in a form this store takes "
            "(e.g. as a plain string), or keep the instance on the embedded store"
        )

    def _probe(self, literals: list[Literal], queried: bool = False) -> str | None:
        """The engine's refusal of a request naming ``literals`` that never applies, or
        None when it takes them."""
        triples = " ".join(f"{_LITERAL_PROBE} {_LITERAL_PROBE} {lit} ." for lit in literals)
        try:
            if queried:
                self._post(
                    self.config.query_url,
                    {
                        "query": f"SELECT ?o WHERE {{ VALUES ?o {{ {' '.join(map(str, literals))} }} }}"
                    },
                    _JSON_RESULTS,
                    "a probe of literals",
                )
            else:
                self._update(
                    f"INSERT {{ GRAPH {_LITERAL_PROBE} {{ {triples} }} }} "
                    "WHERE { FILTER(false) }",
                    "a probe of literals",
                )
        except (BadInput, EndpointError) as exc:
            if getattr(exc, "status", None) is None:
                return None  # not an answer from the engine: no verdict on the literals
            return str(getattr(exc, "detail", "")) or exc.message
        return None

    def _settle(self, expected: int, token: str) -> bool | None:
        """Whether a commit whose answer was lost happened (True), never will (False), or
        cannot be told yet (None). An update still in flight could land later, so when the
        token is not there a fence — an empty commit at the same generation — is sent: once
        the generation has moved past ``expected``, the lost update can never apply. Each
        request that fails is asked again a few times (:data:`READ_BACK_WAITS`) before the
        answer is "cannot be told"."""
        change = NamedNode(f"{CHANGE_BASE}{expected + 1}")
        committed = self._read_back(change, token)
        if committed is not False:
            return committed
        fence = uuid.uuid4().hex
        for wait in (*READ_BACK_WAITS, None):
            try:  # guarded on ``expected``: a second fence, once one applied, does nothing
                self._update(self._guarded(expected, fence, Delta(), None), "a fence")
                break
            except EndpointError:
                if wait is None:
                    return None
                time.sleep(wait)
        committed = self._read_back(change, token)
        for wait in (*READ_BACK_WAITS, None):
            try:
                moved = self.generation() > expected
                break
            except EndpointError:
                if wait is None:
                    return None
                time.sleep(wait)
        return committed if moved else None

    def _committed(self, change: NamedNode, token: str) -> bool | None:
        """Whether the commit stamped ``token`` made ``change`` (None: cannot be told now).

        :raises EndpointError: it did, and so did another commit against the same generation:
            the engine ran two guarded updates at once without isolating them (Virtuoso at
            its default isolation, read committed). Both writers are told; neither is lost.
        """
        try:
            rows = self.select(f"SELECT ?t WHERE {{ GRAPH {META} {{ {change} {COMMIT} ?t }} }}")
            tokens = {r["t"].value for r in rows}
        except EndpointError:
            return None
        if token in tokens and len(tokens) > 1:
            raise EndpointError(
                f"{self.engine} at {self.config.update_url} applied this commit and "
                f"{len(tokens) - 1} other(s) against the same generation at once: it does not "
                "isolate concurrent updates, so the store holds writes validated apart from "
                "each other. Both were applied; run `ontoloom check` now, and make the store "
                "isolate updates (Virtuoso: DefaultIsolation = 4 in virtuoso.ini [Parameters]; "
                "README, Scaling out)"
            )
        return token in tokens

    def _compact(self, generation: int) -> None:
        if generation % 100:
            return
        with contextlib.suppress(EndpointError):  # housekeeping: the next one catches up
            self._update(  # claims on generations gone by: nobody can commit on them again
                f"DELETE {{ GRAPH {META} {{ ?c ?p ?o }} }} WHERE {{ GRAPH {META} {{ "
                f"?c {CLAIM_OF} ?n ; ?p ?o FILTER(?n < {generation}) }} }}",
                "dropping old claims",
            )
        with contextlib.suppress(EndpointError):  # housekeeping: the next one catches up
            self._update(  # a key's older generations: only its latest is ever compared
                f"DELETE {{ GRAPH {META} {{ ?k {CHANGED_AT} ?at }} }} WHERE {{ GRAPH {META} {{ "
                f"?k {CHANGED_AT} ?at . ?k {CHANGED_AT} ?later FILTER(?later > ?at) }} }}",
                "dropping keys' older generations",
            )
        oldest = generation - CHANGES_KEPT
        if oldest <= 0:
            return
        with contextlib.suppress(EndpointError):  # housekeeping: the next one catches up
            self._update(
                f"DELETE {{ GRAPH {META} {{ ?c ?p ?o }} }} WHERE {{ GRAPH {META} {{ "
                f'?c {GENERATION} ?n ; ?p ?o FILTER(STRSTARTS(STR(?c), "{CHANGE_BASE}") '
                f"&& ?n <= {oldest}) }} }}",
                "compacting the change log",
            )

    def _plan(self, delta: Delta) -> dict[str, Any]:
        forms = stored_quads([*delta.adds, *delta.removes])
        removes = [_skolem_quad(forms[q]) for q in delta.removes]
        drops = sorted(
            {key for q in delta.removes if (key := record_key(forms[q])) is not None},
            key=str,
        )
        written: dict[Quad, Quad] = {}
        records: list[Quad] = []
        for quad in delta.adds:
            stored = forms[quad]
            if written.setdefault(stored, quad) != quad:
                raise BadInput(
                    f"{quad.subject} {quad.predicate}: cannot hold both {written[stored].object} "
                    f"and {quad.object} — the store keeps literals by value and these two are "
                    "one value; write one of them"
                )
            if stored != quad:
                records += record_quads(quad, stored)
        adds = [_skolem_quad(q) for q in [*written, *records]]
        return {"removes": removes, "drops": drops, "adds": adds}

    def dump(self, out: IO[bytes], format_name: str, graphs: list[Term] | None) -> None:
        from ontoloom.store.embedded import EmbeddedBackend

        quads = (
            list(self.data_quads())
            if graphs is None
            else [q for g in graphs for q in self.quads(g)]
        )
        # In one order whatever order the engine answered in: the same graph, the same bytes.
        EmbeddedBackend.scratch(sorted(quads, key=str)).dump(out, format_name, None)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self._client.close()


class _Moved(Exception):
    """A narrowly guarded commit found the generation moved on and what it read unchanged:
    it goes in again on top of the new generation — ``to`` when known (else the next one),
    ``generation``: the store's generation when it was read."""

    def __init__(self, to: int | None = None, generation: int | None = None) -> None:
        super().__init__(to)
        self.to = to
        self.generation = generation


def _data(quad: Quad) -> str:
    quad = _skolem_quad(quad)
    triple = f"{quad.subject} {quad.predicate} {quad.object} ."
    if isinstance(quad.graph_name, DefaultGraph):
        return triple
    return f"GRAPH {quad.graph_name} {{ {triple} }}"


def _string(text: str) -> str:
    return str(Literal(text))


def _touched(delta: Delta) -> str:
    """The nodes a delta touched, as N-Triples lines ``<node> <node> <node> .`` (a literal
    in the log, never an edge that queries would see)."""
    nodes = {
        skolem(t)
        for q in (*delta.adds, *delta.removes)
        for t in (q.subject, q.object)
        if isinstance(t, NamedNode | BlankNode)
    }
    return "".join(f"{n} {n} {n} .\n" for n in sorted(nodes, key=str))


def _record_of(quad: Quad) -> NamedNode | None:
    """The literal record a quad read from the engine may have (its literal as the store
    holds it is the record's key), or None when it cannot have one."""
    if not isinstance(quad.object, Literal):
        return None
    return record_key(Quad(quad.subject, quad.predicate, stored_form(quad.object), quad.graph_name))


def _graph_answer(response: httpx.Response, source: str, graph: Term | None = None) -> list[Triple]:
    """The triples of an RDF answer, read in the format its Content-Type names (N-Triples
    when it names none), blank nodes as they were written.

    :raises EndpointError: the answer is in no RDF format, or unreadable in the one it names
        (``source`` and ``graph`` name where it came from).
    """
    media = response.headers.get("content-type", _NTRIPLES).split(";")[0].strip().lower()
    what = "graph" if graph is None else f"graph {graph}"
    try:
        fmt = RdfFormat.from_media_type(media or _NTRIPLES)
        if fmt is None:
            raise ValueError(f"an answer of type {media!r}, no RDF format")
        return [_unskolem_triple(t) for t in pyoxigraph.parse(response.content, format=fmt)]
    except (SyntaxError, ValueError) as exc:
        raise EndpointError(f"{source} sent an unreadable {what} ({exc})") from None


def _unskolem_triple(t: Triple) -> Triple:
    s, p, o = spo(t)
    return Triple(unskolem(s), p, unskolem(o))


_DATE_TIME = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)?")


def _age(taken: Term | None, now: Term | None) -> float | None:
    """Seconds from ``taken`` to ``now``, two xsd:dateTime values of the store's clock;
    None when either is missing or unreadable."""
    import datetime as dt

    if taken is None or now is None:
        return None
    stamps = []
    for term in (taken, now):
        match = _DATE_TIME.fullmatch(term.value.strip())
        if match is None:
            return None
        whole, fraction, zone = match.groups()
        zone = "+00:00" if zone in (None, "Z") else zone
        moment = dt.datetime.fromisoformat(f"{whole}{zone}")
        stamps.append(moment.timestamp() + (float(fraction) if fraction else 0.0))
    return stamps[1] - stamps[0]
