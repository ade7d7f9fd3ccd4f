"""Reading conversation transcripts (RECORDS.md "Transcripts"), both formats:

* Claude Code session files — JSONL, one event per line with ``type`` ``user``/``assistant``,
  ``uuid``, ``timestamp`` and ``message.content`` (a string, or a list of ``{type: text, text}``
  blocks; tool calls and their results are not conversation text and are left out);
* the plain form — JSONL, ``{"id", "role", "content", "timestamp"}`` per line.

Transcript text is inert data: it is read, quoted and hashed, never obeyed. A line that is not
JSON, or an event of another kind, is counted by name (``malformed``, ``skipped``), never
silently lost; a file above :data:`MAX_BYTES` or a line above :data:`MAX_LINE` is refused by
name rather than read in part.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_BYTES",
    "MAX_LINE",
    "Message",
    "Transcript",
    "TranscriptError",
    "claude_code_dir",
    "content_hash",
    "find_transcripts",
    "is_closed",
    "read_transcript",
]

MAX_BYTES = 64 * 1024 * 1024  # a transcript larger than this is refused, not read in part
MAX_LINE = 8 * 1024 * 1024  # one event larger than this is counted as malformed


class TranscriptError(Exception):
    """A transcript that cannot be read at all (missing, unreadable, too large)."""


@dataclass(frozen=True)
class Message:
    id: str
    role: str
    text: str
    timestamp: str | None
    line: int  # 1-based line of the event in the file


@dataclass
class Transcript:
    path: Path
    label: str  # how it is named in requests, evidence and records (relative to the instance)
    hash: str  # sha256 of the file's bytes: the watermark key
    messages: list[Message] = field(default_factory=list)
    malformed: list[int] = field(default_factory=list)  # line numbers that are not JSON events
    skipped: int = 0  # events that are not conversation messages (tool results, summaries…)
    format: str = "empty"  # claude-code | plain | mixed | empty

    def message(self, message_id: str) -> Message | None:
        for m in self.messages:
            if m.id == message_id:
                return m
        return None


def content_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        return "\n".join(parts) if parts else None
    return None


def _event(event: Any) -> tuple[str, Message | None]:
    """(format, message) of one JSONL event; message None when it is no conversation text."""
    if not isinstance(event, dict):
        return "", None
    if event.get("type") in ("user", "assistant") and isinstance(event.get("message"), dict):
        text = _text(event["message"].get("content"))
        mid = event.get("uuid")
        if text is None or not isinstance(mid, str) or not mid:
            return "claude-code", None
        stamp = event.get("timestamp")
        role = event["message"].get("role") or event["type"]
        return "claude-code", Message(
            mid, str(role), text, stamp if isinstance(stamp, str) else None, 0
        )
    if "role" in event and "content" in event:
        text = _text(event.get("content"))
        mid = event.get("id")
        if text is None or not isinstance(mid, str | int) or mid == "":
            return "plain", None
        stamp = event.get("timestamp")
        return "plain", Message(
            str(mid), str(event["role"]), text, stamp if isinstance(stamp, str) else None, 0
        )
    if isinstance(event.get("type"), str):  # another Claude Code event: summary, system…
        return "claude-code", None
    return "", None


def read_transcript(path: Path, label: str) -> Transcript:
    """Every conversation message of ``path``. :raises TranscriptError: missing, unreadable,
    or larger than :data:`MAX_BYTES`."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise TranscriptError(
                f"{label}: {size} bytes, over the {MAX_BYTES}-byte limit for a transcript; "
                "it was not read (split it, or leave it out of [mining] transcripts)"
            )
        data = path.read_bytes()
    except OSError as exc:
        raise TranscriptError(f"{label}: cannot read it ({exc.strerror or exc})") from None
    out = Transcript(path, label, hashlib.sha256(data).hexdigest())
    formats: set[str] = set()
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        if len(raw) > MAX_LINE:
            out.malformed.append(number)
            continue
        try:
            event = json.loads(raw.decode("utf-8", errors="replace"))
        except ValueError:
            out.malformed.append(number)
            continue
        kind, message = _event(event)
        if kind:
            formats.add(kind)
        if message is None:
            if kind:
                out.skipped += 1
            else:
                out.malformed.append(number)
            continue
        out.messages.append(
            Message(message.id, message.role, message.text, message.timestamp, number)
        )
    out.format = formats.pop() if len(formats) == 1 else ("mixed" if formats else "empty")
    return out


def claude_code_dir(instance: Path) -> Path:
    """Where Claude Code keeps this project's session files: ``~/.claude/projects/<the
    project's absolute path with every character that is not a letter or digit as ->``."""
    home = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
    name = "".join(c if c.isalnum() else "-" for c in str(instance.resolve()))
    return home / "projects" / name


def find_transcripts(instance: Path, patterns: list[str]) -> list[tuple[Path, str]]:
    """Files the patterns name (paths or globs, relative to the instance; ``~`` expanded),
    with the label each is known by, in sorted order; each file once."""
    found: dict[Path, str] = {}
    for pattern in patterns:
        expanded = os.path.expanduser(pattern)
        base = expanded if os.path.isabs(expanded) else str(instance / expanded)
        matches = glob.glob(base, recursive=True) if glob.has_magic(base) else [base]
        for match in matches:
            path = Path(match)
            if path.is_dir():
                candidates = sorted(path.rglob("*.jsonl"))
            elif path.is_file():
                candidates = [path]
            else:
                continue
            for c in candidates:
                resolved = c.resolve()
                if resolved.is_relative_to(instance.resolve()):
                    label = resolved.relative_to(instance.resolve()).as_posix()
                else:
                    label = str(resolved)
                found.setdefault(resolved, label)
    return sorted(((p, lab) for p, lab in found.items()), key=lambda x: x[1])


def is_closed(path: Path, minutes: float, now: float | None = None) -> bool:
    """Closed: not changed for ``minutes``."""
    return ((now if now is not None else time.time()) - path.stat().st_mtime) >= minutes * 60
