"""Test helpers shared by the test modules: a hard-label oracle over a linear model, and a driver for one
request generator (a step rule, an estimator) against it."""

from __future__ import annotations

import numpy as np

import zeroopt
from applications.hardlabel.boundary import BoundaryOracleGroup, ImageState


def linear_group(x0: np.ndarray, w: np.ndarray, b: float, budget: int) -> BoundaryOracleGroup:
    """A 2-class linear model: label 1 where w·x + b > 0; the boundary distance along θ is analytic."""
    def model(x: np.ndarray) -> np.ndarray:
        return (x.reshape(len(x), -1) @ w + b > 0).astype(np.int64)

    img = ImageState(x0, 0, zeroopt.QueryLedger(budget=budget))
    return BoundaryOracleGroup(model, [img], x0.shape, (-100.0, 100.0), default_eps=1e-6)


def drive_one(gen, group):  # type: ignore[no-untyped-def]
    """Run a request generator against input 0 of ``group``; its return value."""
    try:
        req = next(gen)
        while True:
            (resp,) = group.answer([(0, req)])
            req = gen.send(resp)
    except StopIteration as stop:
        return stop.value


class CountingHalfspace:
    """A 2-class model for whole attacks: class 1 beyond the hyperplane ``near`` from ``x`` (one input, d features,
    all 0.5) along a random unit direction ``w``; ``sizes`` records every call's batch size, so a test can count
    the batches of a size only one part of the attack sends (a search's ``n_initial`` candidates)."""

    def __init__(self, seed: int, d: int = 32, near: float = 0.3) -> None:
        rng = np.random.default_rng(seed)
        self.rng = rng  # for draws after w that a test needs from the same stream
        self.w = rng.standard_normal(d)
        self.x = np.full((1, d), 0.5)
        self.near = near
        self.sizes: list[int] = []

    def __call__(self, z: np.ndarray) -> np.ndarray:
        self.sizes.append(len(z))
        return ((z.reshape(len(z), -1) - self.x[0]) @ self.w / np.linalg.norm(self.w) > self.near).astype(np.int64)
