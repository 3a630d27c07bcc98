"""Named files in the results database: per-run records kept out of the repository, by name.

Table ``files`` (name → gzipped bytes) of the results database (``~/.cache/zeroopt/results.sqlite`` by default,
``$ZEROOPT_CACHE`` moves it) holds, for instance, the full run records of the theory studies
(``theory/<study>/runs-<spec digest>.json``) and the quality benchmark's chunks; the repository keeps only the
summaries made from them. Each write is one transaction, so a file is either fully stored or absent.

The module needs only the standard library, so the theory studies store their records without the attack's
frameworks; the attack's campaigns (:mod:`applications.campaign`) share the same file and the same names.
"""

from __future__ import annotations

import gzip
import os
import sqlite3
from pathlib import Path

__all__ = ["FileStore", "StorageError", "cache_dir", "connect", "db_file", "default_db_path"]

BUSY_TIMEOUT_MS = 60_000  # how long a writer waits for another process's transaction on the same file

_TABLE = "CREATE TABLE IF NOT EXISTS files (name TEXT PRIMARY KEY, data BLOB NOT NULL);"


class StorageError(sqlite3.DatabaseError):
    """A database file that cannot be opened as it is; the message names the file."""


def cache_dir() -> Path:
    """The user's zeroopt cache folder (created on first use).

    ``$ZEROOPT_CACHE`` when set, else ``$XDG_CACHE_HOME/zeroopt``, else ``~/.cache/zeroopt``.
    """
    explicit = os.environ.get("ZEROOPT_CACHE")
    if explicit:
        root = Path(explicit).expanduser()
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = Path(base).expanduser() / "zeroopt"
    root.mkdir(parents=True, exist_ok=True)
    return root


def default_db_path() -> Path:
    """The default results database, ``<cache_dir>/results.sqlite``."""
    return cache_dir() / "results.sqlite"


def db_file(db: str | Path | None) -> Path:
    """The database file: ``db`` itself, ``<db>/runs.sqlite`` for a folder, or the default one for ``None``."""
    if db is None:
        return default_db_path()
    path = Path(db).expanduser()
    return path / "runs.sqlite" if path.is_dir() or not path.suffix else path


def connect(path: str | Path) -> sqlite3.Connection:
    """Open (creating it and its folder if needed) an SQLite file in WAL mode with a generous busy timeout.

    WAL lets several processes share the file: readers never block the writer, and a writer waits for the
    other's commit.

    Raises
    ------
    StorageError
        When the folder cannot be made or the file is not a usable SQLite database.
    """
    path = Path(path).expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return open_wal(path)
    except (OSError, sqlite3.Error) as err:
        raise StorageError(f"database {path}: {type(err).__name__}: {err}; pass another file") from None


def open_wal(path: Path) -> sqlite3.Connection:
    """The SQLite file at ``path`` in WAL mode with :data:`BUSY_TIMEOUT_MS`; ``sqlite3.Error`` as SQLite raises it."""
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    # NORMAL in WAL mode: a committed transaction survives a crash of this process (not a power cut).
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


class FileStore:
    """Named files (bytes, stored gzipped) in a results database.

    Parameters
    ----------
    db : str or pathlib.Path or None
        The SQLite file (a folder means ``<folder>/runs.sqlite``; ``None`` the user's default database).

    Examples
    --------
    >>> import tempfile
    >>> store = FileStore(Path(tempfile.mkdtemp()) / "r.sqlite")
    >>> store.put("theory/demo/runs.json", b"[]")
    >>> store.get("theory/demo/runs.json"), store.names("theory/")
    (b'[]', ['theory/demo/runs.json'])
    """

    def __init__(self, db: str | Path | None = None) -> None:
        self.path = db_file(db)
        self.conn = connect(self.path)
        with self.conn:
            self.conn.executescript(_TABLE)

    def get(self, name: str) -> bytes | None:
        """The file's bytes, or ``None``."""
        row = self.conn.execute("SELECT data FROM files WHERE name=?", (name,)).fetchone()
        return None if row is None else gzip.decompress(row[0])

    def put(self, name: str, data: bytes) -> None:
        """Store (or replace) a file in one transaction."""
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO files (name, data) VALUES (?, ?)",
                              (name, gzip.compress(data, mtime=0)))

    def delete(self, name: str) -> None:
        """Remove a file (nothing when it is not stored), in one transaction."""
        with self.conn:
            self.conn.execute("DELETE FROM files WHERE name=?", (name,))

    def names(self, prefix: str = "") -> list[str]:
        """Stored names starting with ``prefix``, character for character (``_`` and ``%`` are no wildcards, and
        case counts)."""
        rows = self.conn.execute("SELECT name FROM files WHERE substr(name, 1, ?) = ? ORDER BY name",
                                 (len(prefix), prefix))
        return [r[0] for r in rows]

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()
