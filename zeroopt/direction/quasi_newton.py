"""A quasi-Newton direction: the estimate times L-BFGS's inverse-curvature estimate from the last steps.

A descent that follows its gradient estimate zigzags across an ill-conditioned valley and crawls along it;
what the model-based methods (BOBYQA, COBYQA) and finite-difference quasi-Newton methods gain there is
curvature. Consecutive iterations measure it at no query: the step ``s = x_{k+1} − x_k`` and the change of the
estimate ``y = g_{k+1} − g_k`` satisfy ``y ≈ ∇²f s``. :class:`QuasiNewton` keeps the last ``memory`` pairs and
hands the step rule ``H g``, ``H`` the L-BFGS inverse Hessian of those pairs (Nocedal & Wright, *Numerical
Optimization*, Algorithm 7.4, with their initial scaling ``sᵀy / yᵀy``), so a step of 1 is a Newton step of
the model. A pair whose curvature ``sᵀy`` is not positive (noise, or a concave stretch) is not kept, nor one whose
either estimate may be noise alone: under a stated precision, an estimate whose probes' differences do not rise
above the error their answers may carry (:func:`~zeroopt.step.noise.drowned`) measures no slope, and a pair from it
would steer ``H`` for the next ``memory`` iterations with curvature the noise made up. Finite-
difference quasi-Newton methods are competitive with model-based ones on smooth and noisy problems once their
difference interval suits the noise (Shi, Xuan, Oztoprak & Nocedal, SIAM J. Optim. 2023): an estimate whose
probes cover every coordinate (``CoordinateDirections`` with q ≥ d) gives it the whole gradient.

Examples
--------
>>> import numpy as np, zeroopt
>>> f = lambda x: float(x[0] ** 2 + 100 * x[1] ** 2)  # condition number 100
>>> qn = zeroopt.minimize(f, np.array([3.0, 0.3]), solver="coordinate", budget=300, seed=0, q=2, quasi_newton=10)
>>> plain = zeroopt.minimize(f, np.array([3.0, 0.3]), solver="coordinate", budget=300, seed=0, q=2)
>>> bool(qn.fun < 1e-6 < plain.fun)
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.base import GradientEstimate, SolverSettings, SolverState
from ..core.stages import ChoosesDirection
from ..step.noise import drowned

__all__ = ["QUASI_NEWTON_MEMORY", "QuasiNewton"]

#: L-BFGS's customary number of kept pairs (Nocedal & Wright suggest 3 to 20).
QUASI_NEWTON_MEMORY = 10


@dataclass(frozen=True)
class QuasiNewton(ChoosesDirection):
    """The L-BFGS direction ``H g`` from the last ``history`` (step, estimate change) pairs (module docstring).

    Parameters
    ----------
    history
        Pairs kept; ``H`` is built from them afresh each iteration (two loops, O(history · d)).
    """

    history: int = QUASI_NEWTON_MEMORY
    key: str = field(default="quasi_newton", repr=False)  # where it keeps its pairs: not a setting

    def __post_init__(self) -> None:
        if isinstance(self.history, bool) or not isinstance(self.history, (int, np.integer)) or self.history < 1:
            raise ValueError(f"quasi_newton history must be a positive integer, got {self.history!r}")

    def __call__(
        self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate
    ) -> tuple[NDArray[np.float64], dict[str, Any]]:
        g = np.asarray(estimate.g, dtype=float)
        memory = dict(before.memory)
        last_x, last_g, pairs, last_drowned = memory.get(self.key, (None, None, (), False))
        if not np.all(np.isfinite(g)):
            return g, memory
        now_drowned = drowned(estimate, before)
        if last_x is not None and not (now_drowned or last_drowned):
            s, y = np.asarray(before.x, dtype=float) - last_x, g - last_g
            curvature = float(s @ y)
            if curvature > 1e-12 * float(np.linalg.norm(s) * np.linalg.norm(y)):
                pairs = (*pairs, (s, y, 1.0 / curvature))[-int(self.history):]
        memory[self.key] = (np.array(before.x, dtype=float), g.copy(), pairs, now_drowned)
        return (self.apply(pairs, g) if pairs else g), memory

    @staticmethod
    def apply(pairs: tuple[tuple[NDArray[np.float64], NDArray[np.float64], float], ...],
              g: NDArray[np.float64]) -> NDArray[np.float64]:
        """``H g`` for the L-BFGS inverse Hessian of ``pairs`` (oldest first): the two-loop recursion."""
        q, alphas = g.copy(), []
        for s, y, rho in reversed(pairs):
            alpha = rho * float(s @ q)
            q -= alpha * y
            alphas.append(alpha)
        s, y, _ = pairs[-1]
        r = q * (float(s @ y) / float(y @ y))
        for (s, y, rho), alpha in zip(pairs, reversed(alphas), strict=True):
            r += (alpha - rho * float(y @ r)) * s
        return r
