"""Values that reports never print: the results of a shape marked ``ol:redactValues true``
(the secret rule) carry their value redacted, e.g. ``sk_l…(redacted)``, in every finding,
report and refusal — the value would otherwise be echoed into terminals, CI logs and agent
transcripts. So do the other results of the same report that quote one of those values (an
``sh:in`` or ``sh:maxLength`` on the same property would print it back): their value and
messages name it redacted too. Text that holds a secret by its form is redacted wherever it
is printed (:func:`ontoloom.secret_text.redact`, which every finding passes); this module adds
the secrets only the rule knows, e.g. the value of a property named ``apiKey``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ontoloom.secret_text import redaction
from ontoloom.shacl.engine import Result
from ontoloom.shacl.shapes import ShapeSet
from ontoloom.terms import Literal, NamedNode, Term
from ontoloom.vocab import OL

__all__ = ["REDACT_VALUES", "redact_text", "redacted"]

REDACT_VALUES = NamedNode(OL + "redactValues")


def redact_text(term: Term) -> str:
    """What a report says instead of the value (:func:`ontoloom.secret_text.redaction`).

    >>> redact_text(Literal("sk_live_4eC39HqLyjWDarjtT1zdp7dc"))
    'sk_l…(redacted)'
    >>> redact_text(Literal("hunter2"))
    '…(redacted)'
    """
    return redaction(term.value)


def redacted(results: Iterable[Result], shapes: ShapeSet) -> list[Result]:
    """``results`` with the values of marked shapes (and their property shapes) redacted,
    wherever in the report they are quoted."""
    results = list(results)
    marked = _marked(shapes)
    secrets = {
        r.value.value: redact_text(r.value)
        for r in results
        if r.value is not None and r.source_shape in marked and r.value.value
    }
    if not secrets:
        return results
    return [_without(r, secrets) for r in results]


def _without(result: Result, secrets: dict[str, str]) -> Result:
    value = result.value
    if value is not None and value.value in secrets:
        value = Literal(secrets[value.value])
    messages = []
    for message in result.messages:
        text = message.value
        for secret, shown in secrets.items():
            if len(secret) >= 4:  # a shorter one would be found inside ordinary words
                text = text.replace(secret, shown)
        messages.append(Literal(text) if text != message.value else message)
    return replace(result, value=value, messages=tuple(messages))


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
