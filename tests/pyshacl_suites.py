"""pySHACL's own test suites, as `make pyshacl-suites` unpacks them from the sdist of the
installed pySHACL (bench/peers.py, under bench/.peers/): where they are, or why not.

A missing suite skips its tests with the reason and the command that fetches it; under
``ONTOLOOM_REQUIRE_SUITES=1`` (set by `.ci/run`, which fetches them first) it fails them.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any, NoReturn

import pytest

from ontoloom.shacl.oracle import to_rdflib
from ontoloom.terms import Triple

__all__ = ["MISSING", "SUITES", "missing", "peers", "pyshacl_validate"]

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _peers() -> Any:
    spec = importlib.util.spec_from_file_location("bench_peers", BENCH / "peers.py")
    assert spec is not None and spec.loader is not None
    peers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peers)
    return peers


peers = _peers()  # bench/peers.py, which fetches the suites


def _locate() -> tuple[Path | None, str]:
    try:
        return peers.pyshacl_suites(install=False), ""
    except peers.Unavailable as exc:
        return None, str(exc)


# pySHACL's sdist's test/ folder, or None and why.
SUITES, MISSING = _locate()


def missing() -> NoReturn:
    """Skip (or, under ONTOLOOM_REQUIRE_SUITES=1, fail) a test whose suite is not there."""
    reason = f"pySHACL's test suites are not available: {MISSING}"
    if os.environ.get("ONTOLOOM_REQUIRE_SUITES") == "1":
        pytest.fail(f"{reason} (ONTOLOOM_REQUIRE_SUITES=1)", pytrace=False)
    pytest.skip(reason)


def pyshacl_validate(
    data: list[Triple],
    shapes: list[Triple],
    *,
    advanced: bool,
    prefixes: dict[str, str] | None = None,
    **options: Any,
) -> tuple[bool, Any]:
    """pySHACL on in-memory graphs (literals as written: rdflib's parser would normalise
    them, which pySHACL's own suite turns off), each graph with the ``prefixes`` its file
    declares (pySHACL reads a file's prefixes in SPARQL queries), inference off unless
    ``options`` say. Returns (its answer, its report graph)."""
    import pyshacl

    def graph(triples: list[Triple]) -> Any:
        g = to_rdflib(triples)
        for prefix, namespace in (prefixes or {}).items():
            g.bind(prefix, namespace, override=True)
        return g

    answer, report, _ = pyshacl.validate(
        graph(data),
        shacl_graph=graph(shapes),
        inference=options.pop("inference", "none"),
        advanced=advanced,
        **options,
    )
    return bool(answer), report
