"""Writing confirmed knowledge back into a record's frontmatter ``ontoloom:`` block.

Format-preserving: the new entry is inserted as text, so comments, key order, quoting,
line endings (CRLF stays CRLF), a byte-order mark and every byte of the body stay as they
were. Idempotent: an entry already there is not written twice. Never applied to malformed or
ambiguous (two blocks) frontmatter — those are reported instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ontoloom.records.frontmatter import DELIMITER, parse_record

__all__ = ["WritebackResult", "write_back"]

_PLAIN = re.compile(r"^[A-Za-z0-9_:/.@+-]+$")


@dataclass
class WritebackResult:
    path: str
    written: bool
    reason: str | None = None  # why not (already there, malformed, ambiguous, missing)


def _scalar(value: str) -> str:
    if (
        _PLAIN.match(value)
        and value[0] not in "-:@"
        and value.lower() not in ("true", "false", "null", "yes", "no")
    ):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def entry_text(source: str, relation: str, target: str, confirmed: str) -> str:
    return (
        f"{{source: {_scalar(source)}, relation: {_scalar(relation)}, "
        f"target: {_scalar(target)}, confirmed: {confirmed}}}"
    )


def write_back(
    path: Path, label: str, source: str, relation: str, target: str, confirmed: str
) -> WritebackResult:
    """Add ``{source, relation, target, confirmed}`` to the record's ``ontoloom:`` block."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return WritebackResult(label, False, f"cannot read the record ({exc.strerror or exc})")
    parsed = parse_record(label, data)
    if not parsed.ok:
        return WritebackResult(
            label, False, "; ".join(str(n) for n in parsed.notes) or "malformed frontmatter"
        )
    if any(n.kind == "ambiguous" for n in parsed.notes):
        return WritebackResult(label, False, "ambiguous: two frontmatter blocks; left untouched")
    existing = parsed.meta.get("ontoloom") if parsed.meta else None
    if existing is not None and not isinstance(existing, list):
        return WritebackResult(label, False, "its ontoloom: field is not a list; left untouched")
    for item in existing or []:
        if isinstance(item, dict) and (
            str(item.get("source")),
            str(item.get("relation")),
            str(item.get("target")),
        ) == (
            source,
            relation,
            target,
        ):
            return WritebackResult(label, False, "already written back")
    bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    text = data[len(bom) :].decode("utf-8")
    first_line = text.split("\n", 1)[0]
    newline = "\r\n" if first_line.endswith("\r") else "\n"  # the file's own line endings
    item = entry_text(source, relation, target, confirmed)
    updated: str | None
    if not parsed.has_frontmatter:
        block = f"{DELIMITER}{newline}ontoloom:{newline}  - {item}{newline}{DELIMITER}{newline}"
        updated = block + text
    else:
        updated = _insert(text, newline, item, existing is not None)
        if updated is None:
            return WritebackResult(
                label,
                False,
                "its ontoloom: block has a layout ontoloom cannot extend; left untouched",
            )
    result = bom + updated.encode("utf-8")
    check = parse_record(label, result)
    if (
        not check.ok
        or check.body != parsed.body
        or not any(
            isinstance(i, dict) and str(i.get("target")) == target
            for i in check.meta.get("ontoloom", [])
        )
    ):
        return WritebackResult(
            label, False, "the entry could not be written without changing the record otherwise"
        )
    path.write_bytes(result)
    return WritebackResult(label, True)


def _insert(text: str, newline: str, item: str, has_block: bool) -> str | None:
    lines = text.split(newline) if newline == "\r\n" else text.split("\n")
    end = next(i for i in range(1, len(lines)) if lines[i].strip() == DELIMITER)
    if not has_block:
        return newline.join([*lines[:end], "ontoloom:", f"  - {item}", *lines[end:]])
    start = next((i for i in range(1, end) if re.match(r"^ontoloom\s*:\s*(#.*)?$", lines[i])), None)
    if start is None:
        return None  # a flow sequence or an unusual layout
    last, indent = start, "  "
    for i in range(start + 1, end):
        line = lines[i]
        if line.strip() == "" or line.lstrip().startswith("#"):
            continue
        if line[:1] not in (" ", "-"):
            break
        last = i
        match = re.match(r"^(\s*)- ", line)
        if match:
            indent = match.group(1)
    return newline.join([*lines[: last + 1], f"{indent}- {item}", *lines[last + 1 :]])
