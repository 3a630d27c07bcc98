"""theory.predictions: the stationary floors match seeded fixed-step runs on quadratics."""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt
from theory.predictions import oracle_noise_floor, smoothing_noise_floor
from zeroopt.oracles.problems import rotated_quadratic


def _tail_rms(problem: zeroopt.Problem, beta: float, iters: int, seed: int) -> float:
    res = zeroopt.minimize(problem, problem.x0, solver="rgf-fixed", budget=10**7, seed=seed, max_iter=iters,
                           patience=None, beta=beta)
    g = res.history_array("true_grad_norm")[iters // 2:]
    return float(np.sqrt(np.mean(g**2)))


def test_smoothing_floor_matches_a_run_and_grows_like_beta_d() -> None:
    d, beta = 16, 0.05
    problem = rotated_quadratic(d, mu=2.0, L=2.0, radius=0.1, seed=0)  # f = ‖x‖², c = L1 = 2
    predicted = smoothing_noise_floor(d, 2.0, beta)
    assert _tail_rms(problem, beta, 6000, seed=1) == pytest.approx(predicted, rel=0.2)
    # by hand: (c²)·α c β² d(d+2)(d+4) / (4 (2 − α c (d+2))) with c = 2, α = 1/(8 (d+4))
    alpha = 1 / (8 * (d + 4))
    by_hand = 2 * np.sqrt(alpha * 2 * beta**2 * d * (d + 2) * (d + 4) / (4 * (2 - 2 * alpha * (d + 2))))
    assert predicted == pytest.approx(by_hand, rel=1e-12)
    assert smoothing_noise_floor(256, 2.0, beta) / smoothing_noise_floor(64, 2.0, beta) == pytest.approx(4, rel=0.05)


def test_oracle_floor_matches_a_run_and_does_not_grow_with_d() -> None:
    d, beta, eps = 16, 1e-3, 1e-4
    problem = rotated_quadratic(d, mu=0.2, L=1.0, radius=0.1, seed=0).with_noise("uniform", eps, seed=2)
    predicted = oracle_noise_floor(d * 0.6, d, 1.0, beta, eps)
    assert _tail_rms(problem, beta, 6000, seed=1) == pytest.approx(predicted, rel=0.25)
    # bounded in d: α tr(A) → mean(λ)/(4 L1) = 0.15, so the floor tends to √(0.15/1.85 · (2/3)) ε/β
    big = oracle_noise_floor(4096 * 0.6, 4096, 1.0, beta, eps)
    assert predicted < big < np.sqrt(0.15 / 1.85 * 2 / 3) * eps / beta * (1 + 1e-9)
