"""One contract, run over every registered solver (the nevergrad pattern) — built-in or written here.

Two solvers are defined in this file through zeroopt's public API only: ``test-central`` (central,
antithetic differences: a recipe with the parts it takes as settings, and what it runs on a unit-sphere
objective) and ``test-bare`` (its own three options, declaring nothing). Every registered solver then goes
through all four uses: ``zeroopt.minimize``, the hard-label attack (a torch and a LightGBM model), a theory
study, and the benchmark harness's ``ours`` adapter. No test passes an option because of a solver's name:
what a solver needs in a use comes from the registry. The parts a solver takes as options (momentum, the sign
estimator's baseline) go through ``minimize`` and the attack with every solver that accepts them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import pytest

import zeroopt
from applications.hardlabel import attack_solvers
from zeroopt.oracles.problems import rotated_quadratic

# ------------------------------------------------------------------ solvers written outside the package


def central_difference(x, fx, directions, beta, scale, eps):  # type: ignore[no-untyped-def]
    """g = scale/q · Σ (f(x + βu) − f(x − βu)) / (2β) · u over the pairs whose two values are finite."""
    points = np.concatenate([x + beta * directions, x - beta * directions])
    resp = yield zeroopt.Evaluate(points=points, eps=eps, hints=np.full(len(points), fx))
    q = len(directions)
    plus, minus = resp.values[:q], resp.values[q:]
    ok = np.isfinite(plus) & np.isfinite(minus)
    g = scale * ((plus - minus)[ok] / (2 * beta)) @ directions[ok] / max(int(ok.sum()), 1)
    i = int(np.argmin(resp.values))
    return zeroopt.GradientEstimate(g=g, eps=float(resp.eps.max()), used=int(ok.sum()), best_x=points[i],
                                    best_f=float(resp.values[i]), best_eps=float(resp.eps[i]))


def central(
    context: zeroopt.SolverContext, *, q: int = 10, beta: float = 0.005, step: float = 0.2,
    step_reset: float | None = 1.0, directions: str = "gaussian", eps_per_beta: float | None = None,
    retract: object = None, momentum: float | None = None, skip_flat: bool = False, beta_balance: bool = False,
    beta_per_step: float | None = None, history_span: int | None = None,
) -> zeroopt.Chain:
    """A recipe of the test's own: its settings in its signature, its body its chain of parts."""
    return zeroopt.chain(
        zeroopt.SkipFlat() if skip_flat else None,
        None if eps_per_beta is None else zeroopt.PrecisionFollowsBeta(eps_per_beta),
        zeroopt.FixedProbes(q),
        zeroopt.Sample(zeroopt.make_sampler(directions, context)),
        None if history_span is None else zeroopt.HistorySubspaceProbes(history_span),
        zeroopt.Estimate(central_difference),
        None if momentum is None else zeroopt.AdaptiveMomentum(momentum),
        zeroopt.Step(zeroopt.opt_line_search),
        zeroopt.BestProbe(),
        zeroopt.RadiusFollowsBalance() if beta_balance else None,
        None if beta_per_step is None else zeroopt.RadiusFollowsStep(beta_per_step),
        zeroopt.StallRule(step_reset=step_reset),
        name="test-central", beta=beta, step=step, retract=retract)  # type: ignore[arg-type]


def central_in(context: zeroopt.SolverContext) -> tuple:
    """On the unit sphere: unit-norm directions, the steps divided by d, the iterate kept there; ε = β/500 where the
    precision is adjustable."""
    written: dict = {"eps_per_beta": 1 / 500} if context.adjustable_precision else {}
    if context.unit_sphere:
        written |= {"directions": "sphere", **zeroopt.unit_sphere_steps(context), "retract": zeroopt.unit_sphere}
    return central, written


zeroopt.register_recipe("test-central", central, "central differences (test file)", in_context=central_in)


@dataclass(frozen=True)
class BareOptions:
    q: int = 6
    beta: float = 0.01
    step: float = 0.05


