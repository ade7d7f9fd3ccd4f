"""Values that reports never print: the results of a shape marked ``ol:redactValues true``
(the secret rule) carry their value redacted, e.g. ``sk_l…(redacted)``, in every finding,
report and refusal — the value would otherwise be echoed into terminals, CI logs and agent
transcripts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ontoloom.shacl.engine import Result
from ontoloom.shacl.shapes import ShapeSet
from ontoloom.terms import Literal, NamedNode, Term
from ontoloom.vocab import OL

__all__ = ["REDACT_VALUES", "redact_text", "redacted"]

REDACT_VALUES = NamedNode(OL + "redactValues")


def redact_text(term: Term) -> str:
    """What a report says instead of the value: a long value's first four characters (a
    token's public prefix, which says what kind of secret it is) and a mark; of a short
    one, only the mark (a prefix would give away part of a password).

    >>> redact_text(Literal("sk_live_4eC39HqLyjWDarjtT1zdp7dc"))
    'sk_l…(redacted)'
    >>> redact_text(Literal("hunter2"))
    '…(redacted)'
    """
    text = term.value
    return f"{text[:4] if len(text) >= 16 else ''}…(redacted)"


def redacted(results: Iterable[Result], shapes: ShapeSet) -> list[Result]:
    """``results`` with the values of marked shapes (and their property shapes) redacted."""
    marked = _marked(shapes)
    return [
        replace(r, value=Literal(redact_text(r.value)))
        if r.value is not None and r.source_shape in marked
        else r
        for r in results
    ]


def _marked(shapes: ShapeSet) -> set[Term]:
    g = shapes.graph
    stack = [s for s, o in g.pairs(REDACT_VALUES) if isinstance(o, Literal) and o.value == "true"]
    marked: set[Term] = set()
    while stack:
        node = stack.pop()
        if node not in marked:
            marked.add(node)
            stack.extend(shapes.shape(node).properties)
    return marked
