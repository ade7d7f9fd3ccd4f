"""One SHACL validation with a chosen peer engine, measured in a fresh process.

    python bench/validate_peers.py ENGINE DATA.ttl SHAPES.ttl [--timeout S]
    python bench/validate_peers.py all DATA.ttl SHAPES.ttl      # one line per engine

prints one JSON line per engine:
{"engine", "seconds", "max_rss_mib", "results", "conforms", "error"}. From another bench
script: ``sys.path.insert(0, str(Path(__file__).parent)); from validate_peers import run``.

``seconds`` is the wall time of the whole child (interpreter start, imports, parsing both
files, validating, counting); ``max_rss_mib`` is that child's peak RSS (taken through a
small launcher process, so that the caller's own memory is not counted: see ``_launch``);
``results`` counts violations + warnings + infos (top-level sh:result only, never nested
sh:detail). ``run(..., rows=True)`` also gives each result as a comparable key
(``result_key``), the same for every engine on the same result.
``conforms`` and ``results`` are null when ``error`` is set; ``error`` is "not installed"
when the engine's package or CLI is missing.

Engines and the call each makes (all with their defaults otherwise: no inference, warnings
make conforms false):

* pyshacl        pyshacl.validate(rdflib Graph, shacl_graph=Graph, inference="none",
                 advanced=True)
* pyshacl-turbo  pyshacl_turbo.validate(Path, shacl_graph=Path, inference="none",
                 advanced=True)   (its Rust parser reads the file)
* shacl          shacl.validate(data_path, shapes_path) -> Report (len = results)
* shacl-rust     shacl_rust.validate_file(data_path, shapes_path) -> {"conforms", "results"}
* pyrudof        Rudof().read_data(path, reader_mode=Strict); .read_shacl(path, Strict);
                 .validate_shacl() -> report (len = results)
* ontoloom       ontoloom validate DATA --shapes SHAPES --json (exit 1 = does not conform)

pyshacl and pyshacl-turbo run SHACL-AF (advanced=True: sh:rule, custom targets); the others
do not (ontoloom's -a is not passed), so shapes with sh:rule are not comparable.

Agreement, checked with pyshacl 0.40.1, pyshacl-turbo 0.6.5, shacl 0.3.4, shacl-rust 0.2.12,
pyrudof 0.3.35 and ontoloom 0.1.0 on Python 3.11 (small hand-written files; result
count / conforms were equal in all six engines unless said otherwise):

* A node shape with sh:targetClass and property shapes using sh:datatype xsd:decimal,
  sh:minInclusive 0, sh:pattern, sh:in, plus a sh:Warning and a sh:Info sh:maxCount 0,
  over 3 good and 5 broken nodes: 9 results (7 violations, 1 warning, 1 info), among them
  two for an untyped "abc" price (datatype and minInclusive); conforms false. Only a
  warning: 1 result, conforms false. Ill-typed "1.2.3"^^xsd:decimal: datatype and
  minInclusive each (rdflib, hence pyshacl and pyshacl-turbo, also logs a traceback).
* sh:sparql: a SPARQLConstraint SELECT $this WHERE { $this ex:p ?x . FILTER NOT EXISTS
  { ?x a ex:C } } (prefixes by sh:declare) is supported by all six: 2 results, one per
  failing focus node, also for the node with one good and one bad ?x. A property-shape
  sh:sparql using $PATH and ?value: 2 results in all six.
* Also equal: rdfs:subClassOf in targetClass and sh:class, sh:or/sh:not/sh:node, languageIn
  and uniqueLang, sh:closed with ignoredProperties, lessThan/equals/disjoint, qualified
  value shapes, sequence/inverse/alternative/zeroOrMore paths, targetSubjectsOf,
  targetObjectsOf, sh:deactivated, shape-level and property-level sh:severity.
* sh:js (SHACL-JS) differs: pyshacl, shacl, shacl-rust and pyrudof ignore it silently and
  report conforms true with 0 results; pyshacl-turbo raises NotImplementedError and
  ontoloom exits 2 (both come back here as "error").
* pyrudof reads with ReaderMode.Strict: with its default, Lax, a file whose third line is
  not Turtle was validated on the lines before it (1 result, no error); Strict fails like
  the other engines, and a half-read graph must not pass for a fast run.
* The first run of an engine after installing it also writes its .pyc files: warm up once.
"""

