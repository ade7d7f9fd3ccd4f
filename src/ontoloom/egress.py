"""The egress gate: every payload that leaves the machine passes :meth:`Gate.release` first.

What leaves is text a model reads somewhere else — today the ``enrich --emit`` request;
tomorrow ``mine --emit`` and cross-vendor verification. An emitter hands the gate its payload
as :class:`Item` s, each naming the objects it carries text from (its *sources*), and writes
only what the gate releases. An item is released when

* every source's privacy class is ``public`` or ``internal``, and
* none of its strings names an object that may not leave (by id, id slug, title, name or
  alias: compared as slugs, word by word) or quotes one (a sentence of any of its text — its
  body, a note's content, every other property and frontmatter field — or any run of
  :data:`QUOTE_WORDS` words of it). Text is compared normalised (zero-width characters
  removed, compatibility forms folded, accents dropped, case and line breaks ignored), and
  in scripts written without spaces (Chinese, Japanese, Korean, Thai) each character is a
  word, so a quote of a few characters is caught as a quote of a few words is.

Text that leaves from outside the store — a transcript's messages — is first redacted
(:func:`redacted_for_egress`): secrets, e-mail addresses, phone numbers, IBANs and card
numbers become a mark saying what was there, and the request counts what was redacted.

Everything else is withheld, counted by reason and never described by content. The gate fails
closed: a source it does not know, a privacy value it does not recognise, or no privacy class
at all keeps the item in.

Privacy classes follow RECORDS.md: values are case-insensitive; an unrecognised value is
``private``; an absent one takes the default of the root the object came from — where no
default applies (an entity written directly, with no ``privacy`` property) the object has no
class and does not leave; several values (or a failure class's occurrences) give the most
restrictive.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ontoloom.config import PRIVACY_CLASSES
from ontoloom.records.slug import slug
from ontoloom.secret_text import normalised, redact

if TYPE_CHECKING:
    from ontoloom.session import Session

__all__ = [
    "MISSING",
    "NAMES_WITHHELD",
    "PASSABLE",
    "PERSONAL_DATA",
    "PRIVATE",
    "QUOTE_WORDS",
    "UNKNOWN_SOURCE",
    "UNRECOGNISED",
    "Gate",
    "Guarded",
    "Item",
    "Privacy",
    "Released",
    "describe",
    "most_restrictive",
    "privacy_of",
    "redacted_for_egress",
]

PASSABLE = frozenset({"public", "internal"})
QUOTE_WORDS = 6  # a run of this many words of a withheld body is a quote of it
_SHORTEST_QUOTE = 3  # shorter sentences ("Body.") are common words, not quotes

# Why something was withheld (the only thing said about it), most severe first.
PRIVATE = "private"
UNRECOGNISED = "unrecognised privacy value"
MISSING = "no privacy class"
UNKNOWN_SOURCE = "source not known"
NAMES_WITHHELD = "names or quotes a withheld object"
_SEVERITY = (PRIVATE, UNRECOGNISED, MISSING, UNKNOWN_SOURCE, NAMES_WITHHELD)
_RANK = {"public": 0, "internal": 1}


@dataclass(frozen=True)
class Privacy:
    """A privacy class as RECORDS.md decides it, and why it may not leave (None: it may).

    >>> privacy_of(["Internal"]).passes, privacy_of(["Top-Secret"]).reason
    (True, 'unrecognised privacy value')
    >>> privacy_of([]).reason, privacy_of([], default="public").cls
    ('no privacy class', 'public')
    """

    cls: str | None  # public | internal | private; None when none applies
    reason: str | None = None

    @property
    def passes(self) -> bool:
        return self.reason is None and self.cls in PASSABLE


def privacy_of(values: Iterable[object] = (), default: object = None) -> Privacy:
    """The class of an object from its stored ``privacy`` values (none, one or several),
    falling back to ``default`` (its root's default, when one applies)."""
    given = list(values)
    if not given:
        if default is None:
            return Privacy(None, MISSING)
        given = [default]
    found = [v.strip().lower() if isinstance(v, str) else None for v in given]
    if "private" in found:
        return Privacy("private", PRIVATE)
    if any(v not in PRIVACY_CLASSES for v in found):
        return Privacy("private", UNRECOGNISED)  # fail closed
    return Privacy(max((v for v in found if v), key=lambda v: _RANK[v]))


def most_restrictive(privacies: Iterable[Privacy]) -> Privacy:
    """A failure class's privacy: the most restrictive among its occurrences (and its own).

    >>> most_restrictive([privacy_of(["public"]), privacy_of(["internal"])]).cls
    'internal'
    >>> most_restrictive([privacy_of(["public"]), privacy_of([])]).reason
    'no privacy class'
    """
    items = list(privacies)
    if not items:
        return Privacy(None, MISSING)
    blocked = [p for p in items if not p.passes]
    if blocked:
        worst = min(blocked, key=lambda p: _SEVERITY.index(p.reason or MISSING))
        return Privacy(worst.cls if worst.cls == "private" else None, worst.reason or MISSING)
    return Privacy(max((p.cls for p in items if p.cls), key=lambda v: _RANK[v]))


@dataclass(frozen=True)
class Item:
    """One part of an outgoing payload: ``payload`` (JSON-able) leaves only if released.

    ``sources`` are the objects whose text it carries (an item with no source carries no
    object's text; it is still scanned for names and quotes). ``kind`` labels the count."""

    payload: Any
    sources: tuple[str, ...] = ()
    kind: str = "item"


@dataclass
class Guarded:
    """An object as the gate knows it: its class, the names it goes by, its body."""

    id: str
    privacy: Privacy
    names: list[str] = field(default_factory=list)  # title, name, aliases (the id is added)
    body: str = ""


@dataclass
class Released:
    """What may leave, and how many items were withheld, by reason and by kind."""

    items: list[Item] = field(default_factory=list)
    withheld: Counter[tuple[str, str]] = field(default_factory=Counter)  # (kind, reason) → n

    def payloads(self, kind: str | None = None) -> list[Any]:
        return [i.payload for i in self.items if kind is None or i.kind == kind]

    def summary(self) -> dict[str, Any]:
        by_reason: Counter[str] = Counter()
        by_kind: Counter[str] = Counter()
        for (kind, reason), n in self.withheld.items():
            by_reason[reason] += n
            by_kind[kind] += n
        return {
            "released": len(self.items),
            "withheld": sum(by_reason.values()),
            "reasons": dict(sorted(by_reason.items())),
            "kinds": dict(sorted(by_kind.items())),
        }

    def describe(self) -> str:
        return describe(self.summary())


def describe(summary: dict[str, Any]) -> str:
    """One line for stderr from a :meth:`Released.summary`: counts and reasons, never content.

    >>> describe({"released": 3, "withheld": 2, "reasons": {"private": 2}, "kinds": {"record": 2}})
    'egress: withheld 2 item(s) (2 record) — 2 private; 3 released. Nothing of a withheld item left; set privacy: public or internal on what may be shared.'
    """
    if not summary["withheld"]:
        return f"egress: {summary['released']} item(s) released, none withheld"
    reasons = ", ".join(f"{n} {r}" for r, n in summary["reasons"].items())
    kinds = ", ".join(f"{n} {k}" for k, n in summary["kinds"].items())
    return (
        f"egress: withheld {summary['withheld']} item(s) ({kinds}) — {reasons}; "
        f"{summary['released']} released. Nothing of a withheld item left; set privacy: public "
        "or internal on what may be shared."
    )


class Gate:
    """Decides, for every outgoing item, whether it may leave (see the module docstring)."""

    def __init__(self, objects: Iterable[Guarded] = ()) -> None:
        self.objects: dict[str, Guarded] = {}
        self._phrases = _Phrases()
        for obj in objects:
            self.add(obj)

    def add(self, obj: Guarded) -> None:
        """Know ``obj``; when it may not leave, its names and sentences become phrases no
        released item may contain."""
        self.objects[obj.id] = obj
        if obj.privacy.passes:
            return
        _, _, local = obj.id.partition(":")
        for name in (obj.id, local, *obj.names):
            self._phrases.add(_words(name))
        for sentence in _SENTENCE.split(obj.body):
            words = _words(sentence)
            if len(words) <= QUOTE_WORDS:
                if len(words) >= _SHORTEST_QUOTE:
                    self._phrases.add(words)
            else:
                for i in range(len(words) - QUOTE_WORDS + 1):
                    self._phrases.add(words[i : i + QUOTE_WORDS])

    def decide(self, item: Item) -> str | None:
        """Why ``item`` may not leave, or None when it may."""
        reasons = []
        for source in item.sources:
            obj = self.objects.get(source)
            if obj is None:
                reasons.append(UNKNOWN_SOURCE)
            elif not obj.privacy.passes:
                reasons.append(obj.privacy.reason or MISSING)
        if not reasons and any(self._phrases.found_in(_words(s)) for s in _strings(item.payload)):
            reasons.append(NAMES_WITHHELD)
        return min(reasons, key=_SEVERITY.index) if reasons else None

    def release(self, items: Iterable[Item]) -> Released:
        """The one call every emitter makes just before a payload leaves: what may go."""
        out = Released()
        for item in items:
            reason = self.decide(item)
            if reason is None:
                out.items.append(item)
            else:
                out.withheld[(item.kind, reason)] += 1
        return out

    @classmethod
    def from_graph(cls, graph: Session) -> Gate:
        """Every object of a schema type in the store, with its privacy class (a failure
        class's is the most restrictive among it and its occurrences), names and body."""
        from ontoloom.model import vocab_iri, vocab_name
        from ontoloom.vocab import OL, RDF_TYPE

        typed: dict[str, str] = {}
        values: dict[str, list[str]] = defaultdict(list)
        names: dict[str, list[str]] = defaultdict(list)
        bodies: dict[str, list[str]] = defaultdict(list)
        for r in graph.backend.select(
            f'SELECT ?s ?t WHERE {{ ?s {RDF_TYPE} ?t FILTER(STRSTARTS(STR(?t), "{OL}")) }}'
        ):
            if graph.ids.is_instance(r["s"]) and vocab_name(r["t"]) in graph.schema.types:
                typed[r["s"].value] = graph.ids.id_of(r["s"])
        for key, into in (
            ("privacy", values),
            ("title", names),
            ("name", names),
            ("aliases", names),
            ("body", bodies),
        ):
            for r in graph.backend.select(
                f"SELECT ?s ?v WHERE {{ ?s {vocab_iri(key)} ?v FILTER(isLiteral(?v)) }}"
            ):
                oid = typed.get(r["s"].value)
                if oid is not None:
                    into[oid].append(r["v"].value)
        privacy = {oid: privacy_of(values.get(oid, [])) for oid in typed.values()}
        # An object that may not leave is quoted by any of its text, not only its body.
        named = {"privacy", "title", "name", "aliases"}
        for r in graph.backend.select("SELECT ?s ?p ?v WHERE { ?s ?p ?v FILTER(isLiteral(?v)) }"):
            oid = typed.get(r["s"].value)
            if (
                oid is not None
                and not privacy[oid].passes
                and vocab_name(r["p"]) not in named
                and r["v"].value
            ):
                bodies[oid].append(r["v"].value)
        occurrences: dict[str, list[Privacy]] = defaultdict(list)
        for r in graph.backend.select(f"SELECT ?o ?c WHERE {{ ?o {vocab_iri('recurs-as')} ?c }}"):
            occurrence, klass = typed.get(r["o"].value), typed.get(r["c"].value)
            if klass is not None:
                occurrences[klass].append(
                    privacy[occurrence] if occurrence else Privacy(None, UNKNOWN_SOURCE)
                )
        for klass, found in occurrences.items():
            privacy[klass] = most_restrictive([privacy[klass], *found])
        return cls(
            Guarded(oid, privacy[oid], names.get(oid, []), "\n".join(bodies.get(oid, [])))
            for oid in sorted(typed.values())
        )


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n(?=\s*[-*#>|])")


#: Scripts written without spaces between words: each character counts as a word.
_UNSPACED = (
    "\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
    "\U00020000-\U0002ffff"
)
_WORD = re.compile(f"[{_UNSPACED}]|[^{_UNSPACED}]+")


def _words(text: str) -> tuple[str, ...]:
    """The words of ``text`` as the gate compares them (see the module docstring).

    >>> _words("Pass\u200bword reset — 顧客の")
    ('password', 'reset', '顧', '客', 'の')
    """
    return tuple(part for w in slug(normalised(text)).split("-") if w for part in _WORD.findall(w))


#: Personal data a transcript may hold, redacted before it leaves (what it is, its form).
PERSONAL_DATA = [
    ("an email address", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")),
    ("a phone number", re.compile(r"(?<![\w.])\+?\d[\d ().-]{8,}\d(?![\w.])")),
    ("an IBAN", re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}\b")),
    ("a card number", re.compile(r"\b(?:\d[ -]?){13,19}\b")),
]
#: Dates and times look like phone numbers to the pattern above: they are kept.
_DATE_OR_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}([ T]\d{2}[:.]\d{2}([:.]\d{2})?)?|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}"
)


def redacted_for_egress(text: str) -> tuple[str, Counter[str]]:
    """``text`` with its secrets and personal data replaced by a mark naming each, and how
    many of each kind were replaced (never what they were).

    >>> redacted_for_egress("mail bob@example.com or +44 20 7946 0958 on 2026-12-04")
    ('mail [an email address withheld] or [a phone number withheld] on 2026-12-04', Counter({'an email address': 1, 'a phone number': 1}))
    """
    found: Counter[str] = Counter()
    shown = redact(text)
    if shown != text:
        found["a secret"] += shown.count("(redacted)")
    for what, pattern in PERSONAL_DATA:

        def mark(m: re.Match[str], what: str = what) -> str:
            if _DATE_OR_TIME.fullmatch(m.group(0).strip()):
                return m.group(0)
            found[what] += 1
            return f"[{what} withheld]"

        shown = pattern.sub(mark, shown)
    return shown, found


def _strings(value: Any) -> Iterator[str]:
    """Every string value a JSON-able value holds (a mapping's keys are field names)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)
    elif value is not None:
        yield str(value)


class _Phrases:
    """Word sequences looked up at every position of a text, indexed by their first two
    words (or the one word), so a scan costs about one lookup per word."""

    def __init__(self) -> None:
        self._by_head: dict[tuple[str, ...], set[tuple[str, ...]]] = defaultdict(set)

    def add(self, words: tuple[str, ...]) -> None:
        if words:
            self._by_head[words[:2]].add(words)

    def found_in(self, words: tuple[str, ...]) -> bool:
        if not self._by_head:
            return False
        for i in range(len(words)):
            if (words[i],) in self._by_head:
                return True
            for phrase in self._by_head.get(words[i : i + 2], ()):
                if words[i : i + len(phrase)] == phrase:
                    return True
        return False
