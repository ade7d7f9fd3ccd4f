"""Finding record files: sorted, recursive, never following symlinks, never leaving the root;
unreadable, binary and oversized files are skipped with a note."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ontoloom.records.frontmatter import Note

__all__ = ["MAX_FILE_BYTES", "RecordFile", "walk_root"]

MAX_FILE_BYTES = 1_000_000
MARKDOWN = (".md", ".markdown")


@dataclass
class RecordFile:
    path: str  # relative to the instance root, posix
    kind: str  # failures | decisions | memory | runbooks | documents | decision-log
    root: str  # the configured root it came from (relative)
    rel: PurePosixPath  # relative to that root
    privacy: str  # the root's default privacy class
    data: bytes


def walk_root(
    instance: Path, root: str, kind: str, privacy: str, notes: list[Note]
) -> list[RecordFile]:
    base = instance / root
    if base.is_symlink() or not base.is_dir():
        return []
    found: list[RecordFile] = []
    for folder, dirs, files in os.walk(base, followlinks=False):
        folder_path = Path(folder)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for d in list(dirs):
            if (folder_path / d).is_symlink():
                dirs.remove(d)
                notes.append(
                    Note(
                        _rel(instance, folder_path / d),
                        None,
                        "skipped",
                        "a symlinked folder: not followed",
                    )
                )
        for name in sorted(files):
            if name.startswith(".") or not name.lower().endswith(MARKDOWN):
                continue
            path = folder_path / name
            rel_instance = _rel(instance, path)
            if path.is_symlink():
                notes.append(Note(rel_instance, None, "skipped", "a symlink: not followed"))
                continue
            try:
                size = path.stat().st_size
                if size > MAX_FILE_BYTES:
                    notes.append(
                        Note(
                            rel_instance,
                            None,
                            "skipped",
                            f"too large ({size} bytes > {MAX_FILE_BYTES})",
                        )
                    )
                    continue
                data = path.read_bytes()
            except OSError as exc:
                notes.append(
                    Note(rel_instance, None, "skipped", f"unreadable ({exc.strerror or exc})")
                )
                continue
            if b"\x00" in data[:8192]:
                notes.append(Note(rel_instance, None, "skipped", "a binary file"))
                continue
            rel = PurePosixPath(path.relative_to(base).as_posix())
            file_kind = (
                "decision-log"
                if kind == "decisions" and rel.as_posix() == "decision-log.md"
                else kind
            )
            found.append(RecordFile(rel_instance, file_kind, root, rel, privacy, data))
    return found


def _rel(instance: Path, path: Path) -> str:
    return path.relative_to(instance).as_posix()
