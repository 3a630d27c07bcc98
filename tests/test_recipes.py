"""Every built-in solver is a recipe: the chain each context runs is exactly what its recipe builds with the
arguments written beside it (no value of a built-in chain is set anywhere else)."""

from __future__ import annotations

import inspect

import pytest

import zeroopt
from zeroopt import SolverContext, sign_growing, sign_growing_on_radius
from zeroopt.core.describe import describe_part
from zeroopt.core.stages import wrapped
from zeroopt.recipes.registry import recipe_defaults

PLAIN = SolverContext(dim=12, shape=(12,))
SPHERE = SolverContext(dim=12, unit_sphere=True)
RADIUS = SolverContext(dim=784, shape=(1, 28, 28), unit_sphere=True, radial=True, adjustable_precision=True)
TREES = SolverContext(dim=30, unit_sphere=True, radial=True, adjustable_precision=True, piecewise_constant=True)

#: sign-growing in each context: the recipe and the arguments written for it in zeroopt/recipes/sign_solvers.py.
SIGN_GROWING = [
    (PLAIN, sign_growing, {}),
    (SolverContext(dim=12, adjustable_precision=True), sign_growing, {"eps_per_beta": 1 / 100}),
    (SPHERE, sign_growing_on_radius, {"eps_per_beta": None, "line_search": "opt", "beta": 0.01,
                                      "beta_per_step": None, "probe_shape": None, "probe_level": "value"}),
    (RADIUS, sign_growing_on_radius, {}),
    (TREES, sign_growing_on_radius, {"beta": 0.5, "beta_per_step": None, "probe_shape": None}),
]


def same_chain(a: zeroopt.Chain, b: zeroopt.Chain) -> bool:
    """Two chains alike part for part (type and settings), in β, step and retraction."""
    def parts(c: zeroopt.Chain) -> list[tuple[type, str]]:
        return [(type(p), describe_part(wrapped(p))) for p in c.parts]

    return (parts(a), a.name, a.beta, a.step, a.retract) == (parts(b), b.name, b.beta, b.step, b.retract)


@pytest.mark.parametrize(("context", "recipe", "written"), SIGN_GROWING)
def test_sign_growing_runs_its_recipe_with_the_arguments_written_beside_it(context, recipe, written) -> None:
    spec = zeroopt.get_solver("sign-growing")
    assert spec.recipe_for(context) == (recipe, written)
    assert same_chain(zeroopt.make_solver("sign-growing", context), recipe(context, **written))


def test_the_attacks_recipe_holds_its_whole_chain_and_every_default_in_one_short_function() -> None:
    source = inspect.getsource(sign_growing_on_radius)
    assert len(source.splitlines()) <= 40 and "chain(" in source
    defaults = recipe_defaults(sign_growing_on_radius)
    assert defaults["directions"] == "by-size" and defaults["retract"] is zeroopt.unit_sphere
    assert zeroopt.get_solver("sign-growing").defaults(RADIUS) == defaults  # nothing set elsewhere


@pytest.mark.parametrize("name", ["rgf", "rgf-fixed", "coordinate", "sign", "sign-growing", "trust-region"])
@pytest.mark.parametrize("context", [PLAIN, SPHERE, RADIUS, TREES], ids=["plain", "sphere", "radius", "trees"])
def test_every_built_in_solver_is_its_recipe_with_its_written_arguments(name: str, context: SolverContext) -> None:
    spec = zeroopt.get_solver(name)
    recipe, written = spec.recipe_for(context)
    assert set(recipe_defaults(recipe)) == set(spec.option_names())  # one option set, whatever the context
    extra = {"lipschitz": 2.0} if name == "rgf-fixed" and not context.unit_sphere else {}
    try:
        built = spec.build(context, **extra)
    except ValueError:  # refused (the trust region on the sphere): the recipe refuses alike
        with pytest.raises(ValueError):
            recipe(context, **written, **extra)
        return
    assert same_chain(built, recipe(context, **{**written, **extra}))


def test_a_part_built_alone_agrees_with_the_part_a_recipe_builds() -> None:
    assert zeroopt.rgf(PLAIN).find(zeroopt.StallRule) == zeroopt.StallRule()
    assert zeroopt.rgf(PLAIN, line_search="fixed").find(zeroopt.NoProgressRule) == zeroopt.NoProgressRule()


def test_the_options_are_the_recipes_signature_and_describe_points_at_them() -> None:
    spec = zeroopt.get_solver("sign-growing")
    assert spec.defaults() == recipe_defaults(sign_growing)
    with pytest.raises(TypeError, match="betaa"):
        zeroopt.make_solver("sign-growing", PLAIN, betaa=0.1)
    text = spec.describe(RADIUS)
    assert "AdaptiveMomentum(max_weight=1.0, memory_weight=0.1)  <- momentum" in text


def test_a_step_rule_sees_the_iteration() -> None:
    """A 1/√t step is a step rule of its own (no amend part): the rule is handed t when it asks for it."""
    import numpy as np

    seen: list[int] = []

    def root_t_step(x, fx, g, step, eps, retract, *, iteration: int):  # type: ignore[no-untyped-def]
        seen.append(iteration)
        return (yield from zeroopt.fixed_step(x, fx, g, step / np.sqrt(iteration + 1), eps, retract))

    solver = zeroopt.rgf(PLAIN, q=4, line_search="fixed").with_part(zeroopt.Step(root_t_step))
    res = zeroopt.minimize(lambda x: float(x @ x), np.ones(12), solver=solver, budget=200, seed=0, max_iter=5)
    assert seen == [0, 1, 2, 3, 4] and res.iterations == 5
