"""Direction samplers: where a gradient estimator probes.

Each sampler returns ``q`` directions as a ``(q, d)`` array and a ``scale`` such that
``scale * E[u u^T] = I``, which makes the forward-difference estimator unbiased for the gradient of the
smoothed function whatever the distribution.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

__all__ = ["CoordinateDirections", "DirectionSampler", "GaussianDirections", "SphereDirections", "make_sampler"]


class DirectionSampler(Protocol):
    """Draws probe directions."""

    def sample(self, rng: np.random.Generator, q: int, d: int, iteration: int) -> NDArray[np.float64]:
        """Return ``(q, d)`` directions."""
        ...

    def scale(self, d: int) -> float:
        """Factor c with ``c * E[u u^T] = I``."""
        ...


@dataclass(frozen=True)
class GaussianDirections:
    """u ~ N(0, I) — Nesterov–Spokoiny's choice; ‖u‖ ≈ √d."""

    def sample(self, rng: np.random.Generator, q: int, d: int, iteration: int) -> NDArray[np.float64]:
        return rng.standard_normal((q, d))

    def scale(self, d: int) -> float:
        return 1.0


@dataclass(frozen=True)
class SphereDirections:
    """u uniform on the unit sphere — the OPT/Sign-OPT reference code's choice; a probe moves exactly β."""

    def sample(self, rng: np.random.Generator, q: int, d: int, iteration: int) -> NDArray[np.float64]:
        u = rng.standard_normal((q, d))
        return u / np.linalg.norm(u, axis=1, keepdims=True)

    def scale(self, d: int) -> float:
        return float(d)


@dataclass(frozen=True)
class CoordinateDirections:
    """Canonical basis vectors, drawn at random without replacement or in cyclic order."""

    cyclic: bool = False

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


def make_sampler(name: str) -> DirectionSampler:
    """Sampler by name: ``"gaussian"``, ``"sphere"``, ``"coordinate"`` or ``"cyclic"``."""
    table: dict[str, DirectionSampler] = {
        "gaussian": GaussianDirections(),
        "sphere": SphereDirections(),
        "coordinate": CoordinateDirections(cyclic=False),
        "cyclic": CoordinateDirections(cyclic=True),
    }
    if name not in table:
        raise ValueError(f"unknown direction distribution {name!r}; choose one of {sorted(table)}")
    return table[name]