from __future__ import annotations

# Only os and sys at module level: the engine child imports this file too, and every import
# here would be charged to each engine's time and RSS (json+subprocess+typing ≈ 20 ms and
# 4.5 MiB, more than `import shacl` itself). The parent imports what it needs in functions.
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    # results, conforms, error: what a finished child says
    Answer = tuple[int | None, bool | None, str | None]
    # an adapter's answer: results, conforms, the engine's own report
    Outcome = tuple[int | None, bool, Any]
    # one result as the engine writes its terms: focus, path, value, component, severity,
    # source shape (made comparable by the parent: see ``result_key``)
    RawRow = tuple[Any, ...]

ENGINES = ("pyshacl", "pyshacl-turbo", "shacl", "shacl-rust", "pyrudof", "ontoloom")
# The top-level module each Python engine needs; a ModuleNotFoundError for it = not installed.
_MODULES = {
    "pyshacl": "pyshacl",
    "pyshacl-turbo": "pyshacl_turbo",
    "shacl": "shacl",
    "shacl-rust": "shacl_rust",
    "pyrudof": "pyrudof",
}
_SH_RESULT = "http://www.w3.org/ns/shacl#result"
# The child's answer is the last stdout line with this prefix: tab-separated
# results, conforms, error, so the child needs no json import.
_MARK = "@@validate_peers\t"


# --- child side: runs the engine, prints the marker line --------------------------------


def _report_results(report: Any) -> int:
    """Top-level results of an rdflib report graph (sh:detail results hang off these)."""
    from rdflib import URIRef

    return len(set(report.objects(None, URIRef(_SH_RESULT))))


def _pyshacl(data: str, shapes: str) -> Outcome:
    import pyshacl
    from rdflib import Graph
    from rdflib.util import guess_format

    data_graph = Graph().parse(data, format=guess_format(data) or "turtle")
    shapes_graph = Graph().parse(shapes, format=guess_format(shapes) or "turtle")
    conforms, report, _ = pyshacl.validate(
        data_graph, shacl_graph=shapes_graph, inference="none", advanced=True
    )
    return _report_results(report), bool(conforms), report


def _pyshacl_turbo(data: str, shapes: str) -> Outcome:
    from pathlib import Path

    import pyshacl_turbo

    # Path, not str: a str may be taken for inline RDF text; a Path goes to its native parser.
    conforms, report, _ = pyshacl_turbo.validate(
        Path(data), shacl_graph=Path(shapes), inference="none", advanced=True
    )
    return _report_results(report), bool(conforms), report


def _shacl(data: str, shapes: str) -> Outcome:
    import shacl

    report = shacl.validate(data, shapes)
    return len(report.results), bool(report.conforms), report


def _shacl_rust(data: str, shapes: str) -> Outcome:
    import shacl_rust

    report = shacl_rust.validate_file(data, shapes)
    return len(report["results"]), bool(report["conforms"]), report


def _pyrudof(data: str, shapes: str) -> Outcome:
    from pathlib import Path

    import pyrudof

    # By extension, as the other engines do; anything else is read as Turtle.
    kinds = {".nt": "NTriples", ".nq": "NQuads", ".trig": "TriG", ".rdf": "RdfXml",
             ".owl": "RdfXml", ".jsonld": "JsonLd", ".n3": "N3"}  # fmt: skip
    strict = pyrudof.ReaderMode.Strict
    rudof = pyrudof.Rudof()
    data_kind = kinds.get(Path(data).suffix.lower(), "Turtle")
    rudof.read_data(Path(data), format=getattr(pyrudof.RDFFormat, data_kind), reader_mode=strict)
    shapes_kind = kinds.get(Path(shapes).suffix.lower(), "Turtle")
    rudof.read_shacl(
        Path(shapes), format=getattr(pyrudof.ShaclFormat, shapes_kind), reader_mode=strict
    )
    report = rudof.validate_shacl()
    return len(report), bool(report.conforms), report


