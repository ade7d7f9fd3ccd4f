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
# A statement read as a triple: a parser's quads are taken as they come (their graph aside,
# where a reader says so) instead of being rebuilt as triples, which costs a second per 100k.
Statement = Triple | Quad


def node(value: object) -> Term:
    """A subject or object as ontoloom holds them: pyoxigraph types every one as possibly an
    RDF-star quoted triple, which ontoloom never stores (its parsers refuse them).

    >>> node(NamedNode("http://a")).value
    'http://a'
    """
    if not isinstance(value, NamedNode | BlankNode | Literal):
        raise TypeError(f"not an RDF term ontoloom holds: {value!r}")
    return value


def subject(value: object) -> Subject:
    """A subject as ontoloom holds them: a named or a blank node (never a literal, nor an
    RDF-star quoted triple, which pyoxigraph's types allow).

    >>> subject(BlankNode("b")).value
    'b'
    >>> subject(Literal("x"))
    Traceback (most recent call last):
    ...
    TypeError: not a subject ontoloom holds (a named or blank node): <Literal value=x ...>
    """
    if not isinstance(value, NamedNode | BlankNode):
        raise TypeError(f"not a subject ontoloom holds (a named or blank node): {value!r}")
    return value


def named(value: object) -> NamedNode:
    """A term that must be an IRI (a predicate, a class, a shape's component).

    >>> named(NamedNode("http://p")).value
    'http://p'
    >>> named(BlankNode("b"))
    Traceback (most recent call last):
    ...
    TypeError: not a named node: <BlankNode value=b>
    """
    if not isinstance(value, NamedNode):
        raise TypeError(f"not a named node: {value!r}")
    return value


def literal(value: object) -> Literal:
    """A term that must be a literal (a value a store gave back for a literal it was given).

    >>> literal(Literal("1")).value
    '1'
    >>> literal(NamedNode("http://a"))
    Traceback (most recent call last):
    ...
    TypeError: not a literal: <NamedNode value=http://a>
    """
    if not isinstance(value, Literal):
        raise TypeError(f"not a literal: {value!r}")
    return value


def graph_name(value: object) -> GraphName:
    """A graph's name as a quad holds it: a named or blank node, or the default graph.

    >>> graph_name(DefaultGraph())
    <DefaultGraph>
    >>> graph_name(Literal("g"))
    Traceback (most recent call last):
    ...
    TypeError: not a graph name: <Literal value=g ...>
    """
    if not isinstance(value, NamedNode | BlankNode | DefaultGraph):
        raise TypeError(f"not a graph name: {value!r}")
    return value


def spo(statement: Triple | Quad) -> tuple[Subject, NamedNode, Term]:
    """A triple's (or a quad's) subject, predicate and object, narrowed to the terms
    ontoloom holds (:func:`subject`, :func:`node`).

    >>> s, p, o = spo(Triple(NamedNode("http://s"), NamedNode("http://p"), Literal("1")))
    >>> o.value
    '1'
    """
    return subject(statement.subject), statement.predicate, node(statement.object)


def triple(s: Term, p: Term, o: Term) -> Triple:
    """The triple of three terms ontoloom holds: ``s`` must be a subject (:func:`subject`) and
    ``p`` a named node (:func:`named`), else TypeError, as pyoxigraph raises.

    >>> str(triple(NamedNode("http://s"), NamedNode("http://p"), BlankNode("o")))
    '<http://s> <http://p> _:o'
    >>> triple(Literal("1"), NamedNode("http://p"), Literal("2"))
    Traceback (most recent call last):
    ...
    TypeError: not a subject ontoloom holds (a named or blank node): <Literal value=1 ...>
    """
    return Triple(subject(s), named(p), o)


__all__ = [
    "BlankNode",
    "DefaultGraph",
    "GraphName",
    "Literal",
    "NamedNode",
    "Quad",
    "RdfFormat",
    "Statement",
    "Subject",
    "Term",
    "Triple",
    "Variable",
    "graph_name",
    "literal",
    "named",
    "node",
    "parse",
    "serialize",
    "spo",
    "subject",
    "triple",
]