@zeroopt.register_solver("test-bare", BareOptions, "parts put together by hand, no context defaults (test file)")
def _make_bare(opts: BareOptions, context: zeroopt.SolverContext) -> zeroopt.Chain:
    return zeroopt.chain(
        zeroopt.FixedProbes(opts.q), zeroopt.Sample(zeroopt.SphereDirections()),
        zeroopt.Estimate(zeroopt.forward_difference),
        zeroopt.Step(partial(zeroopt.opt_line_search, grow=2.0, shrink=0.5)), zeroopt.BestProbe(),
        zeroopt.StallRule(1e-4, beta_decay=0.1, beta_min=1e-6), name="test-bare", beta=opts.beta, step=opts.step,
    )


SOLVERS = sorted(zeroopt.list_solvers())
#: The solvers whose iterates range over ℝᵈ: a discrete search (over sign vectors) cannot reduce x @ x below what
#: its points reach, so the tests of descent on smooth problems take these only.
REAL = [name for name in SOLVERS if zeroopt.get_solver(name).search_space == "real"]


class Quadratic:
    """f(x) = x @ x (L₁ = 2), remembering every point it was asked about, independently of the oracle."""

    L1 = 2.0

    def __init__(self) -> None:
        self.points: list[np.ndarray] = []
        self.values: list[float] = []

    def __call__(self, x: np.ndarray) -> float:
        v = float(x @ x)
        self.points.append(x.copy())
        self.values.append(v)
        return v


def test_registry_lists_the_required_solvers() -> None:
    assert {"rgf", "rgf-fixed", "coordinate", "sign", "test-central", "test-bare"} <= set(SOLVERS)
    for name, spec in zeroopt.list_solvers().items():
        assert spec.summary
        assert "q" in spec.defaults(), name


def test_context_defaults_are_what_the_solver_runs_there() -> None:
    sphere = zeroopt.SolverContext(dim=64, unit_sphere=True, adjustable_precision=True)
    assert zeroopt.get_solver("test-bare").context_defaults(sphere) == {}  # declares nothing
    central = zeroopt.get_solver("test-central").context_defaults(sphere)
    assert central["retract"] is zeroopt.unit_sphere and central["eps_per_beta"] == 1 / 500
    assert central["step"] == 0.2 / 64 and central["step_reset"] == 1 / 64 and central["directions"] == "sphere"
    assert zeroopt.get_solver("rgf").context_defaults(zeroopt.SolverContext(dim=64)) == {}
    built = zeroopt.make_solver("rgf", sphere)
    assert built.requested_eps(0.005) == 0.005 / 500 and built.retract is zeroopt.unit_sphere
    with pytest.raises(ValueError, match="preset"):
        zeroopt.SolverContext(dim=3, constants="nope")


# ------------------------------------------------------------------------------------- use 1: minimize


@pytest.mark.parametrize("name", REAL)
def test_reduces_a_quadratic(name: str) -> None:
    x0 = np.ones(10)
    res = zeroopt.minimize(Quadratic(), x0, solver=name, budget=3000, seed=1)
    # The final iterate itself, not the best value ever evaluated (which a probe near x0 can provide while
    # the iterate never moves). Measured: 1e-6 or below for every solver (seeds 1-3).
    assert res.x_last is not None and float(res.x_last @ res.x_last) < 1e-3 * float(x0 @ x0), res
    assert res.fun <= float(res.x_last @ res.x_last)


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("budget", [1, 7, 233])
def test_never_exceeds_the_budget_and_returns_the_best_point_seen(name: str, budget: int) -> None:
    f = Quadratic()
    res = zeroopt.minimize(f, np.linspace(-1, 1, 8), solver=name, budget=budget, seed=3)
    assert len(f.values) == res.queries <= budget
    assert res.fun == min(f.values)
    assert float(res.x @ res.x) == res.fun
    assert any(np.array_equal(p, res.x) for p in f.points)


