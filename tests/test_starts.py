"""Start parts: directions toward uniform points of a box, and a race between candidate starts (sized by budget)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from boundary_oracles import CountingHalfspace
from hypothesis import given
from hypothesis import strategies as st

from applications.hardlabel import Race, Runs, Start, Verify, attack
from zeroopt import (
    BoxDirections,
    IndependentGroup,
    SolverContext,
    as_oracle,
    make_solver,
    race,
    race_plan,
)
from zeroopt.running.racing import RACE_ITERATIONS, RACE_MIN_SHARE_DIM


def test_box_directions_point_to_points_of_the_box_and_lean_to_its_centre() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(0.0, 1.0, 50)
    box = BoxDirections(0.0 - x, 1.0 - x)
    z = box.offsets(rng, 400, x.size)
    assert np.all(x + z >= 0.0) and np.all(x + z <= 1.0)  # every offset lands inside the box
    u = box.sample(rng, 400, x.size, 0)
    assert np.allclose(np.linalg.norm(u, axis=1), 1.0)
    # On average toward the centre: positive where x is below 0.5, negative above.
    assert np.all(np.sign(z.mean(axis=0)) == np.sign(0.5 - x))
    assert box.scale(x.size) == x.size


@pytest.mark.parametrize(("lower", "upper", "match"), [
    (0.1, 1.0, "inside the box"), (-1.0, -0.1, "inside the box"), (0.0, 0.0, "single point"),
    (-np.inf, 1.0, "finite"),
])
def test_box_directions_reject_a_box_that_does_not_hold_the_point(lower: float, upper: float, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        BoxDirections(lower, upper)


def _plateau_and_slope(x: np.ndarray) -> float:
    """1 on the half-plane x0 < 0 (flat: no descent leaves it); a bowl with minimum 0 at (3, 0) elsewhere."""
    return 1.0 if x[0] < 0 else float((x[0] - 3.0) ** 2 / 4 + x[1] ** 2)


def test_race_keeps_the_start_that_got_lowest_not_the_lowest_start() -> None:
    low_but_flat = (np.array([-1.0, 0.0]), 1.0, 0.0)
    high_on_a_slope = (np.array([0.5, 0.0]), _plateau_and_slope(np.array([0.5, 0.0])), 0.0)
    assert high_on_a_slope[1] > low_but_flat[1]
    group = IndependentGroup([as_oracle(_plateau_and_slope, (2,), budget=2000)])
    solver = make_solver("rgf", SolverContext(dim=2))
    (x, fx, _, state), = race(solver, [[low_but_flat, high_on_a_slope]], group, rngs=[np.random.default_rng(0)])
    assert fx < low_but_flat[1] and x[0] > 0
    assert fx == pytest.approx(_plateau_and_slope(x))
    # The winner's run state goes with it, at the winning point, after the race's iterations.
    assert state is not None and np.array_equal(state.x, x) and state.fx == fx
    assert state.iteration == RACE_ITERATIONS
    assert 0 < group.queries(0) <= 2000


def test_race_spends_nothing_on_a_single_candidate_and_checks_its_arguments() -> None:
    group = IndependentGroup([as_oracle(_plateau_and_slope, (2,), budget=100) for _ in range(2)])
    solver = make_solver("rgf", SolverContext(dim=2))
    only = (np.array([0.5, 0.0]), 1.5625, 0.0)
    out = race(solver, [[only], []], group, rngs=[np.random.default_rng(s) for s in (0, 1)])
    assert out[0] is not None and out[0].x is only[0] and out[0].f == only[1] and out[0].state is None
    assert out[1] is None
    assert group.queries(0) == group.queries(1) == 0
    with pytest.raises(ValueError, match="iterations"):
        race(solver, [[only]], group, rngs=[np.random.default_rng(0)], iterations=0)
    with pytest.raises(ValueError, match="needs an end"):
        race(solver, [[only]], group, rngs=[np.random.default_rng(0)], iterations=None)
    with pytest.raises(ValueError, match="queries"):
        race(solver, [[only]], group, rngs=[np.random.default_rng(0)], queries=0)
    with pytest.raises(ValueError, match="one entry per member"):
        race(solver, [[only]], group, rngs=[])


@pytest.mark.parametrize("race_iterations", [0, 2])
def test_attack_with_uniform_candidates_and_a_race_stays_in_budget(race_iterations: int) -> None:
    rng = np.random.default_rng(5)
    d = 64
    w = rng.standard_normal(d)
    x = np.clip(0.5 + 0.05 * rng.standard_normal((2, d)), 0, 1)
    b = float(-(x[0] @ w) + 0.5 * np.linalg.norm(w))  # input 0 lies 0.5 from the boundary, on the class-1 side
    model = lambda z: (z.reshape(len(z), -1) @ w + b > 0).astype(np.int64)  # noqa: E731
    y = model(x)
    res = attack(model, x, y, budget=1500, solver="sign-growing", seed=0, n_classes=2, start=Start(n_uniform=5),
                 race=Race(race_iterations=race_iterations))
    assert res.success.all() and np.all(res.queries <= 1500)
    assert res.distortion[0] < 0.5 * 1.1


def test_uniform_candidates_are_probed_inside_the_input_domain() -> None:
    """HopSkipJump's start: each uniform candidate's first query is a uniform point of the domain itself."""
    seen: list[np.ndarray] = []

    def model(z: np.ndarray) -> np.ndarray:
        seen.append(z.reshape(len(z), -1).copy())
        return np.zeros(len(z), dtype=np.int64)  # nothing is ever adversarial: only the probes are sent

    x = np.full((1, 16), 0.2)
    attack(model, x, np.array([0]), budget=200, seed=0, n_classes=2, start=Start(n_initial=1, n_uniform=7),
           verify=Verify(queries=0))
    first = np.concatenate(seen)[1:9]  # after the one query that labels x0: 1 sampler + 7 uniform candidates
    uniform = first[1:]
    assert np.all((uniform >= 0) & (uniform <= 1))
    assert uniform.std() > 0.2  # spread over [0, 1], not around x0


@pytest.mark.parametrize(("n_uniform", "race_iterations"), [(0, 0), (3, 2)])
def test_inputs_no_random_direction_serves_start_toward_the_other_inputs(n_uniform: int, race_iterations: int) -> None:
    """Class 1 is a small ball around the second input: from the first, no random or uniform candidate reaches
    it, so the start falls back to the direction toward the other input, and ends at the ball's surface."""
    d, radius = 16, 0.5
    x = np.stack([np.full(d, 0.2), np.full(d, 0.8)])

    def model(z: np.ndarray) -> np.ndarray:
        return (np.linalg.norm(z.reshape(len(z), -1) - x[1], axis=1) < radius).astype(np.int64)

    y = model(x)
    assert y.tolist() == [0, 1]
    res = attack(model, x, y, budget=1000, seed=0, n_classes=2, start=Start(n_uniform=n_uniform),
                 race=Race(race_iterations=race_iterations))
    assert res.success.all() and np.all(res.queries <= 1000)
    gap = float(np.linalg.norm(x[1] - x[0])) - radius  # the ball's surface along the segment between the inputs
    assert gap <= res.distortion[0] <= gap * 1.01


