"""The semicircular step (``line_search="semicircle"``): a geometric step for a distance along a direction."""

from __future__ import annotations

import numpy as np
import pytest
from boundary_oracles import drive_one, linear_group

import zeroopt
from zeroopt.step.stepping import opt_line_search, semicircle_step


def _start(d: int, w: np.ndarray, tilt: float) -> np.ndarray:
    theta = np.cos(tilt) * w / np.linalg.norm(w) + np.sin(tilt) * np.eye(d)[1]
    return theta / np.linalg.norm(theta)


@pytest.mark.parametrize("tilt", [0.3, 0.8, 1.2])
def test_one_semicircular_step_reaches_the_nearest_point_of_a_flat_boundary(tilt: float) -> None:
    """Thales: within the plane of θ and the descent direction, the nearest boundary point lies on the circle
    over [x0, x0 + g(θ)θ]; one step finds it (to second order in the bracket: within 1% of the gain), where the
    line search's doubling candidates stop within a factor of the best step and pay for every candidate's value."""
    d, eps = 12, 1e-6
    w = np.zeros(d)
    w[0] = 2.0  # the nearest boundary point is at distance 0.5, along e_0
    theta = _start(d, w, tilt)
    g_true = -(w / (w @ theta) ** 2)  # ∇g of g(θ) = 1/(w·θ); its tangent part points away from e_0
    costs, values = {}, {}
    for name, rule in (("semicircle", semicircle_step), ("line search", opt_line_search)):
        group = linear_group(np.zeros(w.size), w, -1.0, budget=10_000)
        (start,) = group.answer([(0, zeroopt.Evaluate(points=theta[None, :], eps=eps))])
        fx, spent = float(start.values[0]), group.images[0].ledger.spent
        res = drive_one(rule(theta, fx, g_true, 0.05, eps, zeroopt.unit_sphere), group)
        x = res.x / np.linalg.norm(res.x)
        assert res.fx == pytest.approx(1.0 / (w @ x), abs=2 * eps)  # the value is the new point's, to ε
        costs[name], values[name] = group.images[0].ledger.spent - spent, res.fx
    gain = fx - 0.5
    assert values["semicircle"] - 0.5 <= 0.01 * gain  # an angle known to 10%: ~1% of the gain lost at most
    assert values["semicircle"] <= values["line search"] + 0.01 * gain
    assert costs["semicircle"] < costs["line search"]


def test_a_wrong_direction_leaves_the_iterate_and_asks_the_stall_rule_to_act() -> None:
    d = 12
    w = np.zeros(d)
    w[0] = 2.0
    theta = _start(d, w, 0.5)
    uphill = w / (w @ theta) ** 2  # the ascent direction: every angle along it leaves the boundary farther
    group = linear_group(np.zeros(w.size), w, -1.0, budget=10_000)
    (start,) = group.answer([(0, zeroopt.Evaluate(points=theta[None, :], eps=1e-6))])
    fx = float(start.values[0])
    res = drive_one(semicircle_step(theta, fx, uphill, 0.05, 1e-6, min_angle=1e-4), group)
    assert res.step_taken == 0.0 and np.array_equal(res.x, theta) and res.fx == fx
    assert res.next_step < 1e-4  # below the stall rule's floor: it shrinks β or converges


def test_semicircle_solvers_minimise_a_radius_objective_through_minimize() -> None:
    """A plain callable of θ: the distance along θ to the curved set x_3 >= 1 - 0.1 ‖x_rest‖² (nearest point e_3,
    at distance 1). Comparisons are answered by evaluating: the step needs a value that is a radius, not the
    hard-label oracle, and a boundary that bends toward the centre does not lead it astray."""
    d = 20

    def radius(x: np.ndarray) -> float:
        t = x / np.linalg.norm(x)
        rest = float(t @ t - t[3] ** 2)
        if rest < 1e-12:
            return 1.0 / t[3] if t[3] > 0 else 1e6
        return float((-t[3] + np.sqrt(t[3] ** 2 + 0.4 * rest)) / (0.2 * rest))

    x0 = np.eye(d)[3] + 0.6 * np.eye(d)[5] + 0.3 * np.eye(d)[7]
    for solver in ("sign-growing", "rgf"):
        res = zeroopt.minimize(radius, x0, solver=solver, budget=3000, seed=1, line_search="semicircle",
                               retract=zeroopt.unit_sphere, beta=0.01, step=0.1)
        assert res.fun < 1.0 + 1e-3 < radius(x0), solver


