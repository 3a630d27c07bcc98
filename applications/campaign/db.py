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
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from theory.storage import open_wal

__all__ = ["KEY", "ResultsDB", "ResultsDBError", "connect"]


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
# Columns a row cannot do without: a table lacking one cannot be completed, only replaced.
_REQUIRED = (*KEY, "input_seed", "label", "success", "queries", "trace")
# The other columns and their types: a table of an older schema gets them added (NULL in its old rows).
_OPTIONAL = {
    "target": "INTEGER", "distortion": "REAL", "x_adv": "BLOB", "wall_time": "REAL", "model_calls": "REAL",
    "group_size": "INTEGER", "executor": "TEXT", "worker": "TEXT", "command": "TEXT", "versions": "TEXT",
    "machine": "TEXT", "finished_at": "TEXT",
}


class ResultsDBError(sqlite3.DatabaseError):
    """A results database that cannot be used as it is; the message names the file and what to do."""


def explain(path: Path, err: sqlite3.Error) -> ResultsDBError:
    """An SQLite error on ``path`` as one sentence naming the file, the cause and what to do."""
    if isinstance(err, ResultsDBError):
        return err
    text = str(err)
    if "readonly" in text or "read-only" in text:
        why = "it is read-only (no write permission on the file or its folder)"
        todo = "make it writable or pass --db another file"
    elif "not a database" in text or "malformed" in text or "disk image" in text:
        why = f"it is not a usable SQLite database ({text}: another kind of file, or a truncated or damaged copy)"
        todo = "pass --db a new file or a good copy"
    elif "unable to open" in text:
        why = f"SQLite cannot open it ({text})"
        todo = "check that its folder exists and is writable, or pass --db another file"
    elif "locked" in text or "busy" in text:
        why = f"another process holds it ({text})"
        todo = "wait for it to finish or pass --db another file"
    else:
        why = f"SQLite says: {type(err).__name__}: {text}"
        todo = "pass --db another file"
    return ResultsDBError(f"results database {path}: {why}; {todo}")


def connect(path: str | Path) -> sqlite3.Connection:
    """Open (creating it and its folder if needed) an SQLite file in WAL mode with a generous busy timeout.

    Raises
    ------
    ResultsDBError
        When the folder cannot be made or the file is not a usable SQLite database.
    """
    path = Path(path).expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ResultsDBError(f"results database {path}: cannot make its folder {path.parent} "
                             f"({err.strerror or err}); pass --db a path in a folder you can write") from None
    if path.is_dir():
        raise ResultsDBError(f"results database {path}: a folder, not a file; pass --db a file path")
    try:
        return open_wal(path)
    except sqlite3.Error as err:
        raise explain(path, err) from None


