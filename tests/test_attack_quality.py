"""The attack's quality against a known optimum, and the labels of what it returns.

Linear models (binary and 4-class, d = 64) whose minimal L2 adversarial distance is known exactly
(:mod:`benchmarks.studies.linear_optimum`); every registered solver runs with the attack's own defaults at a budget
where it completes at least ``MIN_ITERATIONS`` solver iterations, and the median ratio found / optimal must
stay under a bound set a small margin above what ``python -m benchmarks.studies.linear_optimum`` measured over ten
seeds (``benchmarks/results/attack_quality.md``).

A model whose decision depends on how many inputs share a call (as the MNIST CNN's logits do on a CPU, by
~1e-6, see ``benchmarks/results/suite/full/findings.md``) checks that what the attack calls adversarial stays
adversarial when the model labels it alone.
"""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt
from applications.hardlabel import Start, attack, attack_solvers
from benchmarks.studies.linear_optimum import BUDGET, DIM, found_over_optimal

MIN_ITERATIONS = 10
SEED = 0
# Upper bounds on the median found/optimal at seed 0, a small margin above benchmarks/results/attack_quality.md
# (seed 0 / largest median over seeds 0-9, binary and 4-class): coordinate 1.003-1.006 / 1.015, rgf 1.007-1.008
# / 1.013, rgf-fixed 1.30-1.34 / 1.53, sign 1.0010 / 1.0011 (the re-check's 0.1% included).
# rgf-fixed and sign-growing re-measured with the cheap start (the attack's default since the efficiency
# parts; `python -m benchmarks.studies.linear_optimum --seeds 4 --solvers rgf-fixed,sign-growing`): rgf-fixed's
# fixed theory step goes less far from the cheap start's direction (max median 3.13 over seeds; 1.53 with the
# reference start), sign-growing reaches 1.0011 on seed 0 (max over seeds 1.084, one 4-class seed).
MEDIAN_RATIO_BOUND = {"coordinate": 1.02, "rgf": 1.02, "rgf-fixed": 3.3, "sign": 1.003, "sign-growing": 1.10}


@pytest.mark.parametrize("n_classes", [2, 4], ids=["binary", "4-class"])
@pytest.mark.parametrize("solver", sorted(zeroopt.list_solvers()))
def test_attack_reaches_the_known_optimum(solver: str, n_classes: int) -> None:
    if solver not in attack_solvers():
        pytest.skip(f"{solver} refuses the attack's objective (tests/test_hardlabel_attack.py checks the refusal)")
    if zeroopt.get_solver(solver).search_space == "sign vectors":
        pytest.skip(f"{solver} searches sign vectors, where the L∞ optimum lies, not the L2 one measured here "
                    "(tests/test_sign_flips.py measures it against the L∞ optimum)")
    if solver not in MEDIAN_RATIO_BOUND:
        pytest.fail(f"no quality bound for the new solver {solver!r}: measure it (python -m "
                    "benchmarks.studies.linear_optimum) and add a bound a small margin above to MEDIAN_RATIO_BOUND")
    ratio, res, _ = found_over_optimal(solver, n_classes, SEED)
    assert np.all(np.isfinite(ratio)), f"{solver}: some returned points are not adversarial: {res.summary()}"
    iterations = [r.iterations for r in res.solver_results]
    assert min(iterations) >= MIN_ITERATIONS, (
        f"{solver} completed only {min(iterations)} iterations at budget {BUDGET}: the test no longer measures "
        "the solver; raise BUDGET in benchmarks/studies/linear_optimum.py"
    )
    # No point can beat the optimum (a looser "adversarial" than the model's, or a wrong distance, would).
    assert ratio.min() >= 1.0 - 1e-6, f"{solver} returned a point closer than the optimum: {ratio.min()}"
    med = float(np.median(ratio))
    assert med <= MEDIAN_RATIO_BOUND[solver], (
        f"{solver}: median found/optimal {med:.4f} > {MEDIAN_RATIO_BOUND[solver]} "
        f"(ratios {np.round(np.sort(ratio), 4).tolist()}, iterations {iterations})"
    )


