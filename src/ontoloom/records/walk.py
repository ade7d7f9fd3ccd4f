"""Finding record files: sorted, recursive, never following symlinks, never leaving the root;
unreadable, binary and oversized files, and anything that is not a regular file (a FIFO, a
socket, a device), are skipped with a note."""

from __future__ import annotations

import os
import stat
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
            data = _read(path)
            if isinstance(data, str):
                notes.append(Note(rel_instance, None, "skipped", data))
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


def _read(path: Path) -> bytes | str:
    """The bytes of a regular file, or why it is skipped.

    Only regular files are read: opening a FIFO waits for a writer and a device may never
    end. So the open cannot block (O_NONBLOCK), cannot follow a symlink swapped in since the
    walk saw the name (O_NOFOLLOW), and the type and size are checked on the open descriptor.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        mode = os.lstat(path).st_mode  # named before opening: a socket cannot be opened
        if not stat.S_ISREG(mode):
            return f"not a regular file ({_file_kind(mode)}): not read"
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return f"not a regular file ({_file_kind(info.st_mode)}): not read"
        if info.st_size > MAX_FILE_BYTES:
            return f"too large ({info.st_size} bytes > {MAX_FILE_BYTES})"
        chunks, size = [], 0
        while size <= MAX_FILE_BYTES:  # bounded even if the file grows meanwhile
            chunk = os.read(fd, MAX_FILE_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    finally:
        os.close(fd)
    if size > MAX_FILE_BYTES:
        return f"too large (more than {MAX_FILE_BYTES} bytes)"
    return b"".join(chunks)


def _file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    return "a special file"


def _rel(instance: Path, path: Path) -> str:
    return path.relative_to(instance).as_posix()
