"""The query-efficiency parts: low-frequency directions, √t probe growth, the tournament start."""

from __future__ import annotations

import numpy as np
import pytest
from boundary_oracles import drive_one, linear_group
from scipy.fft import dctn

import zeroopt
from applications.hardlabel import Start, attack
from applications.hardlabel.tournament import tournament
from zeroopt.sample.samplers import make_sampler, sampler_names

SHAPE = (1, 12, 12)
CONTEXT = zeroopt.SolverContext(dim=144, shape=SHAPE)


def _second_moment(sampler, draws: int = 140) -> np.ndarray:  # type: ignore[no-untyped-def]
    """scale · E[u uᵀ], estimated from ``draws`` calls of 144 directions each (d = 144)."""
    rng = np.random.default_rng(0)
    # Draws of 144 at a time (a coordinate sampler gives at most d distinct directions per call).
    u = np.concatenate([sampler.sample(rng, 144, 144, t) for t in range(draws)])
    assert u.shape == (draws * 144, 144) and np.all(np.isfinite(u))
    return sampler.scale(144) * (u.T @ u) / len(u)


@pytest.mark.parametrize("name", sampler_names())
def test_every_sampler_is_isotropic_on_its_subspace_or_a_mixture_of_such(name: str) -> None:
    """scale · E[u uᵀ] is a projection P (P² = P): the forward difference is unbiased for P ∇f. A mixture
    gives the weighted sum of its components' (normalised to trace d): unbiased for a preconditioned ∇f."""
    sampler = make_sampler(name, CONTEXT)
    m = _second_moment(sampler)
    assert np.linalg.eigvalsh(m).min() > -0.15, name  # positive semi-definite: -D ∇f is a descent direction
    if isinstance(sampler, zeroopt.MixtureDirections):
        assert abs(np.trace(m) - 144) < 1e-6 * 144, name
        expected = sum(
            w * 144 / np.trace(mk) * mk
            for w, mk in zip(sampler.weights, (_second_moment(c) for c in sampler.components), strict=True)
        )
        assert np.abs(m - expected).max() < 0.25, name
        return
    # P² = P up to sampling error, and trace P = rank = the subspace's dimension.
    assert np.abs(m @ m - m).max() < 0.15, name
    rank = np.linalg.matrix_rank(m, tol=0.5)
    assert abs(np.trace(m) - rank) < 0.05 * rank + 0.5, name


def test_multi_scale_weighs_low_frequencies_more_and_covers_the_full_space() -> None:
    """The "multi-scale" mixture: every DCT frequency is probed (full rank), the coarsest ones most."""
    m = _second_moment(make_sampler("multi-scale", CONTEXT))
    basis = np.eye(144).reshape(144, *SHAPE)
    coef = dctn(basis, axes=(2, 3), norm="ortho").reshape(144, 144)  # columns: the DCT basis vectors
    weight = np.einsum("ij,ik,kj->j", coef, m, coef).reshape(12, 12)  # Dᵢᵢ in the DCT basis
    assert weight.min() > 0.2  # the sphere component reaches every frequency
    assert weight[:2, :2].mean() > 4 * weight[6:, 6:].mean()  # ... the bands favour the coarse ones
    short = make_sampler("multi-scale", zeroopt.SolverContext(dim=6, shape=(6,)))  # no axis to smooth
    assert isinstance(short, zeroopt.SphereDirections)
    with pytest.raises(ValueError, match="weights"):
        zeroopt.MixtureDirections((zeroopt.SphereDirections(),), weights=(-1.0,))


def test_low_frequency_directions_live_in_the_low_frequency_block() -> None:
    s = zeroopt.LowFrequencyDirections(SHAPE, fraction=0.25)
    assert s.subspace_dim == 9  # ceil(0.25 · 12) = 3 per axis; the channel axis is not smoothed
    u = s.sample(np.random.default_rng(1), 50, 144, 0)
    assert np.allclose(np.linalg.norm(u, axis=1), 1.0)
    coef = dctn(u.reshape(50, *SHAPE), axes=(2, 3), norm="ortho")
    assert np.abs(coef[:, :, 3:, :]).max() < 1e-12 and np.abs(coef[:, :, :, 3:]).max() < 1e-12
    assert np.abs(coef[:, :, :3, :3]).max() > 0.1
    # Estimating a gradient that lies in the subspace: the average of many estimates recovers it.
    g_true = u[0] * 3.0
    dirs = s.sample(np.random.default_rng(2), 40_000, 144, 0)
    est = s.scale(144) * ((dirs @ g_true) @ dirs) / len(dirs)
    assert np.linalg.norm(est - g_true) < 0.1 * np.linalg.norm(g_true)


