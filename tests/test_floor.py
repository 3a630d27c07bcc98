"""benchmarks.studies.floor on a headline table whose answer is known."""

from __future__ import annotations

import pytest

from benchmarks.studies.floor import floor_rows


def _table() -> dict:
    return {
        "experiment": "toy", "budgets": [1000, 2000],
        "per_input": {"ours": {"1000": [1.2, 2.2, 3.3], "2000": [1.0, 2.0, None]},
                      "cw-l2": {"1000": [1.0, 2.0, 3.0], "2000": [1.0, 2.0, 3.0]}},
        "medians": {"peer": {"1000": 2.5, "2000": 2.4}},
        "best_peer": {"1000": "peer", "2000": "peer"}, "ratio": {"1000": 0.88, "2000": 0.95},
    }


def test_ratios_to_the_floor_and_what_the_goal_asks() -> None:
    rows = floor_rows(_table(), "ours")
    assert len(rows) == 1  # 2,000 was not run on every input: no row
    r = rows[0]
    assert r["budget"] == 1000 and r["inputs"] == 3
    assert r["per_input"] == pytest.approx(1.1)  # ratios 1.2, 1.1, 1.1
    assert r["near"] == 0.0  # none within 1.05
    assert r["medians"] == pytest.approx(2.2 / 2.0)
    assert r["asked"] == pytest.approx(0.9 * 2.5 / 2.0)
    assert r["met"] is True
