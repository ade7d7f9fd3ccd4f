"""Full-text search: BM25 over a SQLite FTS5 index derived from the store.

One document per object (id, type, title or name, every string property, tags, record
body) and one per relation (its readable label, "Fix payment timeout → Deploy checkout
page"). The index records the store generation it reflects; when the two disagree (a crash
between commit and index update) it is rebuilt before answering.

Beside them, *passages*: what was said, in windows short enough to quote (:func:`chunks`,
at most :data:`QUOTE_WIDTH` characters) — the bodies of records (rules, runbooks, decisions),
derived from the store like the documents, and the messages of the conversation transcripts a
user opted in, put here by :mod:`ontoloom.recall` (they are not in the store: a reindex of the
store leaves them be). The prompt hook quotes them (:meth:`SearchIndex.passages`).

Any text is a safe query: it is cut into word tokens, and each token is searched as a
quoted prefix phrase, OR-ed together, so no FTS5 syntax ever reaches SQLite.

This module imports only the standard library and the storage layer (hooks use it).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import heapq
import json
import re
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any, NamedTuple, cast

from ontoloom.history import VersionRow, version_rows
from ontoloom.store.base import Backend, Delta
from ontoloom.terms import Literal, NamedNode, Quad, Term
from ontoloom.terms import node as as_term
from ontoloom.vocab import (
    HISTORY,
    META,
    OL,
    PROPOSALS,
    RDF_TYPE,
    RDFS_LABEL,
    SCHEMA_GRAPH,
    WORDING_PREFIX,
    is_open_relation,
    vocab_name,
    wording_iri,
)

__all__ = [
    "QUOTE_WIDTH",
    "STOPWORDS",
    "Hit",
    "Passage",
    "SearchIndex",
    "chunks",
    "query_terms",
    "statements",
    "touched_by",
]

INDEX_FILE = "search.sqlite"
MAX_TERMS = 32
_TOKEN = re.compile(r"\w+", re.UNICODE)
_TITLE_KEYS = ("title", "name", "description", "content", "service")
_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS docs (
    rowid INTEGER PRIMARY KEY, key TEXT, kind TEXT, id TEXT, type TEXT,
    title TEXT, private INTEGER, from_id TEXT, rel TEXT, to_id TEXT, words TEXT);
CREATE TABLE IF NOT EXISTS tags (rowid INTEGER, tag TEXT);
CREATE TABLE IF NOT EXISTS df (term TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS views (rowid INTEGER PRIMARY KEY, shown TEXT, view TEXT);
"""
# Apart from the tables: a whole reindex fills the tables first and sorts each index once.
_INDEXES = """
CREATE UNIQUE INDEX IF NOT EXISTS docs_key ON docs(key);
CREATE INDEX IF NOT EXISTS docs_id ON docs(id);
CREATE INDEX IF NOT EXISTS docs_from ON docs(from_id);
CREATE INDEX IF NOT EXISTS docs_to ON docs(to_id);
CREATE INDEX IF NOT EXISTS docs_type_id ON docs(type, id);
CREATE INDEX IF NOT EXISTS tags_tag ON tags(tag, rowid);
CREATE INDEX IF NOT EXISTS tags_row ON tags(rowid);
"""
# A prefix index serves prefix queries of exactly its length: terms of 3 characters are the
# shortest matched as prefixes (see _match_expression), longer ones read the term range.
_FTS = """CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    id, title, body, tags, tokenize = 'porter unicode61 remove_diacritics 2', prefix = '3')"""
# The drop-in memory server's search (``search_nodes``) is a substring test, as the reference
# server's is: one row per object, rowid as in docs, holding what that search reads — the name
# and the entityType as the drop-in shows them, and the observations — lower-cased as it
# compares them (:func:`js_lower`). ``rest`` is the entityType and observations, a line each;
# ``vals`` the name and the same values as a JSON list, for the exact test (a line break in a
# value, or a query spanning two lines, must not make a hit). Beside it, in the plain table
# ``views`` (rowid as in docs: a key lookup, where a join into FTS5 is a cursor per row),
# ``shown`` the name as written, to name the ends of the relations answered, and ``view`` the
# entityType and the observations as written, the observations in the order they were added
# (a JSON list): what the drop-in's reads answer for the object, without reading the store. The trigram tokenizer finds every row holding a
# query of three or more characters, on the text as stored (already lower-cased). A
# relation's ``words`` in docs are its relationType as the drop-in shows it (the agent's words
# for a typed relation it named otherwise).
_SUBS = """CREATE VIRTUAL TABLE IF NOT EXISTS subs USING fts5(
    name, rest, vals UNINDEXED, tokenize = 'trigram case_sensitive 1')"""
# Passages (see the module docstring): kind ``record`` (source: the object's id, label: its
# record's path, at: its date) or ``conversation`` (source: the transcript's label, label: the
# message's id, at: its timestamp); privacy as written (a record's values, comma-separated; a
# transcript's root's class). ``transcripts`` holds what was read of each transcript.
# A row to add is (kind, source, label, at, privacy, text, context).
_SAID = """
CREATE TABLE IF NOT EXISTS said (
    rowid INTEGER PRIMARY KEY, kind TEXT, source TEXT, label TEXT, at TEXT, privacy TEXT,
    text TEXT);
CREATE INDEX IF NOT EXISTS said_source ON said(kind, source);
CREATE TABLE IF NOT EXISTS transcripts (label TEXT PRIMARY KEY, hash TEXT, privacy TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS said_fts USING fts5(
    text, context, tokenize = 'porter unicode61 remove_diacritics 2')"""
# ``context`` is matched, never quoted: the question a message answers (the message before it),
# or the title of the record a passage is from — a passage rarely repeats what it is about.
_SAID_WEIGHTS = (1.0, 0.5)
_WHOLE = 10**6  # passages match terms whole (stemmed), never as prefixes: see passages()
# The time index of the history graph (:mod:`ontoloom.history`): one row per version, its
# times in microseconds since the epoch (UTC), ordered by the start of its validity, so that
# "what was valid at T" reads the versions that had begun by T off an index instead of
# joining every version in SPARQL. The fact as written: subject and predicate IRIs, the
# object's kind ("i" IRI, "b" blank node, "l" literal), lexical form and datatype (or "@"
# and a language tag).
_VERSIONS = """
CREATE TABLE IF NOT EXISTS versions (
    node TEXT PRIMARY KEY, s TEXT, p TEXT, o_kind TEXT, o TEXT, o_type TEXT,
    valid_from INTEGER, valid_to INTEGER, recorded INTEGER, retired INTEGER);
CREATE INDEX IF NOT EXISTS versions_from ON versions(valid_from, valid_to)"""
_SCHEMA = _TABLES + _FTS + ";\n" + _SUBS + ";\n" + _INDEXES + _SAID + ";\n" + _VERSIONS + ";\n"
# Bumped when the tables change: an index of another layout is rebuilt on open.
LAYOUT = "5"
# Records whose bodies are quoted: rules (memory), runbooks, decisions.
QUOTED_TYPES = frozenset({"Rule", "Action", "Decision"})
QUOTE_WIDTH = 240  # characters of a passage, at most
SaidRow = tuple[str, str, str, str | None, str, str, str]
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_OBSERVATIONS = "observations"  # ontoloom.model.OBSERVATIONS (not imported: hooks use this)
_OBSERVATION_ORDER = "observation_order"  # ontoloom.model.OBSERVATION_ORDER
# bm25 column weights: id, title, body, tags — titles above bodies.
_WEIGHTS = (8.0, 5.0, 1.0, 2.0)
# A term in more than this share of documents says little: dropped from a query that has
# rarer terms (it would only drown them, and scoring it costs the most).
COMMON = 0.05
COMMON_MIN_DOCS = 100  # in a small graph no term is common
# Relations are context: they rank below the objects they connect.
_RELATION_WEIGHT = 0.4
EXACT_ID_SCORE = 1000.0  # an exact id match comes first
# Words that say nothing about which object a text is about (guard, the prompt hook).
# fmt: off
STOPWORDS = frozenset([
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
    "anything", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between",
    "both", "but", "by", "can", "could", "describe", "did", "do", "does", "doing", "don", "down",
    "during", "each", "either", "else", "even", "ever", "every", "explain", "few", "for", "from",
    "further", "get", "gets", "getting", "give", "got", "had", "has", "have", "having", "he",
    "hello", "her", "here", "hers", "hey", "him", "his", "how", "however", "i", "if", "in", "into",
    "is", "it", "its", "itself", "just", "know", "let", "lets", "like", "look", "me", "more",
    "most", "much", "must", "my", "need", "no", "nor", "not", "now", "of", "off", "ok", "okay",
    "on", "once", "only", "or", "other", "our", "ours", "out", "over", "own", "please", "really",
    "remind", "said", "same", "say", "see", "she", "should", "show", "so", "some", "something",
    "still", "such", "summarise", "summarize", "sure", "tell", "than", "thank", "thanks", "that",
    "the", "their", "theirs", "them", "then", "there", "these", "they", "thing", "things", "think",
    "this", "those", "though", "through", "to", "too", "try", "under", "until", "up", "us", "very",
    "via", "want", "was", "way", "we", "well", "were", "what", "whats", "when", "where", "whether",
    "which", "while", "who", "whom", "whose", "why", "will", "with", "would", "yeah", "yes", "yet",
    "you", "your", "yours",
])
# fmt: on


