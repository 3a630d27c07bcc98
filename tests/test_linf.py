"""The L∞ attack: the same solver on rays measured in L∞, against the exact L∞ distance to a linear boundary."""

from __future__ import annotations

import numpy as np
import pytest

from applications.hardlabel import Runs, Start, attack

W = np.random.default_rng(11).standard_normal((2, 16))


def two_class(x: np.ndarray) -> np.ndarray:
    return (x.reshape(len(x), -1) - 0.5) @ W.T


def test_linf_attack_reaches_the_exact_linf_distance_of_a_linear_boundary() -> None:
    x = np.random.default_rng(0).uniform(0.35, 0.65, size=(4, 16))
    y = two_class(x).argmax(1)
    # The boundary of two linear classes is the hyperplane (w0 - w1)·(x - 0.5) = 0: from x0 its L∞ distance is
    # |(w0 - w1)·(x0 - 0.5)| / ‖w0 - w1‖₁ (inside the box here, so the bounds never bind).
    w = W[0] - W[1]
    exact = np.abs((x - 0.5) @ w) / np.abs(w).sum()
    assert np.all(exact < 0.3)
    res = attack(two_class, x, y, budget=3000, seed=0, n_classes=2, norm=np.inf)
    assert res.success.all() and res.norm == "L∞" and "median L∞" in res.summary()
    measured = np.abs(res.x_adv.astype(np.float64) - x.astype(np.float32).astype(np.float64)).max(axis=1)
    np.testing.assert_allclose(res.distortion, measured, rtol=1e-6)
    assert np.all(two_class(res.x_adv).argmax(1) != y)
    assert np.all(res.distortion >= exact * (1 - 1e-4))
    assert np.all(res.distortion <= exact * 1.25)  # the descent is slower in L∞ than in L2 (see the L∞ page)
    # The L2 attack's points are farther in L∞: the norm changed what was minimised.
    l2 = attack(two_class, x, y, budget=3000, seed=0, n_classes=2)
    l2_linf = np.abs(l2.x_adv.astype(np.float64) - x.astype(np.float32).astype(np.float64)).max(axis=1)
    assert np.median(l2_linf / res.distortion) > 1.3


@pytest.mark.parametrize("bad", [1, "l3", None, 2.5])
def test_an_unknown_norm_is_refused_before_any_query(bad: object) -> None:
    calls = []

    def model(b: np.ndarray) -> np.ndarray:
        calls.append(len(b))
        return two_class(b)

    with pytest.raises(ValueError, match="norm must be 2"):
        attack(model, np.full((1, 16), 0.5), [0], budget=100, norm=bad)
    assert not calls


def test_linf_attack_on_a_tree_model_and_targeted() -> None:
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(1)
    xs = rng.uniform(0, 1, size=(400, 6))
    ys = (xs[:, 0] + xs[:, 1] > 1).astype(int) + (xs[:, 2] > 0.5)
    model = lightgbm.LGBMClassifier(n_estimators=20, num_leaves=8, verbose=-1, n_jobs=1).fit(xs, ys)
    x, y = xs[:3], model.predict(xs[:3])
    res = attack(model, x, y, budget=800, seed=0, norm="inf")
    assert res.success.all()
    assert np.all(model.predict(res.x_adv) != y)
    target = (y + 1) % 3
    tres = attack(model, x, y, target=target, budget=800, seed=0, norm="linf",
                  start=Start(target_pool=(xs, model.predict(xs))))
    assert np.all(model.predict(tres.x_adv)[tres.success] == target[tres.success]) and tres.success.any()


def test_the_peer_view_counts_caps_and_keeps_the_best_linf_point() -> None:
    from benchmarks.studies.linf import CappedLabels, Exhausted

    x0 = np.full(16, 0.5)
    view = CappedLabels(lambda b: two_class(b).argmax(1), x0, int(two_class(x0[None]).argmax(1)[0]), 5, 2)
    far = np.clip(x0 + 0.5 * np.sign(W[1] - W[0]), 0, 1)  # the far corner on the other class's side
    near = x0 + 0.25 * (far - x0)
    out = view(np.stack([x0, far, near]))
    assert out.shape == (3, 2) and view.spent == 3
    assert view.at(1) == np.inf and view.at(2) == pytest.approx(0.5) and view.at(3) == pytest.approx(0.125)
    with pytest.raises(Exhausted):
        view(np.stack([x0, x0, x0]))
    assert view.spent == 5


def test_an_linf_start_searches_its_distance_only_to_the_sign_searchs_first_precision() -> None:
    from applications.hardlabel.config import LINF_START_PRECISION, start_for

    assert start_for(Start(), np.inf).relative_precision == LINF_START_PRECISION
    assert start_for(Start(), 2).relative_precision == 0.0
    assert start_for(Start(relative_precision=0.0), np.inf).relative_precision == 0.0  # the caller's is kept
    x = np.random.default_rng(0).uniform(0.35, 0.65, size=(3, 16))
    y = two_class(x).argmax(1)
    # max_iter=0: the start alone. Searched to a tenth of its distance, it costs fewer queries than to ε, and
    # the distance it returns is adversarial and at most a ninth above the finer search's.
    runs = {p: attack(two_class, x, y, budget=500, seed=0, n_classes=2, norm=np.inf, runs=Runs(max_iter=0),
                      start=Start(n_initial=1, relative_precision=p)) for p in (None, 0.0)}
    coarse, fine = runs[None], runs[0.0]
    assert coarse.success.all() and fine.success.all()
    assert np.all(coarse.queries < fine.queries)
    assert np.all(coarse.distortion <= fine.distortion / (1 - LINF_START_PRECISION) * (1 + 1e-9))
    assert np.all(two_class(coarse.x_adv).argmax(1) != y)