@pytest.mark.parametrize("name", SOLVERS)
def test_same_seed_same_run_bit_for_bit(name: str) -> None:
    prob = rotated_quadratic(12, seed=4)
    runs = [zeroopt.minimize(prob, prob.x0, solver=name, budget=900, seed=11) for _ in range(2)]
    assert np.array_equal(runs[0].x, runs[1].x)
    assert runs[0].fun == runs[1].fun and runs[0].queries == runs[1].queries
    assert [r.f for r in runs[0].history] == [r.f for r in runs[1].history]
    other = zeroopt.minimize(prob, prob.x0, solver=name, budget=900, seed=12)
    sampler = zeroopt.make_solver(name, CONTRACT_CONTEXT).parts_at("sample")[0]
    # A solver whose sampler draws nothing (the trust region's geometry probes) is the same run at every seed.
    assert np.array_equal(other.x, runs[0].x) != getattr(zeroopt.core.stages.wrapped(sampler), "draws", True)


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_stop_with_a_clear_error(name: str, bad: float) -> None:
    calls = {"n": 0}

    class F(Quadratic):
        def __call__(self, x: np.ndarray) -> float:
            calls["n"] += 1
            return bad if calls["n"] > 5 else float(x @ x)

    # Asked for: by default a NaN/inf value is worse than any and the run goes on (tests/test_non_finite_and_noise.py).
    oracle = zeroopt.CallableOracle(F(), (4,), on_non_finite="raise")
    given = {"lipschitz": F.L1} if name == "rgf-fixed" else {}
    with pytest.raises(zeroopt.NonFiniteValueError, match="finite"):
        zeroopt.minimize(oracle, np.ones(4), solver=name, budget=500, seed=0, **given)


@pytest.mark.parametrize("name", SOLVERS)
def test_history_records_are_consistent(name: str) -> None:
    prob = rotated_quadratic(6, seed=0)
    res = zeroopt.minimize(prob, prob.x0, solver=name, budget=600, seed=0)
    assert res.history, "at least one iteration must be recorded"
    q = [r.queries for r in res.history]
    assert q == sorted(q) and q[-1] <= res.queries
    best = [r.best_f for r in res.history]
    assert all(b2 <= b1 for b1, b2 in zip(best, best[1:], strict=False))
    assert all(r.true_grad_norm is not None and r.true_grad_norm >= 0 for r in res.history)
    assert res.iterations == res.history[-1].iteration + 1 or res.status is zeroopt.Status.BUDGET


# The parts a solver takes as options (momentum, skip_flat, the balance- and step-following probe radii and the probes
# spanning the recent estimates for every descent solver, the baseline and the probe level for the sign ones) go
# through the same contract as the defaults: a part is usable by every solver that accepts it, or it is not a part.
PART_OPTIONS = [("momentum", 1.0), ("history_prior", True), ("baseline", True), ("baseline", "shrunk"),
                ("directions", "orthogonal"), ("directions", "nearly-orthogonal"), ("skip_flat", True),
                ("probe_level", "tangent"), ("beta_balance", True), ("beta_per_step", 0.25), ("history_span", 3),
                ("beta_above_noise", True), ("quasi_newton", 5), ("differences", "central")]


CONTRACT_CONTEXT = zeroopt.SolverContext(dim=10, lipschitz=2.0)  # Quadratic's: rgf-fixed's theory step needs it


def _composes(name: str, option: str, value: object) -> bool:
    """Whether the solver builds with the part (a solver may refuse a part it cannot use, with a ValueError)."""
    try:
        zeroopt.make_solver(name, CONTRACT_CONTEXT, **{option: value})
    except ValueError:
        return False
    return True


ACCEPTED = [(name, option, value) for name in SOLVERS for option, value in PART_OPTIONS
            if zeroopt.get_solver(name).accepts(option)]
SOLVERS_WITH_PARTS = [case for case in ACCEPTED if _composes(*case)]


def test_a_solver_refuses_only_the_parts_it_declares_unusable() -> None:
    """The refusals: the history prior and the quasi-Newton direction with a fixed step (every other accepted part
    composes)."""
    refused = {(name, option) for name, option, _ in ACCEPTED if (name, option, _) not in SOLVERS_WITH_PARTS}
    rules = {name: zeroopt.make_solver(name, CONTRACT_CONTEXT).parts_at("step")[0].rule for name in SOLVERS
             if zeroopt.get_solver(name).accepts("line_search")}
    fixed = {name for name, rule in rules.items() if getattr(rule, "func", rule) is zeroopt.fixed_step}
    assert "rgf-fixed" in fixed and refused == {(name, part) for name in fixed for part in ("history_prior",
                                                                                             "quasi_newton")}
    with pytest.raises(ValueError, match="history_prior needs a step rule"):
        zeroopt.make_solver("rgf-fixed", CONTRACT_CONTEXT, history_prior=True)


