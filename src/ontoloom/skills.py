"""A skill's contract with the graph: the ``ontology:`` block of its ``SKILL.md`` frontmatter,
and the coordination map of many skills (``ontoloom skills``).

A skill declares the types of the schema it reads and the types it writes::

    ---
    name: triage
    description: Sort incoming tasks into projects.
    ontology:
      reads: [Task, Project]
      writes: [Task]
    ---

Writing a type implies the right to read it. ``"*"`` (the whole value, quoted) stands for
every type, those added later included. A contract covers a type's subclasses too.
``ontoloom mcp --skill SKILL.md`` serves a session bound to it (:mod:`ontoloom.ops.scope`);
``ontoloom skills`` reads many and says who writes and who reads each type.

Every problem is a :class:`~ontoloom.errors.ParseError` located as ``file:line``.

>>> contract = parse_contract("s/SKILL.md", b"---\\nname: t\\nontology: {reads: [Task], writes: [Note]}\\n---\\n")
>>> contract.name, sorted(contract.reads), sorted(contract.writes), sorted(contract.readable)
('t', ['Task'], ['Note'], ['Note', 'Task'])
>>> parse_contract("s/SKILL.md", b"---\\nname: t\\nontology: {reads: Task}\\n---\\n")
Traceback (most recent call last):
ontoloom.errors.ParseError: s/SKILL.md:3: ontology.reads: a list of type names, e.g. reads: [Task, Project] (or "*" for every type)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ontoloom.errors import ParseError
from ontoloom.records.frontmatter import parse_record
from ontoloom.suggest import did_you_mean

__all__ = [
    "ALL",
    "Contract",
    "SkillMap",
    "check_types",
    "coordination_map",
    "find_skill_files",
    "parse_contract",
    "read_contract",
    "readable",
]

ALL = "*"  # every type of the schema, those added later included
SKILL_FILE = "SKILL.md"
_KEYS = ("reads", "writes")
_TYPE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EXAMPLE = "ontology: {reads: [Task, Project], writes: [Task]}"


def readable(reads: frozenset[str] | None, writes: frozenset[str] | None) -> frozenset[str] | None:
    """The types a contract or scope may read: ``reads`` and ``writes`` (writing a type
    implies reading it); None when that is every type."""
    if reads is None or writes is None:
        return None
    return reads | writes


@dataclass(frozen=True)
class Contract:
    """What one skill may read and write: type names, or None for every type (``"*"``)."""

    name: str
    path: str
    reads: frozenset[str] | None
    writes: frozenset[str] | None
    # where each declared type is written (its file line), to point at it later
    lines: Mapping[str, int] = field(default_factory=dict, compare=False, hash=False)
    line: int = 1  # the line of the ``ontology:`` key

    @property
    def readable(self) -> frozenset[str] | None:
        """What it may read (see :func:`readable`)."""
        return readable(self.reads, self.writes)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "reads": ALL if self.reads is None else sorted(self.reads),
            "writes": ALL if self.writes is None else sorted(self.writes),
        }


def read_contract(path: str | Path) -> Contract:
    """The contract of the skill file at ``path``.

    :raises ParseError: the file cannot be read, or has no valid ``ontology:`` block.
    """
    shown = str(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise ParseError("no such file", file=shown) from None
    except IsADirectoryError:
        raise ParseError(f"a directory, not a {SKILL_FILE}", file=shown) from None
    except OSError as exc:
        raise ParseError(f"cannot read it ({exc.strerror or exc})", file=shown) from None
    return parse_contract(shown, data)


def declares(path: str, data: bytes) -> bool:
    """Whether a skill file's frontmatter has an ``ontology:`` key at all (a skill without
    one simply makes no claim on the graph); a frontmatter that cannot be read counts as
    declaring — its problem is then reported, not passed over."""
    record = parse_record(path, data)
    if not record.ok:
        return True
    return isinstance(record.meta, Mapping) and "ontology" in record.meta


def parse_contract(path: str, data: bytes) -> Contract:
    """The contract a ``SKILL.md``'s bytes declare (``path`` names it in errors).

    :raises ParseError: no frontmatter, no ``ontology:`` block, or a malformed one — at the
        line that is wrong.
    """
    record = parse_record(path, data)
    for note in record.notes:
        if note.kind in ("malformed", "encoding"):
            raise ParseError(note.message, file=path, line=note.line)
    if not record.has_frontmatter:
        raise ParseError(
            f"no YAML frontmatter: a skill's contract is its frontmatter's ontology block, "
            f"e.g. ---\\n{_EXAMPLE}\\n---",
            file=path,
            line=1,
        )
    meta = record.meta
    if "ontology" not in meta:
        raise ParseError(
            f"the frontmatter has no ontology block: add one, e.g. {_EXAMPLE}",
            file=path,
            line=1,
        )
    line = record.line_of("ontology") or 1
    block = meta["ontology"]
    if not isinstance(block, Mapping):
        raise ParseError(
            f"ontology: a mapping of reads and writes, e.g. {_EXAMPLE}", file=path, line=line
        )

    def line_of(key: str, index: int | None = None) -> int:
        marks: Any = block  # ruamel's mapping: ``lc`` holds each key's and item's line
        try:
            if index is not None:
                return int(marks[key].lc.item(index)[0]) + 2
            return int(marks.lc.key(key)[0]) + 2
        except (AttributeError, KeyError, IndexError, TypeError):
            return line

    for key in block:
        if key not in _KEYS:
            hint = did_you_mean(str(key), _KEYS) if isinstance(key, str) else ""
            raise ParseError(
                f"ontology: {str(key)[:40]!r} is not a key of the contract{hint}; it takes "
                "reads and writes",
                file=path,
                line=line_of(key) if isinstance(key, str) else line,
            )
    sets: dict[str, frozenset[str] | None] = {}
    lines: dict[str, int] = {}
    for key in _KEYS:
        value = block.get(key, [])
        if value is None:
            value = []
        if value == ALL:
            sets[key] = None
            continue
        if isinstance(value, str) or not isinstance(value, list):
            raise ParseError(
                f"ontology.{key}: a list of type names, e.g. {key}: [Task, Project] "
                f'(or "{ALL}" for every type)',
                file=path,
                line=line_of(key),
            )
        names: set[str] = set()
        for i, item in enumerate(value):
            where = line_of(key, i)
            if item == ALL:
                raise ParseError(
                    f'ontology.{key}: "{ALL}" stands alone ({key}: "{ALL}"), not in a list',
                    file=path,
                    line=where,
                )
            if not isinstance(item, str) or not _TYPE_NAME.fullmatch(item):
                raise ParseError(
                    f"ontology.{key}: item {i + 1} is not a type name (CamelCase, e.g. Task)",
                    file=path,
                    line=where,
                )
            names.add(item)
            lines.setdefault(item, where)
        sets[key] = frozenset(names)
    if sets["reads"] == frozenset() and sets["writes"] == frozenset():
        raise ParseError(
            f"ontology: declares no type; give reads or writes, e.g. {_EXAMPLE}",
            file=path,
            line=line,
        )
    name = meta.get("name")
    if not isinstance(name, str) or not name.strip():
        name = Path(path).parent.name or path
    return Contract(name.strip(), path, sets["reads"], sets["writes"], lines, line)


def check_types(contract: Contract, known: Iterable[str]) -> None:
    """Every type ``contract`` names is one of ``known`` (the schema's types).

    :raises ParseError: at the line of the first type the schema does not have.
    """
    types = set(known)
    for name, line in sorted(contract.lines.items(), key=lambda item: item[1]):
        if name not in types:
            raise ParseError(
                f"ontology: the schema has no type {name!r}{did_you_mean(name, types)} "
                "(`ontoloom schema list` shows them)",
                file=contract.path,
                line=line,
            )


def find_skill_files(folders: Iterable[Path]) -> list[Path]:
    """Every ``SKILL.md`` under ``folders`` (at any depth), each once, sorted; a folder that
    is not there has none."""
    found: set[Path] = set()
    for folder in folders:
        if folder.is_file() and folder.name == SKILL_FILE:
            found.add(folder)
        elif folder.is_dir():
            found.update(p for p in folder.rglob(SKILL_FILE) if p.is_file())
    return sorted(found)


@dataclass
class SkillMap:
    """Who writes and who reads each type, among the skills read."""

    skills: list[Contract]
    undeclared: list[str]  # skill files with no ontology block: no claim on the graph
    malformed: list[ParseError]
    types: dict[str, dict[str, list[str]]]  # type → {"writers": [...], "readers": [...]}

    @property
    def unwritten(self) -> list[str]:
        """Types some skill reads that no skill writes."""
        return [t for t, who in self.types.items() if who["readers"] and not who["writers"]]

    @property
    def unread(self) -> list[str]:
        """Types some skill writes that no other skill reads."""
        return [
            t
            for t, who in self.types.items()
            if who["writers"] and not set(who["readers"]) - set(who["writers"])
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "skills": [c.to_json() for c in self.skills],
            "types": [{"type": t, **who} for t, who in self.types.items()],
            "read_not_written": self.unwritten,
            "written_not_read": self.unread,
            "undeclared": self.undeclared,
            "malformed": [
                {"path": e.file, "line": e.line, "message": e.message} for e in self.malformed
            ],
        }


def coordination_map(files: Iterable[Path], known: Iterable[str] | None = None) -> SkillMap:
    """The map of the skills in ``files``: each type with the skills that write it and those
    that read it (a writer reads what it writes, but is listed as a reader only where it
    declares the read). ``"*"`` counts for each type any skill names, and for each of
    ``known`` (the schema's types, which are also checked: a type not among them is
    reported as malformed)."""
    skills: list[Contract] = []
    undeclared: list[str] = []
    malformed: list[ParseError] = []
    known_types = None if known is None else sorted(set(known))
    for path in files:
        shown = str(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            malformed.append(ParseError(f"cannot read it ({exc.strerror or exc})", file=shown))
            continue
        if not declares(shown, data):
            undeclared.append(shown)
            continue
        try:
            contract = parse_contract(shown, data)
            if known_types is not None:
                check_types(contract, known_types)
        except ParseError as exc:
            malformed.append(exc)
            continue
        skills.append(contract)
    named = set(known_types or ())
    for c in skills:
        named |= set(c.reads or ()) | set(c.writes or ())
    types: dict[str, dict[str, list[str]]] = {}
    for t in sorted(named):
        writers = [c.name for c in skills if c.writes is None or t in c.writes]
        readers = [c.name for c in skills if c.reads is None or t in c.reads]
        if writers or readers:
            types[t] = {"writers": writers, "readers": readers}
    return SkillMap(skills, undeclared, malformed, types)