def query_terms(text: str) -> list[str]:
    """The word tokens of any text, deduplicated, at most 32 (all FTS syntax dropped).

    >>> query_terms('[Task:task_a1b2] "fix" AND NOT (payment*) ^near-timeout')
    ['task', 'task_a1b2', 'fix', 'and', 'not', 'payment', 'near', 'timeout']
    """
    seen: dict[str, None] = {}
    for token in _TOKEN.findall(text.lower()):
        seen.setdefault(token, None)
        if len(seen) >= MAX_TERMS:
            break
    return list(seen)


def chunks(text: str, width: int = QUOTE_WIDTH) -> list[str]:
    """``text`` cut into windows that can be quoted whole: paragraph by paragraph, sentences
    packed together while they fit in ``width`` characters, a longer sentence cut between
    words (a longer word cut where it must); white space flattened. A window of fewer than
    three words says too little to quote and is left out.

    >>> chunks("We pinned the SDK. It broke retries.\\n\\nOk.", 30)
    ['We pinned the SDK.', 'It broke retries.']
    """
    out: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        window = ""
        for sentence in _SENTENCE_END.split(" ".join(paragraph.split())):
            for piece in _pieces(sentence, width):
                if window and len(window) + 1 + len(piece) <= width:
                    window += " " + piece
                else:
                    if window:
                        out.append(window)
                    window = piece
        if window:
            out.append(window)
    return [c for c in out if len(_TOKEN.findall(c)) >= 3]


def statements(text: str) -> list[str]:
    """The windows of ``text`` (:func:`chunks`) that can answer something: not questions.

    >>> statements("How long do we keep them? Three days.\\n\\nWhy not a week, then?")
    ['How long do we keep them? Three days.']
    """
    return [c for c in chunks(text) if not c.endswith("?")]


def _pieces(sentence: str, width: int) -> list[str]:
    """A sentence in pieces of at most ``width`` characters, cut between words."""
    if len(sentence) <= width:
        return [sentence] if sentence else []
    out, piece = [], ""
    for word in sentence.split(" "):
        while len(word) > width:  # a run without spaces (a URL, a hash)
            if piece:
                out.append(piece)
                piece = ""
            out.append(word[:width])
            word = word[width:]
        if piece and len(piece) + 1 + len(word) <= width:
            piece += " " + word
        else:
            if piece:
                out.append(piece)
            piece = word
    if piece:
        out.append(piece)
    return out


def _match_expression(
    terms: list[str], all_required: bool = False, prefix: int = 3, whole: Iterable[str] = ()
) -> str:
    # Every token is \w+ only, so quoting it as a phrase is always valid FTS5. Terms of at
    # least ``prefix`` characters also match as prefixes, except the ``whole`` ones.
    joiner = " AND " if all_required else " OR "
    whole = set(whole)
    return joiner.join(
        f'"{t}"*' if len(t) >= prefix and t not in whole else f'"{t}"' for t in terms
    )


@dataclass
class Hit:
    id: str
    type: str
    title: str
    score: float
    snippet: str
    kind: str = "object"
    private: bool = False
    relations: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "title": self.title,
            "score": round(self.score, 4),
            "snippet": self.snippet,
            "kind": self.kind,
            "private": self.private,
            "relations": self.relations,
        }


@dataclass
class Passage:
    """A window of what was said (see :data:`_SAID`), as a lookup found it."""

    kind: str  # record | conversation
    source: str  # the record's object id, or the transcript's label
    label: str  # the record's path, or the message's id
    at: str | None  # the record's date, or the message's timestamp
    privacy: str
    text: str
    score: float = 0.0
    matched: frozenset[str] = frozenset()  # the lookup's terms it holds


class Hits(list[Hit]):
    """A page of hits, best first; ``note`` says how they were ranked when not every match
    was (a query matching more than :data:`RANK_WINDOW` entries)."""

    note: str | None = None


# A query matching more entries than this is ranked among its newest this many matches:
# BM25 costs about a microsecond per match, and tens of thousands of matches of one common
# word are not worth ranking (the answer says so, and that more words narrow it).
RANK_WINDOW = 1000


