"""ERM4's Memory Knowledge Reservoir: a persistent, process-safe cache of title-content pairs.

The reservoir (paper section 3.3) is a set of knowledge instances, each a title-content
pair; adding an instance whose title is already stored replaces the older one. The
Retrieval Trigger (section 3.4) reads it through :meth:`Reservoir.lookup`: for a query,
popularity is the number of entries whose *title* has cosine similarity >= tau with the
query.

Storage: one SQLite file in WAL mode, title embeddings as float32 blobs beside the text. Not
a Chroma collection: Chroma's embedded ``PersistentClient`` is not process-safe (each process
keeps its own in-memory HNSW segment; chroma-core/chroma #3769, #3792). SQLite gives:

- every write is one ``BEGIN IMMEDIATE`` transaction (one writer at a time across
  processes and threads; others wait up to ``busy_timeout``), so concurrent runs never
  lose or interleave half an update;
- readers never block writers (WAL) and always see whole committed writes;
- a write counter (``meta.seq``) lets each process reload only the rows changed since
  its last read, so the title matrix used for popularity stays in memory between runs.

Bounded size: with a bound (the reservoir's ``max_entries``, or the one a write passes), every
:meth:`Reservoir.add` that leaves more entries in the collection evicts, in the same
transaction, the least recently used ones: ``used_at`` is set when an entry is stored, replaced
or stored again unchanged, and bumped by :meth:`Reservoir.touch` when the Knowledge Filter keeps
what the Retrieval Trigger served (ties: the oldest write first). An entry just added is never
evicted by its own write unless one call adds more than the bound (the newest stay).
Popularity is a brute-force cosine over all titles (numpy), exact and fast for reservoirs of
tens of thousands of entries; vectors of another size than the stored ones are refused.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from ..errors import ConfigError, StoreError
from ..state.types import Passage
from .embeddings import MiniLMEmbeddings, embed_queries, embed_texts, embedder_id, same_embedder
from .reservoir_entries import latest_by_title, memory_passage, title_key, where_json, where_of

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    collection TEXT NOT NULL,
    title_key  TEXT NOT NULL,
    title      TEXT NOT NULL,
    content    TEXT NOT NULL,
    source     TEXT NOT NULL DEFAULT '',
    vec        BLOB NOT NULL,
    seq        INTEGER NOT NULL,
    updated_at REAL NOT NULL,
    used_at    REAL NOT NULL DEFAULT 0,
    place      TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (collection, title_key)
);
CREATE INDEX IF NOT EXISTS entries_seq ON entries (collection, seq);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def default_reservoir_path() -> str:
    from ..settings import data_dir

    return str(data_dir() / "erm4" / "reservoir.sqlite3")


_OWN: Any = object()  # Reservoir.add: the reservoir's own bound

class Reservoir:
    """Title-content pairs in one SQLite file, shared safely by processes and threads.

    ``embeddings`` (any LangChain embeddings; MiniLM by default) embeds titles when
    entries are added and queries at lookup; the file records which embeddings built it
    and refuses another.
    """

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        *,
        collection: str = "default",
        embeddings: Any = None,
        busy_timeout_s: float = 60.0,
        max_entries: int | None = None,
    ):
        self.path = str(Path(path or default_reservoir_path()).expanduser())
        self.collection = collection or "default"
        self.embeddings = embeddings = MiniLMEmbeddings() if embeddings is None else embeddings
        self.embedding_name = embedder_id(embeddings)  # the model's name too (the class's alone until 2026-11-30)
        self.busy_timeout_s = float(busy_timeout_s)
        if max_entries is not None and int(max_entries) < 1:
            raise ConfigError(f"reservoir max_entries must be >= 1 (or None for no bound), got {max_entries!r}")
        self.max_entries = None if max_entries is None else int(max_entries)
        self._local = threading.local()
        self._cache_lock = threading.RLock()
        # in-memory mirror of this collection's titles and vectors
        self._keys: list[str] = []
        self._index: dict[str, int] = {}
        self._vecs = np.zeros((0, 0), dtype=np.float32)
        self._seen_seq = -1
        try:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            con = self._con()
            with con:
                con.executescript(_SCHEMA)
            self._write(self._migrate)
        except (sqlite3.Error, OSError) as e:  # a folder that cannot be made or written, too
            raise StoreError(f"cannot open the reservoir at {self.path}: {e}") from e
        self._check_embeddings()

    # ---------------------------------------------------------------- connection
    def _con(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
            con.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
            mode = con.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":  # e.g. a network file system
                raise StoreError(f"the reservoir at {self.path} cannot use WAL mode (got {mode!r})")
            con.execute("PRAGMA synchronous = NORMAL")
            self._local.con = con
        return con

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None

    def _write(self, fn):
        """Run ``fn(con)`` in one BEGIN IMMEDIATE transaction (one writer at a time)."""
        con = self._con()
        try:
            con.execute("BEGIN IMMEDIATE")
            try:
                out = fn(con)
                con.execute("COMMIT")
                return out
            except BaseException:
                con.execute("ROLLBACK")
                raise
        except sqlite3.Error as e:
            raise StoreError(f"cannot write to the reservoir at {self.path}: {e}") from e

    @staticmethod
    def _migrate(con: sqlite3.Connection) -> None:
        """Files written before ``used_at`` existed gain the column (their entries count as unused),
        and before ``place`` (an entry's url, path and page; 2026-12-01) that one (none stored)."""
        cols = {r[1] for r in con.execute("PRAGMA table_info(entries)")}
        if "used_at" not in cols:
            con.execute("ALTER TABLE entries ADD COLUMN used_at REAL NOT NULL DEFAULT 0")
        if "place" not in cols:
            con.execute("ALTER TABLE entries ADD COLUMN place TEXT NOT NULL DEFAULT ''")
        con.execute("CREATE INDEX IF NOT EXISTS entries_used ON entries (collection, used_at, seq)")

    def _check_embeddings(self) -> None:
        key = f"embedding:{self.collection}"

        def claim(con):
            row = con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            if row is None:
                con.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (key, self.embedding_name))
                return self.embedding_name
            return row[0]

        stored = self._write(claim)
        if not same_embedder(stored, self.embedding_name):
            raise ConfigError(
                f"reservoir collection {self.collection!r} at {self.path} was built with embeddings "
                f"{stored!r}, not {self.embedding_name!r}; use the same embeddings or another collection"
            )

    # ---------------------------------------------------------------- writing
    def add(self, passages: Iterable[Passage], *, max_entries: Any = _OWN) -> dict[str, int]:
        """Store title-content pairs; a pair replaces the stored one with the same title. Pairs
        without a title are skipped (the title is the entry's identity and the trigger's key);
        within one call the first pair of a title wins (ERM4 writes best first). With a bound
        (``max_entries``: this write's, None or 0 for none; default the reservoir's own), the least
        recently used entries beyond it are evicted in the same transaction. Returns counts
        ``{"added", "replaced", "unchanged", "skipped", "evicted"}``."""
        # 0 is no bound, as the reservoir_max_entries setting reads it (it kept one entry until 2026-12-01)
        bound = self.max_entries if max_entries is _OWN else (int(max_entries or 0) or None)
        if bound is not None and bound < 0:
            raise ConfigError(f"reservoir max_entries must be >= 1, or 0 / None for no bound, got {max_entries!r}")
        latest, skipped = latest_by_title(passages)
        counts = {"added": 0, "replaced": 0, "unchanged": 0, "skipped": skipped, "evicted": 0}
        if not latest:
            return counts
        items = list(latest.items())
        vecs = self._sized(embed_texts(self.embeddings, [" ".join(p["title"].split()) for _, p in items]))

        def write(con):
            seq = self._next_seq(con, len(items))
            now = time.time()
            for i, ((k, p), v) in enumerate(zip(items, vecs)):
                old = con.execute(
                    "SELECT title, content, place FROM entries WHERE collection = ? AND title_key = ?",
                    (self.collection, k),
                ).fetchone()
                title = " ".join(p["title"].split())
                text = p["text"].strip()
                place = where_json(p)
                if old is not None and old[0] == title and old[1] == text and old[2] == place:
                    counts["unchanged"] += 1
                    con.execute("UPDATE entries SET used_at = ? WHERE collection = ? AND title_key = ?",
                                (now, self.collection, k))
                    continue
                counts["replaced" if old is not None else "added"] += 1
                con.execute(
                    "INSERT INTO entries (collection, title_key, title, content, source, vec, seq, updated_at, used_at, place) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (collection, title_key) DO UPDATE SET title = excluded.title, "
                    "content = excluded.content, source = excluded.source, vec = excluded.vec, "
                    "seq = excluded.seq, updated_at = excluded.updated_at, used_at = excluded.used_at, place = excluded.place",
                    (self.collection, k, title, text, str(p.get("source") or ""), v.tobytes(), seq + i, now, now, place),
                )
            counts["evicted"] = self._evict(con, bound)

        self._write(write)
        return counts

    def _evict(self, con: sqlite3.Connection, bound: int | None) -> int:
        """Delete the least recently used entries beyond ``bound`` (inside a write)."""
        if bound is None:
            return 0
        total = con.execute("SELECT COUNT(*) FROM entries WHERE collection = ?", (self.collection,)).fetchone()[0]
        extra = int(total) - bound
        if extra <= 0:
            return 0
        con.execute(
            "DELETE FROM entries WHERE collection = ? AND title_key IN (SELECT title_key FROM entries "
            "WHERE collection = ? ORDER BY used_at, seq LIMIT ?)",
            (self.collection, self.collection, extra),
        )
        self._next_seq(con, 1)  # readers notice the removal and reload
        return extra

    def touch(self, titles: Iterable[str]) -> None:
        """Mark entries as used now (the eviction order); unknown titles are ignored."""
        keys = sorted({title_key(t) for t in titles if title_key(t)})
        if not keys:
            return
        now = time.time()
        self._write(lambda con: con.executemany(
            "UPDATE entries SET used_at = ? WHERE collection = ? AND title_key = ?",
            [(now, self.collection, k) for k in keys],
        ))

    def _next_seq(self, con: sqlite3.Connection, n: int) -> int:
        row = con.execute("SELECT value FROM meta WHERE key = 'seq'").fetchone()
        start = int(row[0]) + 1 if row else 1
        con.execute(
            "INSERT INTO meta (key, value) VALUES ('seq', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(start + n - 1),),
        )
        return start

    def clear(self) -> int:
        """Remove every entry of this collection; returns how many were removed."""

        def wipe(con):
            n = con.execute("DELETE FROM entries WHERE collection = ?", (self.collection,)).rowcount
            self._next_seq(con, 1)
            return n

        n = self._write(wipe)
        with self._cache_lock:
            self._keys, self._index, self._vecs, self._seen_seq = [], {}, np.zeros((0, 0), np.float32), -1
        return int(n)

    # ---------------------------------------------------------------- reading
    def count(self) -> int:
        row = self._con().execute("SELECT COUNT(*) FROM entries WHERE collection = ?", (self.collection,)).fetchone()
        return int(row[0])

    def _entry(self, con: sqlite3.Connection, key: str, score: float | None = None) -> Passage | None:
        """The stored entry of a title key as a passage (None: not there, or removed since the sync)."""
        r = con.execute("SELECT title, content, source, place FROM entries WHERE collection = ? AND title_key = ?",
                        (self.collection, key)).fetchone()
        return None if r is None else self._passage(r[0], r[1], r[2], r[3], score)

    def get(self, title: str) -> Passage | None:
        return self._entry(self._con(), title_key(title))

    def all_entries(self) -> list[Passage]:
        rows = self._con().execute(
            "SELECT title, content, source, place FROM entries WHERE collection = ? ORDER BY seq", (self.collection,)
        ).fetchall()
        return [self._passage(*r) for r in rows]

    @staticmethod
    def _passage(title: str, content: str, source: str, place: str, score: float | None = None) -> Passage:
        return memory_passage(title, content, source, score, where_of(place))

    def _sync(self) -> None:
        """Bring the in-memory title matrix up to date with the file (changed rows only: :meth:`_reload`)."""
        con = self._con()
        with self._cache_lock:
            row = con.execute("SELECT value FROM meta WHERE key = 'seq'").fetchone()
            seq = int(row[0]) if row else 0
            if seq == self._seen_seq:
                return
            con.execute("BEGIN")  # one consistent snapshot for the reads below
            try:
                self._reload(con)
            finally:
                con.execute("COMMIT")

    def _reload(self, con: sqlite3.Connection) -> None:
        """The rows written since the last read: a replaced title's row changed, a new one
        appended, rows of titles removed elsewhere (eviction) dropped by key (the whole matrix
        was built again, and on eviction read again from the file, until 2026-11-30)."""
        row = con.execute("SELECT value FROM meta WHERE key = 'seq'").fetchone()
        seq = int(row[0]) if row else 0
        rows = con.execute(
            "SELECT title_key, vec FROM entries WHERE collection = ? AND seq > ?",
            (self.collection, self._seen_seq),
        ).fetchall()
        total = int(con.execute("SELECT COUNT(*) FROM entries WHERE collection = ?", (self.collection,)).fetchone()[0])
        keys, index, mat = list(self._keys), dict(self._index), self._vecs
        added: list[np.ndarray] = []
        for k, blob in rows:
            v, i = np.frombuffer(blob, dtype=np.float32), index.get(k)
            v = v / (np.linalg.norm(v) + 1e-9)
            if i is None:
                index[k] = len(keys)
                keys.append(k)
                added.append(v)
            elif i < len(mat):
                mat = mat.copy() if mat is self._vecs else mat  # readers hold the old one
                mat[i] = v
            else:  # a title added and replaced in the same batch
                added[i - len(mat)] = v
        if added:
            mat = np.vstack([mat, *added]) if mat.size else np.vstack(added)
        if len(keys) != total:  # entries removed elsewhere (evicted): their rows go
            present = {k for (k,) in con.execute("SELECT title_key FROM entries WHERE collection = ?", (self.collection,))}
            keep = [i for i, k in enumerate(keys) if k in present]
            keys, index = [keys[i] for i in keep], {keys[i]: n for n, i in enumerate(keep)}
            mat = mat[keep] if len(keep) else np.zeros((0, 0), np.float32)
        self._keys, self._index, self._vecs, self._seen_seq = keys, index, mat.astype(np.float32, copy=False), seq

    def _sized(self, vecs: np.ndarray, mat: np.ndarray | None = None) -> np.ndarray:
        """``vecs`` as float32, or a ConfigError when the stored titles' vectors have another size
        (an embeddings object without a ``name`` of its own, changed under the same collection)."""
        if mat is None:
            self._sync()
            mat = self._vecs
        if mat.size and vecs.size and vecs.shape[1] != mat.shape[1]:
            raise ConfigError(f"reservoir collection {self.collection!r} at {self.path} holds {mat.shape[1]}-dimensional "
                              f"vectors, these embeddings give {vecs.shape[1]}; use the same embeddings or another "
                              "reservoir_collection")
        return vecs.astype(np.float32)

    def title_similarities(self, queries: Sequence[str]) -> tuple[list[str], np.ndarray]:
        """Cosine similarity of each query with every stored title: (title keys, [n_q, n_titles])."""
        self._sync()
        with self._cache_lock:
            keys, mat = list(self._keys), self._vecs
        if not queries:
            return keys, np.zeros((0, len(keys)), np.float32)
        if not keys:
            return keys, np.zeros((len(queries), 0), np.float32)
        q = self._sized(embed_queries(self.embeddings, list(queries)), mat)
        q = q / (np.linalg.norm(q, axis=1, keepdims=True) + 1e-9)
        return keys, q @ mat.T

    def popularity(self, queries: Sequence[str], tau: float) -> list[int]:
        """Pop(q) = |{k in K : cos(q, title(k)) >= tau}| for each query."""
        _, sims = self.title_similarities(queries)
        return [int((row >= tau).sum()) for row in sims]

    def lookup(self, queries: Sequence[str], tau: float, k: int) -> list[tuple[int, list[Passage]]]:
        """For each query: its popularity and up to ``k`` entries with title similarity >= tau.

        The entries come best first, ``score`` = the title's cosine similarity.
        """
        keys, sims = self.title_similarities(queries)
        out: list[tuple[int, list[Passage]]] = []
        con = self._con()
        for row in sims:
            hits = np.flatnonzero(row >= tau)
            order = hits[np.argsort(-row[hits], kind="stable")][: max(0, int(k))]
            entries = [e for i in order if (e := self._entry(con, keys[i], float(row[i]))) is not None]
            out.append((int(hits.size), entries))
        return out

    def nearest(self, queries: Sequence[str], m: int) -> list[list[Passage]]:
        """Per query, the ``m`` entries with the most similar titles, best first (the evaluator trigger's)."""
        keys, sims = self.title_similarities(queries)
        if not keys:
            return [[] for _ in queries]
        return [self.entries_for([keys[i] for i in np.argsort(-row, kind="stable")[: max(1, int(m))]]) for row in sims]

    def entries_for(self, keys: Sequence[str]) -> list[Passage]:
        """The stored entries for title keys (in that order; removed ones are skipped)."""
        con = self._con()
        return [e for k in keys if (e := self._entry(con, k)) is not None]


