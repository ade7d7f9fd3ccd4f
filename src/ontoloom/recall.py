"""What was said, made quotable: the messages of the conversation transcripts a user opted in,
cut into passages in the search index (:meth:`ontoloom.search.SearchIndex.put_transcript`),
for the prompt hook to quote (:mod:`ontoloom.context`). Record bodies are indexed with the
store's documents; this module reads what is not in the store.

Only roots of ``[mining] transcripts`` opted in with ``privacy = "internal"`` (or
``"public"``) are read — a transcript is private unless its root says otherwise, and a file
two roots name takes the more restrictive class. Only closed transcripts (unchanged for
``closed_after_minutes``) are read: a conversation still going on is not yet "said before".
A passage holding a secret is never indexed (and so never quoted — not even redacted), as a
mined quote holding one is never stored; nor is a question, nor a user's request to the agent
("add type hints to …", "can you …"): they say what was asked, not what was learned. A transcript is read again only when its content
changed; one that is gone, or no longer opted in, is forgotten.

Run by ``rebuild``, ``reindex`` (everything again) and ``mine scan``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ontoloom.config import MiningConfig, load_config
from ontoloom.errors import BadInput
from ontoloom.proposals.transcripts import (
    Message,
    TranscriptError,
    content_hash,
    find_transcripts,
    is_closed,
    read_transcript,
)
from ontoloom.search import QUOTE_WIDTH, statements
from ontoloom.secret_text import holds_secret

if TYPE_CHECKING:
    from ontoloom.session import Session

__all__ = ["Indexed", "index_conversations", "quotable_transcripts"]

_RANK = {"public": 0, "internal": 1, "private": 2}


@dataclass
class Indexed:
    """What one pass over the opted-in transcripts did."""

    transcripts: int = 0  # opted in, closed and indexed (read now or unchanged)
    read: int = 0  # read this time (new or changed)
    passages: int = 0  # indexed this time
    secret: int = 0  # passages left out because they hold a secret
    dropped: int = 0  # transcripts forgotten (gone, or no longer opted in)
    open: int = 0  # not closed yet: left for a later pass
    unreadable: list[str] = field(default_factory=list)  # "label: why"
    problem: str | None = None  # a bad [mining] section: nothing read

    def to_json(self) -> dict[str, Any]:
        return {
            "transcripts": self.transcripts,
            "read": self.read,
            "passages": self.passages,
            "withheld_secret": self.secret,
            "dropped": self.dropped,
            "open": self.open,
            "unreadable": self.unreadable,
            "problem": self.problem,
        }


def quotable_transcripts(instance: Path, cfg: MiningConfig) -> dict[Path, tuple[str, str]]:
    """The transcripts of the opted-in roots: path → (label, privacy), the most restrictive
    class where several roots name one file (a private root's file is left out)."""
    classes: dict[Path, tuple[str, str]] = {}
    for root in cfg.roots:
        for path, label in find_transcripts(instance, [root.root]):
            known = classes.get(path)
            if known is None or _RANK[root.privacy] > _RANK[known[1]]:
                classes[path] = (label, root.privacy)
    return {p: v for p, v in classes.items() if v[1] != "private"}


# A user's message that asks the agent to do something ("add type hints to …", "can you …")
# says what was wanted then, not what was learned: it is not quoted.
_REQUEST = re.compile(
    r"^\W*(?:please\s+|ok(?:ay)?[,.!]?\s+|now\s+)?(?:(?:can|could|would|will)\s+you|"
    r"add|change|check|clean|create|delete|explain|fix|format|give|implement|make|move|"
    r"refactor|remove|rename|rewrite|run|show|tell|update|write)\b",
    re.IGNORECASE,
)


def _request(message: Message) -> bool:
    return message.role == "user" and _REQUEST.match(message.text) is not None


def _context(message: Message) -> str:
    """The message another answers, as its passages' context: its first
    :data:`QUOTE_WIDTH` characters, without a secret (context is matched, never shown; a
    secret is still not copied into the index)."""
    text = " ".join(message.text.split())[:QUOTE_WIDTH]
    return "" if holds_secret(text) else text


def index_conversations(graph: Session, *, full: bool = False) -> Indexed:
    """Bring the search index's conversation passages in step with the opted-in transcripts
    (every one read again when ``full``). Never raises for a transcript or a bad ``[mining]``
    section: the summary says what could not be read."""
    out = Indexed()
    config = load_config(graph.data_dir) if graph.data_dir is not None else None
    index = graph.search_index()
    known = index.transcripts()
    if config is None or config.instance is None:
        wanted: dict[Path, tuple[str, str]] = {}
        cfg = MiningConfig()
    else:
        try:
            cfg = config.mining()
        except BadInput as exc:
            out.problem = str(exc)
            return out  # what is indexed stays as it is until the section is fixed
        wanted = quotable_transcripts(config.instance, cfg)
    labels = {label for label, _ in wanted.values()}
    for path, (label, privacy) in sorted(wanted.items(), key=lambda x: x[1][0]):
        try:
            if not is_closed(path, cfg.closed_after_minutes):
                out.open += 1
                labels.discard(label)  # not said "before" yet
                continue
            digest = content_hash(path)
        except OSError as exc:
            out.unreadable.append(f"{label}: cannot read it ({exc.strerror or exc})")
            labels.discard(label)
            continue
        if not full and known.get(label) == (digest, privacy):
            out.transcripts += 1
            continue
        try:
            transcript = read_transcript(path, label)
        except TranscriptError as exc:
            out.unreadable.append(str(exc))
            labels.discard(label)
            continue
        said = []
        before = None
        for message in transcript.messages:
            windows = [] if _request(message) else statements(message.text)
            kept = [text for text in windows if not holds_secret(text)]
            if kept and holds_secret(" ".join(kept)):
                kept = []  # a secret cut in two by the windows: none of the message is kept
            out.secret += len(windows) - len(kept)
            # What it answers: the message before, from the other side (matched, not quoted).
            asked = _context(before) if before is not None and before.role != message.role else ""
            said += [(message.id, message.timestamp, text, asked) for text in kept]
            before = message
        out.passages += index.put_transcript(label, transcript.hash, privacy, said)
        out.read += 1
        out.transcripts += 1
    for label in known:
        if label not in labels:
            index.drop_transcript(label)
            out.dropped += 1
    return out