class SearchIndex:
    """The FTS5 index of one data dir."""

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = path
        uri = f"file:{path}?mode=ro" if readonly else f"file:{path}"
        # An owner process uses one index from several threads, one at a time (its lock).
        self.db = sqlite3.connect(
            uri, uri=True, timeout=5.0, isolation_level=None, check_same_thread=False
        )
        # Python's case folding, where SQLite's lower() folds ASCII only (see _filters).
        self.db.create_function("py_lower", 1, str.lower, deterministic=True)
        if not readonly:
            # While a writer has it open, the index runs in WAL mode without a sync per
            # commit (a full sync per write was most of a validated create's time); it is
            # derived — it records the store generation it reflects and catches up when
            # behind — so a commit lost with the machine costs a catch-up, nothing more.
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(_SCHEMA)
            layout = self.db.execute("SELECT value FROM meta WHERE key = 'layout'").fetchone()
            if layout is None or layout[0] != LAYOUT:
                # made by an older version: rebuilt whole by the next sync
                self.db.execute("DELETE FROM meta WHERE key = 'generation'")
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('layout', ?)", (LAYOUT,))
        self.readonly = readonly
        self._page: sqlite3.Connection | None = None  # see _snippets

    @classmethod
    def of(cls, data_dir: Path, *, readonly: bool = False) -> SearchIndex:
        return cls(data_dir / INDEX_FILE, readonly=readonly)

    def close(self) -> None:
        if not self.readonly:
            # Back to a plain journal, its log folded in: readers (the hooks) then open the
            # file without creating -wal/-shm files beside it.
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("PRAGMA journal_mode=DELETE")
        self.db.close()
        if self._page is not None:
            self._page.close()

    def generation(self) -> int:
        row = self.db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else -1

    def counts(self) -> tuple[int, int]:
        """(objects, relations) indexed — in milliseconds, where counting them in the store
        reads every triple. As current as :meth:`generation`."""
        relations = self.db.execute(
            "SELECT count(*) FROM docs INDEXED BY docs_from WHERE from_id > ''"
        ).fetchone()[0]
        total = self.db.execute("SELECT count(*) FROM docs").fetchone()[0]
        return total - relations, relations

    # -- building --------------------------------------------------------------------------
    def sync(self, backend: Backend, ids: Any) -> bool:
        """Catch up when the index lags the store — from the store's change log when it
        reaches back far enough (another gateway's commits), else by rebuilding; True when
        it had to."""
        if self.generation() == backend.generation():
            return False
        self.db.execute("BEGIN IMMEDIATE")
        try:
            current, target = self.generation(), backend.generation()
            if current != target:  # another process may have done it
                changes = backend.changes_since(current) if current < target else None
                if changes and changes[-1][0] == target:
                    touched = {node for _, nodes in changes for node in nodes}
                    self._reindex(backend, ids, touched)
                else:
                    self._clear()
                    self._index_all(backend, ids)
                self._set_generation(target)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return True

    def rebuild(self, backend: Backend, ids: Any) -> int:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self._clear()
            count = self._index_all(backend, ids)
            self._set_generation(backend.generation())
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return count

    def follow(self, backend: Backend, ids: Any, delta: Delta, generation: int) -> None:
        """Re-index what a committed delta touched (same process, right after commit)."""
        if self.generation() != generation - 1:
            self.sync(backend, ids)  # it lagged already (or is new): caught up whole
            return
        # versions the delta states whole are indexed from it, with no read of the store
        gone = {q.subject for q in delta.removes if q.graph_name == HISTORY}
        made = version_rows(
            q for q in delta.adds if q.graph_name == HISTORY and q.subject not in gone
        )
        self.catch_up(backend, ids, touched_by(delta), generation - 1, generation, made)

    def catch_up(
        self,
        backend: Backend,
        ids: Any,
        touched: set[Term],
        since: int,
        generation: int,
        made: list[VersionRow] | None = None,
    ) -> None:
        """Re-index ``touched``: all that this process's commits after generation ``since``
        up to ``generation`` touched; caught up whole when the index was not at ``since``.
        ``made``: rows of versions those commits stated whole (see :meth:`_reindex`)."""
        if self.generation() != since:
            self.sync(backend, ids)  # it lagged already: catch up whole
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self._reindex(backend, ids, touched, made or [])
            self._set_generation(generation)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def _reindex(
        self, backend: Backend, ids: Any, touched: set[Term], made: Sequence[VersionRow] = ()
    ) -> None:
        """Index ``touched`` anew: the objects among them, and the versions (any other
        node: a version node, or nothing the index holds) as the store holds them — but for
        ``made``, rows of versions a delta stated whole, taken as they are when the index
        held no row of theirs (a new version: all its quads are in that delta; one the index
        held may keep an end the delta did not repeat, and is read)."""
        objects = {n for n in touched if ids.is_instance(n)}
        for node in objects:
            self._forget(ids.id_of(node))
        self._index(backend, ids, objects)
        held: set[str] = set()
        listed = [r[0] for r in made]
        for i in range(0, len(listed), 500):
            chunk = listed[i : i + 500]
            marks = ",".join("?" * len(chunk))
            found = self.db.execute(f"SELECT node FROM versions WHERE node IN ({marks})", chunk)
            held.update(n for (n,) in found)
        fresh = [r for r in made if r[0] not in held]
        if fresh:
            self._add_versions(fresh)
        new = {r[0] for r in fresh}
        others = [
            n
            for n in touched
            if n not in objects and isinstance(n, NamedNode) and n.value not in new
        ]
        if others:
            self.db.executemany("DELETE FROM versions WHERE node = ?", [(n.value,) for n in others])
            self._add_versions(version_rows(backend.as_written(backend.around(others))))

    def _add_versions(self, rows: list[VersionRow]) -> None:
        self.db.executemany("INSERT OR REPLACE INTO versions VALUES (?,?,?,?,?,?,?,?,?,?)", rows)

    def facts_valid(self, at: int, known: int | None) -> list[tuple[str, str, str, str, str]]:
        """(subject, predicate, object kind, object, object type) of every version valid at
        ``at`` as the store knew it at ``known`` (microseconds, :func:`history.microseconds`;
        None: now) — :meth:`history.Version.holds` as SQL, read off the index on the start
        of validity: the versions begun by ``at``, not every version."""
        return self.db.execute(
            "SELECT s, p, o_kind, o, o_type FROM versions WHERE valid_from <= :at "
            "AND (:known IS NULL OR recorded <= :known) AND (valid_to IS NULL OR :at < valid_to "
            "OR (:known IS NOT NULL AND retired IS NOT NULL AND retired > :known))",
            {"at": at, "known": known},
        ).fetchall()

    def _set_generation(self, generation: int) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (str(generation),))

    def _clear(self) -> None:
        """Empty every table, to be filled by :meth:`_index_all` (which makes the indexes)."""
        # Dropped and made anew, not emptied: deleting row by row from FTS5 was a quarter of
        # a full reindex.
        for table in ("docs", "tags", "fts", "subs", "df", "views", "versions"):
            self.db.execute(f"DROP TABLE IF EXISTS {table}")
        self._run(_TABLES + _FTS + ";" + _SUBS + ";" + _VERSIONS)
        # Record passages are the store's, conversation passages are not: only the first go.
        rows = self.db.execute("SELECT rowid FROM said WHERE kind = 'record'").fetchall()
        self.db.executemany("DELETE FROM said_fts WHERE rowid = ?", rows)
        self.db.execute("DELETE FROM said WHERE kind = 'record'")

    def _run(self, script: str) -> None:
        # Statement by statement: executescript would commit the transaction.
        for statement in script.split(";"):
            if statement.strip():
                self.db.execute(statement)

    def _forget(self, object_id: str) -> None:
        self._forget_said("record", object_id)
        rows = self.db.execute(
            "SELECT rowid FROM docs WHERE id = ? OR from_id = ? OR to_id = ?",
            (object_id, object_id, object_id),
        ).fetchall()
        for (rowid,) in rows:
            text = self.db.execute(
                "SELECT id, title, body, tags FROM fts WHERE rowid = ?", (rowid,)
            ).fetchone()
            if text:
                self._count_terms(" ".join(text), -1)
            self.db.execute("DELETE FROM docs WHERE rowid = ?", (rowid,))
            self.db.execute("DELETE FROM tags WHERE rowid = ?", (rowid,))
            self.db.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
            self.db.execute("DELETE FROM subs WHERE rowid = ?", (rowid,))
            self.db.execute("DELETE FROM views WHERE rowid = ?", (rowid,))

    def _index_all(self, backend: Backend, ids: Any) -> int:
        """Index every object into the emptied index: the same documents :meth:`_index`
        makes, read in one pass over the quads (not one query per 400 objects, nor SPARQL
        rows turned into dicts), each document's rows made once, straight from what the scan
        kept (no dict per object), and written with one statement per table (not four per
        document)."""
        # Without the cycle collector meanwhile: the build makes a few tuples, lists and
        # sets per quad and per document, none in a cycle, and each collection it set off
        # walked all those made before (a sixth of the build's time at 25k objects).
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._build_all(backend, ids)
        finally:
            if collecting:
                gc.enable()

    def _build_all(self, backend: Backend, ids: Any) -> int:
        from ontoloom import progress

        with progress.task("reading the graph for the search index"):
            scanned = _scan(backend.data_quads(), ids)
        objects = _object_fields(scanned, ids)
        titles = {o[0]: o[2] for o in objects}
        private = {o[0] for o in objects if o[6]}
        edges = [e for e in scanned.edges if e[0] in titles or e[2] in titles]
        _add_end_titles(backend, ids, titles, private, edges)
        docs: list[tuple[Any, ...]] = []
        tags: list[tuple[int, str]] = []
        texts: list[tuple[Any, ...]] = []
        subs: list[tuple[Any, ...]] = []
        said: list[SaidRow] = []
        # The raw word tokens of each document, to count in one go (df).
        terms: list[set[str]] = []
        tokens = _TOKEN.findall
        for id_, kind, title, body, tag_list, fields, is_private in objects:
            said += _record_passages_of(id_, title, kind, fields)
            if not kind:
                continue
            rowid = len(docs) + 1
            subs.append((rowid, *_substring_values(*_memory_view(id_, kind, fields))))
            key = f"object:{id_}"
            docs.append((rowid, key, "object", id_, kind, title, int(is_private), *_NO_ENDS))
            tags.extend((rowid, t) for t in {t.lower() for t in tag_list})
            every_tag = [*tag_list, *_implied_tags("object", kind, ())]
            terms.append(set(tokens(" ".join((id_, title, body, *every_tag)).lower())))
            texts.append((rowid, id_, title, body, " ".join(sorted(set(every_tag)))))
        count = len(docs)
        # A relation's words are its ends' (title, id, "edge:" id) and its name's, each
        # tokenized once (lower-cased apart: every part is set off by a space, but "edge:"
        # and the id are one part, as in the tags that hold them).
        end_terms: dict[str, set[str]] = {}
        rel_terms: dict[str, set[str]] = {}
        for from_id, rel, to_id, words in edges:
            for end in (from_id, to_id):
                if end not in end_terms:
                    label = f"{titles.get(end, end)} {end} edge:{end}"
                    end_terms[end] = set(tokens(label.lower()))
            spaced = rel.replace("_", " ").replace("-", " ")
            if rel not in rel_terms:
                rel_terms[rel] = set(tokens(f"edge {rel} {spaced}".lower()))
            rowid = len(docs) + 1
            label = f"{from_id} {rel} {to_id}"
            title = f"{titles.get(from_id, from_id)} → {titles.get(to_id, to_id)}"
            is_private = from_id in private or to_id in private
            key = f"relation:{from_id}\n{rel}\n{to_id}"
            row = (rowid, key, "relation", label, "relation", title, int(is_private))
            docs.append((*row, from_id, rel, to_id, words))
            edge_tags = sorted({"edge", f"edge:{from_id}", f"edge:{to_id}", rel})
            texts.append((rowid, "", title, f"{label} {spaced}", " ".join(edge_tags)))
            terms.append(end_terms[from_id] | end_terms[to_id] | rel_terms[rel])
        df = Counter(chain.from_iterable(terms))
        with progress.task(f"writing the search index ({len(docs)} documents)"):
            self.db.executemany(
                "INSERT INTO docs (rowid, key, kind, id, type, title, private, from_id, rel, "
                "to_id, words) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                docs,
            )
            self.db.executemany("INSERT INTO tags VALUES (?, ?)", tags)
            self.db.executemany(
                "INSERT INTO fts (rowid, id, title, body, tags) VALUES (?,?,?,?,?)", texts
            )
            self.db.executemany(
                "INSERT INTO subs (rowid, name, rest, vals) VALUES (?,?,?,?)",
                [row[:4] for row in subs],
            )
            self.db.executemany(
                "INSERT INTO views (rowid, shown, view) VALUES (?,?,?)",
                [(row[0], *row[4:]) for row in subs],
            )
            self.db.executemany("INSERT INTO df VALUES (?, ?)", df.items())
            self._run(_INDEXES)
            self._add_said(said)
        with progress.task("reading the history for its time index"):
            self._add_versions(version_rows(backend.quads(HISTORY)))
        return count

    def _index(self, backend: Backend, ids: Any, nodes: Iterable[Term]) -> int:
        objects = _describe(backend, ids, [n for n in nodes if ids.is_instance(n)])
        count = 0
        for obj in objects.values():
            self._add_said(_record_passages(obj))
            if not obj["type"]:
                continue
            self._add(
                key=f"object:{obj['id']}",
                kind="object",
                id=obj["id"],
                type=obj["type"],
                title=obj["title"],
                body=obj["body"],
                tags=obj["tags"],
                private=obj["private"],
                memory=obj,
            )
            count += 1
        # Relations touching the indexed objects, labelled with both ends' titles.
        titles = {o["id"]: o["title"] for o in objects.values()}
        private = {o["id"] for o in objects.values() if o["private"]}
        edges = _edges(backend, ids, [ids.iri(i) for i in titles])
        _add_end_titles(backend, ids, titles, private, edges)
        for from_id, rel, to_id, words in edges:
            key = f"relation:{from_id}\n{rel}\n{to_id}"
            if self.db.execute("SELECT 1 FROM docs WHERE key = ?", (key,)).fetchone():
                continue
            _, kind, id_, type_, title, body, tags, is_private, ends = _relation_doc(
                titles, private, from_id, rel, to_id
            )
            self._add(
                key=key,
                kind=kind,
                id=id_,
                type=type_,
                title=title,
                body=body,
                tags=tags,
                private=is_private,
                from_id=ends[0],
                rel=ends[1],
                to_id=ends[2],
                words=words,
            )
        return count

    def _add(
        self,
        *,
        key: str,
        kind: str,
        id: str,
        type: str,
        title: str,
        body: str,
        tags: list[str],
        private: bool,
        from_id: str | None = None,
        rel: str | None = None,
        to_id: str | None = None,
        words: str | None = None,
        memory: dict[str, Any] | None = None,
    ) -> None:
        cur = self.db.execute(
            "INSERT INTO docs (key, kind, id, type, title, private, from_id, rel, to_id, words) "
            "VALUES (?,?,?,?,?,?,?,?,?,?)",
            (key, kind, id, type, title, int(private), from_id, rel, to_id, words),
        )
        rowid = cur.lastrowid
        self.db.executemany(
            "INSERT INTO tags VALUES (?, ?)", [(rowid, t) for t in {t.lower() for t in tags}]
        )
        tags = [*tags, *_implied_tags(kind, type, (from_id, rel, to_id))]
        indexed_id = id if kind == "object" else ""
        self._count_terms(" ".join((indexed_id, title, body, *tags)), +1)
        self.db.execute(
            "INSERT INTO fts (rowid, id, title, body, tags) VALUES (?,?,?,?,?)",
            # a relation's ids are in its body: its id column would outrank the objects'
            (rowid, id if kind == "object" else "", title, body, " ".join(sorted(set(tags)))),
        )
        if memory is not None:
            row = _substring_row(memory)
            self.db.execute(
                "INSERT INTO subs (rowid, name, rest, vals) VALUES (?,?,?,?)",
                (rowid, *row[:3]),
            )
            self.db.execute(
                "INSERT INTO views (rowid, shown, view) VALUES (?,?,?)", (rowid, *row[3:])
            )

    def _count_terms(self, text: str, step: int) -> None:
        """Document frequencies of raw word tokens, to tell common query terms from rare."""
        terms = set(_TOKEN.findall(text.lower()))
        if step > 0:
            self.db.executemany(
                "INSERT INTO df VALUES (?, 1) ON CONFLICT(term) DO UPDATE SET n = n + 1",
                [(t,) for t in terms],
            )
        else:
            self.db.executemany("UPDATE df SET n = n - 1 WHERE term = ?", [(t,) for t in terms])

    def _informative(self, terms: list[str]) -> tuple[list[str], bool, set[str]]:
        """Drop very common terms when rarer ones remain; (terms, all of them required, those
        of them that alone match more than :data:`RANK_WINDOW` entries)."""
        # max(rowid): a seek, where count(*) reads every row (a bound, as df's counts are)
        total = self.db.execute("SELECT max(rowid) FROM docs").fetchone()[0] or 1
        cut = max(COMMON * total, COMMON_MIN_DOCS)
        marks = ", ".join("?" * len(terms))
        counts = dict(self.db.execute(f"SELECT term, n FROM df WHERE term IN ({marks})", terms))
        common = {t for t in terms if counts.get(t, 0) > cut}
        rare = [t for t in terms if t not in common]
        kept, all_required = (rare, False) if rare else (terms, len(terms) > 1)
        # (only common words: ask for all of them)
        return kept, all_required, {t for t in kept if counts.get(t, 0) > RANK_WINDOW}

    # -- passages ------------------------------------------------------------------------------
    def _add_said(self, rows: Iterable[SaidRow]) -> int:
        """Add passages: (kind, source, label, at, privacy, text, context) each."""
        count = 0
        for row in rows:
            cur = self.db.execute(
                "INSERT INTO said (kind, source, label, at, privacy, text) VALUES (?,?,?,?,?,?)",
                row[:6],
            )
            self.db.execute(
                "INSERT INTO said_fts (rowid, text, context) VALUES (?, ?, ?)",
                (cur.lastrowid, row[5], row[6]),
            )
            count += 1
        return count

    def _forget_said(self, kind: str, source: str) -> None:
        # Row by row from the FTS table, the rowids read off the source's index: every write
        # forgets the nodes it touched, and most hold no passage.
        rows = self.db.execute(
            "SELECT rowid FROM said WHERE kind = ? AND source = ?", (kind, source)
        ).fetchall()
        if rows:
            self.db.executemany("DELETE FROM said_fts WHERE rowid = ?", rows)
            self.db.execute("DELETE FROM said WHERE kind = ? AND source = ?", (kind, source))

    def transcripts(self) -> dict[str, tuple[str, str]]:
        """The transcripts whose passages are indexed: label → (content hash, privacy)."""
        rows = self.db.execute("SELECT label, hash, privacy FROM transcripts")
        return {label: (digest, privacy) for label, digest, privacy in rows}

    def put_transcript(
        self,
        label: str,
        digest: str,
        privacy: str,
        said: Iterable[tuple[str, str | None, str, str]],
    ) -> int:
        """Replace a transcript's passages with ``said`` — (message id, timestamp, text, the
        message it answers) each — in one transaction; returns how many were indexed."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self._forget_said("conversation", label)
            count = self._add_said(
                ("conversation", label, mid, at, privacy, text, context)
                for mid, at, text, context in said
            )
            self.db.execute(
                "INSERT OR REPLACE INTO transcripts VALUES (?, ?, ?)", (label, digest, privacy)
            )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return count

    def drop_transcript(self, label: str) -> None:
        """Forget a transcript and its passages (gone, or no longer opted in)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self._forget_said("conversation", label)
            self.db.execute("DELETE FROM transcripts WHERE label = ?", (label,))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def passages(
        self,
        terms: list[str],
        *,
        min_terms: int = 2,
        min_share: float = 0.0,
        min_score: float = 0.0,
        limit: int = 8,
        common: int = 20,
    ) -> list[Passage]:
        """Passages the word ``terms`` really point at, best first: each holds (in its text
        or its context) at least ``min_terms`` of the terms that are distinctive among the
        passages (found in at most ``common`` passages or 5% of them; matched stemmed, whole
        — a prefix match is too loose to quote on), and at least ``min_share`` of all the
        terms, and ranks at least ``min_score`` by BM25 over those it holds. Ranked by terms
        held, then BM25."""
        terms = [t for t in dict.fromkeys(terms) if _TOKEN.fullmatch(t)][:MAX_TERMS]
        total = self.db.execute("SELECT max(rowid) FROM said").fetchone()[0]
        if not terms or not total:
            return []
        cap = int(max(COMMON * total, common))
        held: dict[int, set[str]] = defaultdict(set)
        distinctive = []
        for term in terms:
            rows = self.db.execute(
                "SELECT rowid FROM said_fts WHERE said_fts MATCH ? LIMIT ?",
                (_match_expression([term], prefix=_WHOLE), cap + 1),
            ).fetchall()
            if 0 < len(rows) <= cap:
                distinctive.append(term)
                for (rowid,) in rows:
                    held[rowid].add(term)
        need = max(min_terms, min_share * len(terms))
        chosen = [r for r, found in held.items() if len(found) >= need]
        if not chosen:
            return []
        marks = ", ".join("?" * len(chosen))
        rows = self.db.execute(
            "SELECT s.rowid, s.kind, s.source, s.label, s.at, s.privacy, s.text, "
            f"-bm25(said_fts, {_SAID_WEIGHTS[0]}, {_SAID_WEIGHTS[1]}) FROM said_fts "
            "JOIN said s ON s.rowid = said_fts.rowid "
            f"WHERE said_fts MATCH ? AND said_fts.rowid IN ({marks})",
            (_match_expression(distinctive, prefix=_WHOLE), *chosen),
        ).fetchall()
        found = [
            Passage(kind, source, label, at, privacy, text, float(score), frozenset(held[rowid]))
            for rowid, kind, source, label, at, privacy, text, score in rows
            if score >= min_score
        ]
        found.sort(key=lambda p: (-len(p.matched), -p.score, p.source, p.label))
        return found[:limit]

    # -- searching -------------------------------------------------------------------------
    def search(
        self,
        text: str,
        *,
        types: Iterable[str] = (),
        tags: Iterable[str] = (),
        rel: str | None = None,
        limit: int = 10,
    ) -> Hits:
        """The best ``limit`` hits, best first; equal scores in index order (rowid).

        Only the page is dressed: snippets and relation labels are read for the hits
        returned, never for every match. A query matching more than :data:`RANK_WINDOW`
        entries is ranked among the newest of them, and the page's ``note`` says so."""
        types, tags = [t for t in types], [t.lower() for t in tags]
        where, params = _filters(types, tags, rel)
        hits: dict[str, Hit] = {}
        note: str | None = None
        exact = text.strip()
        if exact:
            for row in self.db.execute(
                f"SELECT d.rowid, d.kind, d.id, d.type, d.title, d.private FROM docs d "
                f"WHERE d.id = ? AND d.kind = 'object' {where}",
                (exact, *params),
            ):
                hits[row[2]] = Hit(
                    row[2], row[3], row[4], EXACT_ID_SCORE, row[4], row[1], bool(row[5])
                )
        terms = query_terms(text)
        if terms:
            informative, all_required, frequent = self._informative(terms)
            # A frequent word matched as a prefix too would merge the lists of every longer
            # word it starts (most of its cost) to add matches to a list already cut to the
            # newest RANK_WINDOW: it is matched whole.
            expression = _match_expression(informative, all_required, whole=frequent)
            ranked, window = self._ranked(expression, where, params, limit + len(hits))
            if window:
                words = " ".join(informative)
                note = (
                    f"'{words}' matches more than {RANK_WINDOW} entries: these are the best of "
                    f"the newest {RANK_WINDOW}; add words (or a type or tag filter) to narrow it"
                )
            for _rowid, kind, id_, type_, title, private, score in ranked:
                if id_ not in hits:
                    hits[id_] = Hit(id_, type_, title, score, title, kind, bool(private))
            snippets = self._snippets(expression, [r[0] for r in ranked])
            for rowid, kind, id_, *_ in ranked:
                snippet = snippets.get(rowid, "")
                if "[" in snippet and hits[id_].kind == kind:
                    hits[id_].snippet = snippet
        if not terms and not hits and where:  # filters alone: list what they select
            sql = f"SELECT d.kind, d.id, d.type, d.title, d.private FROM docs d WHERE 1 {where} ORDER BY d.title LIMIT ?"
            for kind, id_, type_, title, private in self.db.execute(sql, (*params, limit)):
                hits[id_] = Hit(id_, type_, title, 0.0, title, kind, bool(private))
        page = Hits(sorted(hits.values(), key=lambda h: -h.score)[:limit])
        page.note = note
        labels = self._relation_labels_of([h.id for h in page if h.kind == "object"])
        for hit in page:
            hit.relations = labels.get(hit.id, []) if hit.kind == "object" else []
        return page

    def containing(self, query: str) -> list[tuple[str, bool]]:
        """The objects whose name, entityType or an observation (as the drop-in memory server
        shows them) contains ``query``, case-insensitively — the reference server's
        ``searchNodes`` test — as (id, private), best first: the name equal to the query, then
        names containing it (shorter first), then the others; by name, then id, within each.

        A query of three or more characters (lower-cased) is looked up in the trigram index;
        a shorter one, which no trigram holds, is tested against every row. Either way each
        candidate is then tested exactly. An empty query is in every string."""
        needle = js_lower(query)
        looked_for = _searchable(needle)
        if len(needle) >= 3:
            rows = self.db.execute(
                "SELECT d.id, d.private, s.vals FROM subs s JOIN docs d "
                "ON d.rowid = s.rowid WHERE subs MATCH ? AND d.kind = 'object'",
                ('"' + looked_for.replace('"', '""') + '"',),
            )
        else:
            rows = self.db.execute(
                "SELECT d.id, d.private, s.vals FROM subs s JOIN docs d "
                "ON d.rowid = s.rowid WHERE (instr(s.name, ?1) OR instr(s.rest, ?1)) "
                "AND d.kind = 'object'",
                (looked_for,),
            )
        found = []
        for id_, private, vals in rows:
            name, *rest = json.loads(vals)
            if needle in name:
                rank = 0 if name == needle else 1
            elif any(needle in v for v in rest):
                rank = 2
            else:
                continue  # a trigram candidate only, or a match across two values
            found.append(((rank, len(name) if rank == 1 else 0, name, id_), bool(private)))
        found.sort()
        return [(key[3], private) for key, private in found]

    def memory_view(self, object_ids: Iterable[str]) -> dict[str, tuple[str, str, list[str]]]:
        """Each indexed object of ``object_ids`` as the drop-in memory server shows it:
        (name, entityType, observations in the order added) — see :data:`_SUBS`."""
        ids = list(dict.fromkeys(object_ids))
        out: dict[str, tuple[str, str, list[str]]] = {}
        for i in range(0, len(ids), 400):
            chunk = ids[i : i + 400]
            rows = self.db.execute(
                "SELECT d.id, v.shown, v.view FROM docs d JOIN views v ON v.rowid = d.rowid "
                f"WHERE d.id IN ({', '.join('?' * len(chunk))}) AND d.kind = 'object'",
                chunk,
            )
            for id_, shown, view in rows:
                entity_type, *observations = json.loads(view)
                out[id_] = (shown, entity_type, observations)
        return out

    def relations_shown(
        self, object_ids: Iterable[str], *, outgoing_only: bool = False
    ) -> list[tuple[str, str, str]]:
        """The relations with at least one end among ``object_ids`` (only those leaving them
        with ``outgoing_only``) as the drop-in memory server shows them — (from, to,
        relationType), each end by its name (its id when it is not indexed) — ordered by
        source id, relation and target id."""
        ids = list(dict.fromkeys(object_ids))
        found: dict[tuple[str, str, str], str] = {}
        for i in range(0, len(ids), 400):
            chunk = ids[i : i + 400]
            marks = ", ".join("?" * len(chunk))
            among = f"from_id IN ({marks})"
            if not outgoing_only:
                among = f"({among} OR to_id IN ({marks}))"
            rows = self.db.execute(
                f"SELECT from_id, rel, to_id, words FROM docs WHERE kind = 'relation' AND {among}",
                chunk if outgoing_only else [*chunk, *chunk],
            )
            for from_id, rel, to_id, words in rows:
                found[from_id, rel, to_id] = words if words is not None else rel
        ends = sorted({end for from_id, _, to_id in found for end in (from_id, to_id)})
        names: dict[str, str] = {}
        for i in range(0, len(ends), 400):
            chunk = ends[i : i + 400]
            rows = self.db.execute(
                "SELECT d.id, v.shown FROM docs d JOIN views v ON v.rowid = d.rowid "
                f"WHERE d.id IN ({', '.join('?' * len(chunk))}) AND d.kind = 'object'",
                chunk,
            )
            names.update(rows)
        return [
            (names.get(key[0], key[0]), names.get(key[2], key[2]), words)
            for key, words in sorted(found.items())
        ]

    def _ranked(
        self, expression: str, where: str, params: list[Any], need: int
    ) -> tuple[list[tuple[int, str, str, str, str, int, float]], bool]:
        """The ``need`` best matches (rowid, kind, id, type, title, private, score) by BM25,
        relations weighted down, equal scores by rowid; and whether only the newest
        :data:`RANK_WINDOW` matches were ranked (FTS5 computes BM25 for every match it ranks:
        ORDER BY rank cannot stop early)."""
        weights = ", ".join(str(w) for w in _WEIGHTS)
        matches = f"FROM fts JOIN docs d ON d.rowid = fts.rowid WHERE fts MATCH ? {where}"
        # The RANK_WINDOW-th newest match, if there are more: rowids only, no scoring.
        oldest = self.db.execute(
            f"SELECT fts.rowid {matches} ORDER BY fts.rowid DESC LIMIT 1 OFFSET ?",
            (expression, *params, RANK_WINDOW),
        ).fetchone()
        window = ""
        if oldest is not None:
            window = f"AND fts.rowid > {int(oldest[0])}"
        sql = (
            f"SELECT d.rowid, d.kind, d.id, d.type, d.title, d.private, "
            f"-bm25(fts, {weights}) * (CASE d.kind WHEN 'object' THEN 1.0 ELSE {_RELATION_WEIGHT} END) AS score "
            f"{matches} {window} ORDER BY score DESC, d.rowid LIMIT ?"
        )
        rows = [
            (r[0], r[1], r[2], r[3], r[4], r[5], float(r[6]))
            for r in self.db.execute(sql, (expression, *params, need))
        ]
        return rows, oldest is not None

    def _snippets(self, expression: str, rowids: list[int]) -> dict[int, str]:
        """The body snippet of each of ``rowids``. FTS5 cannot seek a term's matches to one
        rowid (it walks the term's whole list: most of a common term's search), so the page's
        rows are matched again in a scratch FTS5 table of their own, with the same tokenizer.
        A snippet depends on its row and the expression alone: it is the same snippet."""
        if not rowids:
            return {}
        marks = ", ".join("?" * len(rowids))
        rows = self.db.execute(
            f"SELECT rowid, id, title, body, tags FROM fts WHERE rowid IN ({marks})", rowids
        ).fetchall()
        page = self._page_table()
        with page:
            page.execute("DELETE FROM page")
            page.executemany(
                "INSERT INTO page (rowid, id, title, body, tags) VALUES (?, ?, ?, ?, ?)", rows
            )
            found = page.execute(
                "SELECT rowid, snippet(page, 2, '[', ']', '…', 12) FROM page WHERE page MATCH ?",
                (expression,),
            ).fetchall()
        return dict(found)

    def _page_table(self) -> sqlite3.Connection:
        if self._page is None:
            self._page = sqlite3.connect(":memory:", check_same_thread=False)
            self._page.execute(_FTS.replace("fts USING", "page USING"))
        return self._page

    def object_ids(
        self, after: str | None, limit: int, types: Iterable[str] | None = None
    ) -> list[str]:
        """Up to ``limit`` indexed object ids greater than ``after``, in order (of these
        ``types`` only, when given): a keyset page read off an index, one seek per type, whose
        cost does not grow with the graph."""
        if types is None:
            rows = self.db.execute(
                "SELECT id FROM docs INDEXED BY docs_id WHERE id > ? AND kind = 'object' "
                "ORDER BY id LIMIT ?",
                (after or "", limit),
            )
            return [r[0] for r in rows]
        per_type = [
            [
                r[0]
                for r in self.db.execute(
                    "SELECT id FROM docs INDEXED BY docs_type_id WHERE type = ? AND id > ? "
                    "AND kind = 'object' ORDER BY id LIMIT ?",
                    (name, after or "", limit),
                )
            ]
            for name in types
        ]
        return list(heapq.merge(*per_type))[:limit]

    def object_hits(
        self, terms: list[str], *, each: int = 3, together: int = 10, max_docs: int = 2000
    ) -> list[Hit]:
        """Objects that word ``terms`` find, for a quick lookup (the prompt hook): the best
        ``each`` per term and the best ``together`` for all of them. Common terms are left
        out — those matching more than 5% of the documents, or ``max_docs`` (stemmed and as a
        prefix, as the index matches them): they would find everything, and ranking them is
        what costs. Unranked and not deduplicated; no relations or snippets."""
        terms = [t for t in terms if _TOKEN.fullmatch(t)]
        total = self.db.execute("SELECT max(rowid) FROM docs").fetchone()[0] or 1
        cap = int(min(max(COMMON * total, COMMON_MIN_DOCS), max_docs))
        count = "SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ? LIMIT ?)"
        rare = [
            t
            for t in terms
            if 0
            < self.db.execute(count, (_match_expression([t], prefix=5), cap + 1)).fetchone()[0]
            <= cap
        ]
        weights = ", ".join(str(w) for w in _WEIGHTS)
        sql = (
            f"SELECT d.id, d.type, d.title, d.private, -bm25(fts, {weights}) AS score "
            "FROM fts JOIN docs d ON d.rowid = fts.rowid WHERE fts MATCH ? AND d.kind = 'object' "
            "ORDER BY score DESC LIMIT ?"
        )
        queries = [(_match_expression([t], prefix=5), each) for t in rare]
        if len(rare) > 1:
            queries.append((_match_expression(rare, prefix=5), together))
        hits = []
        for expression, limit in queries:
            for id_, type_, title, private, score in self.db.execute(sql, (expression, limit)):
                hits.append(Hit(id_, type_, title, float(score), title, "object", bool(private)))
        return hits

    def objects_matching(self, term: str, cap: int) -> int:
        """How many objects ``term`` finds (as :meth:`object_hits` matches it), counted up to
        ``cap + 1``."""
        sql = (
            "SELECT count(*) FROM (SELECT 1 FROM fts JOIN docs d ON d.rowid = fts.rowid "
            "WHERE fts MATCH ? AND d.kind = 'object' LIMIT ?)"
        )
        return int(
            self.db.execute(sql, (_match_expression([term], prefix=5), cap + 1)).fetchone()[0]
        )

    def _relation_labels_of(self, ids: list[str]) -> dict[str, list[str]]:
        """Up to 10 relation labels per object id, all read in one statement."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        one = (
            "SELECT * FROM (SELECT ? AS hit, from_id, rel, to_id, title FROM docs "
            "WHERE kind = 'relation' AND (from_id = ? OR to_id = ?) "
            "ORDER BY rel, from_id, to_id LIMIT 10)"
        )
        labels: dict[str, list[str]] = {i: [] for i in ids}
        rows = []
        for i in range(0, len(ids), 200):  # SQLite allows 500 terms in a compound select
            chunk = ids[i : i + 200]
            sql = " UNION ALL ".join([one] * len(chunk))
            rows += self.db.execute(sql, [v for i in chunk for v in (i, i, i)]).fetchall()
        rows.sort(key=lambda r: (r[2], r[1], r[3]))
        for hit, from_id, rel, _to_id, title in rows:
            left, _, right = title.partition(" → ")
            labels[hit].append(f"{rel} → {right}" if from_id == hit else f"{rel} ← {left}")
        return labels

    def _relation_labels(self, hit: Hit) -> list[str]:
        if hit.kind != "object":
            return []
        return self._relation_labels_of([hit.id])[hit.id]


def js_lower(text: str) -> str:
    """Lower-cased as JavaScript's ``String.prototype.toLowerCase`` does it, as closely as
    Python allows: both apply Unicode's full, locale-free mappings (``"İ"`` → ``"i̇"``, two
    code points; a final capital sigma → ``"ς"``). They differ only where the runtimes' Unicode
    versions differ (characters cased in one version and not the other), and JavaScript works
    on UTF-16 code units where Python works on code points — the same substring test for any
    well-formed text; a lone surrogate is left as it is by both."""
    return text.lower()


def _substring_row(doc: dict[str, Any]) -> tuple[str, str, str, str, str]:
    """The ``subs`` row of an object's document — name, rest, vals — and its ``views`` row
    — shown, view (see :data:`_SUBS`)."""
    return _substring_values(doc["memory_name"], doc["memory_type"], doc["observations"])


def _substring_values(
    name: str, type_: str, observations: list[str]
) -> tuple[str, str, str, str, str]:
    """The ``subs`` and ``views`` rows of an object whose drop-in view is ``name``,
    ``type_`` and ``observations``."""
    written = [type_, *observations]
    values = [js_lower(v) for v in (name, *written)]
    rest = _searchable("\n".join(values[1:]))
    view = json.dumps(written, ensure_ascii=False)
    return _searchable(values[0]), rest, json.dumps(values), name, view


def _in_written_order(observations: list[str], order: str | None) -> list[str]:
    """The observations (sorted) in the order ``order`` keeps — the first 12 hex digits of
    each one's SHA-256, oldest first — those it does not list following, sorted: as
    :func:`ontoloom.model.in_written_order` reads them (that floor is not imported here)."""
    rank = {d: i for i, d in enumerate((order or "").split())}
    if not rank:
        return sorted(observations)
    return sorted(
        sorted(observations),
        key=lambda o: rank.get(hashlib.sha256(o.encode("utf-8")).hexdigest()[:12], len(rank)),
    )


def _searchable(text: str) -> str:
    # FTS5 stops reading a text at a NUL: it is indexed (and looked for) as U+FFFD, which
    # keeps every substring a substring; the exact test reads the values themselves.
    return text.replace("\x00", "\ufffd")


def _filters(types: list[str], tags: list[str], rel: str | None) -> tuple[str, list[Any]]:
    where, params = [], []
    if types:
        where.append(f"d.type IN ({', '.join('?' * len(types))})")
        params += types
    for tag in tags:
        # The tags table holds a document's own tags; those implied by its kind are read off
        # its columns, as _implied_tags makes them.
        where.append(
            "(EXISTS (SELECT 1 FROM tags t WHERE t.rowid = d.rowid AND t.tag = ?) OR CASE d.kind "
            "WHEN 'object' THEN ? IN ('ontology', 'entity', py_lower(d.type)) "
            "ELSE ? IN ('edge', py_lower('edge:' || d.from_id), py_lower('edge:' || d.to_id), "
            "py_lower(d.rel)) END)"
        )
        params += [tag, tag, tag]
    if rel:
        where.append(
            "(d.kind = 'object' AND EXISTS (SELECT 1 FROM docs r WHERE r.kind = 'relation' AND r.rel = ? "
            "AND (r.from_id = d.id OR r.to_id = d.id)) OR (d.kind = 'relation' AND d.rel = ?))"
        )
        params += [rel, rel]
    return "".join(f" AND {w}" for w in where), params


def touched_by(delta: Delta) -> set[Term]:
    """The nodes whose documents a delta can change: subjects, and the objects of relations;
    and the versions it writes, ends or erases (the subjects of its history quads)."""
    touched: set[Term] = set()
    for quad in (*delta.adds, *delta.removes):
        if quad.graph_name == HISTORY:
            touched.add(as_term(quad.subject))
            continue
        if quad.graph_name in (META, SCHEMA_GRAPH, PROPOSALS):
            continue
        touched.add(as_term(quad.subject))
        if isinstance(quad.object, NamedNode) and quad.predicate != RDF_TYPE:
            touched.add(quad.object)
    return touched


def _relation_doc(
    titles: dict[str, str], private: set[str], from_id: str, rel: str, to_id: str
) -> tuple[str, str, str, str, str, str, list[str], bool, tuple[str, str, str]]:
    """The document of one relation, labelled with both ends' titles: private when either
    end is, since its label carries a private end's title."""
    return (
        f"relation:{from_id}\n{rel}\n{to_id}",
        "relation",
        f"{from_id} {rel} {to_id}",
        "relation",
        f"{titles.get(from_id, from_id)} → {titles.get(to_id, to_id)}",
        f"{from_id} {rel} {to_id} {rel.replace('_', ' ').replace('-', ' ')}",
        [],
        from_id in private or to_id in private,
        (from_id, rel, to_id),
    )


