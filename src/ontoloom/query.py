"""SPARQL over the graph: named queries from ``queries/*.rq``, ad-hoc text or files,
read-only, with parameters bound as typed terms (never pasted into the query text)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ontoloom.config import INSTANCE_MARKER, Config, load_config
from ontoloom.errors import BadInput, NotFound, QueryTimeout, UnsupportedQuery
from ontoloom.model import _unicode, literal_from_json, parse_scalar
from ontoloom.resources import resource_dir
from ontoloom.store.isolated import parse_rows, run_isolated
from ontoloom.terms import Literal, NamedNode, Quad, Term
from ontoloom.vocab import OL, PREFIXES, sparql_prefixes

if TYPE_CHECKING:
    from ontoloom.session import Session

__all__ = [
    "DEFAULT_TIMEOUT",
    "NamedQuery",
    "check_services",
    "named_queries",
    "resolve_query",
    "run_query",
    "show_term",
    "typed_param",
]

DEFAULT_TIMEOUT = 30.0  # seconds a query may run before it is stopped

_UPDATE = re.compile(
    r"^\s*(?:(?:PREFIX\s+[\w-]*:\s*<[^>]*>|BASE\s+<[^>]*>)\s*)*"
    r"(INSERT|DELETE|LOAD|CLEAR|CREATE|DROP|COPY|MOVE|ADD|WITH)\b",
    re.IGNORECASE,
)
_COMMENT_LINES = re.compile(r"(?m)^\s*#[^\n]*\n?")


@dataclass
class NamedQuery:
    name: str
    description: str
    text: str
    params: dict[str, tuple[str, str]] = field(default_factory=dict)  # name → (type, help)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "params": {k: {"type": t, "help": h} for k, (t, h) in self.params.items()},
        }

    @classmethod
    def parse(cls, name: str, text: str) -> NamedQuery:
        """A query file's text: its leading ``#`` lines describe it and declare its
        ``# param: name (type) help``."""
        description, params = [], {}
        for line in text.splitlines():
            if not line.startswith("#"):
                break
            body = line.lstrip("# ").rstrip()
            match = re.match(r"param:\s*(\w+)\s*\((\w+)\)\s*(.*)", body)
            if match:
                params[match.group(1)] = (match.group(2), match.group(3))
            else:
                description.append(body)
        return cls(name, " ".join(description), text, params)


def _parse_named(path: Path) -> NamedQuery:
    return NamedQuery.parse(path.stem, path.read_text(encoding="utf-8"))


def named_queries() -> dict[str, NamedQuery]:
    return {p.stem: _parse_named(p) for p in sorted(resource_dir("queries").glob("*.rq"))}


def resolve_query(spec: str | NamedQuery, *, read_files: bool = False) -> NamedQuery:
    """A named query, SPARQL text, or (``read_files``: for the process that names it, never
    for an owner answering another's call) a ``.rq`` file."""
    if isinstance(spec, NamedQuery):
        return spec
    named = named_queries()
    if spec in named:
        return named[spec]
    path = Path(spec)
    if spec.endswith(".rq") and not read_files:
        raise BadInput(f"{spec}: a query file is read by whoever names it; give the query's text")
    if spec.endswith(".rq") or (
        read_files and len(spec) < 4096 and "\n" not in spec and path.is_file()
    ):
        if not path.is_file():
            raise NotFound(f"no query file {spec}; named queries: {', '.join(named)}")
        return _parse_named(path)
    if re.fullmatch(r"[\w-]+", spec):
        raise NotFound(f"no named query {spec!r}; `ontoloom query --list` shows them")
    return NamedQuery("(inline)", "", spec)


