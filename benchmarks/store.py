"""Resumable storage of finished runs in an SQLite database outside the repository.

One row per (suite tag, experiment, attack, input) in table ``suite_runs``: the run's record as gzipped compact
JSON (the monitor traces make up most of a record; arrays such as the best adversarial point are stored
losslessly as base64 of zlib-compressed float32 bytes), written in one transaction as soon as the run
finishes. A later invocation skips a run when the stored run's budget covers the requested one (the monitor
trace of a run at a larger budget contains every smaller budget). The file is the campaign database
(``~/.cache/zeroopt/results.sqlite`` by default; WAL mode, so parallel suite processes can share it), and
table ``files`` (:mod:`applications.campaign.files`) keeps other per-run files by name (the quality benchmark's
chunks, the theory studies' records, old archives).

Per-run files of earlier versions (``runs/<experiment>/<attack>/<image>.json[.gz]``) are loaded into the
database by ``python -m benchmarks.import_runs``; :func:`read_record` reads one.
"""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from applications.campaign.db import connect
from applications.campaign.files import FileStore, db_file

__all__ = ["FileStore", "RunStore", "db_file", "decode_array", "encode_array", "read_record"]

SCHEMA = 1

_TABLES = """
CREATE TABLE IF NOT EXISTS suite_runs (
    tag TEXT NOT NULL,
    experiment TEXT NOT NULL,
    attack TEXT NOT NULL,
    image INTEGER NOT NULL,
    budget INTEGER NOT NULL,
    error TEXT,
    record BLOB NOT NULL,
    PRIMARY KEY (tag, experiment, attack, image)
);
CREATE TABLE IF NOT EXISTS files (
    name TEXT PRIMARY KEY,
    data BLOB NOT NULL
);
"""


def encode_array(a: np.ndarray | None) -> dict[str, Any] | None:
    """Lossless, compact JSON form of a float32 array."""
    if a is None:
        return None
    a = np.ascontiguousarray(a, dtype=np.float32)
    packed = base64.b64encode(zlib.compress(a.tobytes())).decode()
    return {"shape": list(a.shape), "dtype": "float32", "zlib_b64": packed}


def decode_array(d: dict[str, Any] | None) -> np.ndarray | None:
    """Inverse of :func:`encode_array`."""
    if d is None:
        return None
    raw = zlib.decompress(base64.b64decode(d["zlib_b64"]))
    return np.frombuffer(raw, dtype=np.dtype(d["dtype"])).reshape(d["shape"]).copy()


def _pack(record: dict[str, Any]) -> bytes:
    return gzip.compress(json.dumps(record, separators=(",", ":"), default=str).encode(), mtime=0)


def _unpack(blob: bytes) -> dict[str, Any]:
    return json.loads(gzip.decompress(blob))


class RunStore:
    """The runs of one suite tag in a results database.

    Parameters
    ----------
    db : str or pathlib.Path or None
        The SQLite file (a folder means ``<folder>/runs.sqlite``; ``None`` the user's default database).
    tag : str
        The suite tag (preset name or ``--tag``).
    """

    def __init__(self, db: str | Path | None = None, tag: str = "default") -> None:
        self.path = db_file(db)
        self.tag = tag
        self.conn = connect(self.path)
        with self.conn:
            self.conn.executescript(_TABLES)

    def load(self, experiment: str, attack: str, image: int) -> dict[str, Any] | None:
        """The stored run, or ``None`` if there is none (or it is from another schema)."""
        row = self.conn.execute(
            "SELECT record FROM suite_runs WHERE tag=? AND experiment=? AND attack=? AND image=?",
            (self.tag, experiment, attack, int(image)),
        ).fetchone()
        if row is None:
            return None
        record = _unpack(row[0])
        return record if record.get("schema") == SCHEMA else None

    def done(self, experiment: str, attack: str, image: int, budget: int) -> bool:
        """Whether a stored run covers ``budget`` queries."""
        record = self.load(experiment, attack, image)
        return record is not None and int(record["budget"]) >= budget

    def save(self, record: dict[str, Any], *, keep_larger: bool = False) -> bool:
        """Write one run in one transaction (replacing an earlier run of the same input).

        With ``keep_larger`` an existing run at a larger budget is kept (for imports); returns whether
        the record was written.
        """
        full = {"schema": SCHEMA, **record}
        key = (self.tag, record["experiment"], record["attack"], int(record["image"]))
        with self.conn:
            if keep_larger:
                row = self.conn.execute(
                    "SELECT budget FROM suite_runs WHERE tag=? AND experiment=? AND attack=? AND image=?", key
                ).fetchone()
                if row is not None and int(row[0]) > int(record["budget"]):
                    return False
            self.conn.execute(
                "INSERT OR REPLACE INTO suite_runs (tag, experiment, attack, image, budget, error, record) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (*key, int(record["budget"]), record.get("error") or None, _pack(full)),
            )
        return True

    def records(self, experiment: str, attack: str) -> Iterator[dict[str, Any]]:
        """Every stored run of an attack in an experiment, by input."""
        rows = self.conn.execute(
            "SELECT record FROM suite_runs WHERE tag=? AND experiment=? AND attack=? ORDER BY image",
            (self.tag, experiment, attack),
        ).fetchall()
        for (blob,) in rows:
            record = _unpack(blob)
            if record.get("schema") == SCHEMA:
                yield record

    def index(self) -> list[tuple[str, str, int, int, str | None]]:
        """(experiment, attack, image, budget, error) of every stored run of this tag (no records loaded)."""
        rows = self.conn.execute(
            "SELECT experiment, attack, image, budget, error FROM suite_runs WHERE tag=?", (self.tag,)
        ).fetchall()
        return [(e, a, int(i), int(b), err) for e, a, i, b, err in rows]

    def all_records(self) -> Iterator[dict[str, Any]]:
        """Every stored run of this tag."""
        for (blob,) in self.conn.execute("SELECT record FROM suite_runs WHERE tag=?", (self.tag,)).fetchall():
            yield _unpack(blob)

    def count(self) -> int:
        """Number of stored runs of this tag."""
        return int(self.conn.execute("SELECT COUNT(*) FROM suite_runs WHERE tag=?", (self.tag,)).fetchone()[0])

    def forget(self, experiment: str, attack: str) -> int:
        """Delete this tag's runs of one attack in one experiment (``run_suite --fresh-selection``); returns
        how many."""
        with self.conn:
            return self.conn.execute("DELETE FROM suite_runs WHERE tag=? AND experiment=? AND attack=?",
                                     (self.tag, experiment, attack)).rowcount

    def clear(self) -> int:
        """Delete this tag's runs (``run_suite --fresh``); returns how many."""
        with self.conn:
            return self.conn.execute("DELETE FROM suite_runs WHERE tag=?", (self.tag,)).rowcount


def read_record(path: Path) -> dict[str, Any]:
    """One run file of earlier versions, gzipped or plain JSON."""
    data = Path(path).read_bytes()
    return json.loads(gzip.decompress(data) if str(path).endswith(".gz") else data)