def test_a_race_of_queries_ends_once_the_member_spent_them_and_keeps_the_deeper_basin() -> None:
    """Two starts of equal value on a plateau-and-slope objective, raced for 300 queries: every candidate
    stops at its first iteration end after the member's 300th race query, so the race costs 300 plus less
    than one iteration per candidate, and the point kept is the one that descended."""
    group = IndependentGroup([as_oracle(_plateau_and_slope, (2,), budget=5000)])
    solver = make_solver("rgf", SolverContext(dim=2))
    flat = (np.array([-1.0, 0.0]), 1.0, 0.0)
    slope = (np.array([0.5, 0.0]), _plateau_and_slope(np.array([0.5, 0.0])), 0.0)
    per_iteration = 40  # rgf on d = 2: q probes plus its line search, far below this
    (x, fx, _, _), = race(solver, [[flat, slope]], group, rngs=[np.random.default_rng(0)], iterations=None,
                          queries=300)
    assert 300 <= group.queries(0) < 300 + 2 * per_iteration
    assert x[0] > 0 and fx < 0.1
    # The same race with an iteration cap that comes first: fewer queries.
    group2 = IndependentGroup([as_oracle(_plateau_and_slope, (2,), budget=5000)])
    race(solver, [[flat, slope]], group2, rngs=[np.random.default_rng(0)], iterations=2, queries=300)
    assert 0 < group2.queries(0) < 300


