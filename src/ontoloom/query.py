"""SPARQL over the graph: named queries from ``queries/*.rq``, ad-hoc text or files,
read-only, with parameters bound as typed terms (never pasted into the query text)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput, NotFound, UnsupportedQuery
from ontoloom.model import literal_from_json, parse_scalar
from ontoloom.resources import resource_dir
from ontoloom.store.terms import NamedNode, Term
from ontoloom.vocab import PREFIXES, sparql_prefixes

if TYPE_CHECKING:
    from ontoloom.api import Graph

__all__ = ["NamedQuery", "named_queries", "resolve_query", "run_query", "typed_param"]

_UPDATE = re.compile(
    r"^\s*(?:(?:PREFIX\s+[\w-]*:\s*<[^>]*>|BASE\s+<[^>]*>)\s*)*"
    r"(INSERT|DELETE|LOAD|CLEAR|CREATE|DROP|COPY|MOVE|ADD|WITH)\b",
    re.IGNORECASE,
)
_COMMENT_LINES = re.compile(r"(?m)^\s*#[^\n]*\n?")
_NOT_PROJECTED = "does not contains variable"


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


def _parse_named(path: Path) -> NamedQuery:
    text = path.read_text(encoding="utf-8")
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
    return NamedQuery(path.stem, " ".join(description), text, params)


def named_queries() -> dict[str, NamedQuery]:
    return {p.stem: _parse_named(p) for p in sorted(resource_dir("queries").glob("*.rq"))}


def resolve_query(spec: str) -> NamedQuery:
    """A named query, a ``.rq`` file, or SPARQL text."""
    named = named_queries()
    if spec in named:
        return named[spec]
    path = Path(spec)
    if spec.endswith(".rq") or (len(spec) < 4096 and "\n" not in spec and path.is_file()):
        if not path.is_file():
            raise NotFound(f"no query file {spec}; named queries: {', '.join(named)}")
        return _parse_named(path)
    if re.fullmatch(r"[\w-]+", spec):
        raise NotFound(f"no named query {spec!r}; `ontoloom query --list` shows them")
    return NamedQuery("(inline)", "", spec)


def typed_param(graph: Graph, value: str, kind: str | None = None) -> Term:
    """A parameter value as a typed term: ``<iri>``, ``prefix:local`` for known prefixes,
    an entity id (for ``entity`` parameters), or a JSON-typed literal (numbers, booleans,
    ISO dates), else a string."""
    if kind == "entity":
        return graph.ids.iri(value)
    if value.startswith("<") and value.endswith(">"):
        return NamedNode(value[1:-1])
    prefix, sep, local = value.partition(":")
    if sep and prefix in PREFIXES and not local.startswith("//"):
        return NamedNode(PREFIXES[prefix] + local)
    parsed = parse_scalar(value)
    if kind == "string" or isinstance(parsed, list):
        parsed = value
    return literal_from_json(parsed)[0]


def run_query(
    graph: Graph, spec: str, params: dict[str, str], format_name: str
) -> tuple[str, bytes | list[dict[str, Any]]]:
    """Run a read-only query. For ``table`` the rows are returned, else serialised bytes.

    :raises UnsupportedQuery: for SPARQL updates.
    """
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
    text = query.text if "PREFIX" in query.text.upper() else sparql_prefixes() + query.text
    try:
        if format_name == "table":
            return "select", list(graph.backend.select(text, bindings or None))
        return graph.backend.serialize_results(text, bindings or None, format_name)
    except RuntimeError as exc:
        if _NOT_PROJECTED in str(exc) and bindings:
            # Oxigraph substitutes only projected variables: join the values instead.
            values = " ".join(f"VALUES ?{k} {{ {t} }}" for k, t in bindings.items())
            return run_query_text(graph, f"{text}\n{values}", format_name)
        raise BadInput(f"cannot run the query: {exc}") from None


def run_query_text(
    graph: Graph, text: str, format_name: str
) -> tuple[str, bytes | list[dict[str, Any]]]:
    if format_name == "table":
        return "select", list(graph.backend.select(text))
    return graph.backend.serialize_results(text, None, format_name)