def _outside_band(u: np.ndarray, keep: int) -> np.ndarray:
    """Each direction's energy outside the lowest ``keep`` × ``keep`` DCT frequencies of SHAPE."""
    coef = dctn(u.reshape(len(u), *SHAPE), axes=(2, 3), norm="ortho")
    coef[:, :, :keep, :keep] = 0.0
    return np.sum(coef.reshape(len(u), -1) ** 2, axis=1)


def test_the_widening_band_grows_like_the_probes_to_the_full_space() -> None:
    s = zeroopt.WideningLowFrequency(SHAPE)
    dims = [s.band(t).subspace_dim for t in range(20)]
    assert dims[0] == 9 and all(a <= b for a, b in zip(dims, dims[1:], strict=False)) and dims[15] == 144
    rng = np.random.default_rng(0)
    assert _outside_band(s.sample(rng, 30, 144, 0), 3).max() < 1e-20  # t = 0: the lowest quarter only
    assert _outside_band(s.sample(rng, 30, 144, 3), 6).max() < 1e-20  # t = 3: half of each axis
    assert _outside_band(s.sample(rng, 30, 144, 15), 6).min() > 1e-6  # t = 15: the full space


def test_the_widening_hedge_sends_half_its_probes_to_the_band_until_it_is_full() -> None:
    s = make_sampler("widening-hedge", CONTEXT)
    rng = np.random.default_rng(0)
    in_band = _outside_band(s.sample(rng, 400, 144, 0), 3) < 1e-20
    assert 0.4 < in_band.mean() < 0.6
    assert (_outside_band(s.sample(rng, 400, 144, 15), 6) > 1e-6).all()
    assert isinstance(make_sampler("widening-hedge", zeroopt.SolverContext(dim=6, shape=(6,))),
                      zeroopt.SphereDirections)


def test_low_frequency_rejects_what_it_cannot_do() -> None:
    with pytest.raises(ValueError, match="fraction"):
        zeroopt.LowFrequencyDirections(SHAPE, fraction=0.0)
    with pytest.raises(ValueError, match="shape"):
        zeroopt.LowFrequencyDirections(SHAPE).sample(np.random.default_rng(0), 2, 100, 0)
    # A problem without a shape (or without a long axis) falls back to the uniform sphere.
    assert isinstance(make_sampler("low-frequency", zeroopt.SolverContext(dim=5)), zeroopt.SphereDirections)


def test_sqrt_probe_growth() -> None:
    grow = zeroopt.SqrtProbeGrowth(start=20, cap=200)
    rng = np.random.default_rng(0)
    states = [zeroopt.SolverState(np.zeros(2), 0.0, 0.0, 1.0, 1.0, t, rng) for t in (0, 3, 99, 500)]
    assert [grow(s) for s in states] == [20, 40, 200, 200]
    with pytest.raises(ValueError):
        zeroopt.SqrtProbeGrowth(start=30, cap=20)
    with pytest.raises(ValueError, match="q_start"):
        zeroopt.minimize(lambda x: float(x @ x), np.ones(3), solver="sign", budget=10, q=10, q_start=0)
    # q below q_start: a constant q (how the theory runner fixes q for every solver).
    res = zeroopt.minimize(lambda x: float(x @ x), np.ones(3), solver="sign-growing", budget=100, q=2, max_iter=3)
    assert res.iterations == 3 and res.queries <= 1 + 3 * (2 + 30)


def test_q_start_spends_fewer_probes_early() -> None:
    x0 = np.ones(20)
    runs = {}
    for q_start in (None, 5):
        opts = {} if q_start is None else {"q_start": q_start}
        runs[q_start] = zeroopt.minimize(lambda x: float(x @ x), x0, solver="rgf", budget=10_000, seed=0, max_iter=4,
                                         **opts)
    assert runs[5].queries < runs[None].queries
    assert runs[5].fun < float(x0 @ x0)


