"""The reliability suite's table: each scenario records a row (``soak_row`` fixture), and
the run ends by printing one line per scenario — runs, failures and its key figure.

Loaded from ``tests/conftest.py`` (``pytest_plugins``) so that the controller of an xdist
run sees it too: rows travel from the workers as ``user_properties`` of the test reports.
``ONTOLOOM_SOAK=1`` (``make soak``) scales every scenario up; ``make test`` runs the fast
counts.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

SOAK = os.environ.get("ONTOLOOM_SOAK") == "1"
KEY = "reliability_row"


def scale(fast: int, soak: int) -> int:
    """``fast`` in ``make test``, ``soak`` under ``ONTOLOOM_SOAK=1``."""
    return soak if SOAK else fast


Row = Callable[..., None]


@pytest.fixture
def soak_row(record_property: Callable[[str, object], None]) -> Row:
    """``soak_row(scenario, runs, failures, figure)``: one row of the final table."""

    def row(scenario: str, runs: str, failures: int, figure: str) -> None:
        record_property(
            KEY, {"scenario": scenario, "runs": runs, "failures": failures, "figure": figure}
        )

    return row


_rows: dict[str, dict[str, Any]] = {}
_differential: dict[str, int] = {"tests": 0, "failed": 0}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and "test_differential_generated" in report.nodeid:
        _differential["tests"] += 1
        _differential["failed"] += int(report.failed)
    for name, value in report.user_properties:
        if name == KEY and isinstance(value, dict):
            _rows[f"{value['scenario']}\0{report.nodeid}"] = value
    mine = "tests/reliability/" in report.nodeid.replace(os.sep, "/")
    if report.failed and mine and not any(k.endswith("\0" + report.nodeid) for k in _rows):
        short = report.nodeid.rsplit("::", 1)[-1]
        _rows[f"{short}\0{report.nodeid}"] = {
            "scenario": short,
            "runs": "-",
            "failures": "failed",
            "figure": f"{report.when} failed",
        }


def pytest_terminal_summary(terminalreporter: Any) -> None:
    rows = sorted(_rows.values(), key=lambda r: str(r["scenario"]))
    if _differential["tests"]:
        examples = os.environ.get("ONTOLOOM_DIFFERENTIAL_EXAMPLES", "40")
        profile = os.environ.get("ONTOLOOM_HYPOTHESIS_PROFILE", "ci")
        rows.append(
            {
                "scenario": "differential generated",
                "runs": f"{_differential['tests']} tests × {examples} examples",
                "failures": _differential["failed"],
                "figure": f"profile {profile}",
            }
        )
    if not rows:
        return
    head = ("scenario", "runs / examples", "failures", "key figure")
    table = [head] + [
        (str(r["scenario"]), str(r["runs"]), str(r["failures"]), str(r["figure"])) for r in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(3)]
    terminalreporter.section("reliability" + (" (soak)" if SOAK else " (fast subset)"), sep="=")
    for i, line in enumerate(table):
        cells = [line[c].ljust(widths[c]) for c in range(3)]
        terminalreporter.write_line(" | ".join([*cells, line[3]]))
        if i == 0:
            terminalreporter.write_line("-+-".join("-" * w for w in [*widths, len(head[3])]))
