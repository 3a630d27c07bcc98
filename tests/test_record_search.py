"""The record search start: about one query per candidate, the same winner as the tournament up to its bracket."""

from __future__ import annotations

import numpy as np
import pytest
from boundary_oracles import linear_group

from applications.hardlabel.initial import initial_search
from applications.hardlabel.record import record_search


def _candidates(seed: int, n: int, d: int = 30) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The boundary w·x = 1 (x0 = 0 is inside), and n candidate directions of length ``lam``, some of which
    never reach it."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(d)
    dirs = rng.standard_normal((n, d))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    return w, dirs, dirs @ w


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_record_search_finds_the_nearest_candidate_for_about_one_query_each(seed: int) -> None:
    w, dirs, cos = _candidates(seed, 60)
    reach = cos > 0.05
    lam = float((1.0 / cos[reach]).max() * 1.5)
    g = 1.0 / cos[reach]  # exact boundary distance along the directions that reach the boundary
    group = linear_group(np.zeros(len(w)), w, -1.0, budget=10_000)
    theta, value = record_search(group, {0: dirs * lam}, eps=1e-6)[0]
    assert value == pytest.approx(1.0 / (theta @ w), abs=1e-5)  # the winner's own distance, to ε
    assert value <= g.min() / 0.9 + 1e-6  # within the bracket's ratio of the best candidate
    spent = group.images[0].ledger.spent
    # One question per candidate, a few per record (about ln n of them), and one bisection of the winner.
    assert spent <= len(dirs) + 4 * np.log(len(dirs)) * 4 + np.log2(lam / 1e-6) + 10
    # The tournament asks every candidate at its own length first, then survivors again at each radius.
    other = linear_group(np.zeros(len(w)), w, -1.0, budget=10_000)
    _, t_value = initial_search(other, {0: dirs * lam}, 1e-6, "tournament")[0]
    assert spent < 0.75 * other.images[0].ledger.spent
    assert value <= t_value / 0.9 + 1e-6


def test_no_adversarial_candidate_leaves_the_input_out_and_a_budget_cut_keeps_what_is_known() -> None:
    w, dirs, cos = _candidates(4, 20)
    group = linear_group(np.zeros(len(w)), w, -1.0, budget=10_000)
    assert record_search(group, {0: dirs[cos < 0] * 5.0}, eps=1e-6) == {}  # none reaches the boundary
    assert group.images[0].ledger.spent == int((cos < 0).sum())  # one question each, then nothing
    lam = float((1.0 / cos[cos > 0.05]).max() * 1.5)
    short = linear_group(np.zeros(len(w)), w, -1.0, budget=12)
    theta, value = record_search(short, {0: dirs[cos > 0.05] * lam}, eps=1e-6)[0]
    assert short.images[0].ledger.spent <= 12
    assert 1.0 / (theta @ w) <= value + 1e-9  # the value is a radius known adversarial along theta


def test_initial_search_takes_record_as_a_selection() -> None:
    w, dirs, cos = _candidates(5, 40)
    lam = float((1.0 / cos[cos > 0.05]).max() * 1.5)
    spent = {}
    for selection in ("record", "tournament"):
        group = linear_group(np.zeros(len(w)), w, -1.0, budget=10_000)
        theta, value = initial_search(group, {0: dirs[cos > 0.05] * lam}, 1e-6, selection)[0]
        assert value == pytest.approx(1.0 / (theta @ w), abs=1e-5)
        spent[selection] = group.images[0].ledger.spent
    assert spent["record"] < spent["tournament"]
    with pytest.raises(ValueError, match="finest"):
        record_search(linear_group(np.zeros(len(w)), w, -1.0, budget=10), {0: dirs}, 1e-6, finest=1.0)


def test_the_attack_starts_with_the_record_search_by_default_and_descends_sooner() -> None:
    from applications.hardlabel import Start, attack

    rng = np.random.default_rng(6)
    w = rng.standard_normal(64)
    x = np.full((1, 64), 0.5)

    def model(z: np.ndarray) -> np.ndarray:
        return ((z.reshape(len(z), -1) - 0.5) @ w / np.linalg.norm(w) > 0.4).astype(np.int64)

    first = {}
    for selection in (None, "record", "tournament"):
        opts = {} if selection is None else {"start": Start(initial_selection=selection)}
        res = attack(model, x, np.array([0]), budget=600, seed=0, n_classes=2, **opts)
        assert res.success[0] and res.distortion[0] < 0.4 * 1.3
        first[selection] = res.solver_results[0].history[0].queries
    assert first[None] == first["record"] < first["tournament"]  # the same start as "record", and a cheaper one


@pytest.mark.parametrize("selection", ["record", "tournament", "bisect-all"])
def test_a_relative_precision_ends_the_winners_bisection_sooner_within_that_share_of_its_distance(
        selection: str) -> None:
    w, dirs, cos = _candidates(7, 20)
    lam = float((1.0 / cos[cos > 0.05]).max() * 1.5)
    found, spent = {}, {}
    for relative in (0.0, 0.1):
        group = linear_group(np.zeros(len(w)), w, -1.0, budget=10_000)
        found[relative] = initial_search(group, {0: dirs[cos > 0.05] * lam}, 1e-6, selection, relative)[0]
        spent[relative] = group.images[0].ledger.spent
    theta, value = found[0.1]
    exact = 1.0 / (theta @ w)
    assert exact <= value <= exact / 0.9 + 1e-9  # adversarial at its value, and within a tenth of it
    assert spent[0.1] < spent[0.0]


def test_the_start_refuses_a_relative_precision_outside_zero_to_one() -> None:
    from applications.hardlabel import Start

    assert Start(relative_precision=0.25).precision_of(2.0, 1e-6) == 0.5
    assert Start().precision_of(2.0, 1e-6) == 1e-6
    for bad in (-0.1, 1.0, float("nan")):
        with pytest.raises(ValueError, match="relative_precision"):
            Start(relative_precision=bad)
