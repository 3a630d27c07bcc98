"""The peers of the L∞ study (:mod:`benchmarks.studies.linf`): RayS's reference code and ART's HopSkipJump.

Each runs on one input through :class:`CappedLabels`, the hard-label view that counts every sample as one query,
stops the run at the budget (:class:`Exhausted`) and keeps the best L∞ adversarial among the queried points per
query count. Targeted runs (a ``target`` class and a ``start`` image of it) are HopSkipJump's, ART's and foolbox's,
started from that image as the suite starts them; RayS's search is untargeted (:data:`TARGETED`). RayS (Chen & Gu,
KDD 2020) is its reference code ``RayS_Single.py``, loaded at run time from ``<shared>/peers/RayS``
(``$ZEROOPT_SHARED`` or ``../shared``), never copied here.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["PEERS", "TARGETED", "CappedLabels", "Exhausted", "PeerRun", "best_within", "rays_dir", "run_art_hsj",
           "run_foolbox_hsj", "run_rays"]


class Exhausted(Exception):
    """The budget is spent: raised into the peer to stop it."""


class CappedLabels:
    """One input's hard-label view for a peer: counts samples, keeps the best L∞ adversarial per query count
    (adversarial: any label but ``y0``, or ``target`` where one is given)."""

    def __init__(self, labels: Callable[[NDArray[Any]], NDArray[np.int64]], x0: NDArray[Any], y0: int,
                 budget: int, n_classes: int, target: int | None = None) -> None:
        self.labels, self.x0, self.y0, self.target = labels, x0.astype(np.float64), y0, target
        self.budget, self.n_classes = budget, n_classes
        self.spent, self.best, self.trace = 0, np.inf, [(0, np.inf)]

    def __call__(self, x: NDArray[Any]) -> NDArray[np.float64]:
        x = np.asarray(x, dtype=np.float32)
        take = min(len(x), self.budget - self.spent)
        lab = np.asarray(self.labels(x[:take])) if take else np.empty(0, dtype=np.int64)
        for k in range(take):
            self.spent += 1
            if (lab[k] != self.y0) if self.target is None else (lab[k] == self.target):
                d = float(np.abs(x[k].astype(np.float64) - self.x0).max())
                if d < self.best:
                    self.best = d
                    self.trace.append((self.spent, d))
        if take < len(x):
            raise Exhausted
        return np.eye(self.n_classes)[lab]

    def at(self, budget: int) -> float:
        """The best L∞ distance reached within ``budget`` queries (``inf``: none)."""
        return best_within(self.trace, budget)

    def queries_to(self, eps: float) -> int | None:
        """The first query count at which the best L∞ distance is ≤ ``eps`` (``None``: never)."""
        return next((q for q, d in self.trace if d <= eps), None)


def best_within(trace: list[tuple[int, float]] | list[list[float]], budget: int) -> float:
    """The best distance of a record ``[(queries, best distance), ...]`` that starts at ``(0, inf)``, within
    ``budget`` queries: a peer's live record (:meth:`CappedLabels.at`) or one read back from JSON."""
    return min(d for q, d in trace if q <= budget)


#: A peer's run: ``(labels, x0, y0, budget, n_classes, bounds, seed, target, start)``, ``target`` and ``start``
#: (an image of the target class) ``None`` for an untargeted run.
PeerRun = Callable[[Callable[[NDArray[Any]], NDArray[np.int64]], NDArray[Any], int, int, int,
                    tuple[float, float], int, int | None, NDArray[Any] | None], CappedLabels]


def run_art_hsj(labels: Callable[[NDArray[Any]], NDArray[np.int64]], x0: NDArray[Any], y0: int, budget: int,
                n_classes: int, bounds: tuple[float, float], seed: int, target: int | None = None,
                start: NDArray[Any] | None = None) -> CappedLabels:
    """ART's HopSkipJump (L∞, library defaults but the iteration cap) on one input, stopped at ``budget``;
    targeted from ``start`` where a ``target`` is given."""
    from art.attacks.evasion import HopSkipJump
    from art.estimators.classification import BlackBoxClassifier

    capped = CappedLabels(labels, x0, y0, budget, n_classes, target)
    clf = BlackBoxClassifier(predict_fn=capped, input_shape=tuple(x0.shape), nb_classes=n_classes,
                             clip_values=bounds)
    np.random.seed(seed)  # noqa: NPY002 - ART draws its starts from numpy's global generator
    hsj = HopSkipJump(clf, targeted=target is not None, norm=np.inf, max_iter=budget, verbose=False)
    aim = {"y": np.eye(n_classes)[[y0]]} if target is None else {
        "y": np.eye(n_classes)[[target]], "x_adv_init": np.asarray(start, dtype=np.float32)[None]}
    try:
        hsj.generate(x0[None].astype(np.float32), **aim)
    except Exhausted:
        pass
    return capped


