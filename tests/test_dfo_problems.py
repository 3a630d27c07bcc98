"""The Moré–Wild problems and the high-dimensional set: published start values, known minima, the noise."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.dfo import mgh
from benchmarks.dfo.highdim import NOISE_SHARE, high_dim_problems
from benchmarks.dfo.more_wild import NOISE_LEVEL, TABLE, problem, problems, wild_phi

# f(x0) for the 53 problems in the paper's order (Moré & Wild's starts; 7 significant digits).
START_VALUES = [
    72, 1125, 1.165420e7, 1.168591e9, 4.989195e6, 5.009356e8, 24.2, 1.795769e6, 2500, 10600, 215, 1.615400e6,
    400.5, 1.545754e8, 41.68170, 1306.234, 5.313172e-3, 1.693608e9, 16.43083, 2.323367e6, 26.90417, 8.158877e6,
    73.67821, 2.059384e7, 1031.154, 4171.306, 7.926693e6, 3.081064e11, 4.642817e-2, 3.377064e-2, 3.861770e-2,
    2.888298e-2, 3.376327e-2, 2.674060e-2, 273.2480, 16.17411, 2.093420, 199.6847, 904, 1356, 1582, 1808, 56.5,
    70.5625, 98.6875, 2.539084e9, 6.873795e12, 3.367961e9, 3.735127e9, 3.991072e9, 1.130015e13, 9.385672,
    3.365815e10,
]


def test_fifty_three_problems_from_twenty_two_functions() -> None:
    assert len(TABLE) == 53 and {fn for fn, *_ in TABLE} == set(range(1, 23))
    for fn, n, m, _ in TABLE:
        assert mgh.FUNCTIONS[fn][1](mgh.FUNCTIONS[fn][2](n), m).shape == (m,)


@pytest.mark.parametrize("index", range(1, 54))
def test_start_values(index: int) -> None:
    p = problem(index)
    assert p(p.x0) == pytest.approx(START_VALUES[index - 1], rel=5e-7)


@pytest.mark.parametrize(("fn", "n", "m", "x", "value"), [
    (4, 2, 2, np.ones(2), 0.0),  # Rosenbrock
    (5, 3, 3, np.array([1.0, 0.0, 0.0]), 0.0),  # helical valley
    (6, 4, 4, np.zeros(4), 0.0),  # Powell singular
    (7, 2, 2, np.array([11.41277892197810, -0.8968052599835741]), 48.98425367924),  # Freudenstein-Roth local min
    (7, 2, 2, np.array([5.0, 4.0]), 0.0),
    (1, 9, 45, -np.ones(9), 36.0),  # linear full rank: m - n at -1
    (12, 3, 10, np.array([1.0, 10.0, 1.0]), 0.0),  # Box 3-D
    (16, 10, 10, np.ones(10), 0.0),  # Brown almost-linear
    (20, 5, 5, np.ones(5), 0.0),  # cube
    (15, 2, 2, np.array([0.5 - 0.5 / np.sqrt(3), 0.5 + 0.5 / np.sqrt(3)]), 0.0),  # Chebyquad n=2: Gauss points
])
def test_known_minima(fn: int, n: int, m: int, x: np.ndarray, value: float) -> None:
    r = mgh.FUNCTIONS[fn][1](x, m)
    assert float(r @ r) == pytest.approx(value, abs=1e-9)


def test_variants_follow_the_paper() -> None:
    rng = np.random.default_rng(0)
    smooth, det, nondiff = problem(20), problem(20, "deterministic"), problem(20, "nondiff")
    sto = problem(20, "stochastic", noise_seed=5)
    points = [smooth.x0 + rng.normal(size=smooth.n) for _ in range(50)]
    ratios_det = [det(x) / smooth(x) - 1 for x in points]
    ratios_sto = [sto(x) / smooth(x) - 1 for x in points]
    assert max(map(abs, ratios_det)) <= NOISE_LEVEL and np.std(ratios_det) > 0.1 * NOISE_LEVEL
    assert max(map(abs, ratios_sto)) <= np.sqrt(3) * NOISE_LEVEL
    assert np.std(ratios_sto) == pytest.approx(NOISE_LEVEL, rel=0.35)  # unit-variance u
    again = sto.copy()
    assert [again(x) / smooth(x) - 1 for x in points] == ratios_sto  # same draws after a copy
    assert det(points[0]) == det(points[0])  # deterministic noise is a function of x
    fn, n, m, _ = TABLE[19]
    assert nondiff(points[0]) == pytest.approx(np.abs(mgh.FUNCTIONS[fn][1](points[0], m)).sum())
    assert all(abs(wild_phi(x)) <= 1 for x in points)


def test_overflow_is_a_large_finite_value() -> None:
    p = problem(26)  # Jennrich-Sampson: exp(i x) overflows far out
    assert np.isfinite(p(np.full(2, 1e4))) and p(np.full(2, 1e4)) >= 1e300
    assert len(problems("nondiff", [1, 2])) == 2


def test_high_dimensional_set() -> None:
    smooth = high_dim_problems("smooth", (100,))
    noisy = high_dim_problems("noisy", (100,), noise_seed=3)
    assert [p.n for p in smooth] == [100, 100, 128]
    for s, z in zip(smooth, noisy, strict=True):
        gap = s(s.x0) - s.f_star
        assert gap > 0 and s(s.x0) == s(s.x0)
        assert z.eps == pytest.approx(NOISE_SHARE * gap)
        draws = [z(z.x0) - s(z.x0) for _ in range(20)]
        assert max(map(abs, draws)) <= z.eps and np.std(draws) > 0.1 * z.eps
        assert [z.copy()(z.x0) - s(z.x0) for _ in range(1)] == draws[:1]
    quad, rosen, logit = smooth
    assert rosen(np.ones(100)) == 0.0 and quad(np.zeros(100)) == 0.0
    assert logit(logit.x0) == pytest.approx(np.log(2)) and logit.f_star < logit(logit.x0)
