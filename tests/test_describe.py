"""A solver's chain of parts as text (``SolverSpec.describe``): every stage, in order, with the parts it runs."""

from __future__ import annotations

import pytest

import zeroopt
from applications.hardlabel.config import boundary_context
from zeroopt.describe import describe_part

STAGES = ("sample", "shape", "history", "estimate", "direction", "step", "then")


@pytest.mark.parametrize("name", sorted(zeroopt.list_solvers()))
def test_every_solver_describes_each_stage_with_the_parts_it_builds(name: str) -> None:
    spec = zeroopt.get_solver(name)
    context = boundary_context((1, 28, 28), "paper")
    overrides = {"lipschitz": 1.0} if spec.accepts("lipschitz") else {}
    text = spec.describe(context, **overrides)
    built = spec.build(context, **overrides)
    lines = text.splitlines()
    assert lines[0].startswith(f"{name} for SolverContext(dim=784, shape=(1, 28, 28), unit_sphere, radial")
    positions = [next(i for i, line in enumerate(lines) if line.split()[:2] == [str(k), stage])
                 for k, stage in enumerate(STAGES, start=1)]
    assert positions == sorted(positions)
    for part in (built.sampler, built.estimator, built.step_rule, *built.behaviours):
        assert describe_part(part) in text
    if built.probe_shape is not None:
        assert describe_part(built.probe_shape) in text


def test_describe_shows_overrides_and_the_trees_context() -> None:
    spec = zeroopt.get_solver("sign-growing")
    assert "x q = 7 per iteration" in zeroopt.get_solver("rgf").describe(zeroopt.SolverContext(dim=5), q=7)
    image = spec.describe(boundary_context((1, 28, 28), "paper"))
    trees = spec.describe(boundary_context((30,), "paper", piecewise_constant=True))
    assert "IterateShapedProbes" in image and "IterateShapedProbes" not in trees  # no slope to shape probes by
    assert "piecewise_constant" in trees.splitlines()[0]
