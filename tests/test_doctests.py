"""The examples in the public docstrings run and say what they claim."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import zeroopt

#: Every zeroopt module whose docstrings hold an example, found rather than listed.
ZEROOPT_EXAMPLES = sorted(m.name for m in pkgutil.walk_packages(zeroopt.__path__, "zeroopt.") if not m.ispkg
                          and ">>>" in (Path(zeroopt.__path__[0], *m.name.split(".")[1:]).with_suffix(".py")
                                        .read_text()))


@pytest.mark.parametrize(
    "name",
    [*ZEROOPT_EXAMPLES,
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