def _implied_tags(kind: str, type_: str, ends: tuple[str | None, ...]) -> list[str]:
    """The tags every document of its kind carries: searchable, and filtered on by
    :func:`_filters` from the document's columns (so the tags table need not hold them —
    they were nine in ten of its rows)."""
    if kind == "object":
        return ["ontology", "entity", type_.lower()]
    from_id, rel, to_id = ends
    return ["edge", f"edge:{from_id}", f"edge:{to_id}", str(rel)]


def _add_end_titles(
    backend: Backend,
    ids: Any,
    titles: dict[str, str],
    private: set[str],
    edges: Sequence[tuple[str, ...]],
) -> None:
    """Add the titles (and privacy) of the relations' ends that ``titles`` lacks (their
    labels name both)."""
    missing = {end for edge in edges for end in (edge[0], edge[2]) if end not in titles}
    described = _describe(backend, ids, [ids.iri(m) for m in missing])
    titles.update({o["id"]: o["title"] for o in described.values()})
    private.update(o["id"] for o in described.values() if o["private"])


def _describe(backend: Backend, ids: Any, nodes: list[Term]) -> dict[Term, dict[str, Any]]:
    out: dict[Term, dict[str, Any]] = {}
    for i in range(0, len(nodes), 400):
        listed = " ".join(str(n) for n in nodes[i : i + 400])
        if not listed:
            continue
        rows = backend.select(
            f"SELECT ?s ?p ?o ?g WHERE {{ VALUES ?s {{ {listed} }} GRAPH ?g {{ ?s ?p ?o }} "
            f"FILTER(?g != {META} && (?p = {RDF_TYPE} || (isLiteral(?o) && "
            f"STRSTARTS(STR(?p), {json.dumps(OL)})))) }}"
        )
        # literals as written, as the whole-index scan reads them
        quads = backend.as_written(Quad(r["s"], r["p"], r["o"], r["g"]) for r in rows)
        out.update(
            _describe_rows(
                ids, ((as_term(q.subject), q.predicate, as_term(q.object)) for q in quads), None
            )
        )
    return out