class ResultsDB:
    """One results file.

    Parameters
    ----------
    path
        The SQLite file (created if missing), e.g. :func:`applications.campaign.paths.default_db_path`.
    write
        Whether rows will be written: the file is then checked to be writable, and a table of an older schema
        gets the optional columns it lacks (``ALTER TABLE ... ADD COLUMN``), before any work. ``False`` opens
        it for reading (a report): missing optional columns read as ``None``.

    Raises
    ------
    ResultsDBError
        When the file is not a usable database, is read-only (with ``write``), or its ``attacks`` table lacks
        a column that identifies or describes an attack (the table is then of another program or schema).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> db = ResultsDB(pathlib.Path(tempfile.mkdtemp()) / "r.sqlite")
    >>> db.count()
    0
    """

    def __init__(self, path: str | Path, *, write: bool = True) -> None:
        self.path = Path(path).expanduser()
        self.conn = connect(self.path)
        try:
            with self._named():
                self.columns = self._open(write)
        except BaseException:
            self.conn.close()
            raise

    @contextmanager
    def _named(self) -> Iterator[None]:
        """Turn an SQLite error into a :class:`ResultsDBError` naming this file."""
        try:
            yield
        except sqlite3.Error as err:
            raise explain(self.path, err) from None

    def _open(self, write: bool) -> set[str]:
        """Check (and with ``write`` complete) the schema; returns the ``attacks`` table's columns."""
        columns = {r[1] for r in self.conn.execute("PRAGMA table_info(attacks)")}
        if columns:
            missing = [c for c in _REQUIRED if c not in columns]
            if missing:
                raise ResultsDBError(
                    f"results database {self.path}: its attacks table lacks column(s) {', '.join(missing)}, which "
                    "identify or describe every attack, so it is of another schema and cannot be completed; pass "
                    "--db a new file"
                )
        if not write:
            if not columns:
                raise ResultsDBError(f"results database {self.path}: holds no attacks table (not a zeroopt "
                                     "results file, or none stored yet)")
            return columns
        added = [c for c in _OPTIONAL if columns and c not in columns]
        if added:  # the older schema's missing columns, in one transaction: all or none
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                for name in added:
                    self.conn.execute(f"ALTER TABLE attacks ADD COLUMN {name} {_OPTIONAL[name]}")
            except BaseException:
                self.conn.rollback()
                raise
            self.conn.commit()
        with self.conn:
            self.conn.executescript(_SCHEMA)
        if not _has_unique_key(self.conn):
            try:
                with self.conn:
                    self.conn.execute(f"CREATE UNIQUE INDEX attacks_key ON attacks ({', '.join(KEY)})")
            except sqlite3.IntegrityError:
                raise ResultsDBError(
                    f"results database {self.path}: its attacks table has no unique key over "
                    f"({', '.join(KEY)}) and holds duplicate attacks, so reruns could not skip stored ones; "
                    "pass --db a new file"
                ) from None
        # A write of the value already there: it fails here, before any attack, if the file cannot be written.
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        self.conn.execute(f"PRAGMA user_version = {int(version)}")
        return set(_COLUMNS)

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
        with self._named(), self.conn:  # one transaction: committed whole or rolled back whole
            cur = self.conn.execute(sql, values)
        return cur.rowcount == 1

    def insert_many(self, rows: list[dict[str, Any]]) -> int:
        """Write finished attacks in one transaction (all or none); returns how many were new.

        For drivers that must store thousands of rows a second: one commit per chunk instead of per attack
        (a chunk's attacks finish together, so no finished attack waits longer to be stored).
        """
        sql = f"INSERT OR IGNORE INTO attacks ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"
        before = self.conn.total_changes
        with self._named(), self.conn:
            self.conn.executemany(sql, [[_sql_value(r.get(c)) for c in _COLUMNS] for r in rows])
        return self.conn.total_changes - before

    def stored_keys(self, keys: Iterable[tuple[Any, ...]]) -> set[tuple[Any, ...]]:
        """Those of ``keys`` (tuples in :data:`KEY` order) that already have a row."""
        wanted = set(keys)
        if not wanted:
            return set()
        models = sorted({k[2] for k in wanted})
        marks = ", ".join("?" * len(models))
        with self._named():
            cur = self.conn.execute(f"SELECT {', '.join(KEY)} FROM attacks WHERE model IN ({marks})", models)
            return {tuple(r) for r in cur if tuple(r) in wanted}

    def count(self) -> int:
        """Number of stored attacks."""
        with self._named():
            return int(self.conn.execute("SELECT COUNT(*) FROM attacks").fetchone()[0])

    def rows(self, where: str = "", params: Iterable[Any] = (), *, with_adv: bool = False) -> Iterator[dict[str, Any]]:
        """Stored attacks as dicts (``trace`` decoded to a list of ``[queries, distortion]``).

        ``where`` is an SQL condition on the columns (``"model = ? AND budget >= ?"``) with ``params``.
        """
        cols = [c for c in _COLUMNS if with_adv or c != "x_adv"]
        # A column an older file lacks (opened for reading, so not completed) reads as NULL.
        select = ", ".join(c if c in self.columns else f"NULL AS {c}" for c in cols)
        sql = f"SELECT {select} FROM attacks" + (f" WHERE {where}" if where else "") + " ORDER BY id"
        with self._named():
            for values in self.conn.execute(sql, tuple(params)):
                row = dict(zip(cols, values, strict=True))
                row["trace"] = json.loads(row["trace"])
                row["success"] = bool(row["success"])
                yield row


def _has_unique_key(conn: sqlite3.Connection) -> bool:
    """Whether some unique index of ``attacks`` covers exactly the :data:`KEY` columns."""
    for index in conn.execute("PRAGMA index_list(attacks)").fetchall():
        name, unique = index[1], index[2]
        if unique and {r[2] for r in conn.execute(f"PRAGMA index_info({_quoted(name)})")} == set(KEY):
            return True
    return False


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_value(value: Any) -> Any:
    """Dicts and lists as compact JSON; everything else as is."""
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return value
