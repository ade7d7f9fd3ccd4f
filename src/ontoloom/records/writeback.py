"""Writing confirmed knowledge back into a record's frontmatter ``ontoloom:`` block.

Format-preserving: the new entry is inserted as text, so comments, key order, quoting,
line endings (CRLF stays CRLF), a byte-order mark and every byte of the body stay as they
were. Idempotent: an entry already there is not written twice. Never applied to malformed or
ambiguous (two blocks) frontmatter — those are reported instead.

Atomic: the record is replaced whole (:func:`atomic_write`: a temporary file in the same
folder, fsynced, renamed over the record, the folder fsynced), so a write error or a crash
leaves it exactly as it was or exactly as intended. A writeback that must follow a store
commit is first recorded in a *journal* in the data dir (:func:`record_pending`), so that a
crash between the commit and the write leaves it pending, never lost:
:func:`finish_pending` — run by the next command that writes — completes it, or drops it when
the commit never happened, and says which.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ontoloom.errors import StorageError
from ontoloom.records.frontmatter import DELIMITER, Note, parse_record
from ontoloom.terms import Literal, NamedNode, Quad

if TYPE_CHECKING:
    from ontoloom.session import Session
    from ontoloom.store.base import Backend

__all__ = [
    "PENDING_DIR",
    "Pending",
    "WritebackResult",
    "atomic_write",
    "complete_pending",
    "discard_pending",
    "finish_pending",
    "finish_writebacks",
    "marker",
    "plan_write_back",
    "record_pending",
    "write_back",
]

PENDING_DIR = "writeback-pending"  # in the data dir: one journal per pending writeback
_TMP = ".ontoloom-tmp"  # temporary files: .<name>.<random>.ontoloom-tmp beside their target
_PLAIN = re.compile(r"^[A-Za-z0-9_:/.@+-]+$")


@dataclass
class WritebackResult:
    path: str
    written: bool
    reason: str | None = None  # why not (already there, malformed, ambiguous, missing)
    pending: bool = False  # not written yet, journalled: the next command finishes it

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "written": self.written,
            "reason": self.reason,
            "pending": self.pending,
        }


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
    path: Path,
    label: str,
    source: str,
    relation: str,
    target: str,
    confirmed: str,
    initial: str | None = None,
) -> WritebackResult:
    """Add ``{source, relation, target, confirmed}`` to the record's ``ontoloom:`` block,
    atomically. ``initial``: the text of a record that does not exist yet (a tool-owned one).

    :raises OSError: when the record could not be replaced (it is left as it was).
    """
    result, data = plan_write_back(path, label, source, relation, target, confirmed, initial)
    if data is not None:
        atomic_write(path, data)
        result.written = True
    return result


def plan_write_back(
    path: Path,
    label: str,
    source: str,
    relation: str,
    target: str,
    confirmed: str,
    initial: str | None = None,
) -> tuple[WritebackResult, bytes | None]:
    """What :func:`write_back` would write (None: nothing, and the result says why)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if initial is None:
            return WritebackResult(label, False, "the record no longer exists"), None
        data = initial.encode("utf-8")
    except OSError as exc:
        return WritebackResult(
            label, False, f"cannot read the record ({exc.strerror or exc})"
        ), None
    parsed = parse_record(label, data)
    if not parsed.ok:
        reason = "; ".join(str(n) for n in parsed.notes) or "malformed frontmatter"
        return WritebackResult(label, False, reason), None
    if any(n.kind == "ambiguous" for n in parsed.notes):
        return WritebackResult(
            label, False, "ambiguous: two frontmatter blocks; left untouched"
        ), None
    existing = parsed.meta.get("ontoloom") if parsed.meta else None
    if existing is not None and not isinstance(existing, list):
        return WritebackResult(
            label, False, "its ontoloom: field is not a list; left untouched"
        ), None
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
            return WritebackResult(label, False, "already written back"), None
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
            reason = "its ontoloom: block has a layout ontoloom cannot extend; left untouched"
            return WritebackResult(label, False, reason), None
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
        reason = "the entry could not be written without changing the record otherwise"
        return WritebackResult(label, False, reason), None
    return WritebackResult(label, False), result


# -- atomic replacement ------------------------------------------------------------------------
def atomic_write(path: Path, data: bytes, *, new_mode: int = 0o666) -> None:
    """Replace ``path`` with ``data`` whole, or leave it as it was.

    The bytes go to a temporary file in the same folder (so the rename cannot cross file
    systems), which is fsynced, renamed over ``path`` (``os.replace``: atomic on POSIX), and
    then the folder is fsynced so the rename itself survives a crash. The record keeps its
    permission bits; a new file gets ``new_mode`` (less the umask). On any error the temporary file is removed and the error raised.

    :raises OSError: the write, an fsync or the rename failed.
    """
    folder = path.parent
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    tmp = folder / f".{path.name}.{secrets.token_hex(6)}{_TMP}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp, flags, new_mode)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(folder)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_stale_temporaries(path: Path) -> None:
    """Temporary files a crash left beside ``path`` (only ontoloom names files so)."""
    with contextlib.suppress(OSError):
        for stale in path.parent.glob(f".{_glob_escape(path.name)}.*{_TMP}"):
            with contextlib.suppress(OSError):
                stale.unlink()


def _glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


