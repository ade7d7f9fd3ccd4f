"""``ontoloom validate``: any RDF files against any shapes, with no store — pySHACL's command
line, option for option (``-s``, ``-e``, ``-i``, ``-m``, ``-im``, ``-a``, ``--abort``, ``-w``,
``-f``, ``-df``/``-sf``/``-ef``, ``-o``), validated by ontoloom's engine.

What pySHACL does around validation is done here the way pySHACL does it, with the same
libraries: the extra ontology (``-e``) is mixed into the data with pySHACL's own
``inoculate``, inference (``-i``) is owlrl with pySHACL's RDFS semantics, meta-validation
(``-m``) uses the shacl-shacl graph pySHACL ships.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ontoloom.errors import BadInput, OntoloomError, ParseError
from ontoloom.findings import Finding, report_json
from ontoloom.reporting import finding_from_result
from ontoloom.shacl import Report, Result, ShapeSet
from ontoloom.shacl.redact import redacted
from ontoloom.shacl.render import Renderer
from ontoloom.shacl.report import report_triples, report_turtle
from ontoloom.shacl.shapes import ShapesError, UnsupportedFeatures, ValidationFailure
from ontoloom.shacl.validate import no_collection, validate_graphs
from ontoloom.store.rdfio import holds_nothing, read_quads, read_triples
from ontoloom.terms import (
    DefaultGraph,
    NamedNode,
    Quad,
    RdfFormat,
    Statement,
    Term,
    serialize,
    spo,
    triple,
)
from ontoloom.vocab import OWL, RDF, SH

__all__ = [
    "FILE_FORMATS",
    "INFERENCE",
    "OUTPUT_FORMATS",
    "Outcome",
    "Source",
    "validate_files",
]

_OWL_IMPORTS = OWL + "imports"

# pySHACL's names for input formats (-df/-sf/-ef), beside ontoloom's own (--data-format).
FILE_FORMATS = {
    "turtle": "turtle",
    "xml": "rdfxml",
    "json-ld": "jsonld",
    "nt": "ntriples",
    "n3": "n3",
    "trig": "trig",
    "nquads": "nquads",
    "ntriples": "ntriples",
    "jsonld": "jsonld",
    "rdfxml": "rdfxml",
    "ttl": "turtle",
}
# -f: pySHACL's formats, then ontoloom's own (text is the default; json the findings report).
OUTPUT_FORMATS = ("human", "table", "turtle", "xml", "json-ld", "nt", "n3", "text", "json")
# pySHACL's -f graph formats, as rdflib names them
_GRAPH_FORMATS = {"turtle": "turtle", "xml": "xml", "json-ld": "json-ld", "nt": "nt", "n3": "n3"}
INFERENCE = ("none", "rdfs", "owlrl", "both")
_SEVERITIES = {"Violation": SH + "Violation", "Warning": SH + "Warning", "Info": SH + "Info"}
_FORMAT_HELP = "turtle, xml, json-ld, nt or n3"
_TRIPLE_FORMATS = ("turtle", "ntriples", "rdfxml")


@dataclass(frozen=True)
class Source:
    """One input: a file, or ``-`` (standard input, read by the front end into ``stdin``)."""

    name: str
    option: str  # the format option that applies to it, named in errors (-df, -sf, -ef)
    format: str | None = None  # as the user gave it ("auto" or None: guess)
    stdin: bytes | None = None


@dataclass
class Outcome:
    report: Report
    shapes: ShapeSet
    conforms: bool  # no result of a severity that fails (see allow_warnings / allow_infos)
    aborted: bool = False
    notes: list[str] = field(default_factory=list)  # what the options changed, for stderr

    @property
    def warnings(self) -> list[str]:
        """What was not evaluated or not run, for stderr: never silent."""
        return (
            [
                f"{self.shapes.describe(u)}, which ontoloom did not evaluate"
                for u in self.report.unsupported
            ]
            + self.report.notes
            + self.notes
        )

    @property
    def findings(self) -> list[Finding]:
        return [finding_from_result(r, None, self.shapes) for r in self.report.results]

    def to_json(self) -> dict[str, Any]:
        """The findings report (:mod:`ontoloom.findings`)."""
        return report_json(
            self.findings,
            conforms=self.conforms,
            unsupported=[
                {"shape": str(u.shape), "feature": u.feature} for u in self.report.unsupported
            ],
        )

    def text(self) -> str:
        results = self.report.results
        head = f"Conforms: {self.conforms}" + (f" ({len(results)} result(s))" if results else "")
        lines = [head]
        # Terms as the files' prefixes write them (data terms: no shapes-graph descriptions).
        render, shape = (
            Renderer(self.shapes.prefixes),
            Renderer(self.shapes.prefixes, self.shapes.graph),
        )
        by_focus: dict[str, list[tuple[Result, Finding]]] = {}
        for r, f in zip(results, self.findings, strict=True):
            by_focus.setdefault(render.term(r.focus), []).append((r, f))
        for focus, pairs in by_focus.items():
            lines.append(focus)
            for r, f in pairs:
                component = r.component.value.rsplit("#", 1)[-1].removesuffix("ConstraintComponent")
                path = f" {render.term(r.path)}" if r.path is not None else ""
                value = f" = {render.term(r.value)}" if r.value is not None else ""
                lines.append(
                    f"  {f.severity}:{path} [{component}]{value} (shape {shape.term(r.source_shape)})"
                )
                lines.append(f"      {f.message}")
        return "\n".join(lines)

    def human(self) -> str:
        """pySHACL's text report (``-f human``), result for result."""
        results = self.report.results
        render = Renderer(self.shapes.prefixes, self.shapes.graph, pyshacl_style=True)
        out = f"Validation Report\nConforms: {self.conforms}\n"
        if results:
            out += f"Results ({len(results)}):\n"
        blocks = []
        for r, f in zip(results, self.findings, strict=True):
            kind = "Constraint Violation" if f.severity == "Violation" else "Validation Result"
            name = _pyshacl_component_name(r.component)
            block = (
                f"{kind} in {name} ({r.component.value}):\n"
                f"\tSeverity: {render.term(r.severity)}\n"
                f"\tSource Shape: {render.term(r.source_shape)}\n"
                f"\tFocus Node: {render.term(r.focus)}\n"
            )
            if r.value is not None:
                block += f"\tValue Node: {render.term(r.value)}\n"
            if r.path is not None:
                block += f"\tResult Path: {render.term(r.path)}\n"
            if r.source_constraint is not None:
                block += f"\tSource Constraint: {render.term(r.source_constraint)}\n"
            # pySHACL prints each message the result holds, sorted; a SPARQL constraint
            # without sh:message holds none (the findings JSON still says what broke)
            if r.messages:
                texts = sorted(m.value for m in r.messages)
            elif r.component.value == SH + "SPARQLConstraintComponent":
                texts = []
            else:
                texts = [f.message]
            block += "".join(f"\tMessage: {t}\n" for t in texts)
            blocks.append(block)
        return out + "".join(sorted(blocks))

    def table(self) -> str:
        """pySHACL's ``-f table``: a Conforms table, then one row per result."""
        from io import StringIO

        from rich import box
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        buffer = StringIO()
        console = Console(file=buffer, width=200, color_system=None, legacy_windows=False)
        head = Table(box=box.ASCII)
        head.add_column("Conforms", justify="center")
        head.add_row(str(self.conforms))
        console.print(head)
        if self.report.results:
            # Every cell whole (folded, never cut with an ellipsis): the table is the report.
            rows = Table(box=box.ASCII, show_lines=True)
            for name in ("No.", "Severity", "Focus Node", "Result Path", "Message"):
                rows.add_column(name, overflow="fold")
            for name in ("Component", "Shape", "Value"):
                rows.add_column(name, overflow="fold")
            for n, (r, f) in enumerate(zip(self.report.results, self.findings, strict=True), 1):
                cells = (
                    str(n),
                    f.severity,
                    str(r.focus),
                    r.path_key() or "-",
                    f.message,
                    r.component.value.rsplit("#", 1)[-1],
                    str(r.source_shape),
                    "-" if r.value is None else str(r.value),
                )
                # The data's and the shapes' own text: a "[a-z]" in it is not console markup.
                rows.add_row(*(escape(cell) for cell in cells))
            console.print(rows)
        return buffer.getvalue()

    def turtle(self) -> str:
        return report_turtle(self.report, self.shapes, conforms=self.conforms)

    def graph(self, fmt: str) -> str:
        """The W3C report graph in one of pySHACL's -f graph formats, serialised as pySHACL
        serialises it — by rdflib, with rdflib's core prefixes and the shapes graph's — so
        that the output is pySHACL's to the byte but for blank-node labels and order."""
        import rdflib

        triples = report_triples(
            self.report.results, self.shapes, conforms=self.conforms, share_paths=True
        )
        graph = rdflib.Graph(bind_namespaces="core")
        for name, namespace in self.shapes.prefixes.items():
            graph.bind(name, namespace, override=False)
        text = serialize(triples, format=RdfFormat.N_TRIPLES) or b""
        graph.parse(data=text.decode("utf-8"), format="nt")
        return graph.serialize(format=_GRAPH_FORMATS[fmt])

    def render(self, fmt: str) -> str:
        if fmt == "json":
            import json

            return json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n"
        if fmt == "text":
            return self.text() + "\n"
        if fmt == "human":
            return self.human()
        if fmt == "table":
            return self.table()
        return self.graph(fmt)