def test_every_descent_solver_takes_the_parts() -> None:
    takes = {name for name, option, _ in SOLVERS_WITH_PARTS if option == "momentum"}
    assert {"rgf", "rgf-fixed", "coordinate", "sign", "sign-growing", "test-central"} <= takes
    assert {name for name, option, _ in SOLVERS_WITH_PARTS if option == "baseline"} >= {"sign", "sign-growing"}
    assert {name for name, option, _ in SOLVERS_WITH_PARTS if option == "skip_flat"} >= takes
    assert {name for name, option, _ in SOLVERS_WITH_PARTS if option == "beta_balance"} >= takes
    assert {name for name, option, _ in SOLVERS_WITH_PARTS if option == "beta_per_step"} >= takes
    assert {name for name, option, _ in SOLVERS_WITH_PARTS if option == "history_span"} >= takes
    assert {name for name, option, _ in SOLVERS_WITH_PARTS if option == "probe_level"} >= {"sign", "sign-growing"}


@pytest.mark.parametrize(("name", "option", "value"), SOLVERS_WITH_PARTS)
def test_parts_keep_the_contract(name: str, option: str, value: object) -> None:
    f = Quadratic()
    x0 = np.ones(10)
    res = zeroopt.minimize(f, x0, solver=name, budget=3000, seed=1, **{option: value})
    assert len(f.values) == res.queries <= 3000 and res.fun == min(f.values)
    assert res.x_last is not None and float(res.x_last @ res.x_last) < 1e-2 * float(x0 @ x0), res
    again = zeroopt.minimize(Quadratic(), x0, solver=name, budget=3000, seed=1, **{option: value})
    assert np.array_equal(again.x, res.x) and again.queries == res.queries


@pytest.mark.parametrize("name", ["rgf", "rgf-fixed"])
def test_done_when_example(name: str) -> None:
    """The issue's acceptance example: f(x) = x @ x from ones(50), budget 20000."""
    x0 = np.ones(50)
    runs = [zeroopt.minimize(Quadratic(), x0, solver=name, budget=20000, seed=0) for _ in range(2)]
    assert runs[0].fun < 1e-3 * float(x0 @ x0)
    assert runs[0].queries <= 20000
    assert np.array_equal(runs[0].x, runs[1].x) and runs[0].queries == runs[1].queries


def test_callback_can_stop_a_run() -> None:
    seen = []

    def cb(record: zeroopt.IterationRecord) -> bool:
        seen.append(record.iteration)
        return record.iteration >= 4

    res = zeroopt.minimize(lambda x: float(x @ x), np.ones(5), budget=10_000, seed=0, callbacks=[cb])
    assert res.status is zeroopt.Status.CALLBACK and seen == [0, 1, 2, 3, 4] and res.iterations == 5


def test_target_and_max_iter_stop_runs() -> None:
    res = zeroopt.minimize(lambda x: float(x @ x), np.ones(5), budget=10_000, seed=0, target=1.0)
    assert res.status is zeroopt.Status.TARGET and res.fun <= 1.0
    res = zeroopt.minimize(lambda x: float(x @ x), np.ones(5), budget=10_000, seed=0, max_iter=3)
    assert res.status is zeroopt.Status.MAX_ITER and res.iterations == 3


# ------------------------------------------------------------------------ use 2: the hard-label attack


@pytest.fixture(scope="module")
def torch_model():  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    x = np.random.default_rng(0).uniform(0, 1, size=(2, 1, 4, 4)).astype(np.float32)
    with torch.no_grad():
        y = net(torch.from_numpy(x)).argmax(1).numpy()
    return net, x, y, lambda z: net(torch.from_numpy(np.asarray(z, np.float32))).argmax(1).numpy()


