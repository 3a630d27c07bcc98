"""benchmarks.studies.replicates: our median in the headline's missed cells with other draws of the attack's seeds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_benchmarks_quick import standin_attack, toy_experiment

from benchmarks.attacks.ours import Ours
from benchmarks.runner import derive_seed, run_attack
from benchmarks.store import RunStore
from benchmarks.studies.replicates import main

EXP = "mnist-untargeted"
OURS = "ours-sign-growing"


def _headline(path: Path) -> Path:
    """A headline JSON with one missed cell (8000: 1.1 / 1.2 > 0.9) and one met (4000)."""
    table = {"experiment": EXP, "inputs": [0, 1, 2], "budgets": [4000, 8000],
             "medians": {OURS: {"4000": 1.0, "8000": 1.1}, "art-signopt": {"4000": 2.0, "8000": 1.2}},
             "best_peer": {"4000": "art-signopt", "8000": "art-signopt"}, "ratio": {"4000": 0.5, "8000": 1.1 / 1.2},
             "per_input": {OURS: {"4000": [0.9, 1.0, 1.1], "8000": [1.0, 1.1, 1.2]},
                           "art-signopt": {"4000": [2.0, 2.0, 2.0], "8000": [1.2, 1.2, 1.2]}}}
    out = path / "headline.json"
    out.write_text(json.dumps([table]))
    return out


def _run(image: int, d: float, budget: int = 8000) -> dict:
    return {"experiment": EXP, "attack": OURS, "image": image, "position": image, "budget": budget,
            "success": True, "distortion": d, "trace": {"q": [100, budget], "d": [5.0, d]}}


def test_each_replicate_is_read_over_the_same_best_peer_on_the_same_inputs(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    rep1, rep2 = RunStore(db, "rep1-8000"), RunStore(db, "rep2-8000")
    for i, d in enumerate([0.9, 1.0, 1.05]):
        rep1.save(_run(i, d))
    rep2.save(_run(0, 0.8))  # one input only: no median over the headline's three
    rep2.save(_run(1, 0.7, budget=20000))  # a run made with another budget is not this cell's
    out = tmp_path / "rep.md"
    main(["--headline", str(_headline(tmp_path)), "--tags", "rep1-{B},rep2-{B}", "--db", str(db), "--out", str(out)])
    (cell,) = json.loads(out.with_suffix(".json").read_text())
    assert (cell["experiment"], cell["budget"], cell["best_peer"]) == (EXP, 8000, "art-signopt")
    assert cell["headline"]["ratio"] == pytest.approx(1.1 / 1.2)
    r1 = cell["replicates"]["rep1-{B}"]
    assert r1["median"] == pytest.approx(1.0) and r1["ratio"] == pytest.approx(1.0 / 1.2)
    assert r1["per_input_vs_headline"] == pytest.approx(0.9)  # input by input 0.9, 0.909, 0.875
    assert cell["replicates"]["rep2-{B}"] is None
    page = out.read_text()
    assert "| mnist-untargeted at 8,000 (3 inputs) | art-signopt 1.2 | 1.08 | 1.1 (0.917) | 1 (0.833)" in page
    assert page.rstrip().endswith("| — |")


def test_a_tag_without_the_budget_in_it_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="template"):
        main(["--headline", str(_headline(tmp_path)), "--tags", "rep1", "--out", str(tmp_path / "x.md")])


def test_a_replicate_draws_other_seeds_and_replicate_zero_is_the_suites_own() -> None:
    base = derive_seed(0, EXP, OURS, 143)
    assert derive_seed(0, EXP, OURS, 143, replicate=0) == base
    seeds = {derive_seed(0, EXP, OURS, 143, replicate=r) for r in range(1, 4)}
    assert len(seeds) == 3 and base not in seeds


def test_the_best_peer_in_other_draws_is_read_from_any_run_as_long_as_the_cell(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    peers = RunStore(db, "rep1-peers")
    for i in range(3):
        # A 20k run read at 8000: its trace is at 1.5 until 8000, lower only after it.
        peers.save({**_run(i, 1.0, budget=20000), "attack": "art-signopt",
                    "trace": {"q": [100, 8000, 15000], "d": [5.0, 1.5, 1.0]}})
    RunStore(db, "short-peers").save({**_run(0, 1.0, budget=4000), "attack": "art-signopt"})  # shorter than the cell
    out = tmp_path / "rep.md"
    main(["--headline", str(_headline(tmp_path)), "--tags", "rep1-{B}", "--peer-tags", "rep1-peers,short-peers",
          "--db", str(db), "--out", str(out)])
    (cell,) = json.loads(out.with_suffix(".json").read_text())
    assert cell["peer_replicates"] == {"rep1-peers": pytest.approx(1.5), "short-peers": None}
    assert "| 1.5 (0.733) | — |" in out.read_text()  # ours of the headline, 1.1, over the peer's other draw


def test_a_replicate_runs_the_same_inputs_with_other_seeds_and_keeps_to_its_own_tag(tmp_path: Path) -> None:
    exp, ours = toy_experiment(3, 12), Ours("standin", impl=standin_attack)
    db = tmp_path / "runs.sqlite"
    base, rep = RunStore(db, "suite"), RunStore(db, "rep1")
    run_attack(exp, ours, base, suite_seed=0, context={}, progress=False)
    run_attack(exp, ours, rep, suite_seed=0, context={}, progress=False, replicate=1)
    seeds = {r["image"]: r["seed"] for r in base.records("toy", ours.name)}
    again = {r["image"]: (r["seed"], r["replicate"]) for r in rep.records("toy", ours.name)}
    assert set(again) == set(seeds) and all(again[i] == (derive_seed(0, "toy", ours.name, i, 1), 1) for i in again)
    assert not set(seeds.values()) & {s for s, _ in again.values()}
    assert run_attack(exp, ours, rep, suite_seed=0, context={}, progress=False, replicate=1).skipped == 3
    with pytest.raises(SystemExit, match="replicate 1, not 2"):  # another draw never stands in for this one
        run_attack(exp, ours, rep, suite_seed=0, context={}, progress=False, replicate=2)