def _pyshacl_component_name(component: Term) -> str:
    """The name pySHACL's text report gives a component: its class's, which is one for both
    qualified counts, and one for every custom (SPARQL-based) component."""
    iri = component.value
    if not iri.startswith(SH):
        return "ConstraintComponent"
    name = iri.removeprefix(SH)
    return "QualifiedValueShapeConstraintComponent" if name.startswith("Qualified") else name


# -- reading ------------------------------------------------------------------------------------
def _format_name(given: str | None, option: str) -> str | None:
    if given in (None, "auto"):
        return None
    name = FILE_FORMATS.get(given.lower())
    if name is None:
        raise BadInput(f"{option} {given!r}: use auto, {_FORMAT_HELP}")
    return name


def _sniff(data: bytes) -> tuple[str, bool]:
    """A format from the first bytes: (name, sure). RDF/XML and JSON-LD announce themselves;
    anything else is tried as Turtle (which also reads N-Triples), not for sure."""
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:200]
    if head.startswith((b"<?xml", b"<rdf:RDF", b"<!DOCTYPE")):
        return "rdfxml", True
    if head.startswith((b"{", b"[")):
        return "jsonld", True
    return "turtle", False


def _read(
    source: Source, prefixes: dict[str, str], *, bounded: bool = True
) -> tuple[list[Statement], str | None]:
    """The statements of one source, each in the default graph (a dataset's named graphs
    are merged, as pySHACL reads them), and the file's base IRI (None for stdin).

    :raises BadInput: unreadable, unparsable, or a format that cannot be guessed (naming
        the format option).
    """
    explicit = _format_name(source.format, source.option)
    if source.name == "-":
        data = source.stdin if source.stdin is not None else b""
        label, base = "<stdin>", None
    else:
        path = Path(source.name)
        label, base = source.name, path.resolve().as_uri()
        data = None
        if explicit is None:
            from ontoloom.store.rdfio import _SUFFIXES

            explicit = _SUFFIXES.get(path.suffix.lower())
            if explicit is None:  # as pySHACL: a file without a known extension is sniffed
                try:
                    data = path.read_bytes()
                except FileNotFoundError:
                    raise BadInput(f"{label}: no such file") from None
                except OSError as exc:
                    raise BadInput(f"{label}: {exc.strerror or exc}") from None
    sure = True
    if explicit is None:
        explicit, sure = _sniff(data or b"")
    try:
        if data is None:
            quads = read_quads(
                path=source.name, format_name=explicit, base_iri=base, prefixes=prefixes
            )
        else:
            quads = read_quads(data=data, format_name=explicit, base_iri=base, prefixes=prefixes)
        default = DefaultGraph()
        triples: list[Statement] = (
            list(quads)  # formats without named graphs: every quad is in the default graph
            if explicit in _TRIPLE_FORMATS
            else [
                q if q.graph_name == default else Quad(q.subject, q.predicate, q.object, default)
                for q in quads
            ]
        )
    except ParseError as exc:
        message = exc.message.replace("<input>", label, 1)
        if not sure:
            raise BadInput(
                f"{message}\ncould not tell the RDF format of {label} (read as Turtle, it does "
                f"not parse): pass {source.option} ({_FORMAT_HELP})"
            ) from None
        raise BadInput(message) from None
    except BadInput as exc:
        raise BadInput(exc.message.replace("<input>", label, 1)) from None
    if not triples:
        raise holds_nothing(label, explicit, "nothing was validated")
    return triples, base


