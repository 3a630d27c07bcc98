"""A successive-halving race between starts: zeroopt.race(rounds=), race_plan(halving=), the attack's race_halving."""

from __future__ import annotations

import numpy as np
import pytest
from boundary_oracles import CountingHalfspace

from applications.hardlabel import Race, Runs, Start, attack
from zeroopt import IndependentGroup, SolverContext, as_oracle, halving_rounds, make_solver, race, race_plan

CENTRES = np.array([[0.0, 0.0], [40.0, 0.0], [80.0, 0.0], [120.0, 0.0]])
DEPTHS = np.array([0.0, 1.0, 2.0, 3.0])  # basin k bottoms out at -k: the last is the deepest


def _basins(x: np.ndarray) -> float:
    """Four separate bowls along the first axis, each deeper than the one before."""
    return float(np.min(np.sum((x[None, :] - CENTRES) ** 2, axis=1) / 10.0 - DEPTHS))


def _race_counts(rounds: int, queries: int = 1200) -> tuple[np.ndarray, np.ndarray, float]:
    """Race one start per bowl (each 3 units off its centre); per bowl, the points evaluated there."""
    seen: list[np.ndarray] = []

    def f(x: np.ndarray) -> float:
        seen.append(np.asarray(x, dtype=float).copy())
        return _basins(x)

    group = IndependentGroup([as_oracle(f, (2,), budget=20_000)])
    starts = [(c + np.array([3.0, 0.0]), _basins(c + np.array([3.0, 0.0])), 0.0) for c in CENTRES]
    seen.clear()
    (winner,) = race(make_solver("rgf", SolverContext(dim=2)), [starts], group, rngs=[np.random.default_rng(0)],
                     iterations=None, queries=queries, rounds=rounds)
    where = np.argmin(np.linalg.norm(np.array(seen)[:, None, :] - CENTRES[None], axis=2), axis=1)
    return np.bincount(where, minlength=len(CENTRES)), winner.x, group.queries(0)


def test_a_halving_race_spends_its_later_rounds_on_the_better_half() -> None:
    """Every bowl starts equally far from its bottom, so after the first round the two deepest are ahead:
    with two rounds they get their own first-round share again plus the dropped ones' (3/8 of the race
    each), the shallow two only the first round's 1/8; a plain race gives each bowl a quarter."""
    plain, plain_x, plain_q = _race_counts(rounds=1)
    halved, halved_x, halved_q = _race_counts(rounds=2)
    assert plain.min() > 0.7 * plain.max()  # a plain race: about even
    assert halved[:2].max() < 0.5 * halved[2:].min()  # the shallow half ran one round only
    assert halved[2:].sum() > plain[2:].sum()  # ... and the deep half got what it did not spend
    for x, q in ((plain_x, plain_q), (halved_x, halved_q)):
        assert np.linalg.norm(x - CENTRES[3]) < 3.0  # both keep the deepest bowl's point
        assert 1200 <= q < 1200 + 4 * 60  # and stop at the race's length (less than an iteration each over)


def test_race_plan_with_halving_doubles_the_starts_for_the_same_queries() -> None:
    for budget in (4000, 8000, 14000, 20000, 50000):
        starts, total = race_plan(budget)
        doubled, same = race_plan(budget, halving=True)
        assert same == total and doubled == (2 * starts if starts > 1 else 1)
    assert [halving_rounds(k) for k in (1, 2, 3, 4, 8, 16)] == [1, 1, 2, 2, 3, 4]
    with pytest.raises(ValueError, match="rounds"):
        race(make_solver("rgf", SolverContext(dim=2)), [[]], IndependentGroup([as_oracle(_basins, (2,), budget=10)]),
             rngs=[np.random.default_rng(0)], rounds=0)


def test_the_attack_with_a_halving_race_sends_twice_the_searches_and_keeps_its_budget() -> None:
    """At a budget the plain race gives two starts, ``race_halving=True`` sends four initial searches (their
    probe rounds of ``n_initial`` candidates are countable) and still keeps the budget and finds the boundary."""
    model = CountingHalfspace(seed=4)
    x, sizes, n_initial = model.x, model.sizes, 17
    budget = 8000
    for halving, searches in ((False, 2), (True, 4)):
        sizes.clear()
        res = attack(model, x, np.array([0]), budget=budget, seed=1, n_classes=2,
                     start=Start(n_initial=n_initial, initial_selection="tournament"),
                     runs=Runs(fresh_restarts=False), race=Race(race_halving=halving))
        assert sizes.count(n_initial) == searches
        assert res.success.all() and res.queries[0] <= budget and 0.3 <= res.distortion[0] <= 0.3 * 1.05
    with pytest.raises(ValueError, match="Race: race_halving"):
        Race(race_halving="yes")