_OPEN: dict[tuple[str, str, Any], Reservoir] = {}
MAX_OTHER = 16  # reservoirs kept open for embedders other than the packaged MiniLM
_OPEN_LOCK = threading.Lock()


def open_reservoir(
    path: str | None = None, *, collection: str = "default", embeddings: Any = None, max_entries: int | None = None
) -> Reservoir:
    """A process-wide cached :class:`Reservoir` per (file, collection, embedder), shared by
    every run of the process; ``max_entries`` (None: unbounded) is the bound of one newly
    opened. A run passes its own to :meth:`Reservoir.add`: setting it on the shared object let
    one run's bound evict for every run (until 2026-11-30).

    The packaged MiniLM is one embedder whichever object carries it (each ``Components`` makes
    its own, and each opened one more reservoir, kept for the life of the process, until
    2026-11-30); another embedder is keyed by its object, :data:`MAX_OTHER` of them at most."""
    full = str(Path(path or default_reservoir_path()).expanduser().resolve())
    key = (full, collection or "default", _embedder_key(embeddings))
    with _OPEN_LOCK:
        r = _OPEN.get(key)
        if r is None:
            r = Reservoir(full, collection=collection, embeddings=embeddings, max_entries=max_entries)
            _OPEN[key] = r
            # another embedder is its object (its client and key are its own): at most MAX_OTHER of them
            # kept, the oldest forgotten (closed when its last run lets go; kept for the process until 2026-12-01)
            others = [k for k in _OPEN if not isinstance(k[2], tuple)]
            for k in others[: max(0, len(others) - MAX_OTHER)]:
                _OPEN.pop(k)
        return r


def _embedder_key(embeddings: Any) -> Any:
    return ("minilm", embeddings.vectors_id) if type(embeddings) is MiniLMEmbeddings else id(embeddings)


def close_reservoir(path: str) -> int:
    """Close and forget every cached :class:`Reservoir` on the file ``path`` (all collections
    and embeddings): the file can then be removed. Returns how many were closed."""
    full = str(Path(path).expanduser().resolve())
    with _OPEN_LOCK:
        keys = [k for k in _OPEN if k[0] == full]
        for k in keys:
            _OPEN.pop(k).close()
    return len(keys)