def test_semicircle_is_a_known_line_search() -> None:
    with pytest.raises(ValueError, match="semicircle"):
        zeroopt.make_solver("sign", zeroopt.SolverContext(dim=4), line_search="circle")


def test_an_option_of_the_line_search_is_not_silently_dropped_by_the_semicircle() -> None:
    from applications.hardlabel.config import boundary_context

    radial = boundary_context((1, 8, 8), "paper")
    with pytest.raises(ValueError, match="line_search='opt'"):
        zeroopt.make_solver("sign-growing", radial, coarse_candidates=64.0)
    solver = zeroopt.make_solver("sign-growing", radial, coarse_candidates=64.0, line_search="opt")
    assert solver.parts_at("step")[0].rule.keywords["coarse"] == 64.0


def test_the_attack_context_is_radial_and_sign_growing_steps_on_the_semicircle_there() -> None:
    from applications.hardlabel.config import boundary_context

    context = boundary_context((1, 8, 8), "paper")
    assert context.radial and context.unit_sphere
    spec = zeroopt.get_solver("sign-growing")
    assert spec.context_defaults(context)["line_search"] == "semicircle"
    plain_sphere = zeroopt.SolverContext(dim=64, unit_sphere=True, adjustable_precision=True)
    assert spec.context_defaults(plain_sphere).get("line_search", "opt") == "opt"  # a direction, not a radius
    for paper in ("sign", "rgf"):  # the published solvers keep the OPT line search
        assert zeroopt.get_solver(paper).context_defaults(context).get("line_search", "opt") == "opt"
    with pytest.raises(ValueError, match="unit_sphere"):
        zeroopt.SolverContext(dim=4, radial=True)


def test_a_known_upper_end_closes_the_bracket_without_a_query() -> None:
    """``Evaluate(upper=)``: a level already found adversarial ends Algorithm 1's bracket, so a hint just below
    the value costs one query and a bisection — no steps of α = 1% up to the end, no query at the end itself."""
    d, truth, eps = 8, 0.8, 1e-7
    w = np.zeros(d)
    w[0] = 1.0 / truth
    point = np.eye(d)[:1]
    costs = {}
    for name, upper in (("known", 0.8004), ("unknown", None)):
        group = linear_group(np.zeros(w.size), w, -1.0, budget=10_000)
        (ans,) = group.answer([(0, zeroopt.Evaluate(points=point, eps=eps, hints=np.array([0.7996]),
                                                     upper=None if upper is None else np.array([upper])))])
        assert float(ans.values[0]) == pytest.approx(truth, abs=2 * eps) and float(ans.values[0]) >= truth
        costs[name] = group.images[0].ledger.spent
    assert costs["known"] <= 1 + np.ceil(np.log2(0.0008 / eps))
    assert costs["known"] < costs["unknown"]
    # A hint at or above the known end: the search steps down from it at once.
    group = linear_group(np.zeros(w.size), w, -1.0, budget=10_000)
    (ans,) = group.answer([(0, zeroopt.Evaluate(points=point, eps=eps, hints=np.array([0.9]),
                                                 upper=np.array([0.8004])))])
    assert float(ans.values[0]) == pytest.approx(truth, abs=2 * eps)
    assert group.images[0].ledger.spent <= 1 + np.ceil(np.log2(0.8004 * 0.01 / eps))


def test_a_value_that_is_no_radius_ends_the_run_instead_of_spending_the_budget() -> None:
    """f <= 0 everywhere: no circle to search. Each step hands the stall rule a step below its floor, so β
    shrinks to its floor and the run converges long before the budget."""
    res = zeroopt.minimize(lambda x: -1.0 - float(x @ x), np.ones(6), solver="sign-growing", budget=20_000, seed=0,
                           line_search="semicircle", retract=zeroopt.unit_sphere, restarts=False)  # one run
    assert res.status is zeroopt.Status.CONVERGED
    assert res.queries < 2_000
