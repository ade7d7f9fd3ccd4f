"""Identity resolution: a reference may be an id, a slug of the right kind, a title or an
alias, compared case- and punctuation-insensitively. An ambiguous reference is surfaced,
never guessed."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from ontoloom.model import shown_id
from ontoloom.records.slug import PREFIXES, slug

__all__ = ["Resolution", "Resolver"]


@dataclass(frozen=True)
class Resolution:
    id: str | None
    reason: str | None = None  # why not: unresolvable, ambiguous, wrong type


class Resolver:
    def __init__(self, objects: Iterable[dict], entity_ids: Iterable[str] = ()) -> None:
        self.types: dict[str, str] = {}
        self._keys: dict[str, set[str]] = defaultdict(set)
        for obj in objects:
            self.add(obj["id"], obj["type"], obj.get("title"), obj.get("aliases", []))
        self.entities = set(entity_ids)

    def add(
        self, object_id: str, type_name: str, title: str | None, aliases: Iterable[str]
    ) -> None:
        self.types[object_id] = type_name
        _, _, local = object_id.partition(":")
        for text in (local, title or "", *aliases):
            key = slug(text)
            if key:
                self._keys[key].add(object_id)

    def resolve(self, ref: str, allowed: set[str] | None = None) -> Resolution:
        """``allowed``: the types the relation may point at (None: any)."""
        ref = ref.strip()

        def ok(object_id: str) -> bool:
            return allowed is None or self.types.get(object_id) in allowed

        if ref in self.types:
            if ok(ref):
                return Resolution(ref)
            return Resolution(
                None, f"{ref} is a {self.types[ref]}, not a {' or '.join(sorted(allowed or ()))}"
            )
        if ref in self.entities:
            return (
                Resolution(ref)
                if allowed is None
                else Resolution(None, f"{shown_id(ref)} is not a {' or '.join(sorted(allowed))}")
            )
        head, sep, _ = ref.partition(":")
        if sep and head in PREFIXES:
            return Resolution(None, f"{shown_id(ref)} does not exist (no record makes that id)")
        found = self._keys.get(slug(ref), set())
        fitting = sorted(i for i in found if ok(i))
        if len(fitting) == 1:
            return Resolution(fitting[0])
        if len(fitting) > 1:
            return Resolution(
                None,
                f"{shown_id(ref)} is ambiguous: it could be {', '.join(fitting)}; write the id",
            )
        if found:
            kinds = ", ".join(sorted(f"{i} ({self.types[i]})" for i in found))
            return Resolution(
                None, f"{shown_id(ref)} names {kinds}, not a {' or '.join(sorted(allowed or ()))}"
            )
        return Resolution(None, f"{shown_id(ref)} matches no object (by id, slug, title or alias)")