def test_tournament_picks_the_nearest_candidate_cheaply() -> None:
    rng = np.random.default_rng(3)
    d = 30
    w, x0 = rng.standard_normal(d), np.zeros(d)
    b = -1.0  # x0 has label 0; the boundary w·x = 1
    dirs = rng.standard_normal((200, d))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    cos = dirs @ w
    dirs = dirs[cos > 0]  # directions that reach the boundary
    g = 1.0 / (dirs @ w)  # exact boundary distance along each
    lam = float(g.max() * 1.5)
    group = linear_group(x0, w, b, budget=10_000)
    out = tournament(group, {0: [(u, lam) for u in dirs]}, eps=1e-6)
    theta, value = out[0]
    assert value == pytest.approx(1.0 / (theta @ w), abs=1e-5)
    # The winner is within the finest ratio (10%) of the best candidate, for far fewer queries than
    # bisecting every candidate (log2(λ/ε) each).
    assert value <= g.min() / 0.9 + 1e-6
    assert group.images[0].ledger.spent < 0.25 * len(dirs) * np.log2(lam / 1e-6)


def test_the_tournament_falls_faster_through_rounds_that_rank_nobody() -> None:
    rng = np.random.default_rng(5)
    d = 30
    w, x0 = rng.standard_normal(d), np.zeros(d)
    dirs = rng.standard_normal((60, d))
    dirs = dirs[dirs @ w > 0.5]
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    g = 1.0 / (dirs @ w)
    lam = float(g.max() * 64)  # known adversarial far outside: the first rounds knock nobody out
    spent, values = {}, {}
    for accelerate in (False, True):
        group = linear_group(x0, w, -1.0, budget=10_000)
        theta, values[accelerate] = tournament(group, {0: [(u, lam) for u in dirs]}, eps=1e-6,
                                               accelerate=accelerate)[0]
        assert values[accelerate] == pytest.approx(1.0 / (theta @ w), abs=1e-5)
        assert values[accelerate] <= g.min() / 0.9 + 1e-6  # as good a winner
        spent[accelerate] = group.images[0].ledger.spent
    # Halving spends a round of every candidate per octave above the boundary; squaring skips about half.
    assert spent[True] <= spent[False] - len(dirs)


@pytest.mark.parametrize("selection", ["tournament", "halving-tournament", "record", "bisect-all"])
def test_attack_with_the_cheap_start_finds_a_near_optimal_point(selection: str) -> None:
    rng = np.random.default_rng(4)
    d = 64
    w = rng.standard_normal(d)
    x = np.clip(0.5 + 0.05 * rng.standard_normal((3, d)), 0, 1)
    b = -(x @ w) + 0.5 * np.linalg.norm(w)  # every input 0.5 from the boundary, on the class-1 side
    model = lambda z: (z.reshape(len(z), -1) @ w + b[:1] > 0).astype(np.int64)  # noqa: E731
    x = x[:1]
    res = attack(model, x, np.array([1]), budget=3000, solver="sign", seed=0, n_classes=2,
                 start=Start(initial_directions="low-frequency", initial_selection=selection))
    assert res.success[0]
    assert res.distortion[0] < 0.5 * 1.05


def test_estimator_quality_ranks_samplers_by_their_prior() -> None:
    from theory.estimator_quality import estimate_quality, smooth_gradient

    shape = (1, 16, 16)
    rng = np.random.default_rng(0)
    smooth, white = smooth_gradient(shape, rng), rng.standard_normal(256)
    lf_s = estimate_quality("forward-difference", "low-frequency", smooth, shape, 20, 40, 0)
    sp_s = estimate_quality("forward-difference", "sphere", smooth, shape, 20, 40, 0)
    lf_w = estimate_quality("sign", "low-frequency", white, shape, 20, 40, 0)
    sp_w = estimate_quality("sign", "sphere", white, shape, 20, 40, 0)
    assert lf_s["cosine"] > 2 * sp_s["cosine"]  # the prior pays when the gradient is smooth ...
    assert lf_w["cosine"] < sp_w["cosine"] + 0.02  # ... and not when it is white
    # A sphere sampler's forward difference is unbiased: q=20 cosine about sqrt(q/d) = 0.28.
    assert 0.2 < sp_s["cosine"] < 0.4


def test_a_flat_input_is_taken_for_tabular_features_not_a_signal() -> None:
    from applications.hardlabel.config import boundary_context

    flat, image = boundary_context((28,), "paper"), boundary_context((1, 28, 28), "paper")
    assert flat.shape is None and image.shape == (1, 28, 28)
    assert isinstance(make_sampler("low-frequency", flat), zeroopt.SphereDirections)
    assert isinstance(make_sampler("low-frequency", image), zeroopt.LowFrequencyDirections)


