"""Reading RDF text and files into quads, with syntax errors located as file:line:column."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

from ontoloom.errors import BadInput, ParseError
from ontoloom.store.embedded import FORMATS
from ontoloom.terms import Literal, Quad, RdfFormat, Triple, parse

__all__ = [
    "check_literal_sizes",
    "format_for",
    "guess_format",
    "input_limits",
    "read_quads",
    "read_triples",
]

# Input is bounded so that one file cannot take the memory of the process reading it.
MAX_INPUT_BYTES = 64 * 2**20
MAX_LITERAL_BYTES = 2**20

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


def guess_format(path: str | Path) -> str | None:
    """The RDF format a file name's extension stands for, or None (``-``, no extension).

    >>> guess_format("team.ttl"), guess_format("-")
    ('turtle', None)
    """
    return _SUFFIXES.get(Path(path).suffix.lower())


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
    bounded: bool = True,
    label: str | None = None,
) -> list[Quad]:
    """Parse a file or a string; ``prefixes``, when given, receives the prefixes the
    text declares (for writing terms back as people wrote them). Input is ``bounded`` by
    :func:`input_limits` (off only for files ontoloom wrote itself). ``label`` names the
    input in errors (default: the path, else ``<input>``).

    :raises ParseError: with file, line and column.
    :raises BadInput: for input past a limit, naming the file, the limit and how to raise it.
    """
    fmt = format_for(path or "data.ttl", format_name)
    label = label or (str(path) if path is not None else "<input>")
    max_input, max_literal = input_limits() if bounded else (None, None)
    try:
        if max_input is not None:
            size = Path(path).stat().st_size if path is not None else len(data or b"")
            if size > max_input:
                raise BadInput(
                    f"{label}: {_mib(size)} is more than the {_mib(max_input)} an input file may "
                    f"hold; split it, or raise {_INPUT_ENV}"
                )
        if fmt == RdfFormat.RDF_XML and max_input is not None:
            text = Path(path).read_bytes() if path is not None else data or b""
            check_xml_entities(text.encode() if isinstance(text, str) else text, label, max_input)
        if path is not None:
            parser = parse(path=str(path), format=fmt, base_iri=base_iri)
        else:
            parser = parse(data, format=fmt, base_iri=base_iri)
        quads = list(parser)
        if max_literal is not None:
            check_literal_sizes(quads, label, max_literal)
        if prefixes is not None:
            prefixes.update(parser.prefixes)
        return quads
    except SyntaxError as exc:
        line, column = exc.lineno, exc.offset
        if line is None and fmt == RdfFormat.RDF_XML:
            text = Path(path).read_bytes() if path is not None else data or b""
            line, column = _xml_error_position(text.encode() if isinstance(text, str) else text)
        raise ParseError(exc.msg or str(exc), file=label, line=line, column=column) from None
    except FileNotFoundError:
        raise BadInput(f"{label}: no such file") from None
    except (OSError, ValueError) as exc:
        raise BadInput(f"{label}: {exc}") from None


def read_triples(**kwargs) -> list[Triple]:
    return [q.triple for q in read_quads(**kwargs)]


_INPUT_ENV = "ONTOLOOM_MAX_INPUT_BYTES"
_LITERAL_ENV = "ONTOLOOM_MAX_LITERAL_BYTES"


def holds_nothing(label: str, format_name: str, consequence: str) -> BadInput:
    """The error for input that parsed to no statement (an empty file, prefixes only, plain
    JSON read as JSON-LD): refused, never read as an empty graph."""
    hint = (
        " (JSON without an @context names no IRIs: is it JSON-LD? plain JSON is not RDF)"
        if format_name in ("jsonld", "json-ld")
        else ""
    )
    return BadInput(
        f"{label}: read as {format_name}, it holds no RDF statement{hint}; {consequence}"
    )


def input_limits() -> tuple[int, int]:
    """(largest input file, largest literal) in bytes: ``ONTOLOOM_MAX_INPUT_BYTES`` and
    ``ONTOLOOM_MAX_LITERAL_BYTES``, else 64 MiB and 1 MiB."""
    limits = []
    for name, default in ((_INPUT_ENV, MAX_INPUT_BYTES), (_LITERAL_ENV, MAX_LITERAL_BYTES)):
        raw = os.environ.get(name, "").strip()
        if not raw:
            limits.append(default)
        elif raw.isdigit() and int(raw) > 0:
            limits.append(int(raw))
        else:
            raise BadInput(f"{name}={raw!r}: write a positive number of bytes, e.g. {default}")
    return limits[0], limits[1]


def _mib(size: int) -> str:
    return f"{size / 2**20:.3g} MiB" if size >= 2**20 else f"{size} bytes"


def check_literal_sizes(quads: Iterable[Quad], label: str, limit: int | None = None) -> None:
    """Refuse a literal larger than ``limit`` (default: :func:`input_limits`'): the one
    limit of every door — a file read, and every commit — so that what is stored can be
    exported and imported again.

    :raises BadInput: naming the literal's triple and its size.
    """
    if limit is None:
        limit = input_limits()[1]
    for quad in quads:
        if isinstance(quad.object, Literal) and len(quad.object.value) > limit // 4:
            size = len(quad.object.value.encode("utf-8"))  # exact only when it may matter
            if size > limit:
                raise BadInput(
                    f"{label}: a literal of {quad.subject} {quad.predicate} holds {_mib(size)}, "
                    f"more than the {_mib(limit)} a literal may hold; raise {_LITERAL_ENV} "
                    "to allow it"
                )


def _xml_error_position(data: bytes) -> tuple[int | None, int | None]:
    """Where expat finds the XML ill-formed: Oxigraph's RDF/XML errors carry no position.
    (None, None) for well-formed XML that is not RDF/XML, which expat cannot place."""
    from xml.parsers import expat

    try:
        expat.ParserCreate().Parse(data, True)
    except expat.ExpatError as exc:
        return exc.lineno, exc.offset + 1
    return None, None


class _EndOfDtd(Exception):
    pass


def check_xml_entities(data: bytes, label: str, limit: int) -> None:
    """Refuse RDF/XML whose entities would expand past ``limit`` bytes.

    An RDF/XML document may declare entities in its DTD, and Oxigraph expands them, nested
    ones too: ten levels of ten references make gigabytes ("billion laughs"). The DTD is read
    with expat, stopping where it ends; an entity whose text refers to another entity, a
    parameter entity and an external entity are refused (ontology files use entities only as
    short IRI prefixes); what the remaining references expand to is bounded from above by
    counting every ``&name;`` in the file (in comments too) and must stay within ``limit``.
    """
    if b"<!ENTITY" not in data:
        return
    from xml.parsers import expat

    sizes: dict[str, int] = {}

    def declared(name: str, parameter: bool, value: str | None, *rest: object) -> None:
        if parameter or value is None:
            kind = "a parameter entity" if parameter else "an external entity"
            raise BadInput(f"{label}: {kind} ({name}) is refused in RDF/XML input")
        if "&" in value:  # a reference, or a character reference that makes one
            raise BadInput(
                f"{label}: the entity {name} refers to another entity; nested entities are "
                "refused in RDF/XML input (they can expand without bound)"
            )
        sizes[name] = len(value.encode("utf-8"))

    def end_of_dtd() -> None:
        raise _EndOfDtd

    parser = expat.ParserCreate()
    parser.EntityDeclHandler = declared
    parser.EndDoctypeDeclHandler = end_of_dtd
    # Past the DTD, and any syntax error, is Oxigraph's to read and report.
    with contextlib.suppress(_EndOfDtd, expat.ExpatError):
        parser.Parse(data, True)
    expanded = sum(data.count(f"&{name};".encode()) * size for name, size in sizes.items())
    if expanded > limit:
        raise BadInput(
            f"{label}: its entities would expand to {_mib(expanded)}, more than the "
            f"{_mib(limit)} an input file may hold; raise {_INPUT_ENV} to allow it"
        )
