"""theory.hitting and theory.stats: first hits, censoring, and log–log slopes with bootstrap intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.hitting import FirstHitStop, first_hit
from theory.stats import censored_median, fit_loglog_slope, loglog_line
from zeroopt import IterationRecord

FAST = settings(derandomize=True, deadline=None, max_examples=30)


def test_first_hit_by_hand() -> None:
    g = np.array([1.0, 0.5, 0.3, 0.05, 0.4])
    q = np.array([1, 3, 5, 7, 9])
    assert first_hit(g, q, 0.3, "iterate") == first_hit(g, q, 0.3, "iterate")
    hit = first_hit(g, q, 0.3, "iterate")
    assert (hit.iteration, hit.queries, hit.censored) == (2, 5, False)
    # running means of g²: 1, 0.625, 0.4467, 0.3356, 0.3005
    hit = first_hit(g, q, 0.56, "average")  # δ² = 0.3136
    assert (hit.iteration, hit.queries, hit.censored) == (4, 9, False)
    miss = first_hit(g, q, 0.01, "iterate")
    assert (miss.iteration, miss.queries, miss.censored) == (4, 9, True)
    with pytest.raises(ValueError):
        first_hit(g, q, 0.1, "best")  # type: ignore[arg-type]


@FAST
@given(st.lists(st.floats(1e-3, 10.0), min_size=1, max_size=50), st.floats(1e-2, 5.0))
def test_iterate_hit_never_after_average_hit(norms: list[float], delta: float) -> None:
    g = np.array(norms)
    q = np.arange(1, len(g) + 1)
    it, avg = first_hit(g, q, delta, "iterate"), first_hit(g, q, delta, "average")
    if not avg.censored:
        assert not it.censored and it.iteration <= avg.iteration


def test_first_hit_stop_matches_first_hit() -> None:
    g = [0.9, 0.7, 0.2, 0.1, 0.05, 0.05, 0.05]
    stop = FirstHitStop(delta=0.65, grad0=1.0)  # running means of g²: 1, .905, .767, .585, .47, .392
    stopped_at = None
    for k, gn in enumerate(g):
        rec = IterationRecord(k, 2 * k + 3, 0.0, 0.0, 0.0, 0.01, 0.1, 1.0, gn)
        if stop(rec):
            stopped_at = k + 1  # iterate index x_{k+1}
            break
    norms = np.array([1.0, *g])
    avg = first_hit(norms, np.arange(len(norms)), 0.65, "average")
    assert stopped_at == avg.iteration


def test_censored_median() -> None:
    assert censored_median([3, 1, 9, 5], [False] * 4) == 4.0
    assert censored_median([3, 1, 9, 5], [False, False, True, False]) == 4.0  # 9 → ∞ does not move it
    assert censored_median([3, 1, 9], [False, False, True]) == 3.0
    assert censored_median([3, 1, 9, 5], [False, True, True, False]) == math.inf
    with pytest.raises(ValueError):
        censored_median([], [])


def test_exact_power_law_is_recovered() -> None:
    x = [20.0, 36.0, 68.0, 132.0, 260.0]
    samples = [np.full(8, 7.0 * v**1.0) * np.linspace(0.9, 1.1, 8) for v in x]
    fit = fit_loglog_slope(x, samples, [np.zeros(8, bool)] * 5, rng=np.random.default_rng(0), n_boot=500)
    assert fit.slope == pytest.approx(1.0, abs=1e-9)
    assert fit.ci_low <= 1.0 <= fit.ci_high
    assert fit.fitted_points == 5 and fit.n_undefined == 0
    assert loglog_line([1, 10], [2, 200])[0] == pytest.approx(2.0)


def test_bootstrap_is_deterministic_and_reflects_spread() -> None:
    rng = np.random.default_rng(5)
    x = [20.0, 68.0, 260.0]
    noisy = [v * np.exp(0.3 * rng.standard_normal(32)) for v in x]
    tight = [v * np.exp(0.03 * rng.standard_normal(32)) for v in x]
    cens = [np.zeros(32, bool)] * 3
    a = fit_loglog_slope(x, noisy, cens, rng=np.random.default_rng(1), n_boot=400)
    b = fit_loglog_slope(x, noisy, cens, rng=np.random.default_rng(1), n_boot=400)
    c = fit_loglog_slope(x, tight, cens, rng=np.random.default_rng(1), n_boot=400)
    assert a == b
    assert (c.ci_high - c.ci_low) < (a.ci_high - a.ci_low) / 3
    assert c.se < a.se


def test_censored_points_are_left_out_of_the_fit() -> None:
    x = [20.0, 68.0, 260.0]
    samples = [np.full(4, 20.0), np.full(4, 68.0), np.full(4, 999.0)]
    cens = [np.zeros(4, bool), np.zeros(4, bool), np.array([True, True, True, False])]
    fit = fit_loglog_slope(x, samples, cens, rng=np.random.default_rng(0), n_boot=100)
    assert fit.fitted_points == 2 and math.isinf(fit.medians[2])
    assert fit.slope == pytest.approx(1.0)
    with pytest.raises(ValueError, match="fewer than two"):
        fit_loglog_slope(x, samples, [np.ones(4, bool)] * 2 + [cens[2]], rng=np.random.default_rng(0))
