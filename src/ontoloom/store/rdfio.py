"""Reading RDF text and files into quads, with syntax errors located as file:line:column."""

from __future__ import annotations

from pathlib import Path

from ontoloom.errors import BadInput, ParseError
from ontoloom.store.embedded import FORMATS
from ontoloom.store.terms import Quad, RdfFormat, Triple, parse

__all__ = ["format_for", "read_quads", "read_triples"]

_SUFFIXES = {
    ".ttl": "turtle",
    ".trig": "trig",
    ".nq": "nquads",
    ".nquads": "nquads",
    ".ntriples": "ntriples",
    ".turtle": "turtle",
    ".nt": "ntriples",
    ".jsonld": "jsonld",
    ".json": "jsonld",
    ".rdf": "rdfxml",
    ".owl": "rdfxml",
    ".n3": "n3",
}


def format_for(path: str | Path, explicit: str | None = None) -> RdfFormat:
    name = explicit or _SUFFIXES.get(Path(path).suffix.lower())
    if name is None or name not in FORMATS:
        raise BadInput(
            f"cannot tell the RDF format of {path}: pass --format "
            "(turtle, trig, nquads, ntriples, jsonld)"
        )
    return FORMATS[name]


def read_quads(
    *,
    path: str | Path | None = None,
    data: bytes | str | None = None,
    format_name: str | None = None,
    base_iri: str | None = None,
    prefixes: dict[str, str] | None = None,
) -> list[Quad]:
    """Parse a file or a string; ``prefixes``, when given, receives the prefixes the
    text declares (for writing terms back as people wrote them).

    :raises ParseError: with file, line and column.
    """
    fmt = format_for(path or "data.ttl", format_name)
    label = str(path) if path is not None else "<input>"
    try:
        if path is not None:
            parser = parse(path=str(path), format=fmt, base_iri=base_iri)
        else:
            parser = parse(data, format=fmt, base_iri=base_iri)
        quads = list(parser)
        if prefixes is not None:
            prefixes.update(parser.prefixes)
        return quads
    except SyntaxError as exc:
        raise ParseError(
            exc.msg or str(exc), file=label, line=exc.lineno, column=exc.offset
        ) from None
    except FileNotFoundError:
        raise BadInput(f"{label}: no such file") from None
    except (OSError, ValueError) as exc:
        raise BadInput(f"{label}: {exc}") from None


def read_triples(**kwargs) -> list[Triple]:
    return [q.triple for q in read_quads(**kwargs)]
