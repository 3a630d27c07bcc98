"""Probes shaped by the iterate: more of each probe on the coordinates the iterate itself uses.

Where the value is a *radius* — f(θ) the distance from a centre along the ray of θ to a set S (the hard-label
attack's g) — θ is the perturbation, and its largest coordinates are where the search has found S nearest. At a
minimum of f over the sphere, θ points along S's normal at the boundary point (the nearest point of S lies
along the normal from the centre), so |θᵢ| grows with how much S's boundary depends on coordinate i — and the
gradient of f at nearby directions lives mostly on those same coordinates. Probes uniform over all d
coordinates spend most of each comparison on the others: on an MNIST image most pixels sit at 0 beside the
digit's strokes, and the boundary barely moves with them.

:class:`IterateShapedProbes` rescales each probe's coordinates by ``√((1 − w) + w·|xᵢ|/mean|x|)`` and gives
each probe its old length back, where the mean runs over the probed coordinates: a share ``1 − w`` of the
probe's variance spread as before, a share ``w`` in proportion to |xᵢ|. The draws of orthonormal samplers
are orthonormalised again afterwards. Nothing of this costs a query.

The probes' second moment is then no longer isotropic: ``d·E[u uᵀ] ≈ D`` with D diagonal, positive and of mean
1, so an estimator that was unbiased for ∇f estimates ``D ∇f`` — a preconditioned gradient, still a descent
direction (D is positive definite); a sign estimator's direction moves the same way. The floor ``1 − w`` keeps
every coordinate probed, so a coordinate the iterate does not use yet can still enter it. Probes concentrated
on a sparse prior are what the newer decision-based attacks do with their subspaces (QEBA, CGBA); here the
prior is the iterate itself, and it sharpens as the run goes.

The attack's ``sign-growing`` takes it on the unit sphere where the value is a radius and not piecewise
constant (``probe_shape`` of :func:`zeroopt.recipes.sign_solvers.sign_growing_on_radius`): on a tree ensemble's
piecewise-constant g it cost more than it gave (what it was measured against: docs/defaults.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..core.arrays import copy, host, is_foreign, namespace
from ..core.rowwise import row_norms
from ..core.stages import ShapesProbes
from .orthogonal import gram_schmidt_rows, orthogonalised

__all__ = ["IterateShapedProbes", "shape_weights"]


def shape_weights(x: NDArray[np.float64], weight: float, active: NDArray[np.intp] | None = None) -> NDArray[np.float64]:
    """Per-coordinate factors ``√((1 − weight) + weight·|xᵢ|/mean|x|)`` (mean over ``active``, default all).

    An iterate with no magnitude anywhere (all zeros, or not finite) gives factors of 1: nothing to shape by.

    Examples
    --------
    >>> import numpy as np
    >>> shape_weights(np.array([0.0, 1.0, 3.0, 0.0]), 0.5).round(3).tolist()
    [0.707, 1.0, 1.414, 0.707]
    """
    if not 0 <= weight <= 1:
        raise ValueError(f"weight must be in [0, 1], got {weight!r}")
    if is_foreign(x):
        xp = namespace(x)
        size = xp.abs(x)
        mean = (float(xp.mean(size)) if active is None else float(host(size)[active].mean())) if size.shape[0] else 0.0
        if not (math.isfinite(mean) and mean > 0) or weight == 0:
            return xp.ones_like(size)
        return xp.sqrt((1.0 - weight) + weight * size / mean)
    size = np.abs(np.asarray(x, dtype=float))
    mean = float(size.mean() if active is None else size[active].mean()) if size.size else 0.0
    if not (np.isfinite(mean) and mean > 0) or weight == 0:
        return np.ones_like(size)
    return np.sqrt((1.0 - weight) + weight * size / mean)


@dataclass(frozen=True)
class IterateShapedProbes(ShapesProbes):
    """Each probe's coordinates scaled by :func:`shape_weights` of the iterate, its length kept (module docstring).

    Parameters
    ----------
    weight
        Share of each probe's variance placed in proportion to the iterate's |xᵢ| (0: no change; 1: none left
        on coordinates where x is 0).
    orthonormal
        Orthonormalise the shaped probes again (within each block of d, as
        :func:`~zeroopt.sample.orthogonal.orthonormal_rows` draws them): for an orthonormal sampler, whose q
        comparisons then still measure q distinct directions — and for one that left its orthonormalisation to
        this pass (:class:`~zeroopt.OrthogonalDirections` with ``deferred``), which gives the same directions.
    min_ratio
        With ``orthonormal``, a block of k rows in d dimensions is orthonormalised only while k/d is at least this
        (the sampler's own rule, :func:`~zeroopt.sample.orthogonal.orthogonalised`); 0: always.

    Examples
    --------
    >>> import numpy as np
    >>> from zeroopt.sample.orthogonal import orthonormal_rows
    >>> x = np.r_[np.ones(10), np.zeros(90)]  # an iterate that uses the first 10 coordinates only
    >>> u = orthonormal_rows(np.random.default_rng(0), 20, 100)
    >>> shaped = IterateShapedProbes(weight=0.5, orthonormal=True)(u, x, None)
    >>> bool(np.allclose(shaped @ shaped.T, np.eye(20)))
    True
    >>> round(float((shaped[:, :10] ** 2).sum() / 20), 2) > 0.1  # more than the 10% uniform probes put there
    True
    """

    weight: float
    orthonormal: bool = False
    min_ratio: float = 0.0

    def __post_init__(self) -> None:
        if not (isinstance(self.weight, (int, float)) and 0 <= self.weight <= 1):
            raise ValueError(f"probe shape weight must be a number in [0, 1], got {self.weight!r}")

    def __call__(
        self, directions: NDArray[np.float64], x: NDArray[np.float64], active: NDArray[np.intp] | None
    ) -> NDArray[np.float64]:
        factors = shape_weights(x, float(self.weight), active)
        if directions.shape[0] == 0:
            return directions
        if is_foreign(directions):
            return self._shaped_foreign(directions, factors)
        if np.all(factors == 1.0):  # nothing to shape by; a deferred sampler's rows still want orthonormalising
            return self._orthonormalised(directions) if self.orthonormal else directions
        lengths = row_norms(directions, keepdims=True)
        # In place, in the order of (directions * factors) * lengths / max(norms, 1e-300): one q×d array in all.
        shaped = np.multiply(directions, factors[None, :])
        norms = row_norms(shaped, keepdims=True)
        np.multiply(shaped, lengths, out=shaped)
        np.divide(shaped, np.maximum(norms, 1e-300), out=shaped)
        zero = np.flatnonzero(~(norms[:, 0] > 0))
        shaped[zero] = directions[zero]
        return self._orthonormalised(shaped) if self.orthonormal else shaped

    def _shaped_foreign(self, directions: NDArray[np.float64], factors: NDArray[np.float64]) -> NDArray[np.float64]:
        """:meth:`__call__` on another library's arrays, in its namespace (the same arithmetic, without ``out=``)."""
        xp = namespace(directions)
        if bool(xp.all(factors == 1.0)):
            return self._orthonormalised(directions) if self.orthonormal else directions
        lengths = row_norms(directions, keepdims=True)
        shaped = directions * factors[None, :]
        norms = row_norms(shaped, keepdims=True)
        shaped = shaped * lengths / xp.clip(norms, min=1e-300)
        shaped = xp.where(norms > 0, shaped, directions)
        return self._orthonormalised(shaped) if self.orthonormal else shaped

    def _orthonormalised(self, rows: NDArray[np.float64]) -> NDArray[np.float64]:
        """``rows`` (unit length) orthonormalised within each block of d
        (:func:`~zeroopt.sample.orthogonal.gram_schmidt_rows`, as :func:`~zeroopt.sample.orthogonal.orthonormal_rows`
        draws them) where :attr:`min_ratio` allows; a block of dependent rows is kept as it is."""
        q, d = rows.shape
        out = rows
        for start in range(0, q, d):
            block = rows[start:start + d]
            if not orthogonalised(len(block), d, self.min_ratio):
                continue
            try:
                done = gram_schmidt_rows(block)
            except (np.linalg.LinAlgError, RuntimeError):  # (another library's LinAlgError is a RuntimeError)
                continue  # (linearly dependent rows: only possible for a block of d rows, left as drawn)
            if q <= d:
                return done
            if out is rows:
                out = copy(rows)
            out[start:start + d] = done
        return out

