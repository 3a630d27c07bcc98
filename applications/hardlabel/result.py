"""What an attack returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["AttackResult"]


@dataclass
class AttackResult:
    """Per-input outcome of :func:`applications.hardlabel.attack`.

    Attributes
    ----------
    x_adv
        ``(N, *input_shape)`` best adversarial example found for each input (the model labelled exactly
        this point adversarial); the original input where none was found.
    distortion
        ``(N,)`` distance ‖x_adv − x0‖ in the attack's distance; ``inf`` where no adversarial was found, 0 for
        inputs the model already misclassified.
    queries
        ``(N,)`` model queries spent on each input (never above the budget).
    success
        ``(N,)`` whether an adversarial example was found (and, unless ``Verify(queries=0)``, labelled adversarial again
        by the final re-check).
    trace
        Per input, a ``(k, 2)`` array of (queries, best distortion so far) at every improvement, among the
        points the model labelled adversarial during the search (the final re-check returns a point 0.1% to
        0.3% farther, with the default ``Verify(queries=3)``).
    model_calls
        Number of calls made to the model for the whole batch.
    wall_time, model_time
        Seconds for the whole attack, and the part of them spent inside the model.
    solver_results
        Per input, the zeroopt ``OptimizeResult`` of the boundary-distance minimisation (of its last restart;
        ``None`` when the input needed none), for diagnostics.
    norm
        The distance's name: ``"L2"``, ``"L∞"``, ... (:attr:`.distance.Distance.name`).
    """

    x_adv: NDArray[np.float32]
    distortion: NDArray[np.float64]
    queries: NDArray[np.int64]
    success: NDArray[np.bool_]
    trace: list[NDArray[np.float64]]
    model_calls: int
    wall_time: float
    model_time: float = 0.0
    solver_results: list[Any] = field(default_factory=list, repr=False)
    norm: str = "L2"

    @classmethod
    def from_images(cls, images, shape, solver_results, model_calls, wall_time, model_time, verified, norm="L2"):  # type: ignore[no-untyped-def]
        x_adv = np.stack(
            [
                (img.best_point if img.best_point is not None else img.x0.astype(np.float32)).reshape(shape)
                for img in images
            ]
        ).astype(np.float32)
        return cls(
            x_adv=x_adv,
            distortion=np.array([img.best_distance for img in images], dtype=float),
            queries=np.array([img.ledger.spent for img in images], dtype=np.int64),
            success=np.asarray(verified, dtype=bool),
            trace=[np.array(img.trace, dtype=float).reshape(-1, 2) for img in images],
            model_calls=model_calls,
            wall_time=wall_time,
            model_time=model_time,
            solver_results=list(solver_results),
            norm=norm,
        )

    def distortion_at(self, queries: int) -> NDArray[np.float64]:
        """Best distortion each input had reached after ``queries`` queries (``inf`` if none yet)."""
        out = np.full(len(self.trace), np.inf)
        for i, tr in enumerate(self.trace):
            reached = tr[tr[:, 0] <= queries]
            if len(reached):
                out[i] = reached[-1, 1]
        return out

    def summary(self) -> str:
        """A one-line summary: success rate, median/mean L2 of successes, queries."""
        ok = self.success
        d = self.distortion[ok]
        # Over the successes only; with none there is no distortion to report (never a NaN).
        n = self.norm
        stats = f"median {n} {np.median(d):.4f}, mean {n} {np.mean(d):.4f}" if len(d) else "no distortion to report"
        return (
            f"{int(ok.sum())}/{len(ok)} adversarial, {stats}, "
            f"{int(self.queries.sum())} queries in {self.model_calls} model calls, {self.wall_time:.1f} s"
        )
