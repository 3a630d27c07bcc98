"""ART (adversarial-robustness-toolbox) decision-based peers: HopSkipJump, SignOPT and GeoDA.

Each attacks one input at a time, so the harness runs them with groups of one in the monitor's exact owner
mode. The model is handed to ART as a ``BlackBoxClassifier`` whose predict function is the monitor returning
one-hot labels, so ART sees hard labels only and every sample it predicts is a counted query. None has a
hard query cap (SignOPT has a soft one), so the monitor stops them at the budget (``BudgetExhausted``); the
iteration limits below are set high enough that the budget, not the iteration count, is what ends a run.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

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


@contextmanager
def _inside(folder: Path) -> Iterator[None]:
    """Run the block with ``folder`` as the working directory (ART's GeoDA saves its DCT basis to the cwd)."""
    folder.mkdir(parents=True, exist_ok=True)
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _geoda_basis(sub_dim: int, res: int, dtype: type = np.float64) -> np.ndarray:
    """The ``(res², sub_dim²)`` 2-D DCT basis ART's GeoDA builds (row ``u·sub_dim + v`` is cos_u(x)·cos_v(y),
    orthonormal DCT-II), made here because ART 1.20 builds it with ``np.mat``, which NumPy 2 removed; GeoDA loads
    a saved one instead of building it. Computed in float64 one frequency ``u`` at a time and stored as ``dtype``:
    the suite saves float32, the type GeoDA casts it to on loading (at 224² and ``sub_dim`` 75 that is 1.1 GB)."""
    n = max(res, sub_dim)
    k, x = np.arange(sub_dim)[:, None], np.arange(res)[None, :]
    cos = np.sqrt(np.where(k == 0, 1.0, 2.0) / n) * np.cos((2 * x + 1) * k * np.pi / (2 * n))  # (sub_dim, res)
    out = np.empty((sub_dim, sub_dim, res, res), dtype=dtype)
    for u in range(sub_dim):
        out[u] = np.einsum("vy,x->vyx", cos, cos[u])
    return out.reshape(sub_dim * sub_dim, res * res).T


#: ART's GeoDA plans at least this many queries: below 300 its schedule has no iteration (it fails on an empty
#: plan); the monitor stops a run planned for more at the budget.
GEODA_MIN_PLAN = 300


#: GeoDA's binary search stops once the bracket is this short (L2 on the [0, 1] scale). ART's default, 0.1, is a
#: tenth of a typical MNIST distance and about twice a CIFAR-10 one, so every point GeoDA returns would lie up to
#: that far beyond the boundary; 1e-4 is the tolerance of the GeoDA authors' code, and costs ~10 more queries per
#: search.
GEODA_BIN_SEARCH_TOL = 1e-4


@dataclass
class ArtGeoDA:
    """ART ``GeoDA`` (L2; Rahmati et al., CVPR 2020): low-frequency (DCT) probes at the boundary point and a
    geometric step, library defaults except the binary search's tolerance (:data:`GEODA_BIN_SEARCH_TOL`).

    ART's GeoDA attacks untargeted only and square images only (it is unavailable elsewhere). It *plans* its
    queries from ``max_iter`` (set to the budget): a few iterations whose probe counts grow geometrically. What
    a run made for 20k did by 1k is then not what GeoDA does with 1k, so the suite runs it once per budget
    (``run_suite --max-budget B``, one tag per budget) and the headline reads each column from the runs made
    for it (``headline --planned art-geoda=geoda-{B}``).
    """

    name: str = "art-geoda"
    family: Family = "peer"
    group_size: int = 1
    attribution: Attribution = "owner"
    hard_budget: bool = False
    batch_size: int = 64
    bin_search_tol: float = GEODA_BIN_SEARCH_TOL
    sub_dim: int | None = None  # the DCT block's side; None: ART's default, 10

    def unavailable(self) -> str | None:
        return _art_missing()

    def applicable(self, batch: Batch) -> str | None:
        """Why ART's GeoDA cannot attack this batch (``None``: it can)."""
        if batch.target is not None:
            return "ART's GeoDA attacks untargeted only"
        shape = batch.x0.shape[1:]
        if len(shape) != 3 or shape[1] != shape[2]:
            return f"ART's GeoDA needs square images (C, H, H), got inputs of shape {shape}"
        return None

    def run(self, monitor: QueryMonitor | None, batch: Batch, budget: int, seed: int) -> list[Reported]:
        why = self.applicable(batch)
        if why is not None:
            raise ValueError(why)
        from art.attacks.evasion import GeoDA

        assert monitor is not None and len(batch) == 1
        seed_everything(seed)
        classifier = _classifier(monitor, batch)
        classifier.channels_first = True  # type: ignore[attr-defined]  # GeoDA reads it; BlackBoxClassifier lacks it
        attack = GeoDA(
            classifier,
            batch_size=self.batch_size,
            norm=2,
            max_iter=max(budget, GEODA_MIN_PLAN),
            bin_search_tol=self.bin_search_tol,
            verbose=False,
            **({} if self.sub_dim is None else {"sub_dim": self.sub_dim}),
        )
        try:
            with _inside(Path.home() / ".cache" / "zeroopt" / "art-geoda"):
                res = batch.x0.shape[-1]
                basis = Path(f"2d_dct_basis_{attack.sub_dim}_{res}.npy")  # the name GeoDA looks for
                if not basis.exists():
                    np.save(basis, _geoda_basis(attack.sub_dim, res, np.float32))
                x_adv = attack.generate(batch.x0, y=one_hot(batch.y0, batch.n_classes))
        except BudgetExhausted:
            return [Reported(note="stopped by the monitor at the budget")]
        return [Reported(x_adv=x_adv[0], note="finished its planned iterations")]