@given(budget=st.integers(1, 10**6), fraction=st.floats(0.0, 0.9), min_share=st.integers(1, 5000),
       max_starts=st.integers(1, 64), dim=st.none() | st.integers(1, 10**5))
def test_race_plan_doubles_the_starts_while_each_keeps_its_share(budget: int, fraction: float, min_share: int,
                                                                  max_starts: int, dim: int | None) -> None:
    starts, queries = race_plan(budget, fraction=fraction, min_share=min_share, max_starts=max_starts, dim=dim)
    if dim is not None:  # in more dimensions than RACE_MIN_SHARE was measured at, each start gets more
        min_share = max(min_share, math.ceil(min_share * dim / RACE_MIN_SHARE_DIM))
    if starts == 1:
        assert queries == 0
        assert 2 > max_starts or int(fraction * budget) // 2 < min_share  # not even two starts fit
        return
    assert starts & (starts - 1) == 0 and 2 <= starts <= max_starts  # a power of two, within the cap
    assert queries == int(fraction * budget) <= budget
    assert queries // starts >= min_share  # each start gets its share
    assert 2 * starts > max_starts or queries // (2 * starts) < min_share  # and twice as many would not


def test_race_plan_and_the_attack_config_check_their_arguments() -> None:
    assert race_plan(4000) == (1, 0) and race_plan(8000) == (2, 1200)
    with pytest.raises(TypeError, match="budget"):  # as zeroopt.minimize: a budget is a count, not 8000.0
        race_plan(8000.0)  # type: ignore[arg-type]
    for bad in ({"budget": 0}, {"budget": 1000, "fraction": 1.0}, {"budget": 1000, "min_share": 0},
                {"budget": 1000, "max_starts": True}):
        with pytest.raises(ValueError):
            race_plan(**bad)  # type: ignore[arg-type]
    assert Race(race_starts=None).plan(20000) == race_plan(20000) == (4, 3000)
    # Sized by the dimension too: an MNIST image's as RACE_MIN_SHARE was measured, a CIFAR-10 image's needs 26k.
    assert race_plan(20000, dim=RACE_MIN_SHARE_DIM) == (4, 3000) and race_plan(20000, dim=3072) == (1, 0)
    assert race_plan(26200, dim=3072) == (2, 3930)
    assert Race(race_starts=None).plan(20000, dim=3072) == (1, 0)
    # The default ("auto") sizes a targeted attack's race by the dimension too, an untargeted attack's by the budget.
    assert Race().plan(20000, targeted=True, dim=3072) == (1, 0)
    assert Race().plan(20000, dim=3072) == (4, 3000)
    with pytest.raises(ValueError, match="dim"):
        race_plan(20000, dim=0)
    # The default races every attack; "untargeted" gives targeted ones one search.
    assert Race().plan(20000) == race_plan(20000) and Race().plan(4000) == (1, 0)
    assert Race().plan(20000, targeted=True) == (4, 3000)
    assert Race(race_starts="untargeted").plan(10**6, targeted=True) == (1, 0)
    assert Race(race_starts="untargeted").plan(20000, dim=3072) == (4, 3000)  # whatever the dimension
    assert Race(race_starts=None).plan(20000, targeted=True) == (4, 3000)
    assert Race(race_starts=1).plan(10**6) == (1, 0)
    assert Race(race_starts=3, race_fraction=0.5).plan(1000) == (3, 500)
    for bad_cfg in ({"race_starts": 0}, {"race_starts": 2.0}, {"race_starts": "targeted"}, {"race_fraction": 0.0},
                    {"race_fraction": 1.5}):
        with pytest.raises(ValueError, match=f"Race: {next(iter(bad_cfg))}"):
            Race(**bad_cfg)


