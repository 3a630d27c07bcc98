"""The COCO adapter: runs through cocoex write exdata that reads back into ECDFs; the ECDF's arithmetic by hand."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.coco.__main__ import build_parser, main
from benchmarks.coco.exdata import TARGETS, area, at_budget, hitting_times
from benchmarks.coco.run import Plan, check_plan, folder_name, parse_numbers


def test_hitting_times_and_area_by_hand() -> None:
    trace = [(1, 1e3), (5, 1e1), (40, 1e-9)]
    times = hitting_times(trace)
    assert times[0] == 5 and times[-1] == 40 and np.all(times[(TARGETS > 1e1 - 1e-9)] <= 5)
    assert area([([(1, 0.0)], 2)], 100) == pytest.approx(1.0)  # every target at the first evaluation
    assert area([([(1, 1e3)], 2)], 100) == 0.0 and at_budget([(trace, 1)], 100) == 1.0


def test_arguments_are_checked_before_any_run() -> None:
    assert parse_numbers("1-3,7") == (1, 2, 3, 7)
    assert check_plan(Plan("bbob-noisy", (2,), (1,), (1,))) is not None  # bbob-noisy's functions are 101-130
    assert check_plan(Plan("bbob", (2,), (1,), (24,))) is None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--instances", "0"])
    with pytest.raises(SystemExit):
        main(["--solvers", "no-such-solver"])


def test_a_tiny_run_writes_exdata_that_reads_back(tmp_path) -> None:  # noqa: ANN001
    pytest.importorskip("cocoex")
    from benchmarks.coco.exdata import read_folder
    from benchmarks.coco.run import run_plan

    plan = Plan("bbob", (2,), (1,), (1, 2), ("coordinate+qn", "coordinate+qn/one-run", "Powell"), budget_multiplier=20)
    records = run_plan(plan, tmp_path)
    assert len(records) == 6 and all(r["evaluations"] <= r["budget"] == 40 for r in records)
    whole = [r for r in records if r["solver"] == "coordinate+qn"]
    assert all(r["evaluations"] == 40 for r in whole)  # restarts spend the whole budget
    for solver in plan.solvers:
        folder = tmp_path / "exdata" / folder_name("bbob", solver)
        runs = read_folder(folder)
        assert sorted(runs) == [(1, 2), (2, 2)] and all(len(t) == 1 for t in runs.values())
        assert list(folder.glob("*.info"))
    with pytest.raises(SystemExit, match="exists"):  # COCO would write beside it under another name
        run_plan(plan, tmp_path)
