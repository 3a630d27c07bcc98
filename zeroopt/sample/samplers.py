"""Direction samplers: where a gradient estimator probes.

Each sampler returns ``q`` directions as a ``(q, d)`` array and a ``scale`` such that
``scale * E[u u^T] = I``, which makes the forward-difference estimator unbiased for the gradient of the
smoothed function whatever the distribution.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from ..core.base import DirectionSampler, SolverContext
from ..core.rowwise import row_norms

__all__ = [
    "CoordinateDirections", "GaussianDirections", "SphereDirections", "make_sampler",
    "register_sampler", "sampler_names",
]


@dataclass(frozen=True)
class GaussianDirections:
    """u ~ N(0, I) — Nesterov–Spokoiny's choice; ‖u‖ ≈ √d."""

    shape_free: ClassVar[bool] = True

    def sample(self, rng: np.random.Generator, q: int, d: int, iteration: int) -> NDArray[np.float64]:
        return rng.standard_normal((q, d))

    def scale(self, d: int) -> float:
        return 1.0


@dataclass(frozen=True)
class SphereDirections:
    """u uniform on the unit sphere — the OPT/Sign-OPT reference code's choice; a probe moves exactly β."""

    shape_free: ClassVar[bool] = True

    def sample(self, rng: np.random.Generator, q: int, d: int, iteration: int) -> NDArray[np.float64]:
        u = rng.standard_normal((q, d))
        u /= row_norms(u, keepdims=True)
        return u

    def scale(self, d: int) -> float:
        return float(d)


@dataclass(frozen=True)
class CoordinateDirections:
    """Canonical basis vectors, drawn at random without replacement or in cyclic order."""

    cyclic: bool = False

    shape_free: ClassVar[bool] = True

    def sample(self, rng: np.random.Generator, q: int, d: int, iteration: int) -> NDArray[np.float64]:
        q = min(q, d)
        if self.cyclic:
            idx = (iteration * q + np.arange(q)) % d
        else:
            idx = rng.choice(d, size=q, replace=False)
        u = np.zeros((q, d))
        u[np.arange(q), idx] = 1.0
        return u

    def scale(self, d: int) -> float:
        return float(d)


SamplerFactory = Callable[["SolverContext | None"], DirectionSampler]

_SAMPLERS: dict[str, SamplerFactory] = {
    "gaussian": lambda context: GaussianDirections(),
    "sphere": lambda context: SphereDirections(),
    "coordinate": lambda context: CoordinateDirections(cyclic=False),
    "cyclic": lambda context: CoordinateDirections(cyclic=True),
}


def register_sampler(name: str, factory: SamplerFactory) -> None:
    """Make ``directions=name`` available to every solver with a ``directions`` option.

    ``factory(context)`` builds the sampler from the :class:`~zeroopt.SolverContext` of the problem (``None``
    when only the name is being checked), so a sampler that needs the input's array shape — a low-frequency
    basis of an image, say — reads ``context.shape``.
    """
    if name in _SAMPLERS:
        raise ValueError(f"a direction sampler named {name!r} is already registered")
    _SAMPLERS[name] = factory


def sampler_names() -> list[str]:
    """Names of the registered direction samplers."""
    return sorted(_SAMPLERS)


def make_sampler(name: str, context: SolverContext | None = None) -> DirectionSampler:
    """Sampler by name (``"gaussian"``, ``"sphere"``, ``"coordinate"``, ``"cyclic"`` or a registered one)."""
    if name not in _SAMPLERS:
        raise ValueError(f"unknown direction distribution {name!r}; choose one of {sampler_names()}")
    return _SAMPLERS[name](context)