# -- the journal of pending writebacks ---------------------------------------------------------
@dataclass
class Pending:
    """A writeback that must happen once the store holds ``markers`` (N-Triples-like terms:
    ``{"s", "p", "o", "g"}``, IRIs as ``<…>``, literals as ``"…"``)."""

    key: str  # what it belongs to (the proposal id): the journal file's name
    path: str  # the record, relative to the instance
    source: str
    relation: str
    target: str
    confirmed: str
    markers: list[dict[str, str]] = field(default_factory=list)
    initial: str | None = None  # the text of a tool-owned record that does not exist yet

    def describe(self) -> str:
        return f"{self.source} {self.relation} {self.target}"


def _journal(data_dir: Path, key: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", key)
    return data_dir / PENDING_DIR / f"{safe}.json"


def record_pending(data_dir: Path, pending: Pending) -> Path:
    """Write the journal of ``pending`` durably (before the store commit it waits for).

    :raises OntoloomError: it could not be written; nothing else was done.
    """
    folder = data_dir / PENDING_DIR
    path = _journal(data_dir, pending.key)
    try:
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            _fsync_dir(data_dir)
        atomic_write(path, json.dumps(asdict(pending), ensure_ascii=False, indent=1).encode())
    except OSError as exc:
        raise StorageError(
            f"could not record the pending writeback of {pending.path} in {folder} "
            f"({exc.strerror or exc}); nothing was confirmed — free space or fix the "
            "permissions of the data dir, then confirm again"
        ) from None
    return path


def discard_pending(journal: Path) -> None:
    """Remove a journal (its writeback is done, or its commit never happened)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(journal)
    with contextlib.suppress(OSError):
        _fsync_dir(journal.parent)


def complete_pending(instance: Path, journal: Path, pending: Pending) -> WritebackResult:
    """Do the writeback a journal holds, then remove the journal. A write error leaves the
    record as it was and the journal in place (``reason`` says why; it stays pending)."""
    record = instance / pending.path
    if not record.resolve().is_relative_to(instance.resolve()):
        discard_pending(journal)
        return WritebackResult(pending.path, False, "outside the instance; not written")
    try:
        if pending.initial is not None:
            record.parent.mkdir(parents=True, exist_ok=True)
        result = write_back(
            record,
            pending.path,
            pending.source,
            pending.relation,
            pending.target,
            pending.confirmed,
            pending.initial,
        )
    except OSError as exc:
        return WritebackResult(
            pending.path,
            False,
            f"{exc.strerror or exc}: the record is as it was; the writeback stays pending and "
            "the next `ontoloom rebuild` or `ontoloom proposals` command finishes it",
            pending=True,
        )
    _remove_stale_temporaries(record)
    discard_pending(journal)
    return result


def finish_writebacks(graph: Session) -> list[Note]:
    """:func:`finish_pending` for a graph opened to write, in an instance (else nothing)."""
    data_dir = graph.data_dir
    if data_dir is None or not graph.backend.writable:
        return []
    if not (data_dir.parent / "ontoloom.toml").is_file():
        return []
    return finish_pending(data_dir, data_dir.parent, graph.backend)


def finish_pending(data_dir: Path, instance: Path, backend: Backend) -> list[Note]:
    """Finish every writeback a crash or a write error left pending, or drop those whose
    commit never happened; one note per journal (kind ``writeback``), saying which. Only a
    writer (holding the data dir's lock) calls this."""
    folder = data_dir / PENDING_DIR
    if not folder.is_dir():
        return []
    notes = []
    for stale in folder.glob(f"*{_TMP}"):  # a journal cut short before its rename
        with contextlib.suppress(OSError):
            stale.unlink()
    for journal in sorted(folder.glob("*.json")):
        try:
            raw = json.loads(journal.read_text(encoding="utf-8"))
            pending = Pending(**raw)
        except (OSError, ValueError, TypeError) as exc:
            notes.append(
                Note(
                    str(journal),
                    None,
                    "writeback",
                    f"this pending-writeback journal cannot be read ({exc}); it was left in "
                    "place: remove it once you have checked the record it names",
                )
            )
            continue
        what = pending.describe()
        if not all(_holds(backend, m) for m in pending.markers):
            discard_pending(journal)
            _remove_stale_temporaries(instance / pending.path)
            message = (
                f"dropped an unfinished writeback ({what}): its confirmation was interrupted "
                "before it was stored, so the proposal is still pending and the record unchanged"
            )
        else:
            result = complete_pending(instance, journal, pending)
            if result.pending:
                message = f"the writeback ({what}) is still pending: {result.reason}"
            elif result.written:
                message = (
                    f"finished the writeback ({what}) an interrupted confirmation left pending"
                )
            else:
                message = f"finished the writeback ({what}): {result.reason}"
        notes.append(Note(pending.path, None, "writeback", message))
    return notes


def _holds(backend: Backend, marker: dict[str, str]) -> bool:
    def term(text: str) -> NamedNode | Literal:
        if text.startswith("<") and text.endswith(">"):
            return NamedNode(text[1:-1])
        return Literal(json.loads(text))

    bindings = {k: term(marker[k]) for k in ("s", "p", "o", "g")}
    return backend.ask("ASK { GRAPH ?g { ?s ?p ?o } }", bindings)


def marker(quad: Quad) -> dict[str, str]:
    """A quad (IRIs and plain literals) as a journal marker: the store holds it once the
    commit the writeback waits for has happened."""

    def text(t: object) -> str:
        if isinstance(t, NamedNode):
            return f"<{t.value}>"
        if isinstance(t, Literal):
            return json.dumps(t.value)
        raise TypeError(f"a journal marker holds IRIs and plain literals, not {t!r}")

    return {
        "s": text(quad.subject),
        "p": text(quad.predicate),
        "o": text(quad.object),
        "g": text(quad.graph_name),
    }


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
