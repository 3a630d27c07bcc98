"""The examples in the public docstrings run and say what they claim."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "name",
    ["zeroopt.driver", "zeroopt.restarts", "zeroopt.pruning", "zeroopt.mixture", "zeroopt.estimators",
     "zeroopt.momentum", "zeroopt.history_subspace", "zeroopt.describe",
     "applications.hardlabel.attack",
     "applications.hardlabel.bounds", "applications.trees.exact",
     "applications.trees.thresholds", "theory.figures", "theory.storage", "benchmarks.studies.basins",
     "benchmarks.pages"],
)
def test_docstring_examples(name: str) -> None:
    # import_module, not attribute access: the package re-exports a function named like the module.
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
