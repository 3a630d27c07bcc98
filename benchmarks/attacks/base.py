"""What an attack adapter is: the common shape every attack in the suite is run through.

An adapter turns one attack implementation (ours, a peer library's, the white-box floor) into
``run(monitor, batch, budget, seed) -> list[Reported]``. Black-box adapters must query the model only through
the :class:`~benchmarks.monitor.QueryMonitor` they are given; the harness reads distortions and query counts
from the monitor, and keeps what the adapter reports only as the attack's own claim, to be cross-checked.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np
import torch

from benchmarks.monitor import QueryMonitor

Family = Literal["ours", "peer", "white-box"]
Attribution = Literal["owner", "positional", "nearest", "none"]


@dataclass
class Batch:
    """The inputs of one attack call.

    Attributes
    ----------
    x0 : numpy.ndarray
        Originals ``(N, *shape)`` float32.
    y0 : numpy.ndarray
        True labels ``(N,)`` (every original is classified correctly).
    target : numpy.ndarray or None
        Target labels ``(N,)`` for a targeted attack.
    starts : numpy.ndarray or None
        For a targeted attack, a pool ``(N, P, *shape)`` of correctly classified images of each input's target
        class (not among the attacked images): attacks that search over starting examples get all ``P``,
        attacks that take one starting point get ``starts[:, 0]``.
    bounds : tuple of float or of numpy.ndarray
        Valid input range.
    n_classes : int
        Number of classes of the model.
    torch_model : torch.nn.Module or None
        The differentiable model, for white-box attacks only.
    piecewise_constant : bool
        Whether the model is a tree ensemble (told to our attack, which sees it through the monitor's callable).
    """

    x0: np.ndarray
    y0: np.ndarray
    target: np.ndarray | None
    starts: np.ndarray | None
    bounds: tuple[Any, Any]  # scalars, or flat per-feature arrays
    n_classes: int
    torch_model: torch.nn.Module | None = None
    piecewise_constant: bool = False

    def __len__(self) -> int:
        return len(self.x0)

    def take(self, idx: np.ndarray | list[int]) -> Batch:
        """The sub-batch of the given positions."""
        idx = np.asarray(idx)
        return Batch(
            x0=self.x0[idx],
            y0=self.y0[idx],
            target=None if self.target is None else self.target[idx],
            starts=None if self.starts is None else self.starts[idx],
            bounds=self.bounds,
            n_classes=self.n_classes,
            torch_model=self.torch_model,
            piecewise_constant=self.piecewise_constant,
        )


@dataclass
class Reported:
    """What an attack itself claims for one input (the monitor's record is what the tables use).

    Attributes
    ----------
    x_adv : numpy.ndarray or None
        The attack's returned adversarial (``None`` if it was stopped at the budget before returning).
    queries : int or None
        The attack's own query count, ``None`` where it keeps none.
    note : str
        Anything worth keeping (an exception it raised, why it stopped).
    """

    x_adv: np.ndarray | None = None
    queries: int | None = None
    note: str = ""


class Attack(Protocol):
    """An attack adapter.

    Attributes
    ----------
    name : str
        Unique name in the suite (also the result directory name), e.g. ``"ours-rgf"``, ``"art-hsj"``.
    family : {"ours", "peer", "white-box"}
        Which side of the comparison it is on.
    group_size : int
        How many inputs one ``run`` call attacks.
    attribution : {"owner", "positional", "nearest", "none"}
        How the monitor charges queries to inputs (see :mod:`benchmarks.monitor`): ``"owner"`` needs
        ``group_size == 1``; ``"none"`` is for the white-box attack, which gets no monitor.
    hard_budget : bool
        Whether the attack enforces the query budget itself. If so, the monitor only records any overshoot
        (reported as a violation); if not, the monitor refuses queries past the budget, which stops the attack.
    """

    name: str
    family: Family
    group_size: int
    attribution: Attribution
    hard_budget: bool

    def unavailable(self) -> str | None:
        """``None`` if the attack can run here, else why not (e.g. the package is not installed)."""
        ...

    def run(self, monitor: QueryMonitor | None, batch: Batch, budget: int, seed: int) -> list[Reported]:
        """Attack every input of ``batch`` through ``monitor`` (``None`` for white-box) within ``budget``."""
        ...


def seed_everything(seed: int) -> None:
    """Seed the global RNGs that peer libraries draw from (they take no generator argument)."""
    np.random.seed(seed % 2**32)  # noqa: NPY002 -- ART and foolbox draw from the legacy global RNG
    torch.manual_seed(seed)


def one_hot(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """Float32 one-hot rows: how a hard-label model answers a library that expects scores."""
    out = np.zeros((len(labels), n_classes), dtype=np.float32)
    out[np.arange(len(labels)), labels] = 1.0
    return out


def describe(attack: Attack) -> dict[str, Any]:
    """The adapter's settings as plain data (recorded with every run)."""
    out: dict[str, Any] = {"name": attack.name}
    if dataclasses.is_dataclass(attack):
        for f in dataclasses.fields(attack):
            value = getattr(attack, f.name)
            if callable(value):
                value = f"{getattr(value, '__module__', '?')}:{getattr(value, '__qualname__', repr(value))}"
            out[f.name] = value
    return out
