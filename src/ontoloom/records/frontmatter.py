"""Markdown records: YAML frontmatter (with the line of every key) and the body.

Line numbers are 1-based from the first line of the file. CRLF line endings and a UTF-8
byte-order mark are accepted; a file that is not UTF-8 is reported with the line of its
first bad byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ontoloom.secret_text import redact

__all__ = ["Note", "ParsedRecord", "parse_record"]

DELIMITER = "---"


@dataclass(frozen=True)
class Note:
    """Something a record could not give, with where: reported, never silently dropped."""

    path: str
    line: int | None
    kind: str  # malformed | ambiguous | encoding | rejected | unresolvable | orphan | collision | skipped | …
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return redact(f"{where}: {self.message}")  # a file name or a quote may hold a secret

    def to_json(self) -> dict[str, Any]:
        return {
            "path": redact(self.path),
            "line": self.line,
            "kind": self.kind,
            "message": redact(self.message),
        }


@dataclass
class ParsedRecord:
    path: str
    meta: Any  # the frontmatter mapping (ruamel CommentedMap keeps key lines), or {}
    body: str
    body_line: int  # the line the body starts on
    has_frontmatter: bool
    notes: list[Note] = field(default_factory=list)
    ok: bool = True  # False: no object may be made from it

    def line_of(self, key: str, index: int | None = None) -> int | None:
        """The 1-based file line of a frontmatter key (or of one item of its list)."""
        meta = self.meta
        try:
            if index is not None and hasattr(meta.get(key), "lc"):
                return int(meta[key].lc.item(index)[0]) + 2
            if hasattr(meta, "lc"):
                return int(meta.lc.key(key)[0]) + 2
        except (KeyError, IndexError, AttributeError, TypeError):
            pass
        return None


def _first_bad_line(data: bytes) -> int:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return data[: exc.start].count(b"\n") + 1
    return 1


def parse_record(path: str, data: bytes) -> ParsedRecord:
    """Split a markdown file into frontmatter and body; problems become notes."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        line = _first_bad_line(data)
        note = Note(path, line, "encoding", "not UTF-8 text: save the file as UTF-8")
        return ParsedRecord(path, {}, "", 1, False, [note], ok=False)
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if not lines or lines[0].strip() != DELIMITER:
        return ParsedRecord(path, {}, text, 1, False)
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == DELIMITER), None)
    if end is None:
        note = Note(
            path, 1, "malformed", "the frontmatter opened on line 1 is never closed with ---"
        )
        return ParsedRecord(path, {}, text, 1, True, [note], ok=False)
    yaml_text = "\n".join(lines[1:end])
    body = "\n".join(lines[end + 1 :])
    record = ParsedRecord(path, {}, body, end + 2, True)
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        meta = YAML(typ="rt").load(yaml_text) if yaml_text.strip() else {}
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        record.notes.append(Note(path, line, "malformed", f"malformed YAML frontmatter: {problem}"))
        record.ok = False
        return record
    except ValueError as exc:  # a date YAML reads as one that does not exist: 2026-02-30
        from ontoloom.plans import bad_date_line

        line = (bad_date_line(yaml_text) or 0) + 1
        record.notes.append(Note(path, line, "malformed", f"malformed YAML frontmatter: {exc}"))
        record.ok = False
        return record
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        record.notes.append(
            Note(path, 2, "malformed", "the frontmatter is not a mapping of fields")
        )
        record.ok = False
        return record
    record.meta = meta
    # A second block right after the first is ambiguous: only the first is frontmatter.
    rest = lines[end + 1 :]
    first = next((i for i, line in enumerate(rest) if line.strip()), None)
    if (
        first is not None
        and rest[first].strip() == DELIMITER
        and any(line.strip() == DELIMITER for line in rest[first + 1 :])
    ):
        record.notes.append(
            Note(
                path,
                end + 2 + first,
                "ambiguous",
                "a second frontmatter block: only the first is read, the second stays body text",
            )
        )
    return record
