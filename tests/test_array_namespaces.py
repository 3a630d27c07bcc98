"""Every built-in solver runs on torch tensors as on numpy arrays: the same queries, the same values to float tolerance.

A run computes in the namespace of its starting point (:mod:`zeroopt.arrays`): the objective gets tensors, the
result is a tensor, and since the draws come from the same ``numpy.random.Generator`` on the host, a seed makes
the same run in both. Only the order of floating-point sums may differ (torch's matrix products against numpy's),
so values agree to a relative 1e-9 rather than to the bit, on problems whose runs do not hang on a tie.
"""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt
from zeroopt.arrays import host, like, namespace, norm, rows
from zeroopt.rowwise import row_norms

torch = pytest.importorskip("torch")
pytest.importorskip("array_api_compat")

BUILT_IN = sorted(name for name, spec in zeroopt.list_solvers().items()
                  if spec.factory.__module__.startswith("zeroopt."))
WEIGHTS = np.linspace(1.0, 10.0, 12)  # an ill-conditioned quadratic: runs that move, without ties between probes
OPTIONS = {"rgf-fixed": {"lipschitz": 2 * float(WEIGHTS.max())}}


class Recording:
    """f(x) = Σ wᵢ xᵢ², noting the type of every point it is asked about."""

    def __init__(self, weights: object) -> None:
        self.weights = weights
        self.types: set[str] = set()

    def __call__(self, x: object) -> float:
        self.types.add(type(x).__name__)
        return float((self.weights * x * x).sum())


def test_the_built_in_solvers_are_all_here() -> None:
    assert {"coordinate", "rgf", "rgf-fixed", "sign", "sign-growing"} <= set(BUILT_IN)


@pytest.mark.parametrize("budget", [300, 600])
@pytest.mark.parametrize("name", BUILT_IN)
def test_torch_run_equals_numpy_run(name: str, budget: int) -> None:
    f_np, f_torch = Recording(WEIGHTS), Recording(torch.as_tensor(WEIGHTS))
    a = zeroopt.minimize(f_np, np.ones(12), solver=name, budget=budget, seed=1, **OPTIONS.get(name, {}))
    b = zeroopt.minimize(f_torch, torch.ones(12, dtype=torch.float64), solver=name, budget=budget, seed=1,
                         **OPTIONS.get(name, {}))
    assert f_np.types == {"ndarray"} and f_torch.types == {"Tensor"}
    assert isinstance(b.x, torch.Tensor) and b.x.dtype == torch.float64 and b.x.shape == (12,)
    assert (a.queries, a.iterations, a.status) == (b.queries, b.iterations, b.status)
    assert b.fun == pytest.approx(a.fun, rel=1e-9)
    assert [r.f for r in b.history] == pytest.approx([r.f for r in a.history], rel=1e-9)
    assert a.fun < 0.5 * f_np(np.ones(12))  # the runs went somewhere


@pytest.mark.parametrize("name", BUILT_IN)
def test_a_float32_tensor_stays_float32(name: str) -> None:
    f = Recording(torch.as_tensor(WEIGHTS, dtype=torch.float32))
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
