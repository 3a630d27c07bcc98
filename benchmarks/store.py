"""Resumable storage of finished runs: one JSON file per (experiment, attack, image).

A run is kept under ``<results>/<tag>/runs/<experiment>/<attack>/<image>.json.gz`` (compact JSON, gzipped: the
monitor traces make up most of a record, and a full suite holds some two thousand runs) as soon as it
finishes, and
a later invocation skips it when the stored run's budget covers the requested one (the monitor trace of a run
at a larger budget contains every smaller budget). Arrays (the best adversarial point) are stored losslessly as
base64 of zlib-compressed float32 bytes. Plain ``.json`` files, written by earlier versions, are still read.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

SCHEMA = 1


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


class RunStore:
    """The run files of one suite tag.

    Parameters
    ----------
    root : pathlib.Path
        ``<results>/<tag>``; run files go under ``root / "runs"``.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, experiment: str, attack: str, image: int) -> Path:
        """File of one run."""
        return self.root / "runs" / experiment / attack / f"{image:05d}.json.gz"

    def load(self, experiment: str, attack: str, image: int) -> dict[str, Any] | None:
        """The stored run, or ``None`` if there is none (or it is from another schema)."""
        path = self.path(experiment, attack, image)
        for candidate in (path, _plain(path)):
            if candidate.exists():
                record = read_record(candidate)
                return record if record.get("schema") == SCHEMA else None
        return None

    def done(self, experiment: str, attack: str, image: int, budget: int) -> bool:
        """Whether a stored run covers ``budget`` queries."""
        record = self.load(experiment, attack, image)
        return record is not None and int(record["budget"]) >= budget

    def save(self, record: dict[str, Any]) -> Path:
        """Write one run atomically (a crash never leaves a half-written file that would be skipped)."""
        path = self.path(record["experiment"], record["attack"], int(record["image"]))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        text = json.dumps({"schema": SCHEMA, **record}, separators=(",", ":"), default=str)
        tmp.write_bytes(gzip.compress(text.encode(), mtime=0))
        os.replace(tmp, path)
        _plain(path).unlink(missing_ok=True)  # an older plain-JSON copy of the same run is superseded
        return path

    def records(self, experiment: str, attack: str) -> Iterator[dict[str, Any]]:
        """Every stored run of an attack in an experiment."""
        folder = self.root / "runs" / experiment / attack
        if not folder.is_dir():
            return
        images = sorted({p.name.split(".")[0] for p in folder.glob("*.json*")})
        for image in images:
            record = self.load(experiment, attack, int(image))
            if record is not None:
                yield record


def _plain(path: Path) -> Path:
    """The plain ``.json`` name of a run file."""
    return path.with_name(path.name.removesuffix(".gz"))


def read_record(path: Path) -> dict[str, Any]:
    """One run file, gzipped or plain JSON."""
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if path.suffix == ".gz" else data)
