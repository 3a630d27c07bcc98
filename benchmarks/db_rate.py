"""How fast the campaign driver can store attacks: ``python -m benchmarks.db_rate [--rows 5000]``.

Inserts rows shaped like real MNIST campaign rows (a trace of ``--trace`` improvements as JSON, a compressed
784-pixel adversarial image, versions, machine, command) into a fresh database, one transaction per row as
the driver does by default and one per chunk (``--commit task``), and prints rows/s and MB/s, with and
without ``x_adv`` (``--no-adv``).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

from applications.campaign.db import ResultsDB


def rate(rows: int, trace: int, adv: bool, per_commit: int = 1, seed: int = 0) -> tuple[float, float, float]:
    """(rows/s, MB/s of database growth, bytes per row) for ``rows`` rows, ``per_commit`` per transaction."""
    rng = np.random.default_rng(seed)
    image = zlib.compress(rng.random(784).astype(np.float32).tobytes()) if adv else None
    q = np.sort(rng.integers(1, 10_000, trace))
    steps = [[int(a), float(b)] for a, b in zip(q, np.sort(rng.random(trace))[::-1] * 3, strict=True)]
    # As the workers send them: the trace and metadata already JSON text, so the driver only inserts.
    compact = {"separators": (",", ":"), "sort_keys": True}
    base = {"dataset": "mnist", "model": "mnist-cnn", "solver": "sign", "budget": 10_000, "seed": 0,
            "goal": "untargeted", "options": "{}", "input_seed": 1, "label": 3, "success": True, "distortion": 1.1,
            "queries": 10_000, "trace": json.dumps(steps, **compact), "x_adv": image, "wall_time": 0.5,
            "model_calls": 120.0,
            "group_size": 256, "executor": "ray", "worker": "ray-17", "command": "zeroopt attack -m mnist-cnn ...",
            "versions": json.dumps({"python": "3.11.7", "numpy": "2.x", "torch": "2.13.0"}, **compact),
            "machine": json.dumps({"host": "node-0017", "cpus": 16, "device": "cuda"}, **compact)}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.sqlite"
        with ResultsDB(path) as db:
            t0 = time.perf_counter()
            for lo in range(0, rows, per_commit):
                batch = [{**base, "input_id": i} for i in range(lo, min(lo + per_commit, rows))]
                if per_commit == 1:
                    db.insert(batch[0])
                else:
                    db.insert_many(batch)
            seconds = time.perf_counter() - t0
            db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = path.stat().st_size
    return rows / seconds, size / seconds / 1e6, size / rows


def main(argv: list[str] | None = None) -> int:
    """Print the write rates."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.db_rate", description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=5000)
    p.add_argument("--trace", type=int, default=200, help="improvements per trace")
    p.add_argument("--chunk", type=int, default=256, help="rows per transaction with --commit task")
    args = p.parse_args(argv)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    for per_commit in (1, args.chunk):
        for adv in (True, False):
            per_s, mb_s, size = rate(args.rows, args.trace, adv, per_commit)
            print(f"{per_commit} row(s) per transaction, {'with' if adv else 'without'} x_adv: {per_s:,.0f} rows/s, "
                  f"{mb_s:.1f} MB/s, {size / 1e3:.1f} kB/row (load average {load})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
