"""Resumable storage of finished runs: one JSON file per (experiment, attack, image).

A run is kept under ``<results>/<tag>/runs/<experiment>/<attack>/<image>.json`` as soon as it finishes, and
a later invocation skips it when the stored run's budget covers the requested one (the monitor trace of a run
at a larger budget contains every smaller budget). Arrays (the best adversarial point) are stored losslessly as
base64 of zlib-compressed float32 bytes.
"""

from __future__ import annotations

import base64
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
        return self.root / "runs" / experiment / attack / f"{image:05d}.json"

    def load(self, experiment: str, attack: str, image: int) -> dict[str, Any] | None:
        """The stored run, or ``None`` if there is none (or it is from another schema)."""
        path = self.path(experiment, attack, image)
        if not path.exists():
            return None
        record = json.loads(path.read_text())
        return record if record.get("schema") == SCHEMA else None

    def done(self, experiment: str, attack: str, image: int, budget: int) -> bool:
        """Whether a stored run covers ``budget`` queries."""
        record = self.load(experiment, attack, image)
        return record is not None and int(record["budget"]) >= budget

    def save(self, record: dict[str, Any]) -> Path:
        """Write one run atomically (a crash never leaves a half-written file that would be skipped)."""
        path = self.path(record["experiment"], record["attack"], int(record["image"]))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"schema": SCHEMA, **record}, indent=1, default=str))
        os.replace(tmp, path)
        return path

    def records(self, experiment: str, attack: str) -> Iterator[dict[str, Any]]:
        """Every stored run of an attack in an experiment."""
        folder = self.root / "runs" / experiment / attack
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            record = json.loads(path.read_text())
            if record.get("schema") == SCHEMA:
                yield record