def test_attack_racing_independent_starts_stays_in_budget_and_is_reproducible() -> None:
    """Three initial searches race for half the budget: the model sees three probe rounds of ``n_initial``
    candidates (one search sends one), and the attack still keeps the budget, finds the boundary and
    reproduces itself from its seed."""
    model = CountingHalfspace(seed=3)  # class 1 beyond the hyperplane 0.3 from x along w
    x, near, sizes = model.x, model.near, model.sizes
    n_initial = 17  # a batch size nothing else in this attack sends
    runs = []
    for k in (3, 3, 1):
        sizes.clear()
        # The tournament's probe round sends a search's n_initial candidates in one batch: countable.
        runs.append(attack(model, x, np.array([0]), budget=2000, seed=1, n_classes=2,
                           start=Start(n_initial=n_initial, initial_selection="tournament"),
                           race=Race(race_starts=k, race_fraction=0.5), runs=Runs(fresh_restarts=False)))
        assert sizes.count(n_initial) == k
    raced, again, _ = runs
    for r in runs:
        assert r.success.all() and r.queries[0] <= 2000
        assert near * 0.999 <= r.distortion[0] <= near * 1.05
    assert raced.distortion[0] == again.distortion[0]
    np.testing.assert_array_equal(raced.trace[0], again.trace[0])


def test_the_default_races_targeted_attacks_too() -> None:
    """At a budget the race plan gives two starts, the default sends two searches' probe rounds for an
    untargeted attack, and for a targeted attack (whose candidates are the target examples) what
    ``race_starts=None`` sends, not one search's — which ``race_starts="untargeted"`` keeps for targeted attacks."""
    model = CountingHalfspace(seed=4)
    x, w, sizes, rng, d, n_initial = model.x, model.w, model.sizes, model.rng, model.x.shape[1], 17
    budget = 8000
    assert race_plan(budget)[0] == 2
    # (no fresh restarts: a converged run's new initial search would send more probe rounds)
    attack(model, x, np.array([0]), budget=budget, seed=1, n_classes=2,
           start=Start(n_initial=n_initial, initial_selection="tournament"), runs=Runs(fresh_restarts=False))
    assert sizes.count(n_initial) == 2
    examples = x + 0.6 * w / np.linalg.norm(w) + 0.01 * rng.standard_normal((13, d))  # 13: a countable batch
    assert (model(examples) == 1).all()
    calls = {}
    for race_starts in ("default", "untargeted", 1, None):
        sizes.clear()
        option = {} if race_starts == "default" else {"race": Race(race_starts=race_starts)}
        res = attack(model, x, np.array([0]), target=np.array([1]), budget=budget, seed=1, n_classes=2,
                     start=Start(target_examples=examples, initial_selection="tournament"),
                     runs=Runs(fresh_restarts=False), **option)
        calls[race_starts] = (list(sizes), float(res.distortion[0]))
    # Targeted, the default races: the model sees exactly what race_starts=None sends, not one search's.
    assert calls["default"] == calls[None] and calls["untargeted"] == calls[1] and calls[None][0] != calls[1][0]


def test_the_race_gives_each_start_more_queries_on_larger_inputs() -> None:
    """With ``race_starts=None`` the same budget that races two starts on 32 features gives one search on 2,000 (a
    start's share there would be 500 · 2000 / 784 queries, more than half of the race's 15% of 8,000)."""
    budget, n_initial = 8000, 17
    for d, searches in ((32, 2), (2000, 1)):
        model = CountingHalfspace(seed=4, d=d)
        assert race_plan(budget, dim=d)[0] == searches
        attack(model, model.x, np.array([0]), budget=budget, seed=1, n_classes=2,
               start=Start(n_initial=n_initial, initial_selection="tournament"), runs=Runs(fresh_restarts=False),
               race=Race(race_starts=None))
        assert model.sizes.count(n_initial) == searches
