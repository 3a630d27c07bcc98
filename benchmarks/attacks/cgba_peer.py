"""The CGBA and CGBA-H reference code (Reza et al., ICCV 2023; ``../shared/peers/CGBA/``, MIT) as suite peers.

The reference code attacks one ``(1, C, H, W)`` tensor with a torch model and reads the model's top-1 label itself;
it has no query budget. Here its model is a torch module whose forward pass asks the suite's
:class:`~benchmarks.monitor.QueryMonitor` for labels and answers one-hot scores, so every sample it sends — its
label look-ups of the source and target images included — is a counted query, and the monitor stops it at the
budget (``BudgetExhausted``). It runs one input per call (the monitor's exact owner mode), with its authors'
settings: ``dim_reduc_factor`` 4 (probes in the lowest quarter of DCT frequencies per side) on ImageNet-size
inputs and 1 (the full space) on CIFAR-10's, its CGBA-H variant (``attack_method="CGBA_H"``) by default. It
draws from torch's and numpy's global generators, seeded per run.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks.attacks.base import Attribution, Batch, Family, Reported, one_hot, seed_everything
from benchmarks.monitor import BudgetExhausted, QueryMonitor

__all__ = ["CGBA", "CGBA_METHODS", "cgba_folder", "reduction_for"]

#: The reference code's two attacks: the semicircular boundary search (CGBA) and its hybrid (CGBA-H).
CGBA_METHODS = {"cgba": "CGBA", "cgba-h": "CGBA_H"}
#: Image sides up to this are attacked in the full space, larger ones in the quarter band (its authors' settings:
#: 1 on CIFAR-10's 32, 4 on ImageNet's 224).
FULL_SPACE_SIDE = 32
#: The reference code's ImageNet dimension reduction: the lowest 1/4 of frequencies along each side.
IMAGENET_REDUCTION = 4
#: Iterations asked of the reference code: more than any budget allows, so the monitor's budget is what stops it.
UNBOUNDED_ITERATIONS = 10**6


def cgba_folder() -> Path:
    """``shared/peers/CGBA`` (``ZEROOPT_SHARED`` or ``../shared`` beside the checkout)."""
    from applications.datasets import shared_dir

    return Path(shared_dir()) / "peers" / "CGBA"


def reduction_for(shape: tuple[int, ...]) -> int:
    """The reference code's ``dim_reduc_factor`` for inputs of ``shape``, as its authors set it per dataset."""
    return 1 if max(shape[-2:]) <= FULL_SPACE_SIDE else IMAGENET_REDUCTION


@contextlib.contextmanager
def _reference_module() -> Iterator[Any]:
    """The reference code's ``proposed_attack`` module, imported with its folder first on the path (it imports a
    top-level ``utils``), and that ``utils`` taken out of ``sys.modules`` again afterwards."""
    folder = cgba_folder()
    if not (folder / "proposed_attack.py").exists():
        raise FileNotFoundError(f"the CGBA reference code is not at {folder} (set ZEROOPT_SHARED to the shared folder)")
    saved = {name: sys.modules.pop(name) for name in ("utils", "proposed_attack") if name in sys.modules}
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module("proposed_attack")
    finally:
        sys.path.remove(str(folder))
        for name in ("utils", "proposed_attack"):
            sys.modules.pop(name, None)
        sys.modules.update(saved)


class _MonitoredModule(torch.nn.Module):
    """A torch module answering one-hot hard labels from the monitor (on the device the reference code uses)."""

    def __init__(self, monitor: QueryMonitor, n_classes: int) -> None:
        super().__init__()
        self.monitor, self.n_classes = monitor, n_classes

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        labels = self.monitor(x.detach().to("cpu", torch.float32).numpy().copy())
        return torch.from_numpy(one_hot(labels, self.n_classes)).to(x.device)


@dataclass
class CGBA:
    """The CGBA reference code on one input per call, stopped by the monitor at the budget.

    Parameters
    ----------
    name : str
        ``"cgba-h"`` (the hybrid, its authors' recommended attack) or ``"cgba"``.
    dim_reduc_factor : int, optional
        Its frequency reduction per side; ``None``: :func:`reduction_for` the input's shape.
    """

    name: str = "cgba-h"
    dim_reduc_factor: int | None = None
    family: Family = "peer"
    group_size: int = 1
    attribution: Attribution = "owner"
    hard_budget: bool = False

    def unavailable(self) -> str | None:
        if self.name not in CGBA_METHODS:
            return f"unknown CGBA variant {self.name!r}; choose one of {sorted(CGBA_METHODS)}"
        if not (cgba_folder() / "proposed_attack.py").exists():
            return f"the CGBA reference code is not at {cgba_folder()}"
        return None

    def applicable(self, batch: Batch) -> str | None:
        """Its code draws 3-channel square noise: other inputs are refused before any query."""
        shape = batch.x0.shape[1:]
        if len(shape) != 3 or shape[0] != 3 or shape[1] != shape[2]:
            return f"the CGBA reference code attacks 3-channel square images, not inputs of shape {tuple(shape)}"
        return None

    def run(self, monitor: QueryMonitor | None, batch: Batch, budget: int, seed: int) -> list[Reported]:
        assert monitor is not None and len(batch) == 1
        seed_everything(seed)
        device = "cuda" if torch.cuda.is_available() else "cpu"  # where the reference code puts its own tensors
        shape = batch.x0.shape[1:]
        lo = torch.full((1, *shape), float(np.min(batch.bounds[0])), device=device)
        hi = torch.full((1, *shape), float(np.max(batch.bounds[1])), device=device)
        source = torch.from_numpy(np.ascontiguousarray(batch.x0[:1])).to(device)
        target = None
        if batch.target is not None:
            assert batch.starts is not None
            target = torch.from_numpy(np.ascontiguousarray(batch.starts[:1, 0])).to(device)
        model = _MonitoredModule(monitor, batch.n_classes)
        factor = reduction_for(shape) if self.dim_reduc_factor is None else self.dim_reduc_factor
        with _reference_module() as ref, contextlib.redirect_stdout(None):
            try:
                attack = ref.Proposed_attack(model, source, [0.0] * 3, [1.0] * 3, lo, hi, tar_img=target,
                                             dim_reduc_factor=factor, attack_method=CGBA_METHODS[self.name],
                                             iteration=UNBOUNDED_ITERATIONS, verbose_control="No")
                x_adv = attack.Attack()[0]
            except BudgetExhausted:
                return [Reported(note="stopped by the monitor at the budget")]
        return [Reported(x_adv=x_adv.detach().cpu().numpy()[0], note="finished within the budget")]