def _n3(term: Any) -> str | None:
    return None if term is None else str(term.n3())


def _rdflib_rows(report: Any) -> list[RawRow]:
    from rdflib import URIRef

    sh = "http://www.w3.org/ns/shacl#"
    keys = ("focusNode", "resultPath", "value", "sourceConstraintComponent", "resultSeverity",
            "sourceShape")  # fmt: skip
    return [
        tuple(_n3(report.value(result, URIRef(sh + key))) for key in keys)
        for result in set(report.objects(None, URIRef(_SH_RESULT)))
    ]


def _shacl_rows(report: Any) -> list[RawRow]:
    return [
        (r.focus_node, r.path, r.value, r.component_iri, r.severity_iri, r.source_shape)
        for r in report.results
    ]


def _shacl_rust_rows(report: Any) -> list[RawRow]:
    keys = ("focusNode", "resultPath", "value", "sourceConstraintComponent", "severity",
            "sourceShape")  # fmt: skip
    return [tuple(r.get(key) for key in keys) for r in report["results"]]


def _pyrudof_rows(report: Any) -> list[RawRow]:
    return [
        (r.focus_node, r.path, r.value, r.constraint_component, r.severity, r.source_shape)
        for r in report.violations
    ]


_ROWS: dict[str, Callable[[Any], list[RawRow]]] = {
    "pyshacl": _rdflib_rows,
    "pyshacl-turbo": _rdflib_rows,
    "shacl": _shacl_rows,
    "shacl-rust": _shacl_rust_rows,
    "pyrudof": _pyrudof_rows,
}

_ADAPTERS: dict[str, Callable[[str, str], Outcome]] = {
    "pyshacl": _pyshacl,
    "pyshacl-turbo": _pyshacl_turbo,
    "shacl": _shacl,
    "shacl-rust": _shacl_rust,
    "pyrudof": _pyrudof,
}


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def _answer(
    results: int | None, conforms: bool | None, error: str, extract: float | None = None
) -> int:
    error = error.replace("\t", " ").replace("\n", " ")
    fields = ("" if results is None else str(results), "" if conforms is None else str(conforms))
    spent = "" if extract is None else f"{extract:.6f}"
    sys.stdout.write(f"\n{_MARK}{fields[0]}\t{fields[1]}\t{spent}\t{error}\n")
    return 0


def _write_rows(engine: str, report: Any, path: str) -> float:
    """Write the report's results to ``path`` (a JSON list a line); the seconds that took,
    imports included, which the parent takes off the run's wall time."""
    import time

    start = time.perf_counter()
    import json

    with open(path, "w", encoding="utf-8") as out:
        for row in _ROWS[engine](report):
            out.write(json.dumps([None if t is None else str(t) for t in row]) + "\n")
    return time.perf_counter() - start


def _child(engine: str, data: str, shapes: str, rows: str | None = None) -> int:
    if engine not in _ADAPTERS:
        return _answer(None, None, "unknown engine")
    module = _MODULES[engine]
    try:
        __import__(module)  # here, so that a missing package is told apart from a failure
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").split(".")[0]
        return _answer(
            None, None, "not installed" if missing == module else f"not installed: {missing}"
        )
    except Exception as exc:  # a broken install must not crash the benchmark
        return _answer(None, None, f"import failed: {_short(exc)}")
    try:
        results, conforms, report = _ADAPTERS[engine](data, shapes)
    except Exception as exc:  # whatever an engine raises is its failure, reported
        return _answer(None, None, _short(exc))
    if rows is None:
        return _answer(results, conforms, "")
    try:
        extract = _write_rows(engine, report, rows)
    except Exception as exc:  # the run is good; only its result set could not be read
        return _answer(results, conforms, f"results not readable: {_short(exc)}")
    return _answer(results, conforms, "", extract)


