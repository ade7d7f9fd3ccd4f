"""ontoloom: a typed, validated knowledge graph that AI agents and people share as memory.

The Python API lives in :mod:`ontoloom.api`::

    from ontoloom import Graph
    with Graph.open("my-instance/.ontoloom", create=True) as g:
        task = g.create("Task", {"title": "Ship it", "status": "open"})

Names are imported lazily so that latency-bound entry points (hooks) stay light.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads it alike)

if TYPE_CHECKING:  # nothing at run time: the hooks' entry point imports this package first
    from typing import Any

__all__ = [
    "BadInput",
    "Busy",
    "Graph",
    "NoStore",
    "NotFound",
    "OntoloomError",
    "ValidationFailed",
    "__version__",
]


def _version() -> str:
    """The installed distribution's version: one source of truth (pyproject.toml), read from
    the package metadata that pip wrote, so ``__version__`` and ``--version`` always agree."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ontoloom")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return _version()
    if name == "Graph":
        from ontoloom.api import Graph

        return Graph
    if name in __all__:
        from ontoloom import errors

        return getattr(errors, name)
    raise AttributeError(name)
