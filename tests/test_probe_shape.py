"""Probes shaped by the iterate (``zeroopt.IterateShapedProbes``, ``probe_shape=``): the part, its options, its
place in the registry, and what it buys on a radial objective whose boundary depends on a few coordinates."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import zeroopt
from zeroopt import IterateShapedProbes, SolverContext, make_solver, orthonormal_rows
from zeroopt.recipes.registry import recipe_defaults
from zeroopt.recipes.sign_solvers import sign_growing_on_radius
from zeroopt.sample.shaping import shape_weights

GROWING_PROBE_SHAPE = recipe_defaults(sign_growing_on_radius)["probe_shape"]

D = 40


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, D, elements=st.floats(-5, 5, allow_nan=False)), st.floats(0.0, 1.0),
       st.integers(1, 12), st.integers(0, 2**31 - 1))
def test_shaped_probes_keep_their_lengths_and_never_probe_a_masked_coordinate(
    x: np.ndarray, weight: float, q: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    active = np.sort(rng.choice(D, size=D // 2, replace=False))
    u = np.zeros((q, D))
    u[:, active] = rng.standard_normal((q, active.size))
    shaped = IterateShapedProbes(weight)(u, x, active)
    np.testing.assert_allclose(np.linalg.norm(shaped, axis=1), np.linalg.norm(u, axis=1), rtol=1e-9)
    assert np.all(shaped[:, np.setdiff1d(np.arange(D), active)] == 0)
    assert np.all(np.isfinite(shaped))


def test_weight_zero_and_an_iterate_without_size_change_nothing() -> None:
    u = np.random.default_rng(0).standard_normal((5, D))
    x = np.random.default_rng(1).standard_normal(D)
    assert IterateShapedProbes(0.0)(u, x, None) is u
    assert IterateShapedProbes(0.5)(u, np.zeros(D), None) is u
    assert np.all(shape_weights(np.full(D, np.nan), 0.5) == 1.0)


@pytest.mark.parametrize("weight", [0.3, 0.7])
def test_the_probes_variance_moves_to_the_coordinates_the_iterate_uses_as_stated(weight: float) -> None:
    # An iterate on the first 8 coordinates only: uniform unit probes put 8/40 of their energy there; shaped ones
    # put the share that the factors √((1 - w) + w |x_i| / mean|x|) give, which the draws must match on average.
    x = np.r_[np.ones(8), np.zeros(D - 8)]
    factors2 = shape_weights(x, weight) ** 2
    expected = factors2[:8].sum() / factors2.sum()
    u = orthonormal_rows(np.random.default_rng(2), 4000, D)
    shaped = IterateShapedProbes(weight)(u, x, None)
    share = float((shaped[:, :8] ** 2).sum() / (shaped**2).sum())
    assert share == pytest.approx(expected, rel=0.05)
    assert share > 8 / D + 0.1


def test_orthonormal_probes_come_back_orthonormal_and_still_shaped() -> None:
    x = np.r_[np.ones(8), np.zeros(D - 8)]
    shaped = IterateShapedProbes(0.5, orthonormal=True)(orthonormal_rows(np.random.default_rng(3), 15, D), x, None)
    np.testing.assert_allclose(shaped @ shaped.T, np.eye(15), atol=1e-10)
    assert (shaped[:, :8] ** 2).sum() / 15 > 8 / D


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "0.3"])
def test_a_weight_outside_zero_one_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="weight"):
        IterateShapedProbes(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(("value", "error"), [(0.0, ValueError), (1.5, ValueError), (True, TypeError)])
def test_the_solver_option_is_checked_before_any_query(value: object, error: type) -> None:
    with pytest.raises(error, match="probe_shape"):
        make_solver("sign-growing", SolverContext(dim=D, unit_sphere=True, radial=True), probe_shape=value)


def test_the_registry_shapes_sign_growing_where_the_value_is_a_radius_only() -> None:
    radial = SolverContext(dim=D, unit_sphere=True, radial=True)
    assert make_solver("sign-growing", radial).find(IterateShapedProbes) == IterateShapedProbes(GROWING_PROBE_SHAPE,
                                                                                 orthonormal=True)
    assert make_solver("sign-growing", SolverContext(dim=D, unit_sphere=True)).find(IterateShapedProbes) is None
    assert make_solver("sign-growing", radial, probe_shape=None).find(IterateShapedProbes) is None
    assert make_solver("rgf", radial).find(IterateShapedProbes) is None  # the paper's solver stays as published
    # but may take it:
    assert make_solver("rgf", radial, probe_shape=0.5).find(IterateShapedProbes) == IterateShapedProbes(0.5)


def _sparse_normal_distance(normal: np.ndarray):  # type: ignore[no-untyped-def]
    """Distance from 0 along θ to the half-space {y : normal · y >= 1} (a radial objective)."""
    def g(theta: np.ndarray) -> float:
        t = np.asarray(theta, dtype=float)
        along = float(normal @ (t / np.linalg.norm(t)))
        return 1.0 / along if along > 1e-9 else 1e6
    return g


def test_on_a_boundary_that_depends_on_few_coordinates_shaped_probes_get_lower_in_the_same_budget() -> None:
    # The half-space's normal uses 10 of 200 coordinates (the way a digit's boundary depends on its strokes'
    # pixels); the start already leans toward it, as the attack's starts do. The optimum is 1/|normal|.
    dim, used, budget = 200, 10, 1500
    finals: dict[bool, list[float]] = {True: [], False: []}
    for seed in range(6):
        rng = np.random.default_rng(seed)
        normal = np.zeros(dim)
        normal[rng.choice(dim, size=used, replace=False)] = rng.uniform(0.5, 1.5, size=used)
        g = _sparse_normal_distance(normal)
        x0 = normal / np.linalg.norm(normal) + 0.15 * rng.standard_normal(dim)
        x0 /= np.linalg.norm(x0)
        for shaped in (True, False):
            solver = make_solver("sign-growing", SolverContext(dim=dim, unit_sphere=True, radial=True),
                                 probe_shape=GROWING_PROBE_SHAPE if shaped else None)
            oracle = zeroopt.as_oracle(g, (dim,), budget=budget)
            (res,) = zeroopt.solve_many(solver, [x0], zeroopt.IndependentGroup([oracle]),
                                        rngs=[np.random.default_rng(100 + seed)], f0=[g(x0)])
            assert res.queries <= budget
            finals[shaped].append(res.fun * np.linalg.norm(normal))  # 1 at the optimum
    gaps = {k: np.array(v) - 1.0 for k, v in finals.items()}
    assert np.all(gaps[True] >= -1e-9)
    assert np.median(gaps[True]) < 0.8 * np.median(gaps[False]), gaps


def test_the_theory_study_sees_the_gain_where_the_gradient_lives_on_the_iterate_and_none_on_a_white_one() -> None:
    from theory.probe_shape_quality import shaped_cosine

    rng = np.random.default_rng(0)
    d = 200
    x = np.zeros(d)
    x[:40] = rng.uniform(0.2, 1.0, size=40)
    on_support, white = np.abs(x) * rng.standard_normal(d), rng.standard_normal(d)
    plain, shaped = (shaped_cosine(on_support, x, w, q=20, reps=30, seed=1) for w in (0.0, 0.5))
    assert shaped > 1.2 * plain
    plain, shaped = (shaped_cosine(white, x, w, q=20, reps=30, seed=1) for w in (0.0, 0.5))
    assert shaped == pytest.approx(plain, rel=0.1)


def test_a_piecewise_constant_objective_keeps_plain_probes() -> None:
    ctx = SolverContext(dim=D, unit_sphere=True, radial=True, piecewise_constant=True)
    assert make_solver("sign-growing", ctx).find(IterateShapedProbes) is None
    assert make_solver("sign-growing", ctx, probe_shape=0.3).find(IterateShapedProbes) is not None  # asked for


def test_the_attack_says_piecewise_constant_for_tree_models_only() -> None:
    import lightgbm
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression

    from applications.hardlabel import ModelOptions, as_label_model, attack
    from applications.hardlabel.adapters.sklearn_adapter import is_tree_model

    rng = np.random.default_rng(0)
    x = rng.uniform(size=(60, 6))
    y = (x[:, 0] > 0.5).astype(np.int64)
    booster = lightgbm.train({"objective": "binary", "verbose": -1, "min_data_in_leaf": 5},
                             lightgbm.Dataset(x, y), num_boost_round=3)
    trees = (booster, RandomForestClassifier(n_estimators=3, random_state=0).fit(x, y),
             HistGradientBoostingClassifier(max_iter=3).fit(x, y),
             lightgbm.LGBMClassifier(n_estimators=3, min_child_samples=5, verbose=-1).fit(x, y))
    assert all(as_label_model(m, n_classes=2).piecewise_constant for m in trees)
    smooth = LogisticRegression().fit(x, y)
    assert not as_label_model(smooth, n_classes=2).piecewise_constant and not is_tree_model(smooth)
    assert not as_label_model(lambda z: (z.reshape(len(z), -1)[:, 0] > 0.5).astype(int), n_classes=2
                              ).piecewise_constant
    with pytest.raises(ValueError, match="ModelOptions: piecewise_constant"):
        attack(smooth, x[:1], y[:1], budget=100, model_options=ModelOptions(piecewise_constant="yes"))


def test_the_suite_harness_tells_our_attack_what_the_model_is() -> None:
    from benchmarks.attacks.base import Batch
    from benchmarks.attacks.ours import Ours

    seen = {}

    def impl(model, x0, y0, **kw):  # type: ignore[no-untyped-def]
        seen.update(kw)
        raise RuntimeError("stop")  # only the options matter here

    batch = Batch(x0=np.zeros((1, 3), np.float32), y0=np.zeros(1, np.int64), target=None, starts=None,
                  bounds=(0.0, 1.0), n_classes=2, piecewise_constant=True)
    with pytest.raises(RuntimeError, match="stop"):
        Ours("sign-growing", impl=impl).run(lambda z: np.zeros(len(z)), batch, budget=10, seed=0)  # type: ignore[arg-type]
    assert seen["model_options"].piecewise_constant is True
    assert batch.take([0]).piecewise_constant is True
