"""Mixtures of direction samplers: hedge between priors instead of betting on one.

Which probe distribution serves an objective best depends on it: a digit classifier answers mostly to
smooth, low-frequency changes of its input, while a small-image ResNet answers as much to fine, pixel-level
ones (docs/defaults.md). :class:`MixtureDirections` draws each direction from one of several
samplers chosen at random, so a search that keeps the best of many candidates (an initial search, a
tournament) or a sign estimator that needs only directions correlated with the gradient gets the best of
each prior at a fixed fraction of its queries, on objectives nobody has measured.

The ``"multi-scale"`` sampler is the mixture of the low-frequency bands 1/8, 1/4, 1/2 of each smooth axis
and the full space (the uniform sphere): a geometric ladder of resolutions, free of any one model's scale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..core.base import DirectionSampler
from .samplers import SphereDirections, register_sampler
from .subspace import LowFrequencyDirections, WideningLowFrequency, smooth_axes, smoothable_shape

__all__ = ["MULTI_SCALE_FRACTIONS", "MixtureDirections", "multi_scale_directions"]

#: Bands of the ``"multi-scale"`` mixture, as fractions of each smooth axis: halving from the full space
#: down to 1/8 (4 of 32 frequencies), equally likely.
MULTI_SCALE_FRACTIONS: tuple[float, ...] = (0.125, 0.25, 0.5, 1.0)


@dataclass(frozen=True)
class MixtureDirections:
    """Each direction drawn from one of ``components``, picked with probabilities ``weights``.

    Every draw is scaled to unit length, so ``E[u uᵀ]`` has trace 1 and :meth:`scale` returns ``d``:
    ``d · E[u uᵀ] = D`` has the identity's trace and is positive semi-definite, but it is not the identity —
    it weighs the directions the components share (say, low frequencies) more. A forward-difference estimate
    is then unbiased for ``D ∇f``, a preconditioned gradient (still a descent direction); sign estimators
    and candidate searches need no scale at all.

    Parameters
    ----------
    components
        The samplers to mix (any :class:`~zeroopt.DirectionSampler`).
    weights
        Their probabilities (normalised here); equal by default.

    Examples
    --------
    >>> import numpy as np
    >>> from zeroopt import LowFrequencyDirections, SphereDirections
    >>> mix = MixtureDirections((LowFrequencyDirections((1, 16, 16), 0.25), SphereDirections()))
    >>> u = mix.sample(np.random.default_rng(0), 6, 256, 0)
    >>> u.shape, bool(np.allclose(np.linalg.norm(u, axis=1), 1.0)), mix.scale(256)
    ((6, 256), True, 256.0)
    """

    components: tuple[DirectionSampler, ...]
    weights: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        comps = tuple(self.components)
        if not comps:
            raise ValueError("a mixture needs at least one component sampler")
        w = np.ones(len(comps)) if self.weights is None else np.asarray(self.weights, dtype=float)
        if w.shape != (len(comps),) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(
                f"weights must be {len(comps)} finite non-negative numbers with a positive sum, got {self.weights!r}"
            )
        object.__setattr__(self, "components", comps)
        object.__setattr__(self, "weights", tuple(float(v) for v in w / w.sum()))

    def sample(self, rng: np.random.Generator, q: int, d: int, iteration: int) -> NDArray[np.float64]:
        pick = rng.choice(len(self.components), size=q, p=self.weights)
        u = np.empty((q, d))
        for k, comp in enumerate(self.components):
            rows = np.flatnonzero(pick == k)
            if rows.size:
                u[rows] = comp.sample(rng, rows.size, d, iteration)
        return u / np.linalg.norm(u, axis=1, keepdims=True)

    def scale(self, d: int) -> float:
        return float(d)


def multi_scale_directions(
    shape: Sequence[int], fractions: Sequence[float] = MULTI_SCALE_FRACTIONS
) -> DirectionSampler:
    """The mixture of the low-frequency bands ``fractions`` of an array of ``shape`` (1 = the full space).

    With no axis long enough to smooth (tabular data) every band is the full space: the uniform sphere.
    """
    shape = tuple(int(n) for n in shape)
    if not smooth_axes(shape):
        return SphereDirections()
    parts: list[DirectionSampler] = [
        SphereDirections() if f >= 1 else LowFrequencyDirections(shape, fraction=f) for f in fractions
    ]
    return MixtureDirections(tuple(parts))


def _multi_scale(context):  # type: ignore[no-untyped-def]
    """``directions="multi-scale"``: :func:`multi_scale_directions` of the problem's array shape (the
    uniform sphere for a problem that states no shape)."""
    shape = getattr(context, "shape", None)
    return SphereDirections() if shape is None else multi_scale_directions(tuple(shape))


register_sampler("multi-scale", _multi_scale)


def _widening_hedge(context):  # type: ignore[no-untyped-def]
    """``directions="widening-hedge"``: half the probes from the low-frequency band that widens like √t
    (:class:`~zeroopt.sample.subspace.WideningLowFrequency`), half from the uniform sphere — the full space from the
    16th iteration on. A hedge: the band's probes are worth more where the objective answers mostly to smooth
    changes (a digit classifier), the sphere's where it answers as much to fine ones; half each loses at most
    half the better one's probes, early, and nothing once the band is full. The uniform sphere for a problem
    that states no array shape."""
    shape = smoothable_shape(context)
    return SphereDirections() if shape is None else MixtureDirections((WideningLowFrequency(shape), SphereDirections()))


register_sampler("widening-hedge", _widening_hedge)
