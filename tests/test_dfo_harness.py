"""The DFO benchmark's harness: the one counting wrapper, the profiles, and the quick preset end to end."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.dfo.__main__ import main
from benchmarks.dfo.more_wild import problem
from benchmarks.dfo.peers import BudgetSpent, Counted, available, run
from benchmarks.dfo.profiles import data_profile, performance_profile, solve_time, solve_times


def test_counted_refuses_past_the_budget_and_keeps_the_best() -> None:
    f = Counted(lambda x: float(x @ x), budget=3)
    assert [f(np.array([v])) for v in (2.0, 1.0, 3.0)] == [4.0, 1.0, 9.0]
    with pytest.raises(BudgetSpent):
        f(np.array([0.0]))
    assert f.calls == 3 and f.best == 1.0 and f.trace == [(1, 4.0), (2, 1.0)]


@pytest.mark.parametrize("solver", ["rgf", "sign", "Powell", "Nelder-Mead", "COBYQA", "ng-TBPSA", "pycma",
                                    "Py-BOBYQA"])
def test_every_solver_stays_within_the_budget(solver: str) -> None:
    if not available(solver):
        pytest.skip(f"{solver} is not installed")
    p = problem(7)  # Rosenbrock, n = 2
    f = Counted(p.copy(), budget=45)
    ending = run(solver, f, p.x0.copy(), seed=0, noisy=False)
    assert f.calls <= 45 and ending in ("budget", "stopped")
    assert f.best < p(p.x0)


def test_profiles() -> None:
    runs = {"a": {"s": [[1, 10.0], [4, 1.0]], "t": [[1, 10.0], [2, 5.0], [9, 0.0]]},
            "b": {"s": [[1, 3.0], [2, 0.0]], "t": [[1, 3.0]]}}
    f0 = {"a": 10.0, "b": 3.0}
    times = solve_times(runs, f0, 0.1, ["s", "t"])
    # a: f_L = 0, goal 1.0 -> s at 4, t at 9; b: f_L = 0, goal 0.3 -> s at 2, t never
    assert times.tolist() == [[4.0, 9.0], [2.0, math.inf]]
    dp = data_profile(times, [2, 1], [1, 2, 3, 10])
    assert dp.tolist() == [[0.5, 1.0, 1.0, 1.0], [0.0, 0.0, 0.5, 0.5]]
    assert performance_profile(times, [1, 2, 3]).tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.5]]
    assert solve_time([[1, 5.0]], 5.0, 0.0, 0.5) == math.inf


def test_quick_preset_writes_monotone_profiles(tmp_path) -> None:
    argv = ["--quick", "--problems", "7,13", "--dims", "100", "--solvers", "rgf,coordinate,Nelder-Mead,Powell",
            "--cache", str(tmp_path / "cache"),
            "--out", str(tmp_path / "out"), "--set", "more-wild"]
    assert main(argv) == 0
    page = (tmp_path / "out" / "more-wild-quick.md").read_text()
    assert "python -m benchmarks.dfo --quick" in page and "| **rgf** |" in page
    assert "Simplex gradients κ to pass the test at τ = 1e-3, per problem" in page  # a few problems: each listed
    assert (tmp_path / "out" / "more-wild-quick.png").stat().st_size > 1000
    data = json.loads((tmp_path / "out" / "more-wild-quick.json").read_text())
    assert set(data["variants"]) == {"smooth", "deterministic", "stochastic", "nondiff"}
    for variant in data["variants"].values():
        assert set(variant["area"]) == {"0.1", "0.001", "1e-05"}
        for curve in variant["data_1e-3"].values():
            assert all(0.0 <= v <= 1.0 for v in curve) and curve == sorted(curve)
        for tau in ("0.1", "0.001"):  # a looser tolerance is passed sooner
            assert all(variant["area"][tau][s] >= variant["area"]["1e-05"][s] for s in variant["area"][tau])
    cached = sorted((tmp_path / "cache").rglob("*.json"))
    assert len(cached) == 4 * 2 * 4
    mtimes = [c.stat().st_mtime_ns for c in cached]
    assert main(argv) == 0  # a second invocation reads every run from the cache
    assert [c.stat().st_mtime_ns for c in cached] == mtimes


def test_an_entry_with_the_noise_option_is_its_solver_without_noise_and_stays_within_the_budget() -> None:
    from benchmarks.dfo.run import run_one, stated_precision

    smooth, noisy = problem(7), problem(7, "stochastic", noise_seed=3)
    assert stated_precision(smooth) is None and stated_precision(noisy)(2.0) == pytest.approx(2 * 3**0.5 * 1e-3,
                                                                                               rel=1e-2)
    assert run_one(smooth, "rgf+noise", 150, 5, math.inf)["trace"] == run_one(smooth, "rgf", 150, 5, math.inf)["trace"]
    rec = run_one(noisy, "coordinate+noise", 150, 5, math.inf)
    assert rec["calls"] <= 150 and rec["ending"] in ("budget", "stopped")


def test_noisy_variants_run_at_several_seeds_each_one_problem_of_the_profiles(tmp_path) -> None:
    from benchmarks.dfo.run import Plan, execute

    cache = tmp_path / "cache"
    argv = ["--set", "more-wild", "--problems", "7,13", "--kappa-max", "10", "--solvers", "rgf,Powell",
            "--variants", "smooth,stochastic", "--noisy-seeds", "2", "--cache", str(cache), "--out", str(tmp_path)]
    assert main(argv) == 0
    rosen = cache / "more-wild" / "stochastic" / "rosenbrock_n2_s0"
    assert sorted(p.name for p in rosen.iterdir()) == ["Powell.json", "Powell.seed1.json", "rgf.json",
                                                       "rgf.seed1.json"]
    assert sorted(p.name for p in (cache / "more-wild" / "smooth" / "rosenbrock_n2_s0").iterdir()) == [
        "Powell.json", "rgf.json"]
    zero, one = (json.loads((rosen / f"Powell{s}.json").read_text()) for s in ("", ".seed1"))
    assert (zero["seed"], one["seed"]) == (0, 1) and zero["trace"] != one["trace"]  # other noise draws
    data = json.loads((tmp_path / "more-wild.json").read_text())["variants"]
    assert data["smooth"]["seeds"] == [0] and "area_per_seed" not in data["smooth"]
    sto = data["stochastic"]
    assert sto["seeds"] == [0, 1]
    for tau, areas in sto["area"].items():  # 2 problems at each of 2 seeds: the area is the seeds' mean
        for s, a in areas.items():
            assert a == pytest.approx(np.mean(sto["area_per_seed"][tau][s]), abs=1.5e-3)
    page = (tmp_path / "more-wild.md").read_text()
    assert "area per seed (0, 1)" in page and "Seeds: stochastic at 2 seeds" in page
    # A plan at seed 1 reads seed 1's records, not seed 0's, and runs nothing again.
    mtimes = {p: p.stat().st_mtime_ns for p in cache.rglob("*.json")}
    again = execute(Plan("more-wild", ("stochastic",), ("Powell",), 10, (7,), seed=1), cache)
    assert again["stochastic"]["rosenbrock_n2_s0"]["Powell"]["trace"] == one["trace"]
    assert {p: p.stat().st_mtime_ns for p in cache.rglob("*.json")} == mtimes


def test_a_record_covers_a_smaller_budget_only(tmp_path) -> None:
    from benchmarks.dfo.run import load

    path = tmp_path / "rgf.json"
    # zeroopt and scipy stop themselves at the budget they are given and report a normal stop.
    path.write_text(json.dumps({"budget": 30, "calls": 30, "ending": "stopped", "trace": [[1, 5.0], [20, 1.0]]}))
    assert load(path, 60) is None
    assert load(path, 30)["trace"] == [[1, 5.0], [20, 1.0]]
    assert load(path, 10)["trace"] == [[1, 5.0]]
    assert load(tmp_path / "missing.json", 10) is None


def test_a_plugins_solver_joins_the_comparison_beside_zeroopts_and_a_bad_plugin_is_a_usage_error(tmp_path) -> None:
    # In a child process, as the plugin tests run it: the plugin registers a solver and a sampler for good.
    argv = [sys.executable, "-m", "benchmarks.dfo", "--set", "more-wild", "--problems", "7", "--variants", "smooth",
            "--kappa-max", "5", "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "out")]
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([*argv, "--plugin", "docs/examples/spsa_plugin.py", "--solvers", "spsa,Powell"], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "out" / "more-wild.md").read_text()
    assert "| **spsa** |" in page and "| Powell |" in page  # on zeroopt's side of the page
    record = json.loads(next((tmp_path / "cache").rglob("spsa.json")).read_text())
    assert 0 < record["calls"] <= 5 * (record["n"] + 1)
    bad = subprocess.run([*argv, "--plugin", "no_such_plugin_module"], cwd=root, capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and "--plugin" in bad.stderr and "Traceback" not in bad.stderr


def test_budgets_behind_a_peer_are_written_as_ranges() -> None:
    from benchmarks.dfo.report import _ranges

    assert _ranges([10, 11, 12, 40]) == "10–12, 40"
    assert _ranges([5]) == "5" and _ranges([]) == ""


# --- issue 63: what the cache reuses, and what it survives -----------------------------------------------------


def test_a_time_limited_run_is_never_reused_as_a_full_one(tmp_path) -> None:
    from benchmarks.dfo.run import Plan, execute

    cache = tmp_path / "cache"
    cut = execute(Plan("more-wild", ("smooth",), ("rgf", "Powell"), 5, (7,), seconds=1e-9), cache, log=None)
    for rec in cut["smooth"]["rosenbrock_n2_s0"].values():  # the limit passed before the first evaluation
        assert rec["calls"] == 0 and rec["ending"] == "time limit" and rec["timed_out"]
    again = execute(Plan("more-wild", ("smooth",), ("rgf", "Powell"), 5, (7,), seconds=1e-9), cache, log=None)
    assert again == cut  # the same limit: the cached runs are what it asks for
    full = execute(Plan("more-wild", ("smooth",), ("rgf", "Powell"), 5, (7,)), cache, log=None)
    for rec in full["smooth"]["rosenbrock_n2_s0"].values():  # no limit: every run made again, to its budget
        assert rec["calls"] > 0 and not rec["timed_out"] and rec["ending"] != "time limit"


@pytest.mark.parametrize("record, seconds, reused", [
    ({"ending": "time limit", "timed_out": True, "seconds_limit": 5.0, "calls": 3}, math.inf, False),
    ({"ending": "time limit", "timed_out": True, "seconds_limit": 5.0, "calls": 3}, 10.0, False),
    ({"ending": "time limit", "timed_out": True, "seconds_limit": 5.0, "calls": 3}, 5.0, True),
    ({"ending": "time limit", "timed_out": True, "seconds_limit": 5.0, "calls": 3}, 1.0, True),
    ({"ending": "time limit", "timed_out": True, "seconds_limit": 5.0, "calls": 30}, math.inf, True),  # reached it
    ({"ending": "time limit", "calls": 3}, 5.0, False),  # a record of before the limit was kept: unknown limit
    ({"ending": "budget", "timed_out": False, "seconds_limit": 5.0, "calls": 30}, math.inf, True),  # not cut
])
def test_a_cut_record_covers_only_what_it_reached_or_a_limit_no_larger(tmp_path, record, seconds, reused) -> None:
    from benchmarks.dfo.run import load

    path = tmp_path / "rgf.json"
    path.write_text(json.dumps({"budget": 30, "trace": [[1, 5.0]], **record}))
    assert (load(path, 30, seconds) is not None) == reused


def test_an_unreadable_record_is_run_again_with_a_warning_and_records_are_written_whole(tmp_path) -> None:
    import io

    from benchmarks.dfo.run import Plan, execute, record_path

    cache = tmp_path / "cache"
    plan = Plan("more-wild", ("smooth",), ("Powell",), 5, (7,))
    first = execute(plan, cache, log=None)
    path = record_path(cache, "more-wild", "smooth", "rosenbrock_n2_s0", "Powell", 0)
    path.write_text(path.read_text()[:25])  # cut, as a killed writer would have left it before writes were renamed
    log = io.StringIO()
    again = execute(plan, cache, log=log)
    assert "cannot read the cached run" in log.getvalue() and str(path) in log.getvalue()
    assert again["smooth"]["rosenbrock_n2_s0"]["Powell"]["trace"] == first["smooth"]["rosenbrock_n2_s0"]["Powell"][
        "trace"]
    assert json.loads(path.read_text())["calls"] > 0
    assert [p.name for p in path.parent.iterdir()] == ["Powell.json"]  # no temporary file left beside it


@pytest.mark.parametrize("index", [0, -1, 54])
def test_a_problem_number_outside_the_table_is_refused(index: int) -> None:
    with pytest.raises(ValueError, match="numbered 1 to 53"):
        problem(index)
