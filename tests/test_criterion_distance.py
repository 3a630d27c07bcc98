"""The attack from objects: a criterion and a distance of the caller's own, one run object, the chain's retraction.

``target=`` and ``norm=`` spell the built-in criterion and distance: passing the objects gives the same run, bit
for bit. A criterion of one's own decides what is adversarial; a distance of one's own is what every ray, result
and verification measures, in numpy and on the model's device alike. What the pipeline's steps share travels in
one :class:`~applications.hardlabel.run.AttackRun`, so ``attack()`` reads as its pipeline. A solver chain without
the unit-sphere retraction g(θ) needs runs with it, and says so.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import warnings
from dataclasses import dataclass
from functools import partial

import numpy as np
import pytest

import zeroopt
from applications.hardlabel import (
    L2,
    LINF,
    AttackConfig,
    Criterion,
    Distance,
    LpDistance,
    Misclassification,
    Start,
    TargetedMisclassification,
    attack,
)
from applications.hardlabel.attack import descend
from applications.hardlabel.initial import fresh_initial_search, initial_directions
from applications.hardlabel.run import solver_for
from zeroopt.core.arrays import namespace

W = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.5]])
X = np.array([[0.7, 0.2, 0.1, 0.3], [0.6, 0.1, 0.3, 0.2]])
Y = np.array([0, 0])


def scores(x: np.ndarray) -> np.ndarray:
    """A 3-class linear model on 4 features."""
    return x.reshape(len(x), -1) @ W.T


def same_run(a, b) -> bool:  # type: ignore[no-untyped-def]
    return (np.array_equal(a.distortion, b.distortion) and np.array_equal(a.queries, b.queries)
            and np.array_equal(a.x_adv, b.x_adv) and a.model_calls == b.model_calls and a.norm == b.norm)


class AsClassOne(Criterion):
    """Adversarial only as class 1 — a target written as a rule, with no target labels for the start."""

    def is_adversarial(self, labels: np.ndarray, label: int, index: int) -> np.ndarray:
        return labels == 1


class L1(Distance):
    name = "L1"
    prunes = True

    def lengths(self, rows):  # type: ignore[no-untyped-def]
        xp = namespace(rows)
        return xp.sum(xp.abs(rows), axis=1)


def test_the_objects_give_the_run_their_simple_spelling_gives() -> None:
    run = partial(attack, scores, X, Y, budget=400, seed=3)
    assert same_run(run(), run(criterion=Misclassification(), distance=L2))
    assert same_run(run(norm=np.inf), run(distance=LINF))
    assert same_run(run(norm=np.inf), run(norm=LpDistance(np.inf)))
    pool = Start(target_pool=(np.eye(4)[[2, 2, 1]], np.array([2, 2, 1])))
    assert same_run(run(target=[2, 1], start=pool), run(criterion=TargetedMisclassification([2, 1]), start=pool))


def test_a_criterion_of_ones_own_decides_what_is_adversarial() -> None:
    res = attack(scores, X, Y, budget=600, seed=0, criterion=AsClassOne())
    assert res.success.all() and (res.queries <= 600).all()
    assert (scores(res.x_adv).argmax(axis=1) == 1).all()  # never class 2, which is nearer for these inputs
    untargeted = attack(scores, X, Y, budget=600, seed=0)
    assert (scores(untargeted.x_adv).argmax(axis=1) == 2).all() and (untargeted.distortion < res.distortion).all()


def test_a_distance_of_ones_own_is_what_the_attack_measures_and_reports() -> None:
    res = attack(scores, X, Y, budget=600, seed=0, distance=L1())
    assert res.norm == "L1" and res.success.all()
    delta = res.x_adv.reshape(len(X), -1).astype(np.float64) - X.astype(np.float32).astype(np.float64)
    assert np.array_equal(res.distortion, np.abs(delta).sum(axis=1))
    assert "median L1" in res.summary()


def test_lp_distances_name_and_measure_themselves() -> None:
    v = np.array([3.0, -4.0, 0.0])
    assert (L2.name, LINF.name, LpDistance(3).name, LpDistance(1.5).name) == ("L2", "L∞", "L3", "L1.5")
    assert LpDistance(2) == L2 and LpDistance(2.0) == L2 and LpDistance(np.inf) == LINF
    assert L2.length(v) == 5.0 and LINF.length(v) == 4.0 and LpDistance(1).length(v) == 7.0 == L1().length(v)
    assert np.allclose(LpDistance(3).of(np.stack([v, 2 * v])), [91 ** (1 / 3), 2 * 91 ** (1 / 3)])
    assert L2.prunes and not LINF.prunes and not Distance.prunes
    with pytest.raises(ValueError, match="p >= 1"):
        LpDistance(0.5)


@pytest.mark.parametrize("distance", [L2, LINF, LpDistance(3), LpDistance(1), L1()], ids=repr)
def test_numpy_and_torch_measure_alike(distance: Distance) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    rows = np.random.default_rng(0).standard_normal((5, 40))
    on_torch = distance.lengths(torch.as_tensor(rows))
    assert isinstance(on_torch, torch.Tensor)
    assert np.allclose(on_torch.numpy(), distance.of(rows), rtol=1e-12, atol=0)
    assert np.isclose(distance.length(torch.as_tensor(rows[0])), distance.length(rows[0]), rtol=1e-12, atol=0)


def test_criterion_and_distance_are_given_once_and_as_objects() -> None:
    with pytest.raises(TypeError, match="not both"):
        attack(scores, X, Y, budget=100, target=[1, 1], criterion=TargetedMisclassification([1, 1]))
    with pytest.raises(TypeError, match="not both"):
        attack(scores, X, Y, budget=100, norm=np.inf, distance=L2)
    with pytest.raises(TypeError, match="criterion takes a Criterion"):
        attack(scores, X, Y, budget=100, criterion=lambda labels: labels != 0)
    with pytest.raises(TypeError, match="distance takes a Distance"):
        attack(scores, X, Y, budget=100, distance=2)
    with pytest.raises(ValueError, match="target equals y0 for input 1"):
        attack(scores, X, Y, budget=100, criterion=TargetedMisclassification([1, 0]))


@dataclass(frozen=True)
class BareOptions:
    q: int = 6
    beta: float = 0.01
    step: float = 0.05


def _bare(opts: BareOptions, context: zeroopt.SolverContext) -> zeroopt.Chain:
    """Parts put together by hand, with no retraction."""
    return zeroopt.chain(
        zeroopt.FixedProbes(opts.q), zeroopt.Sample(zeroopt.SphereDirections()),
        zeroopt.Estimate(zeroopt.forward_difference),
        zeroopt.Step(partial(zeroopt.opt_line_search, grow=2.0, shrink=0.5)), zeroopt.BestProbe(),
        name="bare", beta=opts.beta, step=opts.step,
    )


def test_a_chain_without_the_retraction_runs_with_it_and_says_so(fresh: None) -> None:
    zeroopt.register_solver("bare", BareOptions, "a chain with no retraction (test file)")(_bare)
    cfg = AttackConfig()
    with pytest.warns(UserWarning, match=r"solver 'bare' builds a chain without a retraction.*unit_sphere"):
        _, chain, _ = solver_for("bare", {}, (4,), cfg, _LabelModelStub())
    assert chain.retract is zeroopt.unit_sphere
    with pytest.warns(UserWarning, match="without a retraction"):
        res = attack(scores, X, Y, budget=300, seed=0, solver="bare")
    assert res.success.all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the built-in solvers carry their retraction, or need none (sign vectors)
        for name in ("sign-growing", "rgf", "sign-flips"):
            assert solver_for(name, {}, (4,), cfg, _LabelModelStub())[1].retract is not None or name == "sign-flips"


class _LabelModelStub:
    piecewise_constant = False


def _code_lines(fn) -> int:  # type: ignore[no-untyped-def]
    """Lines of ``fn`` holding code: its signature and body, without its docstring, comments and blank lines."""
    source = textwrap.dedent(inspect.getsource(fn))
    node = ast.parse(source).body[0]
    doc = node.body[0]  # type: ignore[attr-defined]
    skip = set(range(doc.lineno, doc.end_lineno + 1)) if isinstance(doc, ast.Expr) else set()
    return sum(1 for i, line in enumerate(source.splitlines(), 1)
               if i not in skip and line.strip() and not line.strip().startswith("#"))


def test_the_attack_reads_as_its_pipeline() -> None:
    assert _code_lines(inspect.unwrap(attack)) <= 60
    # The start and its fresh restarts take the run, not the pieces of it one by one.
    for fn in (initial_directions, fresh_initial_search, descend):
        assert list(inspect.signature(fn).parameters)[0] == "run" and len(inspect.signature(fn).parameters) <= 5
