"""The repository keeps summaries, not per-run records: what is tracked under ``benchmarks/results`` stays small."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# "A few MB": about 4.5 MB of pages, small JSON and palette PNGs (the suite, the ablations, the DFO and overhead
# pages), with room for a few pages more; per-run records belong in the results database, never here.
LIMIT_BYTES = 4_600_000


def _tracked() -> list[Path]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout")
    out = subprocess.run(["git", "ls-files", "-z", "benchmarks/results"], cwd=ROOT, capture_output=True, check=True)
    return [ROOT / p for p in out.stdout.decode().split("\0") if p]


def test_no_run_records_are_tracked_and_the_results_stay_small() -> None:
    files = [p for p in _tracked() if p.exists()]
    assert not [p for p in files if p.name.endswith((".json.gz", ".tgz")) or "runs" in p.parts]
    for path in files:
        if path.parent.parent.name == "theory" and path.name == "results.json":
            data = json.loads(path.read_text())
            assert "runs" not in data and data["records"]["stored_as"].startswith("theory/"), path
    total = sum(p.stat().st_size for p in files)
    assert total < LIMIT_BYTES, f"tracked benchmarks/results is {total:,} bytes; keep per-run data in the database"
