"""RDF terms, re-exported so that nothing outside ``ontoloom.store`` imports pyoxigraph.

The terms are plain values (hashable, comparable); every backend yields and accepts them.
"""

from pyoxigraph import (
    BlankNode,
    DefaultGraph,
    Literal,
    NamedNode,
    Quad,
    RdfFormat,
    Triple,
    Variable,
    parse,
    serialize,
)

Term = NamedNode | BlankNode | Literal
Subject = NamedNode | BlankNode
GraphName = NamedNode | BlankNode | DefaultGraph

__all__ = [
    "BlankNode",
    "DefaultGraph",
    "GraphName",
    "Literal",
    "NamedNode",
    "Quad",
    "RdfFormat",
    "Subject",
    "Term",
    "Triple",
    "Variable",
    "parse",
    "serialize",
]
