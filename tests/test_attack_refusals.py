"""What the attack and the optimiser used to take silently: complex values, a batch size they would not honour, and
a start fallback that grew with the square of the batch.
"""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt
from applications.hardlabel import ModelOptions, ModelOutputError, Start, as_label_model, attack, initial

W = np.array([[1.0, -1.0], [-1.0, 1.0]])
X = np.array([[0.8, 0.2], [0.3, 0.9]])


def scores(x: np.ndarray) -> np.ndarray:
    return x.reshape(len(x), -1) @ W.T


def test_a_batch_size_a_label_model_would_not_honour_is_refused() -> None:
    wrapped = as_label_model(scores, batch_size=88)
    with pytest.raises(ValueError, match=r"ModelOptions\(batch_size=10\) cannot apply: .*LabelModel with "
                       r"batch_size=88"):
        attack(wrapped, X, np.array([0, 1]), budget=100, seed=0, model_options=ModelOptions(batch_size=10))
    assert wrapped.calls == 0  # refused before any query
    for agreeing in (ModelOptions(), ModelOptions(batch_size=88)):  # "auto", or the model's own
        attack(wrapped, X, np.array([0, 1]), budget=100, seed=0, model_options=agreeing)


def test_complex_scores_from_a_callable_are_refused() -> None:
    with pytest.raises(ModelOutputError, match="complex"):
        attack(lambda x: scores(x).astype(complex), X, np.array([0, 1]), budget=50, seed=0)


def test_a_model_calling_sys_exit_is_a_model_error() -> None:
    def exits(x: np.ndarray) -> np.ndarray:
        raise SystemExit(4)

    with pytest.raises(ModelOutputError, match=r"called sys.exit\(4\)"):
        as_label_model(exits)(X.astype(np.float32))


def test_tell_refuses_complex_values_as_minimize_does() -> None:
    with pytest.raises(zeroopt.ObjectiveError, match="real number"):
        zeroopt.minimize(lambda x: np.complex128(x @ x), np.ones(3), solver="rgf", budget=20, seed=0)
    opt = zeroopt.ask_tell("rgf", np.ones(3), budget=20, seed=0)
    points = opt.ask()
    with pytest.raises(ValueError, match="complex"):
        opt.tell((points**2).sum(axis=1) + 0j)
    opt.tell((points**2).sum(axis=1))  # the run is unchanged: a corrected tell goes on
    assert opt.queries == len(points)


def test_the_start_fallback_builds_no_more_candidates_than_queries_left(monkeypatch: pytest.MonkeyPatch) -> None:
    # Class 1 is a small box around a template; no random direction from a class-0 input reaches it, so every
    # class-0 input needs its fallback: rays toward the 40 class-1 inputs of the batch.
    d, n, budget = 20, 80, 12
    template = np.full(d, 0.7)
    x = np.concatenate([np.tile(template, (n // 2, 1)), np.random.default_rng(0).uniform(0, 0.3, (n // 2, d))])
    y = np.repeat([1, 0], n // 2)

    def model(b: np.ndarray) -> np.ndarray:
        return (np.abs(b.reshape(len(b), -1) - template).max(axis=1) < 0.05).astype(np.int64)

    built: list[int] = []
    original = initial.fallback_candidates

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        out = original(*args, **kwargs)
        built.extend(len(v) for v in out.values())
        return out

    monkeypatch.setattr(initial, "fallback_candidates", counting)
    res = attack(model, x, y, budget=budget, seed=0, n_classes=2, start=Start(n_initial=5))
    assert built and max(built) <= budget and sum(built) <= n * budget  # not 40 per input, 40 × 80 in all
    assert res.success.all() and res.queries.max() <= budget  # the fallback still finds the other class
