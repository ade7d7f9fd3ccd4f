"""Where the data dir is, and what ``ontoloom.toml`` says.

Where: one rule for every front end, :func:`ontoloom.locate.locate` — ``--data-dir``, then
``ONTOLOOM_HOME``, then the nearest enclosing instance's ``.ontoloom/``, then a ``.ontoloom/``
already in the working directory, then the per-user data dir (:func:`user_data_dir`).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ontoloom import locate
from ontoloom.errors import BadInput

__all__ = [
    "INSTANCE_MARKER",
    "Config",
    "MiningConfig",
    "TranscriptRoot",
    "find_instance",
    "load_config",
    "resolve_data_dir",
    "user_data_dir",
]

INSTANCE_MARKER = locate.INSTANCE_MARKER
DATA_DIR_NAME = locate.DATA_DIR_NAME


def find_instance(start: Path) -> Path | None:
    """The closest ancestor of ``start`` (itself included) holding ``ontoloom.toml``."""
    found = locate.find_instance(str(start))
    return None if found is None else Path(found)


def user_data_dir() -> Path:
    """The per-user data dir (:func:`ontoloom.locate.user_data_dir`)."""
    return Path(locate.user_data_dir())


def resolve_data_dir(
    explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None
) -> Path:
    """The data dir to use, by the one rule (:func:`ontoloom.locate.locate`)."""
    found = locate.locate(os.fspath(explicit) if explicit else None, str(cwd) if cwd else None)
    return Path(found.path)


RECORD_KINDS = ("failures", "decisions", "memory", "runbooks")
PRIVACY_CLASSES = ("public", "internal", "private")


@dataclass
class DocumentRoot:
    root: str
    privacy: str = "internal"


@dataclass
class TranscriptRoot:
    """One entry of ``[mining] transcripts``: a path or glob, and its privacy class —
    ``private`` unless the entry says otherwise (a transcript is never quoted by default)."""

    root: str
    privacy: str = "private"


@dataclass
class MiningConfig:
    enabled: bool = False
    transcripts: list[str] | None = None  # None: Claude Code's session files for the project
    closed_after_minutes: float = 30.0
    cross_vendor_egress: bool = False
    roots: list[TranscriptRoot] = field(default_factory=list)  # as listed, with privacy

    def quotable_roots(self) -> list[TranscriptRoot]:
        """The roots a user opted in (``privacy = "internal"`` or ``"public"``): the only
        transcripts the prompt hook may quote (the default root is private)."""
        return [r for r in self.roots if r.privacy != "private"]


@dataclass
class Config:
    """The parsed ``ontoloom.toml`` of an instance (every key optional)."""

    instance: Path | None
    id_base: str = "https://ontoloom.dev/id/"
    raw: dict[str, Any] = field(default_factory=dict)

    def record_roots(self) -> dict[str, str]:
        """Record folders by kind, relative to the instance root."""
        section = self.raw.get("records", {})
        if not isinstance(section, dict):
            raise BadInput(f"{INSTANCE_MARKER}: [records] must be a table")
        roots = {}
        for kind in RECORD_KINDS:
            value = section.get(kind, f"records/{kind}")
            if not isinstance(value, str) or not value:
                raise BadInput(f"{INSTANCE_MARKER}: records.{kind} must be a folder path")
            roots[kind] = value
        return roots

    def document_roots(self) -> list[DocumentRoot]:
        entries = self.raw.get("documents", [])
        if not isinstance(entries, list):
            raise BadInput(f"{INSTANCE_MARKER}: [[documents]] entries must be tables with a root")
        roots = []
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("root"), str):
                raise BadInput(f'{INSTANCE_MARKER}: documents[{i}] needs root = "folder"')
            privacy = str(entry.get("privacy", "internal")).lower()
            if privacy not in PRIVACY_CLASSES:
                privacy = "private"  # an unrecognised class fails closed
            roots.append(DocumentRoot(entry["root"], privacy))
        return roots

    @property
    def path(self) -> Path | None:
        """The ``ontoloom.toml`` read, if any."""
        return self.instance / INSTANCE_MARKER if self.instance is not None else None

    def mining(self) -> MiningConfig:
        """``[mining]``: conversation mining (off unless ``enabled = true``).

        :raises BadInput: a key of the wrong kind (named, with an example)."""
        where = self.path or INSTANCE_MARKER
        section = self.raw.get("mining", {})
        if not isinstance(section, dict):
            raise BadInput(f"{where}: [mining] must be a table, e.g. [mining] enabled = true")
        out = MiningConfig()
        for key in ("enabled", "cross_vendor_egress"):
            value = section.get(key, False)
            if not isinstance(value, bool):
                raise BadInput(f"{where}: [mining] {key} must be true or false, not {value!r}")
            setattr(out, key, value)
        minutes = section.get("closed_after_minutes", out.closed_after_minutes)
        if isinstance(minutes, bool) or not isinstance(minutes, int | float) or minutes < 0:
            raise BadInput(
                f"{where}: [mining] closed_after_minutes must be a number of minutes >= 0, "
                f"not {minutes!r}"
            )
        out.closed_after_minutes = float(minutes)
        listed = section.get("transcripts")
        if listed is not None:
            if isinstance(listed, str | dict):
                listed = [listed]
            if not isinstance(listed, list):
                listed = [None]
            out.roots = [_transcript_root(where, entry) for entry in listed]
            out.transcripts = [r.root for r in out.roots]
        return out

    def service_allow(self) -> frozenset[str]:
        """``[query] service_allow``: the SPARQL endpoints a query may call with SERVICE,
        as absolute http(s) IRIs, compared exactly. None unless listed."""
        where = self.path or INSTANCE_MARKER
        section = self.raw.get("query", {})
        if not isinstance(section, dict):
            raise BadInput(f"{where}: [query] must be a table")
        listed = section.get("service_allow", [])
        example = 'e.g. service_allow = ["https://query.wikidata.org/sparql"]'
        if not isinstance(listed, list):
            raise BadInput(
                f"{where}: [query] service_allow must be a list of endpoint IRIs, {example}"
            )
        for item in listed:
            if not isinstance(item, str) or not item.startswith(("http://", "https://")):
                raise BadInput(
                    f"{where}: [query] service_allow holds {item!r}, which is no http(s) "
                    f"endpoint IRI; list absolute IRIs, {example}"
                )
        return frozenset(listed)


def _transcript_root(where: object, entry: object) -> TranscriptRoot:
    """One ``[mining] transcripts`` entry: a path or glob (private), or a table with ``root``
    and ``privacy`` (an unrecognised class is private: it fails closed)."""
    if isinstance(entry, str) and entry:
        return TranscriptRoot(entry)
    if isinstance(entry, dict) and isinstance(entry.get("root"), str) and entry["root"]:
        unknown = sorted(set(entry) - {"root", "privacy"})
        if unknown:
            raise BadInput(
                f"{where}: [mining] transcripts entry {entry['root']!r} has unknown key(s) "
                f"{', '.join(unknown)}; an entry has root and privacy only"
            )
        privacy = str(entry.get("privacy", "private")).strip().lower()
        return TranscriptRoot(entry["root"], privacy if privacy in PRIVACY_CLASSES else "private")
    raise BadInput(
        f"{where}: [mining] transcripts must be a list of paths or globs relative to the "
        'instance, or of tables with root and privacy, e.g. transcripts = ["transcripts/**/*.jsonl", '
        '{ root = "team-chats/*.jsonl", privacy = "internal" }]'
    )


def load_config(data_dir: Path) -> Config:
    """Read the ``ontoloom.toml`` of the instance that owns ``data_dir``, if any."""
    instance = data_dir.parent if data_dir.name == DATA_DIR_NAME else None
    if instance is None or not (instance / INSTANCE_MARKER).is_file():
        return Config(instance=None)
    path = instance / INSTANCE_MARKER
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: {exc}; fix the TOML syntax") from exc
    base = raw.get("graph", {}).get("id_base", Config.id_base)
    if not isinstance(base, str) or not base.startswith(("http://", "https://", "urn:")):
        raise BadInput(f"{path}: [graph] id_base must be an absolute IRI, got {base!r}")
    return Config(instance=instance, id_base=base, raw=raw)