class BatchSensitiveModel:
    """A linear binary model whose score moves by ``jitter`` with the size of the call.

    Alone (one input per call) its score leans ``jitter`` towards class 1, in a call with others ``jitter``
    towards class 0, so a point of class 0 within ``jitter`` of the boundary is class 0 in a batch and class 1
    alone — what a CPU kernel that sums in a different order per batch size does to a CNN's logits near its
    boundary. The test's inputs are class 1.
    """

    def __init__(self, weights: np.ndarray, jitter: float) -> None:
        self.weights, self.jitter = weights, jitter

    def __call__(self, x: np.ndarray) -> np.ndarray:
        flat = x.reshape(len(x), -1).astype(np.float64)
        s = (flat * self.weights[None]).sum(-1) - 0.5 * self.weights.sum()
        s = s + (-self.jitter if len(x) > 1 else self.jitter)
        return (s > 0).astype(np.int64)


@pytest.mark.parametrize("solver", ["rgf", "sign"])
def test_points_called_adversarial_stay_adversarial_when_labelled_alone(solver: str) -> None:
    rng = np.random.default_rng(3)
    w = rng.standard_normal(DIM)
    w /= np.linalg.norm(w)
    model = BatchSensitiveModel(w, jitter=1e-5)
    x = rng.uniform(0.3, 0.7, size=(6, DIM))
    x += (0.2 - (x - 0.5) @ w)[:, None] * w[None]  # distance 0.2 to the boundary, on the positive side
    y = np.ones(len(x), dtype=np.int64)
    res = attack(model, x, y, budget=3000, solver=solver, seed=0, n_classes=2)
    assert res.success.all(), res.summary()  # 0.1% beyond the best point is far outside the jitter
    for i in np.flatnonzero(res.success):
        alone = model(res.x_adv[i : i + 1].astype(np.float64))[0]
        assert alone != y[i], (
            f"input {i}: the attack called its point adversarial (distortion {res.distortion[i]:.6f}) but the "
            "model labels it alone as the original class"
        )
        # Safety costs at most what the re-check allows: 0.31% over the best point the search found.
        assert res.distortion[i] <= res.trace[i][-1, 1] * 1.0031
    assert np.median(res.distortion[res.success]) <= 0.2 * 1.15  # the optimum is 0.2


class SliverModel:
    """Class 0 up to ``t`` along ``w``, class 1 on a sliver ``[t, t (1 + width))``, class 2 beyond it."""

    def __init__(self, weights: np.ndarray, t: float, width: float) -> None:
        self.weights, self.t, self.width = weights, t, width

    def __call__(self, x: np.ndarray) -> np.ndarray:
        s = (x.reshape(len(x), -1).astype(np.float64) - 0.5) @ self.weights
        return np.where(s < self.t, 0, np.where(s < self.t * (1 + self.width), 1, 2)).astype(np.int64)


def test_a_target_class_thinner_than_the_recheck_margin_is_still_a_success() -> None:
    """Targeting the sliver's class: every point 0.1% beyond the best point is class 2, so only the point itself
    (labelled alone: the re-check's last candidate) is adversarial. The attack returns it as a success."""
    rng = np.random.default_rng(4)
    w = rng.standard_normal(DIM)
    w /= np.linalg.norm(w)
    model = SliverModel(w, t=0.2, width=2e-4)
    x = np.full((2, DIM), 0.5)
    examples = 0.5 + 0.2 * (1 + 1e-4) * w[None, :] + 1e-4 * rng.standard_normal((30, DIM))
    examples = examples[model(examples) == 1]
    res = attack(model, x, np.zeros(2, np.int64), target=np.ones(2, np.int64), budget=3000, solver="sign", seed=0,
                 n_classes=3, start=Start(target_examples=examples))
    assert res.success.all(), res.summary()
    assert (model(res.x_adv.astype(np.float64)) == 1).all()  # each returned point, labelled on its own
    assert np.all(res.distortion <= 0.2 * 1.01)
