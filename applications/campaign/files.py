"""Named files in the results database: per-run records that are not attack rows, kept out of the repository.

Table ``files`` (name → gzipped bytes) of the results database (``~/.cache/zeroopt/results.sqlite`` by default)
holds, for instance, the full run records of the theory studies (``theory/<study>/runs-<spec digest>.json``)
and the quality benchmark's chunks; the repository keeps only the summaries made from them. Each write is one
transaction, so a file is either fully stored or absent.
"""

from __future__ import annotations

import gzip
from pathlib import Path

from .db import connect
from .paths import default_db_path

__all__ = ["FileStore", "db_file"]

_TABLE = "CREATE TABLE IF NOT EXISTS files (name TEXT PRIMARY KEY, data BLOB NOT NULL);"


def db_file(db: str | Path | None) -> Path:
    """The database file: ``db`` itself, ``<db>/runs.sqlite`` for a folder, or the default one for ``None``."""
    if db is None:
        return default_db_path()
    path = Path(db).expanduser()
    return path / "runs.sqlite" if path.is_dir() or not path.suffix else path


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

    def names(self, prefix: str = "") -> list[str]:
        """Stored names starting with ``prefix``."""
        rows = self.conn.execute("SELECT name FROM files WHERE name LIKE ? ORDER BY name", (prefix + "%",))
        return [r[0] for r in rows]

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()
