"""benchmarks.studies.start_cost: the initial search alone, measured through the attack."""

from __future__ import annotations

import numpy as np

from applications.hardlabel import Runs, Start, Verify, attack


def test_max_iter_zero_spends_only_the_initial_search() -> None:
    # What benchmarks.studies.start_cost relies on: with no descent step, no restart and no re-check, the queries an
    # input spends are its start's (and the one that labels it), and the record search spends fewer.
    rng = np.random.default_rng(2)
    w = rng.standard_normal(64)
    x = np.full((1, 64), 0.5)
    seen = []

    def model(z: np.ndarray) -> np.ndarray:
        seen.append(len(z))
        return ((z.reshape(len(z), -1) - 0.5) @ w / np.linalg.norm(w) > 0.4).astype(np.int64)

    spent = {}
    for selection in ("tournament", "record"):
        seen.clear()
        res = attack(model, x, np.array([0]), budget=2000, seed=0, n_classes=2,
                     start=Start(initial_selection=selection), runs=Runs(max_iter=0, restarts=0, fresh_restarts=False),
                     verify=Verify(queries=0))
        assert res.success[0] and res.queries[0] == sum(seen)
        assert len(res.solver_results[0].history) == 0  # no descent iteration was recorded
        spent[selection] = int(res.queries[0])
    assert spent["record"] < spent["tournament"] < 200
