"""The query monitor of the benchmark harness: every sample counted once, charged to the right input, never past a
budget, and the best distance the running minimum over adversarial in-bounds queries."""

from __future__ import annotations

import numpy as np
import pytest
from harness_toys import CountingLabels, D, linear_labels, originals

from benchmarks.monitor import BudgetExhausted, QueryMonitor, best_at

# ------------------------------------------------------------------------------------------ the monitor


def test_counts_every_sample_once_in_owner_mode() -> None:
    x0, y0 = originals(2)
    mon = QueryMonitor(linear_labels, (0.0, 1.0))
    mon.register(x0, y0)
    rng = np.random.default_rng(1)
    sizes = [1, 7, 3, 20, 1]
    with mon.owned_by(1):
        for b in sizes:
            mon(rng.uniform(0, 1, size=(b, D)))
    assert mon.inputs[1].count == sum(sizes)
    assert mon.inputs[0].count == 0
    assert mon.model_calls == len(sizes) and mon.model_samples == sum(sizes)


def test_best_distance_is_the_running_minimum_over_adversarial_in_bounds_queries() -> None:
    x0, y0 = originals(1)
    mon = QueryMonitor(linear_labels, (0.0, 1.0))
    mon.register(x0, y0)
    rng = np.random.default_rng(2)
    batches = [rng.uniform(-0.1, 1.1, size=(b, D)).astype(np.float32) for b in (5, 1, 13, 8, 30)]
    for b in batches:
        mon(b)
    allq = np.concatenate(batches)
    labels = linear_labels(allq)
    inside = np.all((allq >= 0) & (allq <= 1), axis=1)
    dist = np.linalg.norm(allq.astype(np.float64) - x0[0].astype(np.float64), axis=1)
    eligible = np.where((labels != y0[0]) & inside, dist, np.inf)
    expected = np.minimum.accumulate(eligible)
    trace = mon.inputs[0]
    got = trace.best_at(np.arange(1, len(allq) + 1))
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert trace.best_at(0) == np.inf
    assert trace.out_of_bounds == int(np.count_nonzero(~inside))
    k = int(np.argmin(eligible))
    np.testing.assert_array_equal(trace.best_x, allq[k])


def test_targeted_criterion_and_out_of_bounds_never_best() -> None:
    x0, y0 = originals(1)
    mon = QueryMonitor(linear_labels, (0.0, 1.0))
    mon.register(x0, y0, target=np.array([2]))
    near_other = x0.copy()
    near_other[0, 1] = 0.9  # label 1: adversarial untargeted, not for target 2
    outside = x0.copy()
    outside[0, 2] = 1.5  # label 2 but out of bounds
    far_target = x0.copy()
    far_target[0, 2] = 1.0  # label 2, in bounds
    mon(np.concatenate([near_other, outside, far_target]))
    t = mon.inputs[0]
    assert t.steps_q == [3]
    assert t.steps_d == [pytest.approx(1.0 - float(x0[0, 2]), abs=1e-6)]
    assert t.out_of_bounds == 1


def test_nearest_mode_attributes_to_nearest_original_and_flags_ties() -> None:
    x0, y0 = originals(3)
    mon = QueryMonitor(linear_labels, (0.0, 1.0))
    mon.register(x0, y0)
    near = x0[[2, 0, 2]] + 0.01
    tie = (x0[0] + x0[1]) / 2  # equidistant from originals 0 and 1
    mon(np.concatenate([near, tie[None]]))
    counts = [t.count for t in mon.inputs]
    assert counts[2] == 2 and counts[0] + counts[1] == 2
    assert sum(t.ambiguous for t in mon.inputs) == 1


def test_owner_mode_overrides_geometry() -> None:
    x0, y0 = originals(2)
    mon = QueryMonitor(linear_labels, (0.0, 1.0))
    mon.register(x0, y0)
    with mon.owned_by(0):
        mon(x0[1:2] + 0.001)  # right next to original 1, but charged to 0
    assert [t.count for t in mon.inputs] == [1, 0]
    with pytest.raises(IndexError):
        with mon.owned_by(5):
            pass


def test_positional_mode_charges_sample_k_to_input_k() -> None:
    x0, y0 = originals(3)
    mon = QueryMonitor(linear_labels, (0.0, 1.0))
    mon.register(x0, y0)
    with mon.by_position():
        mon(x0[::-1])  # sample 0 is next to original 2, but is charged to input 0
        with pytest.raises(ValueError, match="one sample per input"):
            mon(x0[:2])
    assert [t.count for t in mon.inputs] == [1, 1, 1]


def test_raise_mode_answers_exactly_the_budget_and_never_calls_the_model_past_it() -> None:
    x0, y0 = originals(1)
    model = CountingLabels()
    mon = QueryMonitor(model, (0.0, 1.0), budget=10, on_exhausted="raise")
    mon.register(x0, y0)
    mon(np.repeat(x0, 6, axis=0))
    with pytest.raises(BudgetExhausted):
        mon(np.repeat(x0, 6, axis=0))
    assert mon.inputs[0].count == 10
    assert [len(s) for s in model.seen] == [6, 4]
    with pytest.raises(BudgetExhausted):
        mon(x0)
    assert len(model.seen) == 2  # refused before the model
    with pytest.raises(ValueError):
        QueryMonitor(linear_labels, (0, 1), on_exhausted="raise")


def test_record_mode_keeps_the_overshoot() -> None:
    x0, y0 = originals(1)
    mon = QueryMonitor(linear_labels, (0.0, 1.0), budget=3, on_exhausted="record")
    mon.register(x0, y0)
    mon(np.repeat(x0, 5, axis=0))
    assert mon.inputs[0].count == 5


def test_bad_queries_get_clear_errors() -> None:
    x0, y0 = originals(1)
    mon = QueryMonitor(linear_labels, (0.0, 1.0))
    with pytest.raises(RuntimeError, match="register"):
        mon(x0)
    mon.register(x0, y0)
    with pytest.raises(ValueError, match="shape"):
        mon(np.zeros((2, D + 1)))
    with pytest.raises(ValueError):
        mon.register(x0, np.array([0, 1]))


def test_best_at_step_function() -> None:
    q, d = np.array([3, 10]), np.array([2.0, 1.0])
    np.testing.assert_array_equal(best_at(q, d, [0, 2, 3, 9, 10, 100]), [np.inf, np.inf, 2.0, 2.0, 1.0, 1.0])
    assert best_at(np.array([], dtype=int), np.array([]), 5) == np.inf