def typed_param(graph: Session, value: str, kind: str | None = None) -> Term:
    """A parameter value as a typed term: ``<iri>``, ``prefix:local`` for known prefixes,
    an entity id (for ``entity`` parameters), or a JSON-typed literal (numbers, booleans,
    ISO dates), else a string."""
    _unicode(value, "--param value")
    if kind == "entity":
        return graph.ids.iri(value)
    if value.startswith("<") and value.endswith(">"):
        try:
            return NamedNode(value[1:-1])
        except ValueError as exc:
            raise BadInput(f"--param value {value!r} is not an IRI: {exc}") from None
    prefix, sep, local = value.partition(":")
    if sep and prefix in PREFIXES and not local.startswith("//"):
        return NamedNode(PREFIXES[prefix] + local)
    parsed = parse_scalar(value)
    if kind == "string" or parsed is None or isinstance(parsed, list | dict):
        parsed = value  # `null` (no literal at all) and JSON structures bind as the text
    return literal_from_json(parsed)[0]


def run_query(
    graph: Session,
    spec: str | NamedQuery,
    params: dict[str, str],
    format_name: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    infer: bool = False,
    timeout_option: str = "--timeout",
    then: list[Quad] | None = None,
) -> tuple[str, bytes | list[dict[str, Any]]]:
    """Run a read-only query under a deadline, over the store (and, with ``infer``, the
    inferred graph). Returns (kind, result): kind is select, ask or graph; for ``table``
    the result of a SELECT is its rows, of an ASK ``true``/``false``, of a CONSTRUCT Turtle;
    for any other format the serialised results.

    The query runs in a child process (:mod:`ontoloom.store.isolated`), stopped at the
    deadline; ``timeout_option`` names the setting to raise in that message.

    With ``then`` (the graph as it was: :meth:`Session.then`) the query runs over those quads
    in a temporary store instead of the store, under the same deadline and rules.

    :raises UnsupportedQuery: for SPARQL updates, and for a SERVICE call the instance does
        not allow (:func:`check_services`).
    :raises QueryTimeout: when it runs longer than ``timeout`` seconds.
    """
    if not (math.isfinite(timeout) and timeout > 0):
        raise BadInput(
            f"{timeout_option} must be a positive number of seconds, e.g. {timeout_option} 60"
        )
    query = resolve_query(spec)
    if _UPDATE.match(_COMMENT_LINES.sub("", query.text)):
        raise UnsupportedQuery(
            "ontoloom query is read-only: SPARQL updates (INSERT, DELETE, LOAD…) are refused. "
            "Write through `ontoloom create/relate/plan apply` so that every change is validated"
        )
    unknown = [p for p in params if query.params and p not in query.params]
    if unknown:
        raise BadInput(
            f"{query.name} has no parameter {unknown[0]!r}; it takes {', '.join(query.params)}"
        )
    missing = [p for p in query.params if p not in params]
    if missing:
        raise BadInput(f"{query.name} needs --param {missing[0]}=… ({query.params[missing[0]][1]})")
    bindings = {
        k: typed_param(graph, v, query.params.get(k, (None, ""))[0]) for k, v in params.items()
    }
    # The built-in prefixes go to the engine as prefixes (the query's own PREFIX lines add to
    # them, and win for a name they redeclare); the text is never rewritten.
    text = query.text
    check_services(text, load_config(graph.data_dir) if graph.data_dir else Config(None))
    if graph.data_dir is None:
        raise BadInput("a query runs over the store of a data dir; this graph has none")
    dataset: list[Quad] | None = then
    if infer and then is not None:
        raise BadInput(
            "--infer reads the inferred graph of now, which has no history: query the graph "
            "as it was (--as-of/--recorded-as-of) without --infer"
        )
    if infer:  # the stored quads as written, and what inference adds, in a scratch store
        from ontoloom.infer import inferred_quads
        from ontoloom.vocab import META

        stored = (q for q in graph.backend.quads() if q.graph_name != META)
        dataset = [*stored, *inferred_quads(graph)]
    asked = "json" if format_name == "table" else format_name
    lock = graph.backend.lock
    try:
        if graph.backend.stops_queries_at_deadline:
            # The store runs the query in its own process, under its own time limits; with
            # --infer, a local copy of the stored and inferred quads answers it. The SPARQL
            # protocol has no prefixes parameter: the built-in ones go first as a prologue,
            # which the query's own PREFIX lines override as they would in the engine.
            from ontoloom.store import scratch

            source = graph.backend if dataset is None else scratch(dataset)
            kind, data = source.serialize_results(
                sparql_prefixes() + text, bindings or None, asked, timeout
            )
        else:
            kind, data = run_isolated(
                graph.data_dir,
                text,
                bindings or None,
                asked,
                timeout=timeout,
                lock_fd=lock.fileno() if lock is not None else None,
                dataset=dataset,
                prefixes=PREFIXES,
            )
    except QueryTimeout as exc:
        raise QueryTimeout(f"{exc.message}; narrow it or raise {timeout_option}") from None
    if format_name == "table" and kind == "select":
        return kind, parse_rows(data)
    if format_name == "table" and kind == "ask":
        return kind, b"true\n" if json.loads(data)["boolean"] else b"false\n"
    return kind, data