@pytest.mark.parametrize("truth", [0.55, 0.97, 1.02, 3.0])  # far below, just below, just above, far above
def test_galloping_local_search_finds_the_value_for_fewer_queries(truth: float) -> None:
    """The local search around a hint of 1.0: galloping (growth 2) ends at the same value, to ε, as the
    paper's fixed ratio, for no more queries near the hint and far fewer away from it."""
    from applications.hardlabel.boundary import RaySearch

    d, eps = 8, 1e-6
    w = np.zeros(d)
    w[0] = 1.0 / truth  # the boundary w·x = 1 lies at λ = truth along e_0
    spent = {}
    for growth in (1.0, 2.0):
        group = linear_group(np.zeros(d), w, -1.0, budget=10_000)
        search = RaySearch(0, group.ray(0, np.eye(d)[0]), 1.0, eps, "local", growth=growth)
        group.run([search])
        assert search.done and search.value == pytest.approx(truth, abs=2 * eps)
        assert search.value >= truth  # the adversarial end of the final bracket
        spent[growth] = group.images[0].ledger.spent
    if abs(truth - 1.0) < 0.05:
        assert spent[2.0] <= spent[1.0] + 1
    else:
        assert spent[2.0] < 0.6 * spent[1.0]


def test_local_growth_is_checked_and_reference_start_restores_the_paper() -> None:
    from applications.hardlabel import REFERENCE_START, BoundarySearch, Race

    assert REFERENCE_START["boundary_search"].local_growth == 1.0
    for bad in (0.5, float("inf"), "2", True):
        with pytest.raises(ValueError, match="BoundarySearch: local_growth"):
            BoundarySearch(local_growth=bad)
    for piece, name in ((Start, "n_uniform"), (Race, "race_iterations")):
        for bad in (-1, 1.5, True):
            with pytest.raises(ValueError, match=f"{piece.__name__}: {name}"):
                piece(**{name: bad})


def test_relative_precision_follows_the_value_and_only_sign_growing_asks_for_it() -> None:
    rel = zeroopt.PrecisionFollowsValue(1 / 500)
    assert rel(0.001, 0.05) == pytest.approx(0.001 / 500 * 0.05)
    assert rel(0.001, -2.0) == pytest.approx(0.001 / 500 * 2.0)
    assert rel(0.001) == rel(0.001, np.inf) == pytest.approx(0.001 / 500)  # no value known yet: scale 1
    assert rel(0.001, 0.0) == zeroopt.sample.precision.MIN_RELATIVE_EPS  # never ε = 0, which no search reaches
    sphere = zeroopt.SolverContext(dim=64, unit_sphere=True, adjustable_precision=True)
    growing = zeroopt.make_solver("sign-growing", sphere)
    # sign-growing asks for β/100 of the value (coarser than the reference code's β/500)
    assert growing.requested_eps(0.001, 0.05) == pytest.approx(0.001 / 100 * 0.05)
    assert zeroopt.recipes.registry.recipe_defaults(zeroopt.sign_growing_on_radius)["eps_per_beta"] == 1 / 100
    for paper_like in ("sign", "rgf"):  # the paper's solvers keep the reference code's absolute β/500
        built = zeroopt.make_solver(paper_like, sphere)
        assert built.requested_eps(0.001, 0.05) == pytest.approx(0.001 / 500)
    assert zeroopt.make_solver("sign-growing", sphere, eps_relative=False).requested_eps(0.001, 0.05) == \
        pytest.approx(0.001 / 100)
    assert zeroopt.make_solver("sign-growing", sphere, eps_per_beta=1 / 500).requested_eps(0.001, 0.05) == \
        pytest.approx(0.001 / 500 * 0.05)  # the caller's precision wins
    # Without an oracle of adjustable precision there is no ε to choose: the default stays unset.
    fixed = zeroopt.SolverContext(dim=64, unit_sphere=True)
    assert "eps_per_beta" not in zeroopt.get_solver("sign-growing").context_defaults(fixed)
    with pytest.raises(TypeError, match="eps_relative"):
        zeroopt.make_solver("sign-growing", sphere, eps_relative="yes")