def _describe_rows(
    ids: Any, rows: Iterable[tuple[Term, Term, Term]], wanted: set[Term] | None
) -> dict[Term, dict[str, Any]]:
    """Each node's document fields from its type and ``ol:`` literal rows (only the
    ``wanted`` nodes, when given)."""
    props: dict[Term, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    types: dict[Term, list[str]] = defaultdict(list)
    for s, p, o in rows:
        if wanted is not None and s not in wanted:
            continue
        if p == RDF_TYPE:
            if o.value.startswith(OL):
                types[s].append(o.value[len(OL) :])
        elif isinstance(o, Literal):
            props[s][p.value[len(OL) :]].append(o.value)
    return _documents(ids, types, props)


def _documents(
    ids: Any, types: dict[Term, list[str]], props: dict[Term, dict[str, list[str]]]
) -> dict[Term, dict[str, Any]]:
    """Each node's document fields from its ``ol:`` types and literal values."""
    out: dict[Term, dict[str, Any]] = {}
    no_values: dict[str, list[str]] = {}
    for node in {*types, *props}:
        fields = props.get(node, no_values)
        id_ = ids.id_of(node)
        kind, title, body, tags, private = _fields_of(id_, types.get(node, ()), fields)
        name, memory_type, observations = _memory_view(id_, kind, fields)
        said = None
        if kind in QUOTED_TYPES and fields.get("body"):
            said = (
                (fields.get("source") or [id_])[0],
                next(iter(fields.get("date", [])), None),
                ",".join(fields.get("privacy", [])),
                "\n\n".join(fields["body"]),
            )
        out[node] = {
            "memory_name": name,
            "memory_type": memory_type,
            "observations": observations,
            "id": id_,
            "type": kind,
            "title": title,
            "body": body,
            "tags": tags,
            "private": private,
            "said": said,
        }
    return out


def _fields_of(
    id_: str, type_names: Iterable[str], fields: dict[str, list[str]]
) -> tuple[str, str, str, list[str], bool]:
    """An object's kind, title, body, tags and whether it is private, from its ``ol:`` type
    names and literal values by local name — one definition for the per-object route
    (:func:`_documents`) and the whole build (:func:`_object_fields`)."""
    kinds = sorted(t for t in type_names if t not in _KIND_SKIPPED)
    title = next((fields[k][0] for k in _TITLE_KEYS if fields.get(k)), id_)
    body = " ".join(
        v
        for k, vs in sorted(fields.items())
        if k not in ("tags", "privacy")
        for v in vs
        if v != title
    )
    kind = kinds[0] if kinds else ""
    tags = [*fields.get("tags", ()), *fields.get("aliases", ())] if kind else []
    privacy = (fields.get("privacy") or [""])[0].lower()
    return kind, title, body, [t for t in tags if t], privacy == "private"


def _record_passages(obj: dict[str, Any]) -> list[SaidRow]:
    """The passages of a record's body (rules, runbooks, decisions), its title as their
    context."""
    if obj.get("said") is None:
        return []
    path, at, privacy, body = obj["said"]
    title = obj["title"]
    return [("record", obj["id"], path, at, privacy, text, title) for text in statements(body)]


_TYPE, _UNSEEN = object(), object()  # markers of _scan's predicates
_NO_ENDS = (None, None, None, None)  # an object's from_id, rel, to_id and words
_KIND_SKIPPED = ("Entity", "Object", "Record")


class _Scanned(NamedTuple):
    """What :func:`_scan` keeps of every quad: each typed instance's ``ol:`` types and
    literal values (by local name), and every relation between two instances with its words."""

    types: dict[Term, list[str]]
    props: dict[Term, dict[str, list[str]]]
    edges: list[tuple[str, str, str, str]]


def _scan(quads: Iterable[Quad], ids: Any) -> _Scanned:
    """From every quad: the types and values of every typed instance (what
    :func:`_describe_rows` reads) and every relation between two instances with its words
    (what :func:`_edges` finds for them all). One pass, written for speed: it reads every
    quad."""
    base, ol, cut = ids.base, OL, len(OL)
    is_instance = ids.is_instance
    typed: set[Term] = set()
    types: dict[Term, list[str]] = {}
    props: dict[Term, dict[str, list[str]]] = {}
    links: set[tuple[NamedNode, NamedNode, NamedNode]] = set()
    wordings: dict[str, str] = {}
    # What each predicate is, decided once: rdf:type (_TYPE), an ol: property (its local
    # name) or neither (None). A subject's quads come together: it is judged once per run.
    local_of: dict[NamedNode, object] = {}
    last: object = None
    instance = False
    fields: dict[str, list[str]] | None = None  # the current subject's values
    for quad in quads:
        s = quad.subject
        if s != last:
            last = s
            # under the base (the common case, tested first for speed) or an object's own IRI
            instance = type(s) is NamedNode and (s.value.startswith(base) or is_instance(s))
            fields = None
        if not instance:
            if (
                type(s) is NamedNode
                and quad.predicate == RDFS_LABEL
                and s.value.startswith(WORDING_PREFIX)
            ):
                wordings[s.value] = as_term(quad.object).value
            continue
        s = cast(NamedNode, s)  # an instance: a named node (judged above)
        p = quad.predicate
        local = local_of.get(p, _UNSEEN)
        if local is _UNSEEN:
            name = p.value
            local = _TYPE if p == RDF_TYPE else name[cut:] if name.startswith(ol) else None
            local_of[p] = local
        if local is None:
            continue
        o = quad.object
        if local is _TYPE:
            typed.add(s)
            kind = as_term(o).value
            if kind.startswith(ol):
                found = types.get(s)
                if found is None:
                    types[s] = [kind[cut:]]
                else:
                    found.append(kind[cut:])
        elif type(o) is Literal:
            if fields is None:
                fields = props.get(s)
                if fields is None:
                    fields = props[s] = {}
            values = fields.get(cast(str, local))
            if values is None:
                fields[cast(str, local)] = [o.value]
            else:
                values.append(o.value)
        elif type(o) is NamedNode and (o.value.startswith(base) or is_instance(o)):
            links.add((s, p, o))
    props = {n: v for n, v in props.items() if n in typed}
    ids_of: dict[Term, str] = {}
    for start, _, end in links:
        for n in (start, end):
            if n not in ids_of:
                ids_of[n] = ids.id_of(n)
    found_edges: dict[tuple[str, str, str], str] = {}
    named: dict[NamedNode, tuple[str, bool]] = {}  # per predicate: its name, whether open
    for start, p, end in links:
        if p not in named:
            named[p] = (vocab_name(p), is_open_relation(p))  # an open relation by its words
        rel, is_open = named[p]
        words = (
            wordings.get(wording_iri(start, p, end).value, rel)
            if wordings and not is_open  # (no words kept for any relation: no hash to take)
            else rel
        )
        found_edges[ids_of[start], rel, ids_of[end]] = words
    edges = sorted((*edge, words) for edge, words in found_edges.items())
    return _Scanned(types, props, edges)


# An object's fields as the whole build needs them: (id, kind, title, body, tags, its values
# by local name, private).
_ObjectFields = tuple[str, str, str, str, list[str], dict[str, list[str]], bool]


def _object_fields(scanned: _Scanned, ids: Any) -> list[_ObjectFields]:
    """The fields :func:`_documents` makes, of every scanned node, ordered by id."""
    types, props = scanned.types, scanned.props
    out: list[_ObjectFields] = []
    no_values: dict[str, list[str]] = {}
    id_of = ids.id_of
    for node in {*types, *props}:
        fields = props.get(node, no_values)
        id_ = id_of(node)
        kind, title, body, tags, private = _fields_of(id_, types.get(node, ()), fields)
        out.append((id_, kind, title, body, tags, fields, private))
    out.sort(key=lambda o: o[0])
    return out


def _memory_view(id_: str, kind: str, fields: dict[str, list[str]]) -> tuple[str, str, list[str]]:
    """The drop-in's view of an object (ontoloom.memory's _node), as :func:`_documents`
    makes it: its name, entityType and observations."""
    name = next((fields[k][0] for k in ("name", "title") if len(fields.get(k, ())) == 1), id_)
    kinds_written = fields.get("kind", [])
    return (
        name,
        kinds_written[0] if len(kinds_written) == 1 else kind,
        _in_written_order(
            fields.get(_OBSERVATIONS, []), next(iter(fields.get(_OBSERVATION_ORDER, ())), None)
        ),
    )


def _record_passages_of(
    id_: str, title: str, kind: str, fields: dict[str, list[str]]
) -> list[SaidRow]:
    """:func:`_record_passages` from an object's fields."""
    if kind not in QUOTED_TYPES or not fields.get("body"):
        return []
    path = (fields.get("source") or [id_])[0]
    at = next(iter(fields.get("date", [])), None)
    privacy = ",".join(fields.get("privacy", []))
    body = "\n\n".join(fields["body"])
    return [("record", id_, path, at, privacy, text, title) for text in statements(body)]


def _edges(backend: Backend, ids: Any, nodes: list[Term]) -> list[tuple[str, str, str, str]]:
    """The relations between two instances with one end among ``nodes``: (from, rel, to,
    words), ``words`` the relationType the drop-in shows (:data:`_SUBS`)."""
    edges: set[tuple[str, str, str]] = set()
    named: dict[Term, tuple[str, str, str]] = {}  # wording node → edge, for typed relations
    for i in range(0, len(nodes), 400):
        listed = " ".join(str(n) for n in nodes[i : i + 400])
        if not listed:
            continue
        query = (
            f"SELECT ?s ?p ?o WHERE {{ VALUES ?n {{ {listed} }} {{ ?n ?p ?o BIND(?n AS ?s) }} UNION "
            f"{{ ?s ?p ?n BIND(?n AS ?o) }} FILTER(isIRI(?o) && ?p != {RDF_TYPE} && STRSTARTS(STR(?p), {json.dumps(OL)})) }}"
        )
        for row in backend.select(query):
            s, p, o = row["s"], row["p"], row["o"]
            if ids.is_instance(s) and ids.is_instance(o):
                edge = (ids.id_of(s), vocab_name(p), ids.id_of(o))
                edges.add(edge)
                if not is_open_relation(p):
                    named[wording_iri(s, p, o)] = edge
    words = {edge: edge[1] for edge in edges}
    wording_nodes = list(named)
    for i in range(0, len(wording_nodes), 400):
        listed = " ".join(str(n) for n in wording_nodes[i : i + 400])
        rows = backend.select(
            f"SELECT ?w ?l WHERE {{ VALUES ?w {{ {listed} }} ?w {RDFS_LABEL} ?l }}"
        )
        for row in rows:
            words[named[row["w"]]] = row["l"].value
    return sorted((*edge, w) for edge, w in words.items())
