"""Messages that say what was wrong and what to do: seeds, class names for labels, a model refusing big batches."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import zeroopt
from applications.hardlabel import ModelOptions, ModelOutputError, attack


def two_class(b: np.ndarray) -> np.ndarray:
    flat = b.reshape(len(b), -1)
    return np.stack([flat[:, 0], flat[:, 1]], axis=1)


X = np.array([[0.8, 0.2, 0.5, 0.5]])


@pytest.mark.parametrize(("seed", "kind", "says"), [
    (-1, ValueError, "negative integer -1"), (1.5, TypeError, "got 1.5 (float)"), ("abc", TypeError, "'abc' (str)"),
    (True, TypeError, "True (bool)"), ([1, -2], ValueError, "negative integer -2"),
])
def test_a_bad_seed_is_named_alike_in_minimize_and_attack(seed: object, kind: type, says: str) -> None:
    calls = []

    def model(b: np.ndarray) -> np.ndarray:
        calls.append(len(b))
        return two_class(b)

    with pytest.raises(kind, match="seed must be a non-negative integer") as in_minimize:
        zeroopt.minimize(lambda z: float(z @ z), np.ones(2), budget=50, seed=seed)
    assert says in str(in_minimize.value)
    with pytest.raises(kind, match="seed must be a non-negative integer") as in_ask_tell:
        zeroopt.ask_tell("rgf", np.ones(2), budget=50, seed=seed)
    assert str(in_ask_tell.value) == str(in_minimize.value)
    x = np.repeat(X, 2, axis=0)
    with pytest.raises(kind, match="seed") as in_attack:
        attack(model, x, [0, 0], budget=50, seed=seed)
    assert says in str(in_attack.value) and not calls


def test_class_names_as_labels_point_to_the_indices_into_classes_() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, size=(40, 4))
    names = np.where(x[:, 0] > 0.5, "cat", "dog")
    model = LogisticRegression().fit(x, names)
    with pytest.raises(TypeError, match=r"class names such as \['cat'.*np.searchsorted\(model.classes_, y0\)"):
        attack(model, x[:1], names[:1], budget=50, seed=0)
    res = attack(model, x[:1], np.searchsorted(model.classes_, names[:1]), budget=200, seed=0)
    assert res.success[0]


def test_a_model_refusing_big_batches_is_told_to_pass_batch_size() -> None:
    def small_batches_only(b: np.ndarray) -> np.ndarray:
        if len(b) > 4:
            raise RuntimeError("batch too large")
        return two_class(b)

    x = np.repeat(X, 8, axis=0)
    with pytest.raises(ModelOutputError, match=r"cannot take \d+ inputs in one call, pass the most it takes as "
                       r"batch_size: attack\(\.\.\., model_options=ModelOptions\(batch_size=\.\.\.\)\)"):
        attack(small_batches_only, x, np.zeros(8, dtype=int), budget=100, seed=0,
               model_options=ModelOptions(batch_size=None))
    assert attack(small_batches_only, x, np.zeros(8, dtype=int), budget=100, seed=0,
                  model_options=ModelOptions(batch_size=4)).success.all()
