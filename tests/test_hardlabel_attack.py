"""The hard-label attack on every kind of model, with budgets, batching and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import zeroopt
from applications.hardlabel import (
    AttackConfig,
    ModelOutputError,
    Polish,
    Runs,
    Start,
    Verify,
    as_label_model,
    attack,
    attack_solvers,
)

RNG = np.random.default_rng(1234)
W = RNG.standard_normal((4, 16))  # a 4-class linear model on 16 features in [0, 1]
B = -W @ np.full(16, 0.5)


def linear_scores(x: np.ndarray) -> np.ndarray:
    """Row-independent arithmetic (no BLAS blocking), so batch composition cannot change a label."""
    flat = x.reshape(len(x), -1).astype(np.float64)
    return (flat[:, None, :] * W[None]).sum(-1) + B


def _inputs(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    x = np.random.default_rng(seed).uniform(0.2, 0.8, size=(n, 16))
    return x, linear_scores(x).argmax(1)


def _check(model, x, y, res, budget, target=None) -> None:  # type: ignore[no-untyped-def]
    labels = as_label_model(model, n_classes=4)(res.x_adv.astype(np.float64))
    assert np.all(res.queries <= budget)
    for i in range(len(x)):
        if res.success[i]:
            assert labels[i] != y[i] if target is None else labels[i] == target[i]
            assert np.isclose(np.linalg.norm(res.x_adv[i].astype(np.float64).ravel() - x[i].ravel()),
                              res.distortion[i], rtol=1e-6, atol=1e-6)
            assert res.x_adv[i].min() >= 0 and res.x_adv[i].max() <= 1
            tr = res.trace[i]
            assert np.all(np.diff(tr[:, 1]) < 0)
            assert tr[-1, 1] <= res.distortion[i] <= tr[-1, 1] * 1.0031
            assert np.all(np.diff(tr[:, 0]) >= 0) and tr[-1, 0] <= res.queries[i]


# ------------------------------------------------------------------------------------ model kinds


def test_callable_returning_scores_and_labels() -> None:
    x, y = _inputs(3)
    for model in (linear_scores, lambda z: linear_scores(z).argmax(1)):
        res = attack(model, x, y, budget=800, seed=0, n_classes=4)
        assert res.success.all()
        _check(linear_scores, x, y, res, 800)


def test_torch_module() -> None:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    x = np.random.default_rng(0).uniform(0, 1, size=(3, 1, 4, 4)).astype(np.float32)
    with torch.no_grad():
        y = net(torch.from_numpy(x)).argmax(1).numpy()
    res = attack(net, torch.from_numpy(x), torch.from_numpy(y), budget=800, seed=0, n_classes=4)
    assert res.success.all() and res.x_adv.shape == x.shape
    with torch.no_grad():
        adv = net(torch.from_numpy(res.x_adv)).argmax(1).numpy()
    assert np.all(adv != y) and np.all(res.queries <= 800)


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    d = load_digits()
    return d.data / 16.0, d.target


def test_sklearn_classifier(digits) -> None:  # type: ignore[no-untyped-def]
    from sklearn.linear_model import LogisticRegression

    x, y = digits
    clf = LogisticRegression(max_iter=300).fit(x[:1000], y[:1000])
    pick = np.flatnonzero(clf.predict(x[1000:1100]) == y[1000:1100])[:3] + 1000
    res = attack(clf, x[pick], y[pick], budget=1000, seed=0)
    assert res.success.all() and np.all(res.queries <= 1000)
    assert np.all(clf.predict(res.x_adv.astype(np.float64)) != y[pick])


@pytest.mark.parametrize("kind", ["booster", "classifier"])
def test_lightgbm(digits, kind: str) -> None:  # type: ignore[no-untyped-def]
    import lightgbm as lgb

    x, y = digits
    params = {"n_estimators": 20, "num_leaves": 8, "verbose": -1, "seed": 0, "deterministic": True, "n_jobs": 1}
    clf = lgb.LGBMClassifier(**params).fit(x[:1000], y[:1000])
    model = clf.booster_ if kind == "booster" else clf
    pick = np.flatnonzero(clf.predict(x[1000:1100]) == y[1000:1100])[:3] + 1000
    res = attack(model, x[pick], y[pick], budget=1000, seed=0, n_classes=10)
    assert res.success.all() and np.all(res.queries <= 1000)
    assert np.all(clf.predict(res.x_adv.astype(np.float64)) != y[pick])


# ----------------------------------------------------------------------------------- behaviour


@pytest.mark.parametrize("solver", sorted(zeroopt.list_solvers()))
def test_every_registered_solver_drives_the_attack(solver: str) -> None:
    x, y = _inputs(2, seed=3)
    if solver not in attack_solvers():  # a solver that cannot take g(θ) says so, before any query
        with pytest.raises(ValueError, match="unit sphere"):
            attack(linear_scores, x, y, budget=600, solver=solver, seed=0, n_classes=4)
        return
    res = attack(linear_scores, x, y, budget=600, solver=solver, seed=0, n_classes=4)
    assert res.success.all()
    _check(linear_scores, x, y, res, 600)


@pytest.mark.parametrize("solver", ["rgf", "sign"])
def test_optimisation_improves_on_the_initial_direction(solver: str) -> None:
    x, y = _inputs(3, seed=5)
    res = attack(linear_scores, x, y, budget=3000, solver=solver, seed=0, n_classes=4)
    first = np.array([t[0, 1] for t in res.trace])
    assert np.all(res.distortion < 0.9 * first)


def test_batched_attack_equals_one_at_a_time() -> None:
    x, y = _inputs(4, seed=7)
    batched = attack(linear_scores, x, y, budget=700, seed=42, n_classes=4)
    assert batched.model_calls < sum(
        attack(linear_scores, x[i : i + 1], y[i : i + 1], budget=700, seed=42, n_classes=4).model_calls
        for i in range(4)
    )
    for i in range(4):
        single = attack(linear_scores, x[i : i + 1], y[i : i + 1], budget=700, seed=42, n_classes=4)
        assert single.queries[0] == batched.queries[i]
        assert single.distortion[0] == batched.distortion[i]
        np.testing.assert_array_equal(single.x_adv[0], batched.x_adv[i])
        np.testing.assert_array_equal(single.trace[0], batched.trace[i])


class CountingModel:
    def __init__(self) -> None:
        self.samples = 0

    def __call__(self, x: np.ndarray) -> np.ndarray:
        self.samples += len(x)
        return linear_scores(x)


@settings(max_examples=12, deadline=None, derandomize=True)
@given(budget=st.integers(1, 120), n=st.integers(1, 3), solver=st.sampled_from(["rgf", "sign", "coordinate"]))
def test_budget_is_a_hard_cap_and_every_sample_counts(budget: int, n: int, solver: str) -> None:
    x, y = _inputs(n, seed=budget)
    model = CountingModel()
    res = attack(model, x, y, budget=budget, solver=solver, seed=0, n_classes=4)
    assert np.all(res.queries <= budget)
    assert model.samples == int(res.queries.sum())
    _check(linear_scores, x, y, res, budget)


def test_targeted_attack_reaches_the_target() -> None:
    x, y = _inputs(3, seed=11)
    target = (y + 1) % 4
    pool_x = np.random.default_rng(2).uniform(0, 1, size=(400, 16))
    pool_y = linear_scores(pool_x).argmax(1)
    res = attack(linear_scores, x, y, target=target, budget=1500, seed=0, n_classes=4,
                 start=Start(target_pool=(pool_x, pool_y)))
    assert res.success.all()
    _check(linear_scores, x, y, res, 1500, target=target)


def test_already_misclassified_input_is_returned_at_once() -> None:
    x, y = _inputs(2)
    wrong = (y + 1) % 4
    res = attack(linear_scores, x, wrong, budget=500, seed=0, n_classes=4)
    # Two queries each: labelled alone, then once more by the final re-check.
    assert np.all(res.distortion == 0) and res.success.all() and np.all(res.queries == 2)
    assert attack(linear_scores, x, wrong, budget=500, seed=0, n_classes=4,
                  verify=Verify(queries=0)).queries.tolist() == [1, 1]
    np.testing.assert_allclose(res.x_adv, x.astype(np.float32))


def test_no_adversarial_inside_the_bounds_is_handled() -> None:
    x, y = _inputs(2)
    res = attack(lambda z: np.zeros(len(z), dtype=np.int64), x, np.zeros(2, dtype=int), budget=400, seed=0,
                 n_classes=4)
    assert not res.success.any() and np.all(np.isinf(res.distortion)) and np.all(res.queries <= 400)
    assert "nan" not in res.summary() and "0/2 adversarial" in res.summary()
    np.testing.assert_allclose(res.x_adv, x.astype(np.float32))


# ----------------------------------------------------------------------------------- bad input


def test_bad_input_errors_say_what_to_fix() -> None:
    x, y = _inputs(2)
    with pytest.raises(ValueError, match="outside the bounds"):
        attack(linear_scores, x + 1.0, y, budget=10, n_classes=4)
    with pytest.raises(ValueError, match="one label per input"):
        attack(linear_scores, x, y[:1], budget=10, n_classes=4)
    with pytest.raises(ValueError, match="outside the model's classes"):
        attack(linear_scores, x, np.array([0, 7]), budget=10, n_classes=4)
    with pytest.raises(ValueError, match="target equals y0"):
        attack(linear_scores, x, y, target=y, budget=10, n_classes=4, start=Start(target_examples=x))
    for bad in (0, -3):
        with pytest.raises(ValueError, match="budget must be a positive integer"):
            attack(linear_scores, x, y, budget=bad, n_classes=4)
    with pytest.raises(ValueError, match="batch first"):
        attack(linear_scores, x[0], y[:1], budget=10, n_classes=4)
    with pytest.raises(ValueError, match="unknown solver"):
        attack(linear_scores, x, y, budget=10, solver="nope", n_classes=4)
    with pytest.raises(ValueError, match="target_examples"):
        attack(linear_scores, x, y, target=(y + 1) % 4, budget=10, n_classes=4)


@pytest.mark.parametrize(
    "model, match",
    [
        (lambda z: np.full((len(z), 4), np.nan), "NaN|nan|finite"),
        (lambda z: np.zeros((len(z) + 1, 4)), "shape|rows|expected"),
        (lambda z: (_ for _ in ()).throw(RuntimeError("boom")), "boom|raised"),
    ],
)
def test_faulty_models_raise_model_output_error(model, match: str) -> None:  # type: ignore[no-untyped-def]
    x, y = _inputs(2)
    with pytest.raises(ModelOutputError, match=match):
        attack(model, x, y, budget=50, n_classes=4)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_torch_module_on_its_cuda_device() -> None:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    net = net.cuda()
    x = np.random.default_rng(0).uniform(0, 1, size=(3, 1, 4, 4)).astype(np.float32)
    with torch.no_grad():
        y = net(torch.from_numpy(x).cuda()).argmax(1).cpu().numpy()
    res = attack(net, x, y, budget=800, seed=0, n_classes=4)
    with torch.no_grad():
        adv = net(torch.from_numpy(res.x_adv).cuda()).argmax(1).cpu().numpy()
    assert res.success.all() and np.all(adv != y) and np.all(res.queries <= 800)


def test_a_model_failing_mid_attack_keeps_what_was_found() -> None:
    x, y = _inputs(2, seed=9)
    calls = {"n": 0}

    def flaky(z: np.ndarray) -> np.ndarray:
        calls["n"] += 1
        if calls["n"] > 30:
            raise RuntimeError("server went away")
        return linear_scores(z)

    with pytest.raises(ModelOutputError, match="server went away") as info:
        attack(flaky, x, y, budget=2000, seed=0, n_classes=4)
    partial = info.value.partial_result
    assert partial.success.all() and np.all(np.isfinite(partial.distortion)) and np.all(partial.queries <= 2000)
    _check(linear_scores, x, y, partial, 2000)


def test_runs_that_converge_early_restart_and_use_their_budget() -> None:
    # A step floor above every step makes the stall rule fire each iteration: beta reaches its floor (the run
    # "converges") after a handful of iterations, as rgf does on tree ensembles.
    x, y = _inputs(3, seed=4)
    # (no pruning at the end: how much it takes out depends on the point it starts from, not on the restarts)
    kw = {"budget": 3000, "seed": 0, "n_classes": 4, "solver_options": {"step_min": 10.0, "beta_min": 1e-3},
          "polish": Polish(prune=False)}
    once = attack(linear_scores, x, y, runs=Runs(restarts=0), **kw)
    again = attack(linear_scores, x, y, **kw)
    assert all(r.status is zeroopt.Status.CONVERGED for r in once.solver_results)
    assert np.all(once.queries < 3000) and np.all(again.queries > once.queries) and np.all(again.queries <= 3000)
    assert np.all(again.distortion <= once.distortion * 1.0031)  # the final re-check may add up to 0.3%


def test_the_pieces_bundle_in_a_config_and_flat_keywords_say_where_they_go() -> None:
    x, y = _inputs(2, seed=6)
    kw = {"budget": 600, "seed": 0, "n_classes": 4, "solver_options": {"step_min": 10.0, "beta_min": 1e-3}}
    pieces = {"runs": Runs(restarts=0), "start": Start(n_initial=20)}
    by_pieces = attack(linear_scores, x, y, **pieces, **kw)
    by_config = attack(linear_scores, x, y, **AttackConfig(**pieces).keywords(), **kw)
    np.testing.assert_array_equal(by_config.distortion, by_pieces.distortion)
    np.testing.assert_array_equal(by_config.queries, by_pieces.queries)
    with pytest.raises(TypeError, match=r"restarts belongs to the solver runs: pass runs=Runs\(restarts=0\)"):
        attack(linear_scores, x, y, restarts=0, **kw)
    with pytest.raises(TypeError, match=r"q is an option of solver 'sign-growing': pass solver_options=\{'q': 10\}"):
        attack(linear_scores, x, y, budget=600, q=10)
    with pytest.raises(TypeError, match=r"n_initial belongs to the start: pass start=Start\(n_initial=20\)"):
        attack(linear_scores, x, y, budget=600, solver_options={"n_initial": 20})
    with pytest.raises(TypeError, match=r"verify takes a Verify: pass verify=Verify\(queries=0\)"):
        attack(linear_scores, x, y, budget=600, verify=0)
    with pytest.raises(TypeError, match="has no option 'qq'.*did you mean 'q'"):
        attack(linear_scores, x, y, budget=600, qq=10)
    with pytest.raises(ValueError, match="Runs: restarts must be a non-negative integer"):
        Runs(restarts=-1)
