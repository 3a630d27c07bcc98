"""Pruning a radial objective's point (``zeroopt.pruning``) and ``solve_many``'s polish with its reserve."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import zeroopt
from zeroopt import prune_blocks, prune_run, pruning
from zeroopt.running.restarts import POLISH_RESERVE

DIM = 12
NEEDED = 3  # the objectives below depend on the first three coordinates only


def axis_distance(theta: np.ndarray) -> float:
    """Distance from 0 along θ to the set {x : x_0 + x_1 + x_2 >= 1} (a radial objective, finite where reachable)."""
    t = np.asarray(theta, dtype=float)
    t = t / np.linalg.norm(t)
    along = float(np.sum(t[:NEEDED]))
    return 1.0 / along if along > 1e-9 else 1e6


class LabelledRadius(zeroopt.Oracle):
    """:func:`axis_distance` as a boundary search reports it — the end of its bracket that reaches the set, a
    relative 1e-6 beyond the boundary — and a comparison as a label query: is the point at that radius in the set."""

    def _values(self, points: np.ndarray, eps: float | None) -> tuple[np.ndarray, np.ndarray]:
        return np.array([axis_distance(p) for p in points]) * (1 + 1e-6), np.full(len(points), 1e-6)

    def compare(self, request: zeroopt.Compare) -> zeroopt.Comparison:
        k = self.ledger.affordable(len(request.points))
        self.ledger.charge(k)
        pairs = zip(request.points[:k], request.levels[:k], strict=True)
        below = np.array([axis_distance(p) <= level for p, level in pairs])
        return zeroopt.Comparison(below=below.astype(bool), queries=self.ledger.spent,
                                  exhausted=k < len(request.points))


def ball_distance(theta: np.ndarray) -> float:
    """Distance from 0 along θ to the outside of the unit ball: 1 along every direction (every coordinate counts)."""
    return 1.0


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, DIM, elements=st.floats(-10, 10, allow_nan=False)),
       st.floats(0.001, 1.0, allow_nan=False))
def test_blocks_cover_the_non_zero_coordinates_once_smallest_first(point: np.ndarray, share: float) -> None:
    blocks = prune_blocks(point, share)
    flat = np.concatenate(blocks) if blocks else np.array([], dtype=int)
    assert sorted(flat.tolist()) == np.flatnonzero(point).tolist()
    assert np.all(np.diff(np.abs(point[flat])) >= 0)  # ascending size
    total = float(np.sum(point**2))
    for block in blocks[:-1]:
        assert np.sum(point[block] ** 2) >= share * total * (1 - 1e-12)


def _run(objective, x: np.ndarray, fx: float, budget: int, **kw) -> tuple[zeroopt.OptimizeResult, int]:
    oracle = zeroopt.as_oracle(objective, (DIM,), budget=budget)
    (result,) = zeroopt.drive([prune_run(x, fx, 0.0, **kw)], zeroopt.IndependentGroup([oracle]))
    return result, oracle.queries


def test_a_pass_takes_out_what_the_objective_does_not_need() -> None:
    rng = np.random.default_rng(0)
    theta = np.concatenate([np.full(NEEDED, 1.0), 0.3 * rng.standard_normal(DIM - NEEDED)])
    fx = 1.01 * axis_distance(theta)  # just beyond the boundary, as a boundary search leaves a point
    result, spent = _run(axis_distance, theta, fx, budget=200)
    point = result.fun * result.x
    assert np.allclose(point[NEEDED:], 0.0)  # every free coordinate is gone
    assert np.sum(point[:NEEDED]) >= 1.0 - 1e-9  # and the point still reaches the set
    assert result.fun < fx and result.fun >= axis_distance(result.x) and spent == result.queries


def test_a_pass_on_an_objective_that_needs_every_coordinate_costs_patience_queries() -> None:
    theta = np.random.default_rng(1).standard_normal(DIM)
    result, spent = _run(ball_distance, theta, 1.0, budget=200, patience=5)
    assert spent == 5 and result.fun == 1.0
    np.testing.assert_allclose(result.x, theta / np.linalg.norm(theta))


def test_a_pass_stops_at_the_budget_and_keeps_what_it_took_out() -> None:
    theta = np.concatenate([np.full(NEEDED, 1.0), np.full(DIM - NEEDED, 0.2)])
    result, spent = _run(axis_distance, theta, 1.01 * axis_distance(theta), budget=2, min_share=0.001)
    assert spent == 2 and result.status is zeroopt.Status.BUDGET
    assert result.fun < 1.01 * axis_distance(theta)  # the first (accepted) block stays out


def test_a_negative_polish_reserve_is_refused_before_any_query() -> None:
    oracle = zeroopt.as_oracle(axis_distance, (DIM,), budget=100)
    solver = zeroopt.make_solver("sign-growing", zeroopt.SolverContext(dim=DIM, unit_sphere=True, radial=True))
    with pytest.raises(ValueError, match="polish_reserve"):
        zeroopt.solve_many(solver, [np.ones(DIM)], zeroopt.IndependentGroup([oracle]),
                           rngs=[np.random.default_rng(0)], polish=pruning(), polish_reserve=-1)
    assert oracle.queries == 0


@pytest.mark.parametrize("bad", [{"patience": 0}, {"patience": True}, {"min_share": 0.0}, {"min_share": 2.0}])
def test_bad_pruning_arguments_are_refused(bad: dict) -> None:
    with pytest.raises(ValueError):
        list(prune_run(np.ones(DIM), 1.0, **bad)) if "patience" in bad else pruning(**bad)
    with pytest.raises(ValueError):  # a polish is refused when it is made, before any run uses it
        pruning(**bad)


@pytest.mark.parametrize("budget", [200, 400])
def test_solve_many_polishes_once_at_the_end_and_goes_on_from_there(budget: int) -> None:
    dim = 64
    ctx = zeroopt.SolverContext(dim=dim, unit_sphere=True, radial=True)
    # A descent at a fixed narrow β, which leaves some of the free coordinates in by the end of these budgets (the
    # default's probes, wide while the steps are long, can reach the optimum at 400 queries on their own).
    solver = zeroopt.make_solver("sign-growing", ctx, beta=0.01, beta_per_step=None,
                                 probe_level="value")
    x0 = np.concatenate([np.full(NEEDED, 1.0), 0.5 * np.random.default_rng(2).standard_normal(dim - NEEDED)])
    x0 /= np.linalg.norm(x0)
    out = {}
    for polish in (None, pruning()):
        oracle = LabelledRadius(budget=budget)
        (res,) = zeroopt.solve_many(solver, [x0], zeroopt.IndependentGroup([oracle]),
                                    rngs=[np.random.default_rng(3)], f0=[axis_distance(x0)], polish=polish)
        assert oracle.queries == budget and res.queries <= budget  # the run went on after the polish
        assert ("polished" in res.flags) == (polish is not None)
        out[polish is None] = res.fun
    # the optimum is 1/√3 (the set's nearest point); the polish takes out what the descent left in the free
    # coordinates, and the descent without it does not get as close in the same budget
    assert 1 / np.sqrt(NEEDED) - 1e-9 <= out[False] < out[True]


def test_the_attack_prunes_what_an_axis_aligned_model_does_not_split_on() -> None:
    from applications.hardlabel import Polish, attack

    def model(x: np.ndarray) -> np.ndarray:  # a two-split "tree": class 1 where x_0 > 0.7 and x_1 > 0.6
        z = x.reshape(len(x), -1)
        return ((z[:, 0] > 0.7) & (z[:, 1] > 0.6)).astype(np.int64)

    x = np.full((2, 256), 0.5)
    # Probes as drawn (probe_shape=None): probes shaped by the direction already keep more of it off the free
    # features (checked at the end), and what is measured here is what the pruning takes out.
    kw = {"budget": 1500, "seed": 0, "n_classes": 2, "bounds": (0.0, 1.0), "solver_options": {"probe_shape": None}}
    plain = attack(model, x, np.zeros(2, dtype=np.int64), polish=Polish(prune=False), **kw)
    pruned = attack(model, x, np.zeros(2, dtype=np.int64), **kw)  # on by default
    assert pruned.success.all() and np.all(pruned.queries <= 1500)
    assert np.all(pruned.distortion < plain.distortion)
    optimum = np.hypot(0.2, 0.1)  # x_0 to 0.7 and x_1 to 0.6, nothing else
    for res, most in ((plain, None), (pruned, 0.1)):
        free = np.sum((res.x_adv.reshape(2, -1)[:, 2:] - 0.5) ** 2, axis=1) / res.distortion**2
        # the descent leaves a fifth or more of the squared distance in features the model never reads; the
        # pruning takes nearly all of it out
        assert np.all(free > 0.2) if most is None else np.all(free < most)
    assert np.all(pruned.distortion >= optimum - 1e-6) and np.all(pruned.distortion < 1.05 * optimum)
    assert np.all(plain.distortion > 1.1 * optimum)
    shaped = attack(model, x, np.zeros(2, dtype=np.int64), **{**kw, "polish": Polish(prune=False),
                                                               "solver_options": {"probe_shape": 0.3}})
    free_shaped = np.sum((shaped.x_adv.reshape(2, -1)[:, 2:] - 0.5) ** 2, axis=1) / shaped.distortion**2
    free_plain = np.sum((plain.x_adv.reshape(2, -1)[:, 2:] - 0.5) ** 2, axis=1) / plain.distortion**2
    assert np.all(free_shaped < free_plain) and np.all(shaped.distortion < plain.distortion)
    with pytest.raises(ValueError, match="Polish: prune"):
        attack(model, x, np.zeros(2, dtype=np.int64), polish=Polish(prune="yes"), **kw)


def test_the_attack_passes_its_polish_reserve_to_the_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import zeroopt
    from applications.hardlabel import Polish, attack

    seen: list[int] = []
    real = zeroopt.solve_many

    def recording(*args, **kwargs):  # the runs as the attack starts them
        seen.append(kwargs["polish_reserve"])
        return real(*args, **kwargs)

    monkeypatch.setattr(zeroopt, "solve_many", recording)
    model = lambda x: (x.reshape(len(x), -1)[:, 0] > 0.7).astype(np.int64)  # noqa: E731
    kw = {"budget": 300, "seed": 0, "n_classes": 2, "bounds": (0.0, 1.0)}
    early = attack(model, np.full((1, 16), 0.5), np.zeros(1, dtype=np.int64), polish=Polish(polish_reserve=250),
                   **kw)
    default = attack(model, np.full((1, 16), 0.5), np.zeros(1, dtype=np.int64), **kw)
    assert seen == [250, POLISH_RESERVE]
    assert early.success.all() and default.success.all() and early.queries[0] <= 300
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match="Polish: polish_reserve"):
            attack(model, np.full((1, 16), 0.5), np.zeros(1, dtype=np.int64), polish=Polish(polish_reserve=bad),
                   **kw)
