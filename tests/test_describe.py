"""A solver's chain of parts as text (``SolverSpec.describe``): every stage, in order, with the parts it runs."""

from __future__ import annotations

import pytest

import zeroopt
from applications.hardlabel.config import boundary_context
from zeroopt.core.describe import describe_part
from zeroopt.core.stages import wrapped


@pytest.mark.parametrize("name", sorted(zeroopt.list_solvers()))
def test_every_solver_describes_each_stage_with_the_parts_it_builds(name: str) -> None:
    spec = zeroopt.get_solver(name)
    context = boundary_context((1, 28, 28), "paper")
    if spec.refusal(context) is not None:  # refused there (test_hardlabel_attack checks how): a plain context
        context = zeroopt.SolverContext(dim=784, shape=(1, 28, 28))
    overrides = {"lipschitz": 1.0} if spec.accepts("lipschitz") else {}
    text = spec.describe(context, **overrides)
    built = spec.build(context, **overrides)
    lines = text.splitlines()
    assert lines[0].startswith(f"{name} for SolverContext(dim=784, shape=(1, 28, 28)")
    shown = [line.split()[:2] for line in lines[1:-1]]
    assert shown == [[str(k), part.stage] for k, part in enumerate(built.parts, start=1)]  # every part, in order
    for part in built.parts:
        assert describe_part(wrapped(part)) in text


def test_describe_shows_overrides_and_the_trees_context() -> None:
    spec = zeroopt.get_solver("sign-growing")
    assert "FixedProbes(q=7)" in zeroopt.get_solver("rgf").describe(zeroopt.SolverContext(dim=5), q=7)
    image = spec.describe(boundary_context((1, 28, 28), "paper"))
    trees = spec.describe(boundary_context((30,), "paper", piecewise_constant=True))
    assert "IterateShapedProbes" in image and "IterateShapedProbes" not in trees  # no slope to shape probes by
    assert "piecewise_constant" in trees.splitlines()[0]
