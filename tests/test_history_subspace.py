"""Probes spanning the recent estimates (zeroopt.HistorySubspaceProbes, the descent option history_span)."""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt
from zeroopt.sample.history_subspace import MEMORY_KEY, HistorySubspaceProbes
from zeroopt.sample.orthogonal import orthonormal_rows


def _memory(part: HistorySubspaceProbes, estimates: list[np.ndarray]) -> dict:
    memory: dict = {}
    for g in estimates:
        memory = part.remember(memory, g)
    return memory


@pytest.mark.parametrize("q", [8, 40])
def test_the_first_probes_span_the_history_and_the_rest_are_orthonormal_to_it(q: int) -> None:
    rng = np.random.default_rng(0)
    d, part = 60, HistorySubspaceProbes(span=4, max_share=0.25)
    past = [rng.standard_normal(d) for _ in range(6)]
    u = part(orthonormal_rows(rng, q, d), _memory(part, past), None)
    k = min(4, q // 4)
    assert u.shape == (q, d)
    assert np.allclose(u @ u.T, np.eye(q), atol=1e-10)
    basis = np.linalg.qr(np.array(past[-k:]).T)[0]  # the last k estimates, the ones the part keeps and uses
    assert np.allclose(np.linalg.norm(u[:k] @ basis, axis=1), 1.0)  # the first k lie in their span
    assert np.allclose(u[k:] @ basis, 0.0, atol=1e-10)  # the others are orthogonal to it


def test_rows_keep_the_length_the_sampler_drew() -> None:
    rng = np.random.default_rng(1)
    part = HistorySubspaceProbes(span=3, max_share=0.5)
    drawn = rng.standard_normal((10, 50))  # Gaussian rows, not unit length
    u = part(drawn, _memory(part, [rng.standard_normal(50) for _ in range(3)]), None)
    assert np.allclose(np.linalg.norm(u, axis=1), np.linalg.norm(drawn, axis=1))


def test_the_memory_keeps_the_last_span_unit_estimates_and_skips_empty_ones() -> None:
    part = HistorySubspaceProbes(span=2)
    memory = _memory(part, [np.array([3.0, 0, 0]), np.array([0, 0, 0.0]), np.array([0, np.nan, 1.0]),
                            np.array([0, 2.0, 0]), np.array([0, 0, -5.0])])
    kept = memory[MEMORY_KEY]
    assert len(kept) == 2
    assert np.allclose(kept[0], [0, 1, 0]) and np.allclose(kept[1], [0, 0, -1])
    other = part.remember({"momentum": 1}, np.ones(3))
    assert other["momentum"] == 1  # what other parts keep stays


def test_without_a_history_the_probes_are_the_samplers() -> None:
    u = orthonormal_rows(np.random.default_rng(2), 8, 30)
    assert HistorySubspaceProbes()(u, {}, None) is u


def test_only_the_active_coordinates_are_spanned() -> None:
    rng = np.random.default_rng(3)
    part = HistorySubspaceProbes(span=2, max_share=0.5)
    active = np.arange(10, 40)
    drawn = np.zeros((6, 50))
    drawn[:, active] = orthonormal_rows(rng, 6, active.size)
    u = part(drawn, _memory(part, [rng.standard_normal(50) for _ in range(2)]), active)
    off = np.setdiff1d(np.arange(50), active)
    assert np.allclose(u[:, off], 0.0)
    assert np.allclose(u @ u.T, np.eye(6), atol=1e-10)


@pytest.mark.parametrize("kwargs, match", [({"span": 0}, "span"), ({"span": 2.5}, "span"),
                                           ({"max_share": 0}, "max_share"), ({"max_share": 1.5}, "max_share")])
def test_bad_settings_say_which(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        HistorySubspaceProbes(**kwargs)


def test_the_descent_option_builds_the_part_and_checks_its_value() -> None:
    ctx = zeroopt.SolverContext(dim=20)
    assert zeroopt.make_solver("sign", ctx).find(HistorySubspaceProbes) is None
    assert zeroopt.make_solver("sign", ctx, history_span=5).find(HistorySubspaceProbes) == HistorySubspaceProbes(5)
    with pytest.raises(ValueError, match="history_span"):
        zeroopt.make_solver("sign", ctx, history_span=0)


def test_where_the_gradient_keeps_to_a_few_directions_the_history_pays() -> None:
    """f is an ill-conditioned quadratic on a random 10-dimensional subspace of 300: every gradient lies in it,
    the recent estimates span much of it, and probes there measure more of the next gradient than random ones —
    the case the part is for."""
    d, k = 300, 10
    basis = np.linalg.qr(np.random.default_rng(0).standard_normal((d, k)))[0].T
    curvature = np.linspace(1.0, 10.0, k)

    def f(x: np.ndarray) -> float:
        return float(curvature @ (basis @ x) ** 2)

    ends = {span: np.median([zeroopt.minimize(f, basis.sum(axis=0), solver="sign", budget=1500, seed=s, q=20,
                                              history_span=span).fun for s in range(8)]) for span in (None, 10)}
    assert ends[10] < 0.5 * ends[None]
