"""What every experiment builder of the suite shares: its :class:`Plan`, the :class:`Experiment` it returns, and
the seeded scan for correctly classified inputs.

:mod:`benchmarks.experiments` builds the MNIST, CIFAR-10 and tree-ensemble experiments and
:mod:`benchmarks.imagenet_experiments` the ImageNet ones; both import these from here, so neither imports the other
for them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch

from benchmarks.attacks.base import Batch, Family
from benchmarks.monitor import LabelFn

__all__ = ["Experiment", "Job", "Plan", "correctly_classified", "seeded_rng"]


@dataclass(frozen=True)
class Plan:
    """How much of an experiment to run.

    Attributes
    ----------
    n_ours : int
        Inputs attacked by each of our solvers.
    n_peers : int
        Inputs attacked by each peer (the first ``n_peers`` of ours).
    budgets : tuple of int
        Budget columns of the table; the largest is the standard budget of every run.
    n_long : int
        The first ``n_long`` inputs are run to ``long_budget`` instead (by every attack).
    long_budget : int or None
        The extra, longer budget (``None``: no long column).
    """

    n_ours: int
    n_peers: int
    budgets: tuple[int, ...]
    n_long: int = 0
    long_budget: int | None = None

    @property
    def budget(self) -> int:
        """The standard (largest regular) budget."""
        return max(self.budgets)

    def columns(self) -> tuple[int, ...]:
        """All budget columns, the long one last."""
        return self.budgets + ((self.long_budget,) if self.long_budget and self.n_long else ())

    def scaled(
        self,
        n_ours: int | None = None,
        n_peers: int | None = None,
        n_long: int | None = None,
        max_budget: int | None = None,
    ) -> Plan:
        """A copy with fewer (or more) inputs, or with every budget above ``max_budget`` dropped."""
        plan = replace(
            self,
            n_ours=self.n_ours if n_ours is None else n_ours,
            n_peers=self.n_peers if n_peers is None else n_peers,
            n_long=self.n_long if n_long is None else n_long,
        )
        if max_budget is not None and max_budget < plan.budget:
            kept = tuple(b for b in plan.budgets if b < max_budget) + (max_budget,)
            plan = replace(plan, budgets=kept, long_budget=None)
        elif max_budget is not None and plan.long_budget and plan.long_budget > max_budget:
            plan = replace(plan, long_budget=max_budget if max_budget > plan.budget else None)
        return replace(plan, n_long=min(plan.n_long, max(plan.n_ours, plan.n_peers)))


@dataclass(frozen=True)
class Job:
    """One input to attack: its position in the experiment's list and its budget."""

    position: int
    budget: int


@dataclass
class Experiment:
    """A fully materialised experiment: model, inputs, criterion, plan, and what to write about it."""

    name: str
    title: str
    stem: str
    plan: Plan
    index: np.ndarray
    x: np.ndarray
    y: np.ndarray
    target: np.ndarray | None
    starts: np.ndarray | None
    bounds: tuple[Any, Any]  # scalars, or flat per-feature arrays (gbdt-higgs-box)
    n_classes: int
    label_fn: LabelFn
    torch_model: torch.nn.Module | None
    image_like: bool
    notes: list[str] = field(default_factory=list)
    reference: dict[str, Any] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)

    def batch(self, positions: list[int] | np.ndarray) -> Batch:
        """The inputs at the given positions, as an attack batch."""
        p = np.asarray(positions)
        return Batch(
            x0=self.x[p],
            y0=self.y[p],
            target=None if self.target is None else self.target[p],
            starts=None if self.starts is None else self.starts[p],
            bounds=self.bounds,
            n_classes=self.n_classes,
            torch_model=self.torch_model,
            piecewise_constant=bool(getattr(self.label_fn, "piecewise_constant", False)),
        )

    def n_inputs(self, family: Family) -> int:
        """How many inputs an attack of this family runs on."""
        return self.plan.n_ours if family == "ours" else self.plan.n_peers

    def jobs(self, family: Family) -> list[Job]:
        """Every (input, budget) an attack of this family runs: the long budget on the first ``n_long``."""
        plan = self.plan
        return [
            Job(i, plan.long_budget if plan.long_budget and i < plan.n_long else plan.budget)
            for i in range(self.n_inputs(family))
        ]


def seeded_rng(seed: int, name: str) -> np.random.Generator:
    """The generator an experiment draws its inputs with: from the suite ``seed`` and a ``name``.

    Parameters
    ----------
    seed : int
        The suite seed.
    name : str
        What draws (``"mnist"``, ``"imagenet"``, ...): experiments that share it attack the same inputs.

    Returns
    -------
    numpy.random.Generator
    """
    return np.random.default_rng(np.random.SeedSequence([seed, *name.encode()]))


def correctly_classified(
    x: np.ndarray, y: np.ndarray, label_fn: LabelFn, order: np.ndarray, enough: Callable[[list[int]], bool], chunk: int
) -> list[int]:
    """Indices in ``order`` that the model classifies correctly, scanning in chunks until ``enough``.

    Parameters
    ----------
    x, y : numpy.ndarray
        Inputs and their labels.
    label_fn : LabelFn
        The model's hard labels of a batch of inputs.
    order : numpy.ndarray
        Indices of ``x`` in the order to scan them.
    enough : callable
        Given the indices found so far, whether to stop (checked after each chunk).
    chunk : int
        Inputs labelled per call of ``label_fn``.

    Returns
    -------
    list of int
        The correctly classified indices found, in ``order``.
    """
    found: list[int] = []
    for lo in range(0, len(order), chunk):
        idx = order[lo : lo + chunk]
        found.extend(int(i) for i in idx[label_fn(x[idx]) == y[idx]])
        if enough(found):
            break
    return found
