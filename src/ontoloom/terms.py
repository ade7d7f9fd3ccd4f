"""RDF terms, re-exported so that no floor above storage imports pyoxigraph: a kernel module,
since every floor speaks in these terms.

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


def node(value: object) -> Term:
    """A subject or object as ontoloom holds them: pyoxigraph types every one as possibly an
    RDF-star quoted triple, which ontoloom never stores (its parsers refuse them).

    >>> node(NamedNode("http://a")).value
    'http://a'
    """
    if not isinstance(value, NamedNode | BlankNode | Literal):
        raise TypeError(f"not an RDF term ontoloom holds: {value!r}")
    return value


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
    "node",
    "parse",
    "serialize",
]
