"""Fast checks of the benchmark harness: storage, tables, the runner end to end (the monitor: test_query_monitor).

No real data or peers are needed: the model is a small linear classifier and "ours" is a trivial stand-in that
implements the ``applications.hardlabel.attack`` contract. Peer parts run only if the peers are installed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from harness_toys import CountingLabels, linear_labels, originals

from benchmarks.attacks.base import Batch, Reported
from benchmarks.attacks.ours import Ours
from benchmarks.experiments import Experiment, Plan
from benchmarks.monitor import QueryMonitor
from benchmarks.runner import run_attack
from benchmarks.store import RunStore, decode_array, encode_array


def test_array_codec_is_lossless() -> None:
    a = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    np.testing.assert_array_equal(decode_array(encode_array(a)), a)
    assert decode_array(None) is None and encode_array(None) is None


def test_plan_scaling() -> None:
    plan = Plan(100, 20, (1000, 2000, 20000), n_long=20, long_budget=50000)
    assert plan.scaled(max_budget=50000) == plan
    assert plan.scaled(max_budget=30000).columns() == (1000, 2000, 20000, 30000)
    assert plan.scaled(max_budget=20000).columns() == (1000, 2000, 20000)
    small = plan.scaled(n_ours=2, n_peers=1, n_long=5, max_budget=1500)
    assert small.columns() == (1000, 1500) and small.budget == 1500 and small.n_long == 2


def test_table_statistics_from_traces() -> None:
    from benchmarks.tables import cell, distances_at

    recs = [
        {"trace": {"q": [5, 20], "d": [3.0, 1.0]}, "budget": 30, "success": True, "distortion": 1.0},
        {"trace": {"q": [40], "d": [2.0]}, "budget": 50, "success": True, "distortion": 2.0},
        {"trace": None, "budget": 30, "success": True, "distortion": 0.5},  # white-box: one figure
    ]
    d = distances_at(recs, [10, 30, 50])
    np.testing.assert_array_equal(d[0], [3.0, 1.0, np.nan])  # not run to 50
    np.testing.assert_array_equal(d[1], [np.inf, np.inf, 2.0])
    np.testing.assert_array_equal(d[2], [0.5, 0.5, 0.5])
    c = cell(d[:2, 1])
    assert c["n"] == 2 and c["success"] == 0.5 and c["mean"] == 1.0 and c["median"] is None  # median inf
    assert cell(np.array([1.0, 2.0, np.inf]))["median"] == 2.0
    assert cell(d[1:2, 0])["median"] is None and cell(np.array([np.nan]))["n"] == 0


def test_a_returned_point_that_is_not_adversarial_is_a_failure_everywhere() -> None:
    from benchmarks.tables import checks, distances_at

    def rec(adversarial: bool | None) -> dict:
        claim = {"distortion": None if adversarial is None else 1.0, "adversarial": adversarial, "in_bounds": True}
        return {"trace": {"q": [5, 20], "d": [3.0, 1.0]}, "budget": 30, "success": True, "distortion": 1.0,
                "claim": claim, "count_check": "exact", "image": 0}

    d = distances_at([rec(True), rec(False), rec(None)], [10, 30, 50])
    np.testing.assert_array_equal(d[0], [3.0, 1.0, np.nan])
    np.testing.assert_array_equal(d[1], [np.inf, np.inf, np.nan])  # its answer is wrong: failed at every budget
    np.testing.assert_array_equal(d[2], [3.0, 1.0, np.nan])  # stopped before returning: the monitor's figures
    assert checks({"a": [rec(True), rec(False), rec(None)]})["a"]["returned_not_adversarial"] == 1


# --------------------------------------------------------------------- the runner, with a stand-in "ours"


def standin_attack(
    model: Any, x0: np.ndarray, y0: np.ndarray, *, budget: int, seed: int,
    solver_options: Mapping[str, Any] | None = None, **_: Any
) -> Any:
    """The attack contract, trivially: bisect each input towards a point of another class.

    The point swaps the input's top two class coordinates, plus ``reach`` (a solver option, default 0) times
    uniform noise (far probes).
    All inputs of the batch are queried together in every model call, so group mode mixes them.
    """
    rng = np.random.default_rng(seed)
    reach = float((solver_options or {}).get("reach", 0.0))
    n = len(x0)
    rows = np.arange(n)
    far = x0.copy()
    far[rows, (y0 + 1) % 3] = x0[rows, y0]
    far[rows, y0] = x0[rows, (y0 + 1) % 3]
    far = np.clip(far + reach * rng.uniform(-1, 1, size=x0.shape), 0, 1).astype(np.float32)
    lo, hi = np.zeros(n), np.ones(n)
    queries = np.zeros(n, dtype=np.int64)
    best = np.full(n, np.inf)
    x_adv = x0.copy()
    while queries.max() < budget:
        mid = (lo + hi) / 2
        pts = (x0 + mid[:, None] * (far - x0)).astype(np.float32)
        adv = model(pts) != y0
        queries += 1
        hi = np.where(adv, mid, hi)
        lo = np.where(adv, lo, mid)
        dist = np.linalg.norm(pts - x0, axis=1)
        better = adv & (dist < best)
        best[better] = dist[better]
        x_adv[better] = pts[better]
    return SimpleNamespace(x_adv=x_adv, distortion=best, queries=queries, success=np.isfinite(best))


def toy_experiment(n: int, budget: int) -> Experiment:
    x0, y0 = originals(n)
    return Experiment(
        name="toy",
        title="toy",
        stem="toy",
        plan=Plan(n_ours=n, n_peers=n, budgets=(budget // 2, budget)),
        index=np.arange(n),
        x=x0,
        y=y0,
        target=None,
        starts=None,
        bounds=(0.0, 1.0),
        n_classes=3,
        label_fn=linear_labels,
        torch_model=None,
        image_like=False,
    )


@pytest.mark.parametrize("group", [1, 4])
def test_runner_end_to_end_with_a_standin_attack(tmp_path: Path, group: int) -> None:
    exp = toy_experiment(4, 12)
    store = RunStore(tmp_path)
    ours = Ours("standin", group_size=group, impl=standin_attack)  # probes stay near their own original
    summary = run_attack(exp, ours, store, suite_seed=0, context={"command": "test"}, progress=False)
    assert summary.ran == 4 and not summary.errors
    records = list(store.records("toy", ours.name))
    assert len(records) == 4
    for r in records:
        assert r["queries"] == 12 and r["count_check"] == "exact" and r["budget_exceeded"] == 0
        assert r["success"] and r["claim"]["adversarial"]
        assert r["distortion"] == pytest.approx(r["claim"]["distortion"], rel=1e-6)
        assert r["trace"]["q"][-1] <= 12
        assert r["command"] == "test"
    again = run_attack(exp, ours, store, suite_seed=0, context={}, progress=False)
    assert again.ran == 0 and again.skipped == 4  # resumable: finished runs are kept


def test_redo_nonadversarial_reruns_only_the_runs_whose_returned_point_failed(tmp_path: Path) -> None:
    exp = toy_experiment(4, 12)
    store = RunStore(tmp_path)
    ours = Ours("standin", impl=standin_attack)
    run_attack(exp, ours, store, suite_seed=0, context={"command": "first"}, progress=False)
    stale = store.load("toy", ours.name, 2)
    assert stale is not None
    store.save({**stale, "claim": {**stale["claim"], "adversarial": False}})  # as the 11 runs of suite/full
    kept = run_attack(exp, ours, store, suite_seed=0, context={}, progress=False)
    assert kept.ran == 0 and kept.skipped == 4  # without the option a stored run is a stored run
    redo = run_attack(
        exp, ours, store, suite_seed=0, context={"command": "redo"}, progress=False, redo_nonadversarial=True
    )
    assert redo.ran == 1 and redo.skipped == 3
    rerun = store.load("toy", ours.name, 2)
    assert rerun is not None and rerun["command"] == "redo" and rerun["claim"]["adversarial"] is True
    assert all(r["command"] == "first" for r in store.records("toy", ours.name) if r["image"] != 2)


def test_fresh_selection_forgets_one_attack_s_runs_and_keeps_the_rest_of_the_tag(tmp_path: Path) -> None:
    from benchmarks.suite_options import parse_args

    store, other_tag = RunStore(tmp_path / "r.sqlite", "t"), RunStore(tmp_path / "r.sqlite", "u")
    for tag_store in (store, other_tag):
        for experiment, attack, image in (("e", "a", 0), ("e", "a", 1), ("e", "b", 0), ("f", "a", 0)):
            tag_store.save({"experiment": experiment, "attack": attack, "image": image, "budget": 10})
    assert store.forget("e", "a") == 2
    assert [r["image"] for r in store.records("e", "a")] == []
    assert len(list(store.records("e", "b"))) == len(list(store.records("f", "a"))) == 1  # other attacks, experiments
    assert len(list(other_tag.records("e", "a"))) == 2  # and other tags are kept
    assert parse_args(["--fresh-selection"]).fresh_selection
    with pytest.raises(SystemExit):  # a shard could delete another shard's new runs
        parse_args(["--fresh-selection", "--shard", "0/2"])
    with pytest.raises(SystemExit):  # nothing would be left to report
        parse_args(["--fresh-selection", "--stored-only"])


def test_group_mode_totals_stay_exact_and_misattribution_is_flagged(tmp_path: Path) -> None:
    exp = toy_experiment(4, 12)
    ours = Ours("noisy", group_size=4, impl=standin_attack, options={"reach": 3.0})  # far, noise-like probes
    run_attack(exp, ours, RunStore(tmp_path), suite_seed=0, context={}, progress=False)
    records = list(RunStore(tmp_path).records("toy", ours.name))
    assert sum(r["queries"] for r in records) == 4 * 12
    assert records[0]["time"]["group_samples"] == 4 * 12
    assert any(r["count_check"] == "mismatch" for r in records)
    assert sum(r["ambiguous"] for r in records) > 0


def test_runner_flags_a_budget_overshoot_and_a_count_mismatch(tmp_path: Path) -> None:
    def overshooting(model: Any, x0: np.ndarray, y0: np.ndarray, *, budget: int, **kw: Any) -> Any:
        res = standin_attack(model, x0, y0, budget=budget + 2, **kw)
        res.queries = res.queries - 2  # under-reports, as hand counters do
        return res

    exp = toy_experiment(1, 10)
    rec = None
    run_attack(exp, Ours("over", impl=overshooting), RunStore(tmp_path), suite_seed=0, context={}, progress=False)
    rec = next(RunStore(tmp_path).records("toy", "ours-over"))
    assert rec["queries"] == 12 and rec["budget_exceeded"] == 2 and rec["count_check"] == "mismatch"


def test_runner_keeps_the_trace_when_an_attack_crashes(tmp_path: Path) -> None:
    def crashing(model: Any, x0: np.ndarray, y0: np.ndarray, **_: Any) -> Any:
        model(np.clip(x0 + 0.5, 0, 1))
        raise RuntimeError("boom")

    exp = toy_experiment(1, 10)
    store = RunStore(tmp_path)
    summary = run_attack(exp, Ours("crash", impl=crashing), store, suite_seed=0, context={}, progress=False)
    rec = next(store.records("toy", "ours-crash"))
    assert summary.errors and "boom" in rec["error"] and rec["queries"] == 1


# ------------------------------------------------------------------------------ peers, when installed


def _batch(n: int) -> Batch:
    x0, y0 = originals(n)
    return Batch(x0=x0, y0=y0, target=None, starts=None, bounds=(0.0, 1.0), n_classes=3)


@pytest.mark.skipif(importlib.util.find_spec("art") is None, reason="ART not installed")
def test_art_hsj_is_stopped_by_the_monitor_at_the_budget() -> None:
    from benchmarks.attacks.art_peers import ArtHopSkipJump

    batch = _batch(1)
    traces = []
    for _ in range(2):  # ART draws its start from an unseeded RandomState(): the adapter makes it reproducible
        model = CountingLabels()
        mon = QueryMonitor(model, batch.bounds, budget=150, on_exhausted="raise")
        mon.register(batch.x0, batch.y0)
        with mon.owned_by(0):
            out = ArtHopSkipJump().run(mon, batch, 150, seed=0)
        assert isinstance(out[0], Reported)
        assert mon.inputs[0].count == sum(len(s) for s in model.seen) <= 150
        assert np.isfinite(mon.inputs[0].best)
        traces.append((mon.inputs[0].steps_q, mon.inputs[0].steps_d))
    assert traces[0] == traces[1]


@pytest.mark.skipif(importlib.util.find_spec("foolbox") is None, reason="foolbox not installed")
def test_foolbox_boundary_is_stopped_by_the_monitor_at_the_budget() -> None:
    from benchmarks.attacks.foolbox_peers import BOUNDARY, FoolboxDecision

    batch = _batch(1)
    mon = QueryMonitor(linear_labels, batch.bounds, budget=120, on_exhausted="raise")
    mon.register(batch.x0, batch.y0)
    with mon.owned_by(0):
        out = FoolboxDecision(*BOUNDARY).run(mon, batch, 120, seed=0)
    assert out[0].x_adv is None and mon.inputs[0].count == 120
    assert np.isfinite(mon.inputs[0].best)


def test_a_missing_peer_is_reported_not_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks import run_suite
    from benchmarks.attacks import foolbox_peers

    monkeypatch.setattr(foolbox_peers, "_foolbox_missing", lambda: "foolbox is not installed (test)")
    args = run_suite.parse_args(["--quick", "--attacks", "fb-boundary,fb-hsja,cw-l2,ours-standin"])
    exp = toy_experiment(2, 10)
    ready, unavailable = run_suite.make_attacks(args, exp)
    assert [a.name for a in ready] == ["ours-standin"]
    assert set(unavailable) == {"fb-boundary", "fb-hsja", "cw-l2"}
    assert all("not installed" in why for why in unavailable.values())


def test_store_keeps_runs_in_sqlite_and_imports_old_run_files(tmp_path: Path) -> None:
    import gzip
    import json
    import tarfile

    from benchmarks.import_runs import export_files, import_files, import_suite_runs
    from benchmarks.store import FileStore

    db = tmp_path / "r.sqlite"
    store = RunStore(db, "t")
    record = {"experiment": "e", "attack": "a", "image": 3, "budget": 200, "x": [0.1, 1e-300]}
    store.save(record)
    assert store.load("e", "a", 3) == {"schema": 1, **record}
    assert store.done("e", "a", 3, 200) and not store.done("e", "a", 3, 201)
    store.save({**record, "image": 7})
    assert [r["image"] for r in store.records("e", "a")] == [3, 7]
    assert RunStore(db, "other").load("e", "a", 3) is None  # tags are separate
    # Old run files (gzipped and plain JSON) and archives are loaded into the database.
    results = tmp_path / "results"
    runs = results / "suite" / "old" / "runs" / "e" / "a"
    runs.mkdir(parents=True)
    (runs / "00001.json.gz").write_bytes(gzip.compress(json.dumps({"schema": 1, **record, "image": 1}).encode()))
    (runs / "00002.json").write_text(json.dumps({"schema": 1, **record, "image": 2, "budget": 50}))
    chunks = results / "hardlabel" / "runs"
    chunks.mkdir(parents=True)
    (chunks / "c.json").write_text('{"k": 1}')
    member = tmp_path / "m.json"
    member.write_text('{"m": 2}')
    with tarfile.open(results / "hardlabel" / "runs.tgz", "w:gz") as tar:
        tar.add(member, arcname="q/runs/m.json")
    assert import_suite_runs(results, db, progress=False) == {"old": 2}
    old = RunStore(db, "old")
    assert [(r["image"], r["budget"]) for r in old.records("e", "a")] == [(1, 200), (2, 50)]
    old.save({**record, "image": 2, "budget": 500})
    assert import_suite_runs(results, db, progress=False) == {"old": 1}  # a larger stored run is kept
    assert old.load("e", "a", 2)["budget"] == 500
    assert import_files(results, db) == 2
    assert FileStore(db).get("hardlabel/runs/c.json") == b'{"k": 1}'
    assert export_files(db, tmp_path / "out", "hardlabel/runs.tgz") == 1
    assert (tmp_path / "out" / "hardlabel" / "runs.tgz" / "q" / "runs" / "m.json").read_text() == '{"m": 2}'


def test_shards_split_the_inputs_and_a_past_deadline_starts_nothing(tmp_path: Path) -> None:
    import time

    exp = toy_experiment(5, 12)
    store = RunStore(tmp_path)
    ours = Ours("standin", impl=standin_attack)
    late = run_attack(exp, ours, store, suite_seed=0, context={}, progress=False, deadline=time.perf_counter() - 1)
    assert late.ran == 0 and late.left == 5 and not list(store.records("toy", ours.name))
    first = run_attack(exp, ours, store, suite_seed=0, context={}, progress=False, shard=(1, 2))
    assert first.ran == 2 and sorted(r["position"] for r in store.records("toy", ours.name)) == [1, 3]
    second = run_attack(exp, ours, store, suite_seed=0, context={}, progress=False, shard=(0, 2))
    assert second.ran == 3 and len(list(store.records("toy", ours.name))) == 5
    # a shard's runs equal those of an unsharded run (the seed depends on the input, not on the split)
    whole = RunStore(tmp_path / "whole")
    run_attack(exp, ours, whole, suite_seed=0, context={}, progress=False)
    for r in whole.records("toy", ours.name):
        s = store.load("toy", ours.name, r["image"])
        keys = ("seed", "distortion", "queries")
        assert s is not None and [s[k] for k in keys] == [r[k] for k in keys]


def test_parallel_tasks_skip_stored_runs_and_return_only_new_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A parallel task runs the suite against a scratch database seeded with the stored runs' index."""
    from benchmarks import parallel, run_suite

    exp = toy_experiment(4, 12)
    ours = Ours("standin", impl=standin_attack)
    main_store = RunStore(tmp_path / "main.sqlite", "toy")
    run_attack(exp, ours, main_store, suite_seed=0, context={}, progress=False, shard=(0, 2))  # positions 0, 2

    def fake_suite(argv: list[str]) -> int:  # run_suite.main on the toy experiment, with the task's --db
        db = argv[argv.index("--db") + 1]
        run_attack(exp, ours, RunStore(db, "toy"), suite_seed=0, context={}, progress=False)
        return 0

    monkeypatch.setattr(run_suite, "main", fake_suite)
    task = parallel.Task("toy", 0, 1, ("--runs-only",))
    made = parallel.run_task((task, "toy", main_store.index()), {})
    assert sorted(r["position"] for r in made) == [1, 3]  # the stored runs were skipped, not returned
    for r in made:
        main_store.save(r)
    assert main_store.count() == 4 and not any(r.get("_stand_in") for r in main_store.all_records())


