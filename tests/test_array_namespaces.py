"""Every built-in solver runs on torch tensors as on numpy arrays: the same queries, the same values to float tolerance.

A run computes in the namespace of its starting point (:mod:`zeroopt.core.arrays`): the objective gets tensors, the
result is a tensor, and since the draws come from the same ``numpy.random.Generator`` on the host, a seed makes
the same run in both. Only the order of floating-point sums may differ (torch's matrix products against numpy's),
so values agree to a relative 1e-9 rather than to the bit, on problems whose runs do not hang on a tie.
"""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt
from zeroopt.core.arrays import host, like, namespace, norm, rows
from zeroopt.core.rowwise import row_norms

torch = pytest.importorskip("torch")
pytest.importorskip("array_api_compat")

BUILT_IN = sorted(name for name, spec in zeroopt.list_solvers().items()
                  if spec.factory.__module__.startswith("zeroopt."))
WEIGHTS = np.linspace(1.0, 10.0, 12)  # an ill-conditioned quadratic: runs that move, without ties between probes
OPTIONS = {"rgf-fixed": {"lipschitz": 2 * float(WEIGHTS.max())}}


#: Where a search over sign vectors minimises :class:`Recording`'s objective: a pattern of both signs, so its runs
#: go somewhere from ``ones(12)`` (every sign vector of one length is as far from 0).
SIGN_TARGET = np.where(np.arange(12) % 3 == 0, -1.0, 1.0)


def target_for(name: str) -> np.ndarray:
    """The minimiser of the test's quadratic for solver ``name``: 0, or :data:`SIGN_TARGET` for a sign search."""
    return SIGN_TARGET if zeroopt.get_solver(name).search_space == "sign vectors" else np.zeros(12)


class Recording:
    """f(x) = Σ wᵢ (xᵢ − tᵢ)², noting the type of every point it is asked about."""

    def __init__(self, weights: object, target: object = 0.0) -> None:
        self.weights, self.target = weights, target
        self.types: set[str] = set()

    def __call__(self, x: object) -> float:
        self.types.add(type(x).__name__)
        return float((self.weights * (x - self.target) ** 2).sum())


#: Within this share of the way from f(x0) to the minimum f*, the values' last bits decide a run's steps: the two
#: namespaces round sums differently, so a solver that converges that far (the trust region: an exact model of a
#: quadratic reaches f* in a few steps) takes different late steps in each.
ROUNDING = 1e-10


def assert_same_run(a: zeroopt.OptimizeResult, b: zeroopt.OptimizeResult, f0: float, f_star: float) -> None:
    """The same run: every record alike (values to a relative 1e-9) while the run stands above the rounding floor
    (:data:`ROUNDING`); a run that never reaches the floor alike in its every record and count, one that does
    ending as close to f* in both namespaces."""
    floor = f_star + ROUNDING * (f0 - f_star)
    above = next((k for k, r in enumerate(a.history) if r.f <= floor), len(a.history))
    counts = [[(r.queries, r.iteration) for r in run.history[:above]] for run in (a, b)]
    assert counts[1] == counts[0]
    assert [r.f for r in b.history[:above]] == pytest.approx([r.f for r in a.history[:above]], rel=1e-9)
    if above == len(a.history):
        assert (a.queries, a.iterations, a.status) == (b.queries, b.iterations, b.status)
        assert b.fun == pytest.approx(a.fun, rel=1e-9)
    else:
        assert a.fun <= floor and b.fun <= floor


def test_the_built_in_solvers_are_all_here() -> None:
    assert {"coordinate", "rgf", "rgf-fixed", "sign", "sign-growing"} <= set(BUILT_IN)


@pytest.mark.parametrize("budget", [300, 600])
@pytest.mark.parametrize("name", BUILT_IN)
def test_torch_run_equals_numpy_run(name: str, budget: int) -> None:
    t = target_for(name)
    f_np, f_torch = Recording(WEIGHTS, t), Recording(torch.as_tensor(WEIGHTS), torch.as_tensor(t))
    a = zeroopt.minimize(f_np, np.ones(12), solver=name, budget=budget, seed=1, **OPTIONS.get(name, {}))
    b = zeroopt.minimize(f_torch, torch.ones(12, dtype=torch.float64), solver=name, budget=budget, seed=1,
                         **OPTIONS.get(name, {}))
    assert f_np.types == {"ndarray"} and f_torch.types == {"Tensor"}
    assert isinstance(b.x, torch.Tensor) and b.x.dtype == torch.float64 and b.x.shape == (12,)
    assert_same_run(a, b, f0=f_np(np.ones(12)), f_star=0.0)
    assert a.fun < 0.5 * f_np(np.ones(12))  # the runs went somewhere


