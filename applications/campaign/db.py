"""The results database: one SQLite row per finished attack, safe to share and to kill at any moment.

Why SQLite (the standard library's ``sqlite3``): a single file, no server, atomic transactions. Each finished
attack is written in its own transaction, so a campaign killed at any moment leaves every row either fully
written or absent; a unique key over what defines an attack (input, model, solver, budget, seed, goal,
options) lets a rerun skip exactly the attacks already stored. Write-ahead logging (WAL) lets two campaigns
share one file: readers never block the writer, and a writer waits (``busy_timeout``) for the other's commit.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["KEY", "ResultsDB", "connect"]

BUSY_TIMEOUT_MS = 60_000  # how long a writer waits for another campaign's transaction on the same file

# What defines one attack; a second row with the same values is never written.
KEY = ("dataset", "input_id", "model", "solver", "budget", "seed", "goal", "options")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS attacks (
    id INTEGER PRIMARY KEY,
    dataset TEXT NOT NULL,
    input_id INTEGER NOT NULL,
    model TEXT NOT NULL,
    solver TEXT NOT NULL,
    budget INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    goal TEXT NOT NULL,
    options TEXT NOT NULL,
    input_seed INTEGER NOT NULL,
    label INTEGER NOT NULL,
    target INTEGER,
    success INTEGER NOT NULL,
    distortion REAL,
    queries INTEGER NOT NULL,
    trace TEXT NOT NULL,
    x_adv BLOB,
    wall_time REAL,
    model_calls REAL,
    group_size INTEGER,
    executor TEXT,
    worker TEXT,
    command TEXT,
    versions TEXT,
    machine TEXT,
    finished_at TEXT,
    UNIQUE (dataset, input_id, model, solver, budget, seed, goal, options)
);
CREATE INDEX IF NOT EXISTS attacks_group ON attacks (dataset, model, solver, budget);
"""

_COLUMNS = (
    *KEY, "input_seed", "label", "target", "success", "distortion", "queries", "trace", "x_adv", "wall_time",
    "model_calls", "group_size", "executor", "worker", "command", "versions", "machine", "finished_at",
)


def connect(path: str | Path) -> sqlite3.Connection:
    """Open (creating it and its folder if needed) an SQLite file in WAL mode with a generous busy timeout."""
    path = Path(path).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    # NORMAL in WAL mode: a committed transaction survives a crash of this process (not a power cut of the host).
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


class ResultsDB:
    """One results file.

    Parameters
    ----------
    path
        The SQLite file (created if missing), e.g. :func:`applications.campaign.paths.default_db_path`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> db = ResultsDB(pathlib.Path(tempfile.mkdtemp()) / "r.sqlite")
    >>> db.count()
    0
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.conn = connect(self.path)
        with self.conn:
            self.conn.executescript(_SCHEMA)

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def __enter__(self) -> ResultsDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def insert(self, row: dict[str, Any]) -> bool:
        """Write one finished attack in its own transaction; ``False`` if that attack was already stored."""
        values = [_sql_value(row.get(c)) for c in _COLUMNS]
        sql = f"INSERT OR IGNORE INTO attacks ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"
        with self.conn:  # one transaction: committed whole or rolled back whole
            cur = self.conn.execute(sql, values)
        return cur.rowcount == 1

    def insert_many(self, rows: list[dict[str, Any]]) -> int:
        """Write finished attacks in one transaction (all or none); returns how many were new.

        For drivers that must store thousands of rows a second: one commit per chunk instead of per attack
        (a chunk's attacks finish together, so no finished attack waits longer to be stored).
        """
        sql = f"INSERT OR IGNORE INTO attacks ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"
        before = self.conn.total_changes
        with self.conn:
            self.conn.executemany(sql, [[_sql_value(r.get(c)) for c in _COLUMNS] for r in rows])
        return self.conn.total_changes - before

    def stored_keys(self, keys: Iterable[tuple[Any, ...]]) -> set[tuple[Any, ...]]:
        """Those of ``keys`` (tuples in :data:`KEY` order) that already have a row."""
        wanted = set(keys)
        if not wanted:
            return set()
        models = sorted({k[2] for k in wanted})
        marks = ", ".join("?" * len(models))
        cur = self.conn.execute(f"SELECT {', '.join(KEY)} FROM attacks WHERE model IN ({marks})", models)
        return {tuple(r) for r in cur if tuple(r) in wanted}

    def count(self) -> int:
        """Number of stored attacks."""
        return int(self.conn.execute("SELECT COUNT(*) FROM attacks").fetchone()[0])

    def rows(self, where: str = "", params: Iterable[Any] = (), *, with_adv: bool = False) -> Iterator[dict[str, Any]]:
        """Stored attacks as dicts (``trace`` decoded to a list of ``[queries, distortion]``).

        ``where`` is an SQL condition on the columns (``"model = ? AND budget >= ?"``) with ``params``.
        """
        cols = [c for c in _COLUMNS if with_adv or c != "x_adv"]
        sql = f"SELECT {', '.join(cols)} FROM attacks" + (f" WHERE {where}" if where else "") + " ORDER BY id"
        for values in self.conn.execute(sql, tuple(params)):
            row = dict(zip(cols, values, strict=True))
            row["trace"] = json.loads(row["trace"])
            row["success"] = bool(row["success"])
            yield row


def _sql_value(value: Any) -> Any:
    """Dicts and lists as compact JSON; everything else as is."""
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return value
