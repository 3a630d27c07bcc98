"""One attack in progress: what its start, race, boundary search, solver runs and verification share.

:func:`~applications.hardlabel.attack` checks its arguments, opens an :class:`AttackRun` and passes it down the
pipeline — :func:`~.initial.initial_directions` (the start and the race), :func:`~.attack.descend` (the solver's
runs, restarted from :func:`~.initial.fresh_initial_search`), :func:`~.verify.final_check` — each of which reads
the run's parts it needs from it.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

import zeroopt
from zeroopt import Chain, QueryLedger, SolverContext

from .adapters import LabelModel, as_label_model
from .boundary import BoundaryOracleGroup, ImageState
from .config import AttackConfig, boundary_context, initial_precision, progress_bar
from .criterion import Criterion
from .distance import Distance
from .inputs import check_labels_fit
from .result import AttackResult

__all__ = ["AttackRun", "label_oracle", "on_model_device", "retracted", "solver_for"]


@dataclass
class AttackRun:
    """One attack on a batch: its oracle group, generators, pieces, criterion, solver and budgets.

    Attributes
    ----------
    group : BoundaryOracleGroup
        The label oracle over every input (its images, bounds, distance and criterion).
    rngs : list of numpy.random.Generator
        One generator per input.
    config : AttackConfig
        The attack's pieces.
    criterion : Criterion
        Which labels are adversarial, checked against the batch.
    context : zeroopt.SolverContext
        g(θ) as the solver registry sees it.
    solver : zeroopt.Chain
        The solver chain every run takes.
    eps : float
        The precision of the initial search and of requests that state none.
    budget, reserve : int
        Per input, the cap on queries and the part of it held back for the final verification.
    label_model : LabelModel
        The model as a hard-label oracle; ``calls_before``: its calls before this attack.
    started : float
        ``time.perf_counter()`` when the attack began.
    on_device : array or None
        The inputs on the model's device, where the runs compute (``None``: in numpy).
    bar : tqdm or None
        The progress bar, when one is shown.
    solver_results : list
        Per input, the zeroopt result of its runs, filled when they end or are cut short.
    """

    group: BoundaryOracleGroup
    rngs: list[np.random.Generator]
    config: AttackConfig
    criterion: Criterion
    context: SolverContext
    solver: Chain
    eps: float
    budget: int
    reserve: int
    label_model: LabelModel
    calls_before: int
    started: float
    on_device: Any = None
    bar: Any = None
    solver_results: list[Any] = field(default_factory=list)

    @classmethod
    def open(cls, label_model: LabelModel, x: NDArray[np.float64], y: NDArray[np.int64], criterion: Criterion,
             distance: Distance, config: AttackConfig, solver: tuple[SolverContext, Chain, float], *,
             rngs: list[np.random.Generator], bounds: tuple[Any, Any], budget: int, progress: bool = False,
             started: float | None = None) -> AttackRun:
        """The run of an attack on ``x`` (checked, labelled ``y``) with a solver of :func:`solver_for`: one
        ledger per input (the final check's reserve held back), its rays on the model's device or in numpy."""
        n, shape = x.shape[0], x.shape[1:]
        context, chain, eps = solver
        # The model sees float32 inputs: work from exactly those values, so every reported distance is exact.
        flat = x.reshape(n, -1).astype(np.float32).astype(np.float64)
        reserve = config.verify.reserve(int(budget))
        images = [ImageState(flat[i], int(y[i]), QueryLedger(budget=int(budget) - reserve)) for i in range(n)]
        on_device = on_model_device(flat, config.model_options.device_for(label_model))
        for i, img in enumerate(images):  # the rays start on the model's device (or stay in numpy: None)
            img.x0_device = None if on_device is None else on_device[i]
        bar = progress_bar(progress, n * int(budget))
        group = BoundaryOracleGroup(_labels_checked(label_model, y, criterion.targets), images, shape, bounds,
                                    default_eps=eps, ratio=config.boundary_search.local_ratio,
                                    growth=config.boundary_search.local_growth,
                                    on_round=None if bar is None else bar.update, distance=distance,
                                    criterion=criterion)
        return cls(group, rngs, config, criterion, context, chain, eps, int(budget), reserve, label_model,
                   label_model.calls, time.perf_counter() if started is None else started, on_device, bar, [None] * n)

    @property
    def images(self) -> list[ImageState]:
        return self.group.images

    @property
    def shape(self) -> tuple[int, ...]:
        """One input's shape, as the model takes it."""
        return self.group.input_shape

    @property
    def targets(self) -> NDArray[np.int64] | None:
        """The criterion's target class per input, or ``None``."""
        return self.criterion.targets

    def race_plan(self) -> tuple[int, int]:
        """``(starts, queries)`` of the race between independent starts (:meth:`~.pieces.Race.plan`)."""
        return self.config.race.plan(self.budget, targeted=self.targets is not None, dim=self.context.dim)

    def result(self, passed: Any) -> AttackResult:
        """The attack's result as it stands, ``passed`` marking the inputs whose point passed verification."""
        return AttackResult.from_images(self.images, self.shape, self.solver_results,
                                        self.label_model.calls - self.calls_before,
                                        time.perf_counter() - self.started, self.group.model_seconds, passed,
                                        self.group.distance.name)

    def close(self) -> None:
        """Close the progress bar."""
        if self.bar is not None:
            self.bar.close()


def label_oracle(model: Any, config: AttackConfig, n_classes: int | None) -> LabelModel:
    """``model`` as a hard-label oracle, wrapped as ``config.model_options`` says (a wrapped one: checked)."""
    if isinstance(model, LabelModel):
        config.model_options.check_wrapped(model)
        return model
    return as_label_model(model, n_classes=n_classes, batch_size=config.model_options.batch_for(model))


def solver_for(name: str, options: Mapping[str, Any], shape: tuple[int, ...], config: AttackConfig,
               label_model: LabelModel) -> tuple[SolverContext, Chain, float]:
    """``(context, chain, ε)``: the solver ``name`` as the registry builds it for g(θ) with the caller's
    ``options``, retracted onto the unit sphere (:func:`retracted`), and the precision its options give."""
    piecewise = config.model_options.piecewise_constant
    piecewise = label_model.piecewise_constant if piecewise is None else piecewise
    spec, context = zeroopt.get_solver(name), boundary_context(shape, config.runs.preset, piecewise)
    resolved = spec.resolve(context, **options)
    return context, retracted(spec, spec.build(context, **resolved)), initial_precision(resolved)


def retracted(spec: Any, chain: Chain) -> Chain:
    """``chain`` with the unit-sphere retraction g(θ) needs, given with a warning where it has none.

    g depends on θ's direction only: a chain whose iterates are not put back on the unit sphere takes its
    steps and probe radii against a norm that drifts, and runs worse without failing. A search over sign
    vectors keeps its iterates' norm itself.
    """
    if chain.retract is not None or spec.search_space != "real":
        return chain
    warnings.warn(f"solver {chain.name!r} builds a chain without a retraction; the attack's g(θ) lives on the "
                  "unit sphere, so it runs with retract=zeroopt.unit_sphere (build the chain with "
                  "retract=zeroopt.unit_sphere, or give the solver a retract option, to say so)",
                  UserWarning, stacklevel=5)  # (the caller of attack(), past its keyword check)
    return replace(chain, retract=zeroopt.unit_sphere)


def on_model_device(flat: Any, device: Any) -> Any:
    """``flat`` (the inputs, float64) as a torch tensor on ``device``, or ``None`` when the attack stays in numpy."""
    if device is None:
        return None
    import torch

    return torch.as_tensor(flat, dtype=torch.float64, device=device)


def _labels_checked(label_model: LabelModel, y: Any, tgt: Any) -> Any:
    """The model as the attack queries it: labels beyond its score width (once known) are an error.

    Without ``n_classes`` the width is learnt from the first scores; the check comes before any label is
    used, so a label 12 on a 10-class model is never taken for "already misclassified".
    """
    if label_model.n_classes is not None:
        return label_model

    def labels(batch: Any) -> Any:
        out = label_model(batch)
        check_labels_fit(label_model.score_width, {"y0": y, "target": tgt})
        return out

    return labels