def check_services(text: str, config: Config) -> None:
    """Refuse a query that calls a SPARQL endpoint (SERVICE) ontoloom.toml does not list
    under ``[query] service_allow`` (exactly, as the query resolves the IRI), and any SERVICE
    whose endpoint is a variable. Read with a SPARQL parser; a query that cannot be read
    that way but mentions SERVICE is refused too.

    A SERVICE needs the keyword in the text (ASCII, any case: Oxigraph processes no
    ``\\u`` escapes before parsing); a query without it, and without escapes, is not parsed.

    :raises UnsupportedQuery: naming the endpoint, and the file and key that would allow it.
    :raises BadInput: when the allow-list itself is malformed.
    """
    lowered = text.encode("utf-8", "surrogatepass").lower()
    if b"service" not in lowered and b"\\u" not in lowered:
        return
    from ontoloom.shacl.sparql_syntax import SparqlSyntaxError, service_endpoints

    where = str(config.path) if config.path is not None else f"the instance's {INSTANCE_MARKER}"
    try:
        # rdflib takes no prefixes argument: a prologue of the built-in ones, which the
        # query's own PREFIX lines override as they do in the engine.
        endpoints = service_endpoints(sparql_prefixes() + text)
    except SparqlSyntaxError as exc:
        if b"service" not in lowered:
            return  # unreadable, and no SERVICE in it: Oxigraph reports the syntax error
        raise UnsupportedQuery(
            f"the query mentions SERVICE and ontoloom cannot read it to tell which endpoint "
            f"it would call ({exc.message}); a SERVICE may call only the endpoints listed in "
            f"{where} under [query] service_allow"
        ) from None
    if not endpoints:
        return
    allowed = config.service_allow()
    for endpoint in endpoints:
        if endpoint.startswith("?"):
            raise UnsupportedQuery(
                f"SERVICE {endpoint} is refused: its endpoint is a variable, which could be "
                f"any URL; name the endpoint as an IRI listed in {where} under "
                "[query] service_allow"
            )
        iri = endpoint[1:-1]
        if iri not in allowed:
            raise UnsupportedQuery(
                f"SERVICE {endpoint} is refused: a query may call only the endpoints listed "
                f'in {where} under [query] service_allow; to allow it, add service_allow = ["{iri}"]'
            )


def show_term(graph: Session, term: Term | None) -> str:
    """A result cell as a table shows it: a literal's value, an object's id, an ontoloom
    term's name, any other IRI in angle brackets."""
    from ontoloom.model import value_to_json, vocab_name

    if term is None:
        return ""
    if isinstance(term, Literal):
        return str(value_to_json(term))
    if isinstance(term, NamedNode) and graph.ids.is_instance(term):
        return graph.ids.id_of(term)
    if isinstance(term, NamedNode):
        return vocab_name(term) if term.value.startswith(OL) else f"<{term.value}>"
    return str(term)
