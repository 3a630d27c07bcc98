"""The ratio page of benchmarks.trees_exact: attack distortion / exact minimum per input and budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.store import RunStore
from benchmarks.trees_report import ratios


def _run(store: RunStore, attack: str, image: int, q: list[int], d: list[float]) -> None:
    store.save({"experiment": "gbdt-higgs", "attack": attack, "image": image, "budget": 29598,
                "trace": {"q": q, "d": d}, "distortion": d[-1], "success": True})


def test_ratios_per_input_and_budget(tmp_path: Path) -> None:
    exact = {"1": {"distance": 0.1, "status": "optimal", "seconds": 1.0},
             "2": {"distance": 0.2, "status": "optimal", "seconds": 3.0},
             "3": {"distance": 1e-35, "status": "optimal", "seconds": 2.0}}  # a ±1e-35 flip: left out
    (tmp_path / "full" / "exact").mkdir(parents=True)
    (tmp_path / "full" / "exact" / "gbdt-higgs-raw.json").write_text(json.dumps({"inputs": exact}))
    store = RunStore(tmp_path / "db", "full")
    _run(store, "ours-rgf", 1, [100, 5000, 20000], [1.0, 0.5, 0.11])
    _run(store, "ours-rgf", 2, [100], [0.4])
    _run(store, "ours-rgf", 3, [10], [0.05])
    _run(store, "art-hsj", 1, [3000], [0.2])
    block = ratios(tmp_path, "gbdt-higgs", "raw", db=tmp_path / "db")
    assert block is not None and block["budgets"] == [4229, 10000, 11139, 29598]
    assert block["exact"]["tiny"] == 1 and block["exact"]["median_without_tiny"] == pytest.approx(0.15)
    rows = {(r["attack"], r["which"]): r for r in block["rows"]}
    ours = rows[("ours-rgf", "all")]["cells"]
    assert [c["median"] for c in ours] == pytest.approx([6.0, 3.5, 3.5, 1.55])
    assert ours[3]["within_1.1"] == 1 and ours[3]["n"] == 2
    shared = rows[("ours-rgf", "peers' inputs")]["cells"]  # input 1 only, as the peer
    assert [c["median"] for c in shared] == pytest.approx([10.0, 5.0, 5.0, 1.1])
    assert [c["median"] for c in rows[("art-hsj", "all")]["cells"]] == pytest.approx([2.0] * 4)


def test_the_default_s_row_reads_each_column_from_the_runs_made_with_that_budget(tmp_path: Path) -> None:
    from benchmarks.trees_report import DEFAULT_ATTACK, _goal_line

    exact = {str(i): {"distance": 0.1, "status": "optimal", "seconds": 1.0} for i in (1, 2)}
    (tmp_path / "full" / "exact").mkdir(parents=True)
    (tmp_path / "full" / "exact" / "gbdt-higgs-raw.json").write_text(json.dumps({"inputs": exact}))
    _run(RunStore(tmp_path / "db", "full"), "ours-rgf", 1, [100], [0.4])
    for budget, (early, late) in {4229: (0.5, 0.3), 11139: (0.2, 0.12), 29598: (0.15, 0.11)}.items():
        store = RunStore(tmp_path / "db", f"b-{budget}")
        for image in (1, 2):  # a run made with each budget: its trace falls from `early` to `late` at the end
            store.save({"experiment": "gbdt-higgs", "attack": DEFAULT_ATTACK, "image": image, "budget": budget,
                        "trace": {"q": [10, budget - 100], "d": [early, late]}, "distortion": late, "success": True})
    block = ratios(tmp_path, "gbdt-higgs", "raw", db=tmp_path / "db", default_tags="b-{B}")
    assert block is not None
    row = next(r for r in block["rows"] if r["attack"].startswith(DEFAULT_ATTACK))
    assert row["made_with"] == {"4229": 4229, "10000": 11139, "11139": 11139, "29598": 29598}
    # 10k is read from the 11,139 runs' trace (0.2 until their last point at 11,039), not from the 29,598 runs
    assert [c["median"] for c in row["cells"]] == pytest.approx([3.0, 2.0, 1.2, 1.1])
    assert "`ours-sign-growing`" in _goal_line(block) and "median 2.00, NOT met" in _goal_line(block)
    assert ratios(tmp_path, "gbdt-higgs", "raw", db=tmp_path / "db", default_tags="none-{B}")["rows"][-1][
        "attack"] == "ours-rgf"  # no such runs: no row
