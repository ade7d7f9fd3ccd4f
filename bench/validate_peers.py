"""One SHACL validation with a chosen peer engine, measured in a fresh process.

    python bench/validate_peers.py ENGINE DATA.ttl SHAPES.ttl [--timeout S]
    python bench/validate_peers.py all DATA.ttl SHAPES.ttl      # one line per engine

prints one JSON line per engine:
{"engine", "seconds", "max_rss_mib", "results", "conforms", "error"}. From another bench
script: ``sys.path.insert(0, str(Path(__file__).parent)); from validate_peers import run``.

``seconds`` is the wall time of the whole child (interpreter start, imports, parsing both
files, validating, counting); ``max_rss_mib`` is that child's peak RSS; ``results`` counts
violations + warnings + infos (top-level sh:result only, never nested sh:detail).
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


def _pyshacl(data: str, shapes: str) -> tuple[int | None, bool]:
    import pyshacl
    from rdflib import Graph
    from rdflib.util import guess_format

    data_graph = Graph().parse(data, format=guess_format(data) or "turtle")
    shapes_graph = Graph().parse(shapes, format=guess_format(shapes) or "turtle")
    conforms, report, _ = pyshacl.validate(
        data_graph, shacl_graph=shapes_graph, inference="none", advanced=True
    )
    return _report_results(report), bool(conforms)


def _pyshacl_turbo(data: str, shapes: str) -> tuple[int | None, bool]:
    from pathlib import Path

    import pyshacl_turbo

    # Path, not str: a str may be taken for inline RDF text; a Path goes to its native parser.
    conforms, report, _ = pyshacl_turbo.validate(
        Path(data), shacl_graph=Path(shapes), inference="none", advanced=True
    )
    return _report_results(report), bool(conforms)


def _shacl(data: str, shapes: str) -> tuple[int | None, bool]:
    import shacl

    report = shacl.validate(data, shapes)
    return len(report.results), bool(report.conforms)


def _shacl_rust(data: str, shapes: str) -> tuple[int | None, bool]:
    import shacl_rust

    report = shacl_rust.validate_file(data, shapes)
    return len(report["results"]), bool(report["conforms"])


def _pyrudof(data: str, shapes: str) -> tuple[int | None, bool]:
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
    return len(report), bool(report.conforms)


_ADAPTERS: dict[str, Callable[[str, str], tuple[int | None, bool]]] = {
    "pyshacl": _pyshacl,
    "pyshacl-turbo": _pyshacl_turbo,
    "shacl": _shacl,
    "shacl-rust": _shacl_rust,
    "pyrudof": _pyrudof,
}


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def _answer(results: int | None, conforms: bool | None, error: str) -> int:
    error = error.replace("\t", " ").replace("\n", " ")
    fields = ("" if results is None else str(results), "" if conforms is None else str(conforms))
    sys.stdout.write(f"\n{_MARK}{fields[0]}\t{fields[1]}\t{error}\n")
    return 0


def _child(engine: str, data: str, shapes: str) -> int:
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
        results, conforms = _ADAPTERS[engine](data, shapes)
    except Exception as exc:  # whatever an engine raises is its failure, reported
        return _answer(None, None, _short(exc))
    return _answer(results, conforms, "")


# --- parent side: spawns one child, measures it, parses its answer -----------------------


def _ontoloom_exe() -> str | None:
    import shutil

    # The CLI of this interpreter's environment first, not whichever is first on PATH.
    beside = os.path.join(os.path.dirname(sys.executable), "ontoloom")
    return beside if os.access(beside, os.X_OK) else shutil.which("ontoloom")


def _spawn(argv: list[str], timeout: float) -> tuple[int | None, float, float | None, str, str]:
    """Run argv once: (exit code or None on timeout, wall seconds, peak RSS MiB, out, err)."""
    import contextlib
    import signal
    import subprocess
    import tempfile
    import threading
    import time

    # os.wait4 returns the rusage of this one child, so the peak RSS is its own even when
    # the caller has run other children before (RUSAGE_CHILDREN would give their maximum).
    # Output goes to files, not pipes: nobody reads a pipe while we block in wait4.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
        )
        timed_out = threading.Event()

        def kill() -> None:
            timed_out.set()
            with contextlib.suppress(ProcessLookupError):  # it may have just exited
                os.killpg(proc.pid, signal.SIGKILL)  # the group: grandchildren die too

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            kill()  # e.g. Ctrl-C in the parent: leave no engine running
            proc.wait()
            raise
        finally:
            timer.cancel()
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # so Popen does not wait again
        # ru_maxrss is KiB on Linux, bytes on macOS.
        scale = 1024 * 1024 if sys.platform == "darwin" else 1024
        rss = usage.ru_maxrss / scale if usage.ru_maxrss else None
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    return (None if timed_out.is_set() else proc.returncode), seconds, rss, stdout, stderr


def _crash(code: int, stderr: str) -> str:
    """A short error for a child that died without answering."""
    last = next((ln.strip() for ln in reversed(stderr.splitlines()) if ln.strip()), "")
    how = f"killed by signal {-code}" if code < 0 else f"exit {code}"
    return f"{how}: {last}"[:300] if last else how


def _parse_child(stdout: str) -> Answer | None:
    lines = [ln for ln in stdout.splitlines() if ln.startswith(_MARK)]
    if not lines:
        return None
    results, conforms, error = [*lines[-1][len(_MARK) :].split("\t", 2), "", ""][:3]
    return (
        int(results) if results else None,
        {"True": True, "False": False}.get(conforms),
        error or None,
    )


def _parse_ontoloom(code: int, stdout: str, stderr: str) -> Answer:
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
        return results, bool(report["conforms"]), None
    if isinstance(report, dict) and (report.get("message") or report.get("error")):
        return None, None, str(report.get("message") or report.get("error"))[:300]
    return None, None, _crash(code, stderr)


def run(engine: str, data: Path, shapes: Path, timeout: float = 600.0) -> dict[str, Any]:
    """Validate data against shapes with engine in a fresh process; see the module doc."""
    outcome: dict[str, Any] = {
        "engine": engine,
        "seconds": None,
        "max_rss_mib": None,
        "results": None,
        "conforms": None,
        "error": None,
    }
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
    code, seconds, rss, stdout, stderr = _spawn(argv, timeout)
    outcome["seconds"] = round(seconds, 4)
    outcome["max_rss_mib"] = round(rss, 1) if rss is not None else None
    if code is None:
        outcome["error"] = f"timeout after {timeout:g} s"
        return outcome
    if engine == "ontoloom":
        parsed = _parse_ontoloom(code, stdout, stderr)
    else:
        parsed = _parse_child(stdout) or (None, None, _crash(code, stderr))
    outcome["results"], outcome["conforms"], outcome["error"] = parsed
    if outcome["error"] is not None:
        outcome["results"] = outcome["conforms"] = None
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
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        # The script's own folder (bench/) is sys.path[0]: drop it so no bench file can
        # shadow an engine's package.
        if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
            del sys.path[0]
        sys.exit(_child(*sys.argv[2:5]))
    sys.exit(main())
