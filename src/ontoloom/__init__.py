"""ontoloom: a typed, validated knowledge graph that AI agents and people share as memory.

The Python API lives in :mod:`ontoloom.api`::

    from ontoloom import Graph
    with Graph.open("my-instance/.ontoloom", create=True) as g:
        task = g.create("Task", {"title": "Ship it", "status": "open"})

Names are imported lazily so that latency-bound entry points (hooks) stay light.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BadInput", "Busy", "Graph", "NoStore", "NotFound", "OntoloomError", "ValidationFailed"]


def __getattr__(name: str) -> Any:
    if name == "Graph":
        from ontoloom.api import Graph

        return Graph
    if name in __all__:
        from ontoloom import errors

        return getattr(errors, name)
    raise AttributeError(name)