CONTEXTS = {  # the unit sphere alone; the attack's g(θ) on a network; on a tree ensemble
    "sphere": zeroopt.SolverContext(dim=64, unit_sphere=True),
    "radius": zeroopt.SolverContext(dim=64, shape=(64,), unit_sphere=True, radial=True, adjustable_precision=True),
    "stairs": zeroopt.SolverContext(dim=64, shape=(64,), unit_sphere=True, radial=True, adjustable_precision=True,
                                    piecewise_constant=True),
}
NORMAL = np.random.default_rng(5).standard_normal(64)
NORMAL /= np.linalg.norm(NORMAL)


def plane_radius(normal: object):  # type: ignore[no-untyped-def]
    """g(θ): the distance from 0 along θ to the plane normal·z = 1 (capped where θ turns away from it)."""

    def g(theta: object) -> float:
        cos = float(normal @ theta) / float((theta * theta).sum()) ** 0.5  # type: ignore[operator]
        return 1.0 / cos if cos > 1e-3 else 1e3

    return g


@pytest.mark.parametrize("context", sorted(CONTEXTS))
@pytest.mark.parametrize("name", BUILT_IN)
def test_torch_run_equals_numpy_run_on_the_attacks_objective(name: str, context: str) -> None:
    """The chains the attack builds (orthonormal probes shaped by θ, momentum, the semicircular step, β following
    the steps, the tangent level) on a radius along θ: the same run in both namespaces."""
    if zeroopt.get_solver(name).refusal(CONTEXTS[context]):
        pytest.skip(f"{name} refuses iterates on the unit sphere (tests/test_hardlabel_attack.py checks the refusal)")
    x0 = 2.0 * NORMAL + 0.3 * np.random.default_rng(6).standard_normal(64)
    if zeroopt.get_solver(name).search_space == "sign vectors":  # from a vertex that faces the plane badly
        x0 = np.where(np.arange(64) % 2 == 0, 1.0, np.sign(NORMAL))
    runs = []
    for theta, normal in ((x0, NORMAL), (torch.as_tensor(x0), torch.as_tensor(NORMAL))):
        solver = zeroopt.make_solver(name, CONTEXTS[context])
        group = zeroopt.IndependentGroup([zeroopt.as_oracle(plane_radius(normal), (64,), budget=800)])
        (res,) = zeroopt.drive([zeroopt.run_solver(solver, theta, rng=np.random.default_rng(3))], group)
        runs.append(res)
    a, b = runs
    assert isinstance(b.x, torch.Tensor)
    assert_same_run(a, b, f0=plane_radius(NORMAL)(x0), f_star=1.0)
    assert a.fun < plane_radius(NORMAL)(x0)


@pytest.mark.parametrize("name", BUILT_IN)
def test_a_float32_tensor_stays_float32(name: str) -> None:
    f = Recording(torch.as_tensor(WEIGHTS, dtype=torch.float32), torch.as_tensor(target_for(name), dtype=torch.float32))
    res = zeroopt.minimize(f, torch.ones(12, dtype=torch.float32), solver=name, budget=400, seed=2,
                           **OPTIONS.get(name, {}))
    assert res.x.dtype == torch.float32 and f.types == {"Tensor"}
    assert res.fun < f(torch.ones(12))


def test_a_tensor_with_nan_is_refused_before_any_query() -> None:
    with pytest.raises(ValueError, match="non-finite"):
        zeroopt.minimize(lambda x: 0.0, torch.tensor([1.0, float("nan")], dtype=torch.float64), budget=10, seed=0)
    with pytest.raises(TypeError, match="floating-point"):
        zeroopt.minimize(lambda x: 0.0, torch.ones(3, dtype=torch.int64), budget=10, seed=0)


def test_the_helpers_leave_numpy_as_it_is_and_convert_the_rest() -> None:
    x = np.arange(4.0)
    assert namespace(x) is np and like([1.0, 2.0], x) == [1.0, 2.0] and host(x) is x
    t = torch.arange(4.0, dtype=torch.float64)
    converted = like(np.array([3.0, 4.0]), t)
    assert isinstance(converted, torch.Tensor) and converted.dtype == torch.float64
    assert norm(converted) == 5.0 and isinstance(host(t), np.ndarray)
    keep = np.array([True, False, True, False])
    assert rows(t, keep).tolist() == [0.0, 2.0] and rows(x, keep).tolist() == [0.0, 2.0]
    u = torch.tensor([[3.0, 4.0], [0.0, 1.0]], dtype=torch.float64)
    assert row_norms(u).tolist() == [5.0, 1.0] and row_norms(u, keepdims=True).shape == (2, 1)


def test_without_the_adapter_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_adapter(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("array_api_compat"):
            raise ImportError("no array_api_compat here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_adapter)
    with pytest.raises(ImportError, match="pip install array-api-compat"):
        namespace(torch.ones(2))