def run_foolbox_hsj(labels: Callable[[NDArray[Any]], NDArray[np.int64]], x0: NDArray[Any], y0: int, budget: int,
                    n_classes: int, bounds: tuple[float, float], seed: int, target: int | None = None,
                    start: NDArray[Any] | None = None) -> CappedLabels:
    """foolbox 3's HopSkipJumpAttack (``constraint="linf"``, library defaults but the step cap) on one input,
    stopped at ``budget``; its default start (blended uniform noise) is counted too. Targeted from ``start``
    where a ``target`` is given."""
    import foolbox as fb
    import torch

    capped = CappedLabels(labels, x0, y0, budget, n_classes, target)

    class HardLabels(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.as_tensor(capped(x.detach().cpu().numpy()), dtype=torch.float32)

    np.random.seed(seed)  # noqa: NPY002 - foolbox draws from numpy's and torch's global generators
    torch.manual_seed(seed)
    model = fb.PyTorchModel(HardLabels().eval(), bounds=tuple(float(b) for b in bounds), device="cpu")
    attack = fb.attacks.HopSkipJumpAttack(steps=budget, constraint="linf")
    criterion = (fb.criteria.Misclassification(torch.tensor([y0])) if target is None
                 else fb.criteria.TargetedMisclassification(torch.tensor([target])))
    aim = {} if start is None or target is None else {
        "starting_points": torch.as_tensor(np.asarray(start, dtype=np.float32)[None])}
    try:
        attack.run(model, torch.as_tensor(x0[None].astype(np.float32)), criterion, **aim)
    except Exhausted:
        pass
    return capped


def rays_dir() -> Path:
    """Where RayS's reference code is read from: ``<shared>/peers/RayS`` (``$ZEROOPT_SHARED`` or ``../shared``)."""
    from applications.datasets import shared_dir

    return shared_dir() / "peers" / "RayS"


def run_rays(labels: Callable[[NDArray[Any]], NDArray[np.int64]], x0: NDArray[Any], y0: int, budget: int,
             n_classes: int, bounds: tuple[float, float], seed: int, target: int | None = None,
             start: NDArray[Any] | None = None) -> CappedLabels:
    """RayS's reference code (L∞, ``early_stopping=False``) on one input, stopped at ``budget``.

    Parameters
    ----------
    labels : callable
        The model's hard labels for a batch of inputs shaped like ``x0``.
    x0 : ndarray
        The input, without a batch axis.
    y0 : int
        Its true label (the attack is untargeted).
    budget : int
        The hard cap on queries: :class:`Exhausted` stops the run there, also inside RayS's binary search,
        which may pass its own ``query_limit``.
    n_classes : int
        The number of classes.
    bounds : tuple of float
        The input box; RayS clamps its points to it (its code's default is [0, 1]).
    seed : int
        Seeds numpy's and torch's global generators before the run.
    target, start : None
        Untargeted only: a ``target`` is refused.

    Returns
    -------
    CappedLabels
        The run's record of queries and best L∞ distances.
    """
    import torch

    if target is not None:
        raise ValueError("RayS's search is untargeted: leave it out of targeted experiments (TARGETED)")
    folder = rays_dir()
    if not (folder / "RayS_Single.py").exists():
        raise FileNotFoundError(f"RayS's reference code is not at {folder}; set ZEROOPT_SHARED")
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    reference = importlib.import_module("RayS_Single").RayS
    lo, hi = bounds

    class BoxedRayS(reference):  # type: ignore[misc, valid-type]
        def get_xadv(self, x: Any, v: Any, d: Any, lb: float = lo, rb: float = hi) -> Any:
            return super().get_xadv(x, v, d, lb, rb)

    capped = CappedLabels(labels, x0, y0, budget, n_classes)

    class Model:
        def predict_label(self, x: Any) -> Any:
            return torch.as_tensor(capped(x.detach().cpu().numpy()).argmax(axis=1))

    np.random.seed(seed)  # noqa: NPY002 - the reference code seeds and draws from numpy's global generator
    torch.manual_seed(seed)
    cuda = torch.Tensor.cuda
    torch.Tensor.cuda = lambda self, *a, **k: self  # its tensors stay with ours on the CPU (the model is numpy's)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # it prints its progress
            BoxedRayS(Model(), order=np.inf, epsilon=0.0, early_stopping=False).attack_hard_label(
                torch.as_tensor(x0[None].astype(np.float32)), torch.tensor([y0]), query_limit=budget, seed=seed)
    except Exhausted:
        pass
    finally:
        torch.Tensor.cuda = cuda  # type: ignore[method-assign]
    return capped


#: The selectable peers: name → (row label, runner).
PEERS: dict[str, tuple[str, PeerRun]] = {
    "rays": ("RayS (reference code)", run_rays),
    "hsj": ("ART HopSkipJump (norm=inf)", run_art_hsj),
    "fb-hsj": ("foolbox HopSkipJump (constraint=linf)", run_foolbox_hsj),
}
#: The peers that run targeted experiments (RayS's search has no target class to aim at).
TARGETED: tuple[str, ...] = ("hsj", "fb-hsj")
