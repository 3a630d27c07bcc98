"""An input attacked alone whose first random directions all keep its label is not given up while budget is left."""

from __future__ import annotations

import numpy as np
import pytest

from applications.hardlabel import attack

SHAPE = (1, 8, 8)


def _narrow_cone_model(threshold: float = 2.5):
    """Class 1 only where the first 8 pixels together moved up by more than ``threshold`` from 0.5: few random
    directions from the grey image reach it."""

    def labels(x: np.ndarray) -> np.ndarray:
        flat = np.asarray(x, dtype=float).reshape(len(x), -1)
        return (flat[:, :8].sum(axis=1) - 4.0 > threshold).astype(np.int64)

    return labels


@pytest.mark.parametrize("norm", [2, np.inf])
def test_a_lone_input_draws_new_directions_until_one_is_adversarial(norm):
    labels = _narrow_cone_model()
    x0 = np.full((1, *SHAPE), 0.5, dtype=np.float32)
    found = 0
    for seed in range(6):
        res = attack(labels, x0, np.zeros(1, np.int64), budget=300, seed=seed, norm=norm, n_classes=2,
                     bounds=(0.0, 1.0))
        assert int(res.queries[0]) == 300 or res.success[0]  # nothing is left unspent on a failed start
        if res.success[0]:
            found += 1
            assert labels(res.x_adv)[0] == 1
    assert found == 6