def test_ablation_pairs_inputs_and_leaves_failures_out_of_the_ratio() -> None:
    from benchmarks.studies.ablation import paired

    ref = {"distortion_at": {"1000": [1.0, 2.0, 4.0, np.inf, 1e-4]}}
    other = {"distortion_at": {"1000": [0.5, 2.0, 8.0, 1.0, 1e-1]}}
    # ratios 0.5, 1, 2 and 1000 (the input the reference failed is left out of the ratio): their median is 1.5,
    # whatever the near-threshold input's 1000 is; lower on two of five (a success where the reference failed is
    # lower), higher on two
    assert paired(ref, other, 1000) == "1.500 (40% / 40%)"
    assert paired(ref, {"distortion_at": {"1000": [0.5, 1.0, 2.0, 1.0, 5e-5]}}, 1000) == "0.500 (100% / 0%)"
    assert paired(ref, other, 2000) == "—"  # a budget neither ran to


def test_runs_only_stores_runs_and_leaves_the_results_folder_alone(tmp_path: Path) -> None:
    from benchmarks import run_suite

    argv = ["--quick", "--experiments", "gbdt-higgs", "--attacks", "ours-sign-growing", "--images", "1",
            "--max-budget", "250", "--runs-only", "--no-progress", "--db", str(tmp_path / "db.sqlite"),
            "--results-dir", str(tmp_path / "results")]
    assert run_suite.main(argv) == 0
    assert RunStore(tmp_path / "db.sqlite", "quick").count() == 1
    assert not (tmp_path / "results").exists()  # no empty tag folder: the pages come from a later plain run