def test_each_iteration_asks_for_a_precision_at_the_iterate_s_own_value() -> None:
    seen: list[tuple[float, float]] = []

    class Recording(zeroopt.core.stages.SetsPrecision):
        def __call__(self, beta: float, value: float = float("nan")) -> float:
            seen.append((beta, value))
            return 1e-9

    solver = zeroopt.make_solver("sign-growing", zeroopt.SolverContext(dim=5)).with_part(Recording())
    group = zeroopt.IndependentGroup([zeroopt.as_oracle(lambda x: float(np.sum((x - 1.0) ** 2)) + 1.0, (5,),
                                                        budget=400)])
    (result,) = zeroopt.drive([zeroopt.run_solver(solver, np.zeros(5), rng=np.random.default_rng(0))], group)
    iterate_values = [rec.f for rec in result.history]
    asked = [value for _, value in seen if np.isfinite(value)]
    assert len(asked) >= len(iterate_values) - 1 > 3
    # Iteration t asks at the value its iterate started from, which the record of iteration t-1 holds.
    assert asked[1:len(iterate_values)] == pytest.approx(iterate_values[:len(iterate_values) - 1])


def test_a_bracket_from_a_coarse_answer_is_refined_not_searched_afresh() -> None:
    d, truth = 8, 0.8
    w = np.zeros(d)
    w[0] = 1.0 / truth  # the boundary lies at λ = 0.8 along e_0
    point = np.eye(d)[:1]
    group = linear_group(np.zeros(d), w, -1.0, budget=10_000)
    (coarse,) = group.answer([(0, zeroopt.Evaluate(points=point, eps=1e-3, hints=np.array([1.0])))])
    before = group.images[0].ledger.spent
    value, achieved = float(coarse.values[0]), float(coarse.eps[0])
    (fine,) = group.answer([(0, zeroopt.Evaluate(points=point, eps=1e-7, hints=np.array([value]),
                                                 lower=np.array([value - achieved])))])
    refine_cost = group.images[0].ledger.spent - before
    assert float(fine.values[0]) == pytest.approx(truth, abs=2e-7) and float(fine.values[0]) >= truth
    assert refine_cost <= np.ceil(np.log2(achieved / 1e-7)) + 1  # a bisection of the bracket, no more
    fresh = linear_group(np.zeros(d), w, -1.0, budget=10_000)
    fresh.answer([(0, zeroopt.Evaluate(points=point, eps=1e-7, hints=np.array([value])))])
    assert refine_cost < fresh.images[0].ledger.spent  # a search from the hint alone costs more


def test_coarse_line_search_candidates_keep_the_point_and_its_precision_for_fewer_queries() -> None:
    """The OPT line search with candidates evaluated to 64 ε: the same step, the kept value refined to ε."""
    from zeroopt.step.stepping import opt_line_search

    d, eps = 8, 1e-7
    w = np.full(d, 0.2)
    w[0] = 1.0  # g(θ) = 1 / (w · θ/‖θ‖): descending toward w
    theta = np.eye(d)[1] + 0.1 * np.eye(d)[0]
    theta /= np.linalg.norm(theta)
    grad_direction = -(w - (w @ theta) * theta)  # descent along the sphere toward w, as an estimate would say
    results = {}
    for coarse in (1.0, 64.0):
        group = linear_group(np.zeros(d), w, -1.0, budget=10_000)
        (start,) = group.answer([(0, zeroopt.Evaluate(points=theta[None, :], eps=eps))])
        fx, spent0 = float(start.values[0]), group.images[0].ledger.spent
        res = drive_one(opt_line_search(theta, fx, grad_direction, 0.5, eps, zeroopt.unit_sphere, coarse=coarse),
                         group)
        x = res.x / np.linalg.norm(res.x)
        assert res.fx == pytest.approx(1.0 / (w @ x), abs=2 * eps) and res.fx_eps <= eps
        results[coarse] = (res, group.images[0].ledger.spent - spent0)
    (plain, plain_cost), (coarse_res, coarse_cost) = results[1.0], results[64.0]
    assert coarse_res.step_taken == plain.step_taken > 0
    assert coarse_cost < plain_cost


def test_coarse_candidates_is_checked() -> None:
    sphere = zeroopt.SolverContext(dim=8, unit_sphere=True, adjustable_precision=True)
    for bad, error in ((0.5, ValueError), (-2.0, ValueError), ("64", TypeError)):
        with pytest.raises(error, match="coarse_candidates"):
            zeroopt.make_solver("sign-growing", sphere, coarse_candidates=bad)
