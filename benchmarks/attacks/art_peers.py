"""ART (adversarial-robustness-toolbox) decision-based peers: HopSkipJump and SignOPT.

Both attack one input at a time, so the harness runs them with groups of one in the monitor's exact owner
mode. The model is handed to ART as a ``BlackBoxClassifier`` whose predict function is the monitor returning
one-hot labels, so ART sees hard labels only and every sample it predicts is a counted query. Neither has a
hard query cap (SignOPT has a soft one), so the monitor stops them at the budget (``BudgetExhausted``); the
iteration limits below are set high enough that the budget, not the iteration count, is what ends a run.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from benchmarks.attacks.base import Attribution, Batch, Family, Reported, one_hot, seed_everything
from benchmarks.monitor import BudgetExhausted, QueryMonitor


def _art_missing() -> str | None:
    if importlib.util.find_spec("art") is None:
        return "adversarial-robustness-toolbox is not installed (pip install '.[peers]')"
    return None


@contextmanager
def _seeded_fresh_random_states(seed: int) -> Iterator[None]:
    """Make ``np.random.RandomState()`` (no seed) reproducible inside the block.

    ART's HopSkipJump draws its random starting images from a fresh, unseeded ``np.random.RandomState()``
    (OS entropy), so seeding the global RNG does not make it reproducible. Inside the block an unseeded
    ``RandomState`` is seeded from ``seed`` instead; everything else is unchanged.
    """
    original = np.random.RandomState
    draws = np.random.default_rng(seed)

    class _Seeded(original):  # type: ignore[misc, valid-type]
        def __init__(self, state: object = None) -> None:
            super().__init__(int(draws.integers(2**32)) if state is None else state)

    np.random.RandomState = _Seeded  # type: ignore[misc]
    try:
        yield
    finally:
        np.random.RandomState = original  # type: ignore[misc]


def _classifier(monitor: QueryMonitor, batch: Batch, n_classes: int | None = None) -> object:
    from art.estimators.classification import BlackBoxClassifier

    k = n_classes or batch.n_classes
    return BlackBoxClassifier(
        predict_fn=lambda x: one_hot(monitor(x), k),
        input_shape=tuple(batch.x0.shape[1:]),
        nb_classes=k,
        clip_values=batch.bounds,
    )


@dataclass
class ArtHopSkipJump:
    """ART ``HopSkipJump`` (L2), library defaults except the iteration cap and no progress bar."""

    name: str = "art-hsj"
    family: Family = "peer"
    group_size: int = 1
    attribution: Attribution = "owner"
    hard_budget: bool = False
    batch_size: int = 100

    def unavailable(self) -> str | None:
        return _art_missing()

    def run(self, monitor: QueryMonitor | None, batch: Batch, budget: int, seed: int) -> list[Reported]:
        from art.attacks.evasion import HopSkipJump

        assert monitor is not None and len(batch) == 1
        seed_everything(seed)
        attack = HopSkipJump(
            _classifier(monitor, batch),
            batch_size=self.batch_size,
            targeted=batch.target is not None,
            norm=2,
            max_iter=budget,  # never the binding limit: every iteration queries more than once
            verbose=False,
        )
        # The true label is part of the threat model (ours gets y0 too): pass it instead of spending a query.
        kwargs: dict[str, np.ndarray] = {"y": one_hot(batch.y0, batch.n_classes)}
        if batch.target is not None:
            assert batch.starts is not None
            kwargs = {"y": one_hot(batch.target, batch.n_classes), "x_adv_init": batch.starts[:, 0]}
        try:
            with _seeded_fresh_random_states(seed):
                x_adv = attack.generate(batch.x0, **kwargs)
        except BudgetExhausted:
            return [Reported(note="stopped by the monitor at the budget")]
        return [Reported(x_adv=x_adv[0], note="finished within the budget")]


@dataclass
class ArtSignOPT:
    """ART ``SignOPTAttack``, library defaults; its soft ``query_limit`` is set to the budget.

    ART refuses binary classifiers for SignOPT ("not yet tested for binary classification"); a binary model is
    presented to it with a third, never predicted, class. The hard-label answers are unchanged.
    """

    name: str = "art-signopt"
    family: Family = "peer"
    group_size: int = 1
    attribution: Attribution = "owner"
    hard_budget: bool = False

    def unavailable(self) -> str | None:
        return _art_missing()

    def run(self, monitor: QueryMonitor | None, batch: Batch, budget: int, seed: int) -> list[Reported]:
        from art.attacks.evasion import SignOPTAttack

        assert monitor is not None and len(batch) == 1
        seed_everything(seed)
        targeted = batch.target is not None
        attack = SignOPTAttack(
            _classifier(monitor, batch, n_classes=max(3, batch.n_classes)),
            targeted=targeted,
            max_iter=budget,  # never the binding limit
            query_limit=budget,
            verbose=False,
        )
        kwargs: dict[str, np.ndarray] = {"y": batch.y0}
        if targeted:
            assert batch.starts is not None and batch.target is not None
            kwargs = {"y": batch.target, "x_init": batch.starts[0]}
        try:
            x_adv = attack.generate(batch.x0, **kwargs)
        except BudgetExhausted:
            return [Reported(note="stopped by the monitor at the budget")]
        return [Reported(x_adv=x_adv[0], note="stopped by its own query_limit or convergence")]