@pytest.fixture(scope="module")
def lightgbm_model():  # type: ignore[no-untyped-def]
    lgb = pytest.importorskip("lightgbm")
    from sklearn.datasets import load_digits

    d = load_digits()
    x, y = (d.data / 16.0).astype(np.float32), d.target
    clf = lgb.LGBMClassifier(n_estimators=10, num_leaves=8, verbose=-1, seed=0, deterministic=True, n_jobs=1)
    clf.fit(x[:1000], y[:1000])
    pick = np.flatnonzero(clf.predict(x[1000:1100]) == y[1000:1100])[:2] + 1000
    return clf.booster_, x[pick], y[pick], lambda z: clf.predict(np.asarray(z).reshape(len(z), -1))


#: The solvers that take the attack's g(θ), a radius along θ on the unit sphere (the others refuse it with a clear
#: error, which tests/test_hardlabel_attack.py checks).
ON_THE_SPHERE = sorted(attack_solvers())
ATTACK_CASES = [(name, {}) for name in ON_THE_SPHERE] + [(name, {opt: v}) for name, opt, v in SOLVERS_WITH_PARTS
                                                          if name in ON_THE_SPHERE]


def _case_id(value: object) -> str:
    if isinstance(value, dict):
        return ",".join(f"{k}={w}" for k, w in value.items()) or "defaults"
    return str(value)


@pytest.mark.parametrize("kind", ["torch_model", "lightgbm_model"])
@pytest.mark.parametrize(("name", "parts"), ATTACK_CASES, ids=_case_id)
def test_attack(name: str, parts: dict, kind: str, request: pytest.FixtureRequest) -> None:
    from applications.hardlabel import attack

    model, x, y, labels_of = request.getfixturevalue(kind)
    res = attack(model, x, y, budget=400, solver=name, seed=0, n_classes=10 if kind == "lightgbm_model" else 4,
                 solver_options=parts)
    assert res.success.all() and np.all(res.queries <= 400)
    assert np.all(labels_of(res.x_adv) != y)
    ran = [r for r in res.solver_results if r is not None]
    assert ran and all(r.solver == name and (r.iterations >= 1 or r.status is zeroopt.Status.BUDGET) for r in ran)
    # The best point is at least as close as the initial direction's (the first entry of the trace).
    assert all(res.distortion[i] <= res.trace[i][0, 1] * 1.0031 for i in range(len(x)))


# ----------------------------------------------------------------------------- use 3: a theory study


@pytest.mark.parametrize("name", REAL)
def test_theory_study(name: str) -> None:
    from theory.runner import StudySpec, run_study

    spec = StudySpec(name="t", title="", solver=name, family="rotated_quadratic", dims=(4,), deltas=(0.3,),
                     seeds=1, cap=0.05, traces=0)
    (record,) = run_study(spec, workers=1, progress=False).records
    assert record["queries"] > 0 and record["iterations"] >= 1 and np.isfinite(record["final_grad"])
    assert record["final_grad"] < record["grad0"] or record["status"] == "max_iter"


# ----------------------------------------------------------- use 4: the benchmark harness's ours adapter


@pytest.mark.parametrize("name", ON_THE_SPHERE)
def test_benchmark_ours_adapter(name: str, torch_model) -> None:  # type: ignore[no-untyped-def]
    from benchmarks.attacks.base import Batch
    from benchmarks.attacks.ours import Ours
    from benchmarks.monitor import QueryMonitor

    _, x, y, labels_of = torch_model
    monitor = QueryMonitor(labels_of, (0.0, 1.0))
    monitor.register(x[:1], y[:1])
    batch = Batch(x0=x[:1], y0=y[:1], target=None, starts=None, bounds=(0.0, 1.0), n_classes=4)
    with monitor.owned_by(0):
        (reported,) = Ours(name).run(monitor, batch, 300, seed=0)
    assert reported.queries == monitor.inputs[0].count <= 300
    assert labels_of(reported.x_adv[None])[0] != y[0] and reported.note == ""
