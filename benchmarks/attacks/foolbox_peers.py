"""foolbox 3 peers: the decision-based BoundaryAttack and HopSkipJumpAttack, and the white-box C&W L2 floor.

The black-box pair sees the model through a torch module whose forward pass asks the monitor for labels and
answers one-hot scores, so foolbox gets hard labels only and every sample is a counted query (including its
default initialisation attack, ``LinearSearchBlendedUniformNoiseAttack``). They have no query budget at all,
so the monitor stops them at the budget. foolbox advances a whole batch of inputs in lockstep (one sample
per input per model call, in input order, until the end), so they run on groups of inputs, as foolbox is
meant to be used, and the monitor attributes each call's samples by position, exactly.

C&W L2 is the white-box reference: the floor no black-box attack should beat. It runs on the differentiable
model with a binary search over its constant ``c`` (foolbox defaults: 9 search steps, initial c = 1e-3,
learning rate 1e-2, early abort), its distance is taken from its own result after verifying that the result
is adversarial, and it has no query count.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

import numpy as np
import torch

from benchmarks.attacks.base import Attribution, Batch, Family, Reported, one_hot, seed_everything
from benchmarks.monitor import BudgetExhausted, QueryMonitor


def _foolbox_missing() -> str | None:
    if importlib.util.find_spec("foolbox") is None:
        return "foolbox is not installed (pip install '.[peers]')"
    return None


class HardLabelModule(torch.nn.Module):
    """A torch module that answers one-hot hard labels obtained from a monitor."""

    def __init__(self, monitor: QueryMonitor, n_classes: int) -> None:
        super().__init__()
        self.monitor = monitor
        self.n_classes = n_classes

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        labels = self.monitor(x.detach().cpu().numpy())
        return torch.from_numpy(one_hot(labels, self.n_classes))


def _criterion(batch: Batch) -> object:
    import foolbox as fb

    if batch.target is None:
        return fb.criteria.Misclassification(torch.from_numpy(batch.y0))
    return fb.criteria.TargetedMisclassification(torch.from_numpy(batch.target))


def _run_blackbox(attack: object, monitor: QueryMonitor, batch: Batch, seed: int) -> list[Reported]:
    import foolbox as fb

    seed_everything(seed)
    model = fb.PyTorchModel(HardLabelModule(monitor, batch.n_classes).eval(), bounds=batch.bounds, device="cpu")
    kwargs = {}
    if batch.target is not None:
        assert batch.starts is not None
        kwargs["starting_points"] = torch.from_numpy(np.ascontiguousarray(batch.starts[:, 0]))
    try:
        x_adv = attack.run(model, torch.from_numpy(batch.x0), _criterion(batch), **kwargs)  # type: ignore[attr-defined]
    except BudgetExhausted:
        return [Reported(note="stopped by the monitor at the budget") for _ in range(len(batch))]
    return [Reported(x_adv=x.numpy(), note="finished within the budget") for x in x_adv]


@dataclass
class FoolboxDecision:
    """A foolbox 3 decision-based attack with default parameters (step cap raised so the budget binds).

    Parameters
    ----------
    name : str
        Name in the suite (``"fb-boundary"``, ``"fb-hsja"``).
    attack : str
        Class in ``foolbox.attacks`` (``"BoundaryAttack"``, ``"HopSkipJumpAttack"``); it must take ``steps``.
    """

    name: str
    attack: str
    family: Family = "peer"
    group_size: int = 20
    attribution: Attribution = "positional"
    hard_budget: bool = False

    def unavailable(self) -> str | None:
        return _foolbox_missing()

    def run(self, monitor: QueryMonitor | None, batch: Batch, budget: int, seed: int) -> list[Reported]:
        import foolbox as fb

        assert monitor is not None
        return _run_blackbox(getattr(fb.attacks, self.attack)(steps=budget), monitor, batch, seed)


BOUNDARY = ("fb-boundary", "BoundaryAttack")
HOPSKIPJUMP = ("fb-hsja", "HopSkipJumpAttack")


@dataclass
class CarliniWagnerL2:
    """White-box C&W L2 (foolbox 3) with a binary search over c; run on whole groups, no monitor.

    Parameters
    ----------
    steps : int
        Optimisation steps per value of c (foolbox's default is 10000; early abort usually stops far sooner).
    binary_search_steps : int
        Values of c tried per input.
    group_size : int
        Inputs per call (C&W is batched over inputs).
    """

    name: str = "cw-l2"
    family: Family = "white-box"
    group_size: int = 20
    attribution: Attribution = "none"
    hard_budget: bool = True  # no queries at all
    steps: int = 1000
    binary_search_steps: int = 9

    def unavailable(self) -> str | None:
        return _foolbox_missing()

    def run(self, monitor: QueryMonitor | None, batch: Batch, budget: int, seed: int) -> list[Reported]:
        import foolbox as fb

        if batch.torch_model is None:
            raise ValueError("C&W needs a differentiable torch model")
        seed_everything(seed)
        model = fb.PyTorchModel(batch.torch_model.eval(), bounds=batch.bounds, device="cpu")
        attack = fb.attacks.L2CarliniWagnerAttack(binary_search_steps=self.binary_search_steps, steps=self.steps)
        x_adv = attack.run(model, torch.from_numpy(batch.x0), _criterion(batch))
        return [Reported(x_adv=x.numpy(), note=f"{self.binary_search_steps}x{self.steps} steps") for x in x_adv]