# --- parent side: spawns one child, measures it, parses its answer -----------------------


def _ontoloom_exe() -> str | None:
    import shutil

    # The CLI of this interpreter's environment first, not whichever is first on PATH.
    beside = os.path.join(os.path.dirname(sys.executable), "ontoloom")
    return beside if os.access(beside, os.X_OK) else shutil.which("ontoloom")


def _launch(report: str, argv: list[str]) -> int:
    """Run argv, wait for it, write "exit code, wall seconds, ru_maxrss" to ``report``.

    ``_spawn`` runs engines through this small process (``python -S`` importing os and sys)
    rather than directly: on Linux a child's ru_maxrss also counts the memory of the process
    it was spawned from (vfork and fork share or copy its pages until exec), so an engine
    spawned from the bench, which holds the generated workload, was measured at the bench's
    own peak RSS when that was higher (shacl: 14.8 MiB alone, 313 MiB from a parent holding
    300 MiB). From here the floor is this launcher's few MiB, less than any engine's own.
    """
    import time

    start = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ)
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - start
    with open(report, "w", encoding="utf-8") as out:
        out.write(f"{os.waitstatus_to_exitcode(status)}\t{seconds}\t{usage.ru_maxrss}\n")
    return 0


def _spawn(argv: list[str], timeout: float) -> tuple[int | None, float, float | None, str, str]:
    """Run argv once: (exit code or None on timeout, wall seconds, peak RSS MiB, out, err).

    The wall time and peak RSS are the engine's own, taken by ``_launch``; the launcher's
    own start (~20 ms) is in neither.
    """
    import contextlib
    import signal
    import subprocess
    import tempfile
    import threading

    # os.wait4 returns the rusage of this one child, so the peak RSS is its own even when
    # the launcher has run other children before (RUSAGE_CHILDREN would give their maximum).
    # Output goes to files, not pipes: nobody reads a pipe while we block in wait4.
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryDirectory(prefix="validate-peers-") as tmp,
    ):
        report = os.path.join(tmp, "launch")
        launcher = [sys.executable, "-S", os.path.abspath(__file__), "--launch", report, *argv]
        # Every engine runs from its bytecode cache, as an installed package does: with
        # PYTHONDONTWRITEBYTECODE set in the caller's environment, an editable install
        # (ontoloom's, from the source tree) would compile every module it imports on every
        # run, where the peers' wheels were compiled when pip installed them.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        proc = subprocess.Popen(
            launcher,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            env=env,
        )
        timed_out = threading.Event()

        def kill() -> None:
            timed_out.set()
            with contextlib.suppress(ProcessLookupError):  # it may have just exited
                os.killpg(proc.pid, signal.SIGKILL)  # the group: the engine dies too

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            proc.wait()
        except BaseException:
            kill()  # e.g. Ctrl-C in the parent: leave no engine running
            proc.wait()
            raise
        finally:
            timer.cancel()
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
        try:
            with open(report, encoding="utf-8") as lines:
                code, seconds, maxrss = lines.read().split("\t")
        except (OSError, ValueError):  # killed (timeout) or the launcher failed
            code, seconds, maxrss = str(proc.returncode), "nan", "0"
    # ru_maxrss is KiB on Linux, bytes on macOS.
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024
    rss = int(maxrss) / scale if int(maxrss) else None
    if timed_out.is_set():
        return None, float(timeout), rss, stdout, stderr
    return int(code), float(seconds), rss, stdout, stderr


def _crash(code: int, stderr: str) -> str:
    """A short error for a child that died without answering."""
    last = next((ln.strip() for ln in reversed(stderr.splitlines()) if ln.strip()), "")
    how = f"killed by signal {-code}" if code < 0 else f"exit {code}"
    return f"{how}: {last}"[:300] if last else how


