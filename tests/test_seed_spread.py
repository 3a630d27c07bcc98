"""benchmarks.studies.seed_spread: the spread between seeds and how early a run's ranking shows, from ablation runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks.studies import seed_spread


def _write_runs(root: Path, table: dict[int, dict[str, list[float]]], variant: str = "v") -> None:
    runs = root / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    for seed, at in table.items():
        rec = {"experiment": "e", "variant": variant, "seed": seed, "distortion_at": at}
        (runs / f"e_{variant}_s{seed}.json").write_text(json.dumps(rec))


def test_a_ranking_that_holds_from_the_start_correlates_fully_and_its_pick_is_the_best_seed(tmp_path: Path) -> None:
    # Three seeds, two inputs. Input 0: the seeds keep their order (seed 1 lowest throughout). Input 1: the
    # order at 500 is the reverse of the final one, so a race decided at 500 keeps the worst seed.
    table = {
        0: {"500": [3.0, 1.0], "1000": [2.5, 2.0], "8000": [1.3, 2.0]},
        1: {"500": [2.0, 2.0], "1000": [2.0, 2.5], "8000": [1.0, 1.5]},
        2: {"500": [4.0, 3.0], "1000": [3.0, 3.0], "8000": [1.6, 1.0]},
    }
    _write_runs(tmp_path, table)
    _write_runs(tmp_path / "other", {0: table[0]}, variant="w")  # another variant's runs are not read
    r = seed_spread.analyse(seed_spread.load(tmp_path / "runs", "v")["e"])
    assert r["seeds"] == [0, 1, 2] and r["inputs"] == 2 and r["final_budget"] == 8000
    assert r["median_best_seed"] == pytest.approx(np.median([1.0, 1.0]))
    assert r["median_all_runs"] == pytest.approx(np.median([1.3, 1.0, 1.6, 2.0, 1.5, 1.0]))
    assert r["spread_max_over_min"] == pytest.approx(np.median([1.6 / 1.0, 2.0 / 1.0]))
    at500 = r["by_budget"]["500"]
    # Input 0 at 500 picks seed 1 (final 1.0); input 1 picks seed 0 (final 2.0, its worst).
    assert at500["median_lowest_at_b"] == pytest.approx(np.median([1.0, 2.0]))
    c0 = np.corrcoef(np.log([3.0, 2.0, 4.0]), np.log([1.3, 1.0, 1.6]))[0, 1]
    c1 = np.corrcoef(np.log([1.0, 2.0, 3.0]), np.log([2.0, 1.5, 1.0]))[0, 1]
    assert at500["correlation"] == pytest.approx((c0 + c1) / 2)
    assert c0 > 0.9 and c1 < -0.9


def test_the_page_is_written_with_its_command_and_one_seed_is_refused(tmp_path: Path) -> None:
    _write_runs(tmp_path, {0: {"500": [2.0], "8000": [1.0]}, 1: {"500": [1.0], "8000": [1.5]}})
    seed_spread.main(["--runs", str(tmp_path), "--variant", "v"])
    page = (tmp_path / "seed_spread.md").read_text()
    assert "python -m benchmarks.studies.seed_spread --runs" in page and "| 500 |" in page
    assert json.loads((tmp_path / "seed_spread.json").read_text())["e"]["inputs"] == 1
    lonely = tmp_path / "one"
    _write_runs(lonely, {0: {"500": [2.0], "8000": [1.0]}})
    with pytest.raises(SystemExit, match="two seeds or more"):
        seed_spread.main(["--runs", str(lonely), "--variant", "v"])


def test_against_pairs_two_variants_seed_by_seed_with_the_geometric_mean_over_seeds(tmp_path: Path) -> None:
    # Two inputs, seeds 0-1 for both variants (seed 2 of "v" only: left out of the pairing). Input 0: v is half
    # the reference at seed 0 and twice it at seed 1 (geometric mean 1: neither lower nor higher); input 1: v is
    # 0.8x the reference at both seeds.
    v = {0: {"8000": [1.0, 0.8]}, 1: {"8000": [4.0, 1.6]}, 2: {"8000": [9.0, 9.0]}}
    ref = {0: {"8000": [2.0, 1.0]}, 1: {"8000": [2.0, 2.0]}}
    _write_runs(tmp_path, v)
    _write_runs(tmp_path, ref, variant="w")
    runs = tmp_path / "runs"
    r = seed_spread.compare(seed_spread.load(runs, "v")["e"], seed_spread.load(runs, "w")["e"])
    at = r["by_budget"]["8000"]
    assert r["seeds"] == [0, 1] and at["inputs"] == 2
    assert at["median_ratio"] == pytest.approx(np.median([1.0, 0.8]))
    assert at["lower"] == pytest.approx(0.5) and at["higher"] == pytest.approx(0.0)
    assert at["mean"] == pytest.approx(np.mean([1.0, 0.8, 4.0, 1.6])) and at["mean_reference"] == pytest.approx(1.75)
    seed_spread.main(["--runs", str(tmp_path), "--variant", "v", "--against", "w"])
    page = (tmp_path / "seed_spread.md").read_text()
    assert "`v` against `w` (seeds 0, 1)" in page and "| 8,000 | 0.900 (50% / 0%) |" in page
    with pytest.raises(SystemExit, match="no seed has runs of both"):
        seed_spread.main(["--runs", str(tmp_path), "--variant", "v", "--against", "nobody"])
