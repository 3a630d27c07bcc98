"""What happens when things go wrong in the hard-label attack: partial results, early checks, clear errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zeroopt
from applications.hardlabel import BoundarySearch, ModelOptions, ModelOutputError, Runs, Start, Verify, attack

W = np.random.default_rng(1234).standard_normal((4, 16))  # a 4-class linear model on 16 features in [0, 1]
B = -W @ np.full(16, 0.5)


def scores(x: np.ndarray) -> np.ndarray:
    """Row-independent arithmetic, so a batch's composition cannot change a label."""
    flat = x.reshape(len(x), -1).astype(np.float64)
    return (flat[:, None, :] * W[None]).sum(-1) + B


def inputs(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    x = np.random.default_rng(seed).uniform(0.2, 0.8, size=(n, 16))
    return x, scores(x).argmax(1)


class Faulty:
    """The linear model, counting samples and remembering what it labelled, with a fault at call ``fail_at``."""

    def __init__(self, fail_at: int | None = None, fault: str = "raise") -> None:
        self.fail_at, self.fault = fail_at, fault
        self.calls = self.samples = 0
        self.points: list[np.ndarray] = []
        self.labels: list[np.ndarray] = []

    def __call__(self, x: np.ndarray) -> np.ndarray:
        self.calls += 1
        self.samples += len(x)
        out = scores(x)
        if self.calls == self.fail_at:
            if self.fault == "raise":
                raise RuntimeError("model server went away")
            if self.fault == "interrupt":
                raise KeyboardInterrupt
            if self.fault == "nan":
                out[len(out) // 2] = np.nan
                return out
            return np.zeros((len(x) + 1, 4))  # wrong shape
        self.points.append(np.array(x, dtype=np.float64).reshape(len(x), -1))
        self.labels.append(out.argmax(1))
        return out


def assert_verified(x: np.ndarray, y: np.ndarray, res, budget: int) -> None:  # type: ignore[no-untyped-def]
    assert np.all(res.queries <= budget)
    labels = scores(res.x_adv.astype(np.float64)).argmax(1)
    for i in range(len(x)):
        if res.success[i]:
            assert labels[i] != y[i]
            assert np.isclose(np.linalg.norm(res.x_adv[i].astype(np.float64) - x[i]), res.distortion[i], atol=1e-6)


def test_ctrl_c_during_the_runs_keeps_a_keyboard_interrupt_with_the_partial_result() -> None:
    x, y = inputs(2, seed=9)
    model = Faulty(fail_at=200, fault="interrupt")  # the runs have started by then
    with pytest.raises(KeyboardInterrupt) as info:
        attack(model, x, y, budget=2000, seed=0, n_classes=4)
    partial = info.value.partial_result
    assert partial.success.all() and np.all(partial.queries <= 2000)
    assert_verified(x, y, partial, 2000)
    # The interrupted runs are there too, as far as they got.
    runs = partial.solver_results
    assert all(r is not None and r.status is zeroopt.Status.INTERRUPTED for r in runs)
    assert all(np.isfinite(r.fun) and 0 < r.queries <= q for r, q in zip(runs, partial.queries, strict=True))


POOL_WITHOUT_2 = (np.zeros((3, 16)), np.array([1, 1, 3]))
BAD_OPTIONS: list[Callable[[], dict[str, Any]]] = [
    lambda: {"solver_options": {"betta": 0.01}}, lambda: {"solver_options": {"q": 0}},
    lambda: {"solver": "rgf-fixed", "solver_options": {"patience": 0}}, lambda: {"solver": "nope"},
    lambda: {"start": Start(n_initial=0)}, lambda: {"boundary_search": BoundarySearch(local_ratio=2.0)},
    lambda: {"runs": Runs(max_iter=-1)}, lambda: {"runs": Runs(preset="papers")},
    lambda: {"target": np.array([1, 2])},
    lambda: {"target": np.array([1, 2]), "start": Start(target_pool=POOL_WITHOUT_2)},
    lambda: {"target": np.array([1, 2]), "start": Start(target_examples=np.zeros((3, 15)))},
    lambda: {"start": Start(target_pool=(np.zeros((3, 16)), np.array([1, 2])))},
    lambda: {"budget": 100.0}, lambda: {"verify": Verify(queries=-1)},
    lambda: {"start": Start(initial_selection="knockout")},
    lambda: {"boundary_search": BoundarySearch(local_growth=0.5)},
    lambda: {"n_initial": 50}, lambda: {"q": 10}, lambda: {"verify": 3}, lambda: {"solver_options": [("q", 10)]},
]


@pytest.mark.parametrize("opts", BAD_OPTIONS)
def test_bad_options_fail_with_zero_model_calls(opts: Callable[[], dict[str, Any]]) -> None:
    x, y = inputs(2)
    y = np.array([0, 0])
    model = Faulty()
    with pytest.raises((TypeError, ValueError)):
        attack(model, x, y, **{"budget": 500, "seed": 0, **opts()})
    assert model.calls == 0


def test_a_label_beyond_the_models_scores_is_an_error() -> None:
    x, _ = inputs(1)
    with pytest.raises(ValueError, match=r"label\(s\) \[12\] but the model returns scores for 4 classes") as info:
        attack(scores, x, np.array([12]), budget=200, seed=0)
    assert not info.value.partial_result.success.any()  # nothing taken for "already misclassified"
    model = Faulty()
    with pytest.raises(ValueError, match="outside the model's classes"):
        attack(model, x, np.array([12]), budget=200, seed=0, n_classes=4)
    assert model.calls == 0


def test_no_inputs_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="x0 holds no inputs"):
        attack(scores, np.zeros((0, 16)), np.zeros(0, dtype=int), budget=200)


def test_a_non_integer_budget_fails_alike_in_attack_and_minimize() -> None:
    x, y = inputs(1)
    for bad, kind in ((100.0, TypeError), (0, ValueError), (-5, ValueError)):
        with pytest.raises(kind) as in_attack:
            attack(scores, x, y, budget=bad)
        with pytest.raises(kind) as in_minimize:
            zeroopt.minimize(lambda z: float(z @ z), np.ones(2), budget=bad)
        assert str(in_attack.value) == str(in_minimize.value)


def test_batched_equals_one_at_a_time_exactly_with_batch_size_1() -> None:
    # A model whose scores depend (slightly) on the batch's size, as a network's last bits can.
    def batch_dependent(z: np.ndarray) -> np.ndarray:
        return scores(z) + 1e-4 * len(z) * np.array([1.0, -1.0, 0.5, -0.5])

    x, y = inputs(3, seed=5)
    kw = {"budget": 600, "seed": 0, "n_classes": 4}
    batched = attack(batch_dependent, x, y, **kw)
    alone = [attack(batch_dependent, x[i:i + 1], y[i:i + 1], **kw).distortion[0] for i in range(3)]
    assert not np.array_equal(batched.distortion, alone)  # what the seed docstring warns about
    one = ModelOptions(batch_size=1)
    batched1 = attack(batch_dependent, x, y, model_options=one, **kw)
    alone1 = [attack(batch_dependent, x[i:i + 1], y[i:i + 1], model_options=one, **kw).distortion[0] for i in range(3)]
    assert np.array_equal(batched1.distortion, alone1)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(fail_at=st.integers(1, 40), fault=st.sampled_from(["raise", "nan", "shape", "interrupt"]),
       budget=st.integers(5, 400), n=st.integers(1, 3), seed=st.integers(0, 3),
       batch_size=st.sampled_from([None, 1, 5]))
def test_random_faults_lose_nothing_and_never_overshoot(fail_at: int, fault: str, budget: int, n: int,
                                                        seed: int, batch_size: int | None) -> None:
    x, y = inputs(n, seed=seed)
    model = Faulty(fail_at=fail_at, fault=fault)
    try:
        res = attack(model, x, y, budget=budget, seed=seed, n_classes=4,
                     model_options=ModelOptions(batch_size=batch_size))
        assert model.calls < fail_at  # finished before the fault
    except (ModelOutputError, KeyboardInterrupt) as err:
        assert model.calls == fail_at
        assert isinstance(err, KeyboardInterrupt) == (fault == "interrupt")
        res = err.partial_result
    # No overshoot, and exact counts: the queries reported are the samples the model was sent.
    assert np.all(res.queries <= budget) and model.samples == int(res.queries.sum())
    # What the result calls a success, the model labels adversarial, at the reported distance.
    assert_verified(x, y, res, budget)
    if n == 1 and model.points:
        # Nothing found before the fault is missing: no point the model labelled adversarial is closer.
        pts, labels = np.concatenate(model.points), np.concatenate(model.labels)
        adv = pts[labels != y[0]]
        if len(adv):
            closest = float(np.linalg.norm(adv - x[0].astype(np.float32).astype(np.float64), axis=1).min())
            assert res.success[0]
            assert res.distortion[0] <= closest * (1 + 4e-3) + 1e-9