def _parse_child(stdout: str) -> tuple[Answer, float] | None:
    """The child's answer and the seconds it spent writing its result set."""
    lines = [ln for ln in stdout.splitlines() if ln.startswith(_MARK)]
    if not lines:
        return None
    fields = [*lines[-1][len(_MARK) :].split("\t", 3), "", "", ""]
    results, conforms, extract, error = fields[:4]
    answer = (
        int(results) if results else None,
        {"True": True, "False": False}.get(conforms),
        error or None,
    )
    return answer, float(extract) if extract else 0.0


_XSD = "http://www.w3.org/2001/XMLSchema#"


def term_key(text: str | None) -> str:
    """One engine's rendering of a term, in one form for all engines: IRIs ``<…>``, every
    blank node ``_:`` (labels differ between engines), literals ``"lexical"`` with a lower-case
    ``@lang`` or a full ``^^<datatype>`` (none for xsd:string), escapes undone."""
    import re

    if text is None or not str(text).strip():
        return ""
    text = str(text).strip()
    if text.startswith("_:"):
        return "_:"
    if text.startswith("<") and text.endswith(">"):
        return text
    literal = re.fullmatch(r'"(.*)"(@[A-Za-z0-9-]+|\^\^<[^>]*>|\^\^\w+:[\w.-]*)?', text, re.S)
    if literal:
        escapes = {"n": "\n", "t": "\t", "r": "\r"}
        lexical = re.sub(r"\\(.)", lambda m: escapes.get(m[1], m[1]), literal[1])
        suffix = literal[2] or ""
        if suffix.startswith("@"):
            suffix = suffix.lower()
        elif suffix.startswith("^^xsd:"):
            suffix = f"^^<{_XSD}{suffix[6:]}>"
        if suffix == f"^^<{_XSD}string>":
            suffix = ""
        return f'"{lexical}"{suffix}'
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*:\S*", text):
        return f"<{text}>"  # pyrudof writes IRIs bare
    return text


def result_key(row: RawRow | list[Any]) -> tuple[str, ...]:
    """(focus, path, value, component, severity, source shape) of one result, comparable
    across engines: terms by ``term_key``, the component and severity by local name."""
    focus, path, value, component, severity, shape = row

    def local(iri: Any) -> str:
        return "" if not iri else str(iri).strip("<>").rsplit("#", 1)[-1].rsplit("/", 1)[-1]

    keys = (term_key(focus), term_key(path), term_key(value), local(component), local(severity))
    return (*keys, term_key(shape))


def _parse_ontoloom(code: int, stdout: str, stderr: str) -> tuple[Answer, list[RawRow]]:
    """ontoloom's answer and its results (its --json report lists them all)."""
    import json

    try:
        report = json.loads(stdout)
    except ValueError:
        report = None
    # 0 conforms, 1 does not: both are a finished validation. 2 is a load/usage error or
    # an unsupported feature (sh:expression, SHACL-JS): {"error", "message"} on stdout.
    if code in (0, 1) and isinstance(report, dict) and "conforms" in report:
        counts = [report.get(k) for k in ("violations", "warnings", "infos")]
        ints = [c for c in counts if isinstance(c, int)]
        results = sum(ints) if len(ints) == len(counts) else None
        keys = ("focus", "path", "value", "component", "severity", "source_shape")
        rows = [tuple(r.get(k) for k in keys) for r in report.get("results") or []]
        return (results, bool(report["conforms"]), None), rows
    if isinstance(report, dict) and (report.get("message") or report.get("error")):
        return (None, None, str(report.get("message") or report.get("error"))[:300]), []
    return (None, None, _crash(code, stderr)), []