def _fetch(iri: str, importer: str) -> bytes:
    """An owl:imports target: a local file (file: IRI) or an http(s) document."""
    where = f"-im/--imports: {importer} imports <{iri}>"
    if iri.startswith("file:"):
        from urllib.parse import unquote, urlparse

        try:
            return Path(unquote(urlparse(iri).path)).read_bytes()
        except OSError as exc:
            raise BadInput(f"{where}, which cannot be read ({exc.strerror or exc})") from None
    if not iri.startswith(("http:", "https:")):
        raise BadInput(f"{where}, which is no file: or http(s): IRI ontoloom can load")
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        iri, headers={"Accept": "text/turtle, application/rdf+xml;q=0.9, */*;q=0.1"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return bytes(response.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise BadInput(f"{where}, which cannot be fetched ({exc})") from None


def _imports_of(triples: Sequence[Statement], base: str | None) -> list[str]:
    """What a document imports, where pySHACL looks: owl:imports of the document itself (its
    base IRI, without a trailing ``#`` or ``/``), else of each owl:Ontology it declares."""
    roots = {base, base.rstrip("#/")} if base else set()
    statements = [spo(t) for t in triples]
    imports = [(s, o) for s, p, o in statements if p.value == _OWL_IMPORTS]
    found = [o.value for s, o in imports if s.value in roots]
    if not found:
        ontologies = {
            s for s, p, o in statements if p.value == RDF + "type" and o.value == OWL + "Ontology"
        }
        found = [o.value for s, o in imports if s in ontologies]
    return [iri for iri in found if iri]


def _with_imports(
    triples: list[Statement], base: str | None, label: str, prefixes: dict[str, str]
) -> list[Statement]:
    """``triples`` and, transitively, every graph they import (pySHACL's ``do_owl_imports``)."""
    seen = {base} if base else set()
    out = list(triples)
    queue = [(iri, label) for iri in _imports_of(triples, base)]
    while queue:
        iri, importer = queue.pop(0)
        if iri in seen:
            continue
        seen.add(iri)
        data = _fetch(iri, importer)
        from ontoloom.store.rdfio import _SUFFIXES

        name = _SUFFIXES.get(Path(iri.split("?", 1)[0]).suffix.lower()) or _sniff(data)[0]
        try:
            more = read_triples(data=data, format_name=name, base_iri=iri, prefixes=prefixes)
        except OntoloomError as exc:
            message = exc.message.replace("<input>", f"<{iri}>", 1)
            raise BadInput(f"-im/--imports: {importer} imports <{iri}>: {message}") from None
        out += more
        queue += [(i, f"<{iri}>") for i in _imports_of(more, iri)]
    return out


def _load(
    sources: Iterable[Source], prefixes: dict[str, str], *, imports: bool = False
) -> list[Statement]:
    out: list[Statement] = []
    for source in sources:
        triples, base = _read(source, prefixes)
        if imports:
            triples = _with_imports(triples, base, source.name, prefixes)
        out += triples
    return out


# -- what pySHACL does around validation -------------------------------------------------------
def _mix_and_infer(
    data: Sequence[Statement], ontology: Sequence[Statement], inference: str
) -> list[Statement]:
    """The data as pySHACL validates it: the ontology's RDFS/OWL axioms inoculated (pySHACL's
    own function), then the owlrl closure pySHACL runs for ``inference``. Only the triples
    these steps add are taken back, so the data's literals stay exactly as written."""
    import owlrl
    from pyshacl.inference import CustomRDFSOWLRLSemantics, CustomRDFSSemantics
    from pyshacl.rdfutil.inoculate import inoculate

    from ontoloom.shacl.oracle import from_rdflib_term, to_rdflib

    graph = to_rdflib(data)
    before = set(graph)
    if ontology:
        # pyshacl annotates its data graph as a DataGraph (a Dataset), but inoculate only adds
        # to it, and pyshacl's own validator passes it a plain rdflib Graph.
        graph = inoculate(graph, to_rdflib(ontology))  # type: ignore[arg-type]
    if inference != "none":
        semantics = {
            "rdfs": CustomRDFSSemantics,
            "owlrl": owlrl.OWLRL_Semantics,
            "both": CustomRDFSOWLRLSemantics,
        }[inference]
        owlrl.DeductiveClosure(semantics).expand(graph)
    import rdflib

    added = [
        triple(from_rdflib_term(s), from_rdflib_term(p), from_rdflib_term(o))
        for s, p, o in graph
        # owlrl also derives generalised triples (a literal as subject), which RDF cannot hold
        if (s, p, o) not in before
        and isinstance(s, rdflib.URIRef | rdflib.BNode)
        and isinstance(p, rdflib.URIRef)
    ]
    return [*data, *added]


def _meta_validate(shape_triples: Sequence[Statement], prefixes: dict[str, str]) -> None:
    """``-m``: the shapes graph against the SHACL shapes for SHACL (shacl-shacl), as
    pySHACL does before validating; a shapes graph that fails is an error."""
    from importlib.resources import files  # (-m only: it imports tempfile, shutil…)

    asset = files("pyshacl") / "assets" / "shacl-shacl.ttl"
    meta = read_triples(data=asset.read_bytes(), format_name="turtle", bounded=False)
    report = validate_graphs(shape_triples, meta, prefixes=prefixes)
    if report.conforms:
        return
    shapes = ShapeSet(meta, prefixes=prefixes)
    lines = [
        f"  - {f.focus} {f.path or ''} [{f.constraint}]: {f.message}".replace("  [", " [")
        for f in (finding_from_result(r, None, shapes) for r in report.results)
    ]
    raise BadInput(
        "-m/--metashacl: the shapes graph does not validate against the SHACL shapes for "
        f"SHACL (shacl-shacl), {len(report.results)} result(s):\n" + "\n".join(lines)
    )


def _failing(
    results: list[Result], shapes: ShapeSet, allow_warnings: bool, allow_infos: bool
) -> list[Result]:
    """The results that make the graph not conform. With -w/--allow-infos, pySHACL judges
    each top-level shape: one whose own sh:severity is allowed never fails (nested property
    shapes' results included); else a result fails unless its severity is allowed."""
    if not (allow_warnings or allow_infos):
        return list(results)
    allowed = {_SEVERITIES["Info"]} | ({_SEVERITIES["Warning"]} if allow_warnings else set())
    prop = NamedNode(SH + "property")

    def tops(node: Term, seen: frozenset[Term] = frozenset()) -> set[Term]:
        parents = [p for p in shapes.graph.subjects(prop, node) if p not in seen]
        if not parents:
            return {node}
        out = {node} if shapes.shape(node).targets else set()
        for parent in parents:
            out |= tops(parent, seen | {node})
        return out

    def allowed_shape(node: Term) -> bool:
        try:
            return shapes.shape(node).severity.value in allowed
        except Exception:  # not a shape ontoloom parses (a SPARQL-based component's node)
            return False

    failing = []
    for r in results:
        if r.severity.value in allowed:
            continue
        # A property shape shared by several shapes: fails unless every one of them allows.
        if all(allowed_shape(t) for t in tops(r.source_shape)):
            continue
        failing.append(r)
    return failing


def _uses_shacl(triples: Sequence[Statement]) -> bool:
    """Whether any triple uses SHACL's vocabulary: a graph without it declares no shape
    (asked before indexing a large data graph to look for one)."""
    return any(
        t.predicate.value.startswith(SH)
        or (isinstance(t.object, NamedNode) and t.object.value.startswith(SH))
        for t in triples
    )


def validate_files(
    data: list[Source] | list[Path],
    shapes: list[Source] | list[Path],
    data_format: str | None = None,
    *,
    ontology: list[Source] = (),  # type: ignore[assignment]
    inference: str = "none",
    metashacl: bool = False,
    imports: bool = False,
    advanced: bool = False,
    abort: bool = False,
    allow_warnings: bool = False,
    allow_infos: bool = False,
    allow_unsupported: bool = False,
) -> Outcome:
    """Load the sources and validate, with pySHACL's options (see the module docstring).

    Shapes default to ontoloom's own, or to the data's own shapes when the data holds some
    (as pySHACL does). ``abort`` keeps the results of the first failing shape only (pySHACL
    stops there; conformance is the same either way).

    :raises BadInput: on unreadable files, syntax errors (file:line:column), a format that
        cannot be guessed, ill-formed shapes, a shapes graph failing ``metashacl``, or
        features ontoloom does not evaluate (unless allowed).
    """
    with no_collection():  # a file read and validated whole makes many objects, no cycles
        return _validate_files(
            data,
            shapes,
            data_format,
            ontology=ontology,
            inference=inference,
            metashacl=metashacl,
            imports=imports,
            advanced=advanced,
            abort=abort,
            allow_warnings=allow_warnings,
            allow_infos=allow_infos,
            allow_unsupported=allow_unsupported,
        )


def _validate_files(
    data: list[Source] | list[Path],
    shapes: list[Source] | list[Path],
    data_format: str | None,
    *,
    ontology: Sequence[Source],
    inference: str,
    metashacl: bool,
    imports: bool,
    advanced: bool,
    abort: bool,
    allow_warnings: bool,
    allow_infos: bool,
    allow_unsupported: bool,
) -> Outcome:
    data_sources = [
        s if isinstance(s, Source) else Source(str(s), "-df/--data-file-format", data_format)
        for s in data
    ]
    shape_sources = [
        s if isinstance(s, Source) else Source(str(s), "-sf/--shacl-file-format") for s in shapes
    ]
    if inference not in INFERENCE:
        raise BadInput(f"-i/--inference {inference!r}: use one of {', '.join(INFERENCE)}")
    prefixes: dict[str, str] = {}  # as the files declare them, to write terms in messages
    shape_triples: Sequence[Statement]
    data_triples = _load(data_sources, prefixes)  # pySHACL never follows the data's imports
    extra_classes: list[tuple[Term, Term]] = []
    if shape_sources:
        shape_triples = _load(shape_sources, prefixes, imports=imports)
    elif _uses_shacl(data_triples) and ShapeSet(data_triples).all_shape_nodes():
        shape_triples = data_triples  # typed, targeted or used as shapes
    else:
        from ontoloom.schema import Schema

        schema = Schema.load()
        shape_triples, extra_classes = schema.shape_triples, schema.subclass_pairs
    ontology_triples = _load(ontology, prefixes, imports=imports)
    try:
        if metashacl:
            _meta_validate(shape_triples, prefixes)
        if ontology_triples or inference != "none":
            data_triples = _mix_and_infer(data_triples, ontology_triples, inference)
        shape_set = ShapeSet(shape_triples, prefixes=prefixes, inferred=inference != "none")
        report = validate_graphs(
            data_triples,
            shape_triples,
            extra_classes=extra_classes,
            prefixes=prefixes,
            advanced=advanced,
            allow_unsupported=allow_unsupported,
            inferred=inference != "none",
            shape_set=shape_set,
        )
    except UnsupportedFeatures as exc:
        raise BadInput(str(exc)) from None
    except ValidationFailure as exc:
        raise BadInput(f"validation failed: {exc}") from None
    except ShapesError as exc:
        raise BadInput(f"the shapes graph is not well-formed: {exc}") from None
    if inference != "none":  # the shapes as written, for the report (see ShapeSet.inferred)
        shape_set = ShapeSet(shape_triples, prefixes=prefixes)
    report.results = redacted(report.results, shape_set)  # values of secret rules: never shown
    failing = _failing(report.results, shape_set, allow_warnings, allow_infos)
    outcome = Outcome(report, shape_set, conforms=not failing)
    if abort and failing:
        first = failing[0].source_shape
        kept = [r for r in report.results if r.source_shape == first]
        if len(kept) < len(report.results):
            outcome.aborted = True
            outcome.notes.append(
                f"--abort: stopped at the first failing shape ({shape_set.label(first)}); "
                f"{len(report.results) - len(kept)} result(s) of other shapes not reported"
            )
        report.results = kept
    return outcome