def test_a_targeted_linf_start_asks_the_vertex_toward_each_example() -> None:
    from applications.hardlabel.distance import L2, LINF

    x0 = np.array([0.0, 0.2, 0.9, 0.5])
    thetas = np.array([[0.5, -0.2, 0.0, 0.1], [0.0, 0.0, 0.0, -0.3]])
    vertices = LINF.toward(thetas, x0, 0.0, 1.0)
    # Every coordinate moved by the row's L∞ length: the example's side where it differs, else toward x0's
    # nearer bound (0 for 0.0 and 0.2, 1 for 0.9; 0.5 is as near to both and goes to the lower).
    np.testing.assert_array_equal(vertices, [[0.5, -0.5, 0.5, 0.5], [-0.3, -0.3, 0.3, -0.3]])
    assert np.array_equal(LINF.lengths(vertices), LINF.lengths(thetas))
    assert L2.toward(thetas, x0, 0.0, 1.0) is thetas


def test_a_target_along_no_vertex_is_reached_along_the_straight_line_to_its_example() -> None:
    # The target class is a small ball around its one example: every vertex toward it leaves the ball, the
    # straight line ends inside it. The start must not give up with budget left.
    rng = np.random.default_rng(0)
    x0, example = rng.uniform(0.3, 0.7, (1, 16)), rng.uniform(0.3, 0.7, (1, 16))

    def labels(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64).reshape(len(x), -1)
        return np.where(np.linalg.norm(x - example, axis=1) < 0.05, 1, 0)

    res = attack(labels, x0, np.array([0]), target=np.array([1]), budget=200, seed=0, norm=np.inf, n_classes=2,
                 bounds=(0.0, 1.0), start=Start(target_pool=(example, np.array([1]))))
    assert res.success.all() and labels(res.x_adv)[0] == 1
    far = np.abs(example - x0).max()  # the ball's points are within 0.05 of the example's L∞ distance
    assert far - 0.05 <= res.distortion[0] <= far + 0.05


def test_the_linf_start_asks_the_all_ones_vertex_first_and_a_random_direction_serves_where_it_misses() -> None:
    asked: list[np.ndarray] = []
    x = np.full((1, 8), 0.5)

    def brighter(b: np.ndarray) -> np.ndarray:  # class 1 once the mean rises past 0.6: the all-ones ray finds it
        asked.append(np.array(b, dtype=np.float64))
        return np.stack([0.6 - b.mean(1), b.mean(1) - 0.6], axis=1)

    res = attack(brighter, x, [0], budget=200, seed=0, n_classes=2, norm=np.inf)
    first = next(row for b in asked for row in b - x[0] if np.any(row != 0))  # after x0's own label
    assert np.allclose(first, first[0]) and first[0] > 0  # every coordinate raised alike
    assert res.success[0] and res.distortion[0] == pytest.approx(0.1, rel=0.11)

    asked.clear()

    def contrast(b: np.ndarray) -> np.ndarray:  # the first half against the second: no uniform shift changes it
        asked.append(np.array(b, dtype=np.float64))
        s = b[:, :4].mean(1) - b[:, 4:].mean(1)
        return np.stack([0.2 - s, s - 0.2], axis=1)

    res = attack(contrast, x, [0], budget=300, seed=0, n_classes=2, norm=np.inf)
    assert res.success[0] and res.distortion[0] < 0.5  # found along another direction, then flipped toward 0.1


def test_the_linf_default_flips_ranges_untargeted_and_image_tiles_targeted(monkeypatch: pytest.MonkeyPatch) -> None:
    import zeroopt.recipes.sign_flips as sign_flips
    from applications.hardlabel.config import default_solver_options

    layouts: list[str] = []
    order = sign_flips._cached_order.__wrapped__
    monkeypatch.setattr(sign_flips, "_cached_order",
                        lambda d, shape, layout: layouts.append(layout) or order(d, shape, layout))
    x = np.random.default_rng(0).uniform(0.35, 0.65, size=(2, 1, 4, 4))

    def three(b: np.ndarray) -> np.ndarray:
        return np.stack([two_class(b)[:, 0], two_class(b)[:, 1], b.reshape(len(b), -1).mean(1) * 8 - 4.4], axis=1)

    y = three(x).argmax(1)
    attack(three, x, y, budget=150, seed=0, n_classes=3, norm=np.inf)
    assert set(layouts) == {"memory"}
    layouts.clear()
    pool = np.random.default_rng(1).uniform(0, 1, size=(200, 1, 4, 4))
    attack(three, x, y, budget=150, seed=0, n_classes=3, norm=np.inf, target=[2, 2],
           start=Start(target_pool=(pool, three(pool).argmax(1))))
    assert set(layouts) == {"tiles"}
    assert default_solver_options(np.inf, "sign-flips", True, {"layout": "memory"}) == {"layout": "memory"}
    assert default_solver_options(2, "sign-growing", True, {}) == {}