def run(
    engine: str, data: Path, shapes: Path, timeout: float = 600.0, rows: bool = False
) -> dict[str, Any]:
    """Validate data against shapes with engine in a fresh process; see the module doc.

    With ``rows``, the outcome's "rows" lists each result's ``result_key``; a peer's child
    then writes its results to a file after validating, and the time that took is taken off
    "seconds" (ontoloom's --json report always lists them: nothing to take off).
    """
    import tempfile

    outcome: dict[str, Any] = {
        "engine": engine,
        "seconds": None,
        "max_rss_mib": None,
        "results": None,
        "conforms": None,
        "error": None,
    }
    if rows:
        outcome["rows"] = None
        with tempfile.TemporaryDirectory(prefix="validate-peers-") as tmp:
            return _run(engine, data, shapes, timeout, outcome, os.path.join(tmp, "rows.jsonl"))
    return _run(engine, data, shapes, timeout, outcome, None)


def _run(
    engine: str,
    data: Path,
    shapes: Path,
    timeout: float,
    outcome: dict[str, Any],
    rows_file: str | None,
) -> dict[str, Any]:
    import json

    data_path, shapes_path = os.path.abspath(data), os.path.abspath(shapes)
    if engine not in ENGINES:
        outcome["error"] = f"unknown engine (one of {', '.join(ENGINES)})"
        return outcome
    for path in (data_path, shapes_path):
        if not os.path.isfile(path):
            outcome["error"] = f"no such file: {path}"
            return outcome
    if engine == "ontoloom":
        exe = _ontoloom_exe()
        if exe is None:
            outcome["error"] = "not installed"
            return outcome
        argv = [exe, "validate", data_path, "--shapes", shapes_path, "--json"]
    else:
        script = os.path.abspath(__file__)
        argv = [sys.executable, script, "--child", engine, data_path, shapes_path]
        if rows_file is not None:
            argv.append(rows_file)
    code, seconds, rss, stdout, stderr = _spawn(argv, timeout)
    outcome["seconds"] = round(seconds, 4)
    outcome["max_rss_mib"] = round(rss, 1) if rss is not None else None
    if code is None:
        outcome["error"] = f"timeout after {timeout:g} s"
        return outcome
    raw: list[Any] = []
    if engine == "ontoloom":
        parsed, raw = _parse_ontoloom(code, stdout, stderr)
    else:
        child = _parse_child(stdout)
        parsed = child[0] if child else (None, None, _crash(code, stderr))
        if child and rows_file is not None and parsed[2] is None:
            outcome["seconds"] = round(seconds - child[1], 4)
            with open(rows_file, encoding="utf-8") as lines:
                raw = [json.loads(line) for line in lines]
    outcome["results"], outcome["conforms"], outcome["error"] = parsed
    if outcome["error"] is not None:
        outcome["results"] = outcome["conforms"] = None
    elif rows_file is not None:
        outcome["rows"] = [result_key(row) for row in raw]
    return outcome


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(
        description="One SHACL validation with a peer engine in a fresh process: "
        "wall seconds, peak RSS and result count, as one JSON line."
    )
    parser.add_argument("engine", choices=[*ENGINES, "all"], help="engine, or all in turn")
    parser.add_argument("data", type=Path, help="data graph file (Turtle)")
    parser.add_argument("shapes", type=Path, help="shapes graph file (Turtle)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds (default 600)")
    args = parser.parse_args(argv)
    engines = ENGINES if args.engine == "all" else (args.engine,)
    failed = False
    for engine in engines:
        outcome = run(engine, args.data, args.shapes, args.timeout)
        print(json.dumps(outcome), flush=True)
        failed |= outcome["error"] is not None
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--launch":
        sys.exit(_launch(sys.argv[2], sys.argv[3:]))
    if len(sys.argv) in (5, 6) and sys.argv[1] == "--child":
        # The script's own folder (bench/) is sys.path[0]: drop it so no bench file can
        # shadow an engine's package.
        if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
            del sys.path[0]
        sys.exit(_child(*sys.argv[2:6]))
    sys.exit(main())
