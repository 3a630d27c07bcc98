"""Low-frequency direction samplers: probes drawn from the smoothest patterns of an array.

Many objectives over arrays (images, signals, grids) respond mostly to smooth, low-frequency changes of
their input; the decision-based attacks of the last years (QEBA, GeoDA, SurFree, CGBA) probe in such a
subspace and need far fewer queries. :class:`LowFrequencyDirections` draws unit directions uniformly from
the span of the lowest discrete-cosine-transform (DCT-II, orthonormal) frequencies along the array's
smooth axes. Because the basis is orthonormal, ``m * E[u u^T] = P`` (the projection onto the m-dimensional
subspace), so a forward-difference estimate with ``scale = m`` is unbiased for the projected gradient.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.fft import idct, idctn

from ..core.rowwise import row_norms
from .samplers import register_sampler

__all__ = [
    "DEFAULT_FREQUENCY_FRACTION", "FULL_BAND_SIDE", "MIN_SMOOTH_AXIS", "LowFrequencyDirections", "WideningLowFrequency",
    "band_fraction", "smooth_axes", "smoothable_shape",
]

#: Fraction of each smooth axis's frequencies kept by default (CGBA / QEBA reduce each image side by 4).
DEFAULT_FREQUENCY_FRACTION = 0.25
#: The size rule's widest side probed whole: on CIFAR-10's 32 x 32 images the full space measured far better than a
#: quarter band, on ImageNet's 224 x 224 the quarter band better than the full space (docs/defaults.md).
FULL_BAND_SIDE = 32
#: Arrays whose smooth sides all reach this are drawn as band coefficients times the inverse-DCT basis of the band
#: (a matrix product over the band's rows only); smaller ones by the inverse transform of the zero-padded array.
PRODUCT_MIN_SIDE = 64
#: Axes shorter than this (colour channels, a single channel) are not smoothed: every index is kept.
MIN_SMOOTH_AXIS = 8


def smooth_axes(shape: tuple[int, ...], min_length: int = MIN_SMOOTH_AXIS) -> tuple[int, ...]:
    """The axes of ``shape`` long enough to carry a frequency structure (``>= min_length``)."""
    return tuple(a for a, n in enumerate(shape) if n >= min_length)


def smoothable_shape(context: object) -> tuple[int, ...] | None:
    """The array shape a :class:`~zeroopt.SolverContext` states, when it has an axis to smooth; else ``None``
    (no shape, or tabular data), where a low-frequency sampler falls back to the uniform sphere."""
    shape = getattr(context, "shape", None)
    return None if shape is None or not smooth_axes(tuple(shape)) else tuple(shape)


@dataclass(frozen=True)
class LowFrequencyDirections:
    """Unit directions in the span of the lowest DCT frequencies of an array of ``shape``.

    Parameters
    ----------
    shape
        Shape of the array the flat iterate represents (e.g. ``(3, 32, 32)`` for a CIFAR image).
    fraction
        Fraction of the frequencies kept along each smooth axis (at least one): ``0.25`` keeps the lowest
        8 of 32, i.e. 1/16 of a 32 x 32 image's coefficients per channel. ``1`` keeps everything (the
        full space, in a rotated basis).
    axes
        The smooth axes; by default every axis of length >= :data:`MIN_SMOOTH_AXIS`. Other axes keep all
        their indices. With no smooth axis (tabular data) the sampler is the uniform sphere.

    Examples
    --------
    >>> import numpy as np
    >>> s = LowFrequencyDirections((1, 28, 28), fraction=0.25)
    >>> u = s.sample(np.random.default_rng(0), 5, 784, 0)
    >>> u.shape, np.allclose(np.linalg.norm(u, axis=1), 1.0), s.scale(784)
    ((5, 784), True, 49.0)
    """

    shape: tuple[int, ...]
    fraction: float = DEFAULT_FREQUENCY_FRACTION
    axes: tuple[int, ...] | None = None
    _block: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        shape = tuple(int(n) for n in self.shape)
        if not shape or min(shape) <= 0:
            raise ValueError(f"shape must be a non-empty tuple of positive lengths, got {self.shape!r}")
        if not (isinstance(self.fraction, (int, float)) and 0 < self.fraction <= 1):
            raise ValueError(f"fraction must be in (0, 1], got {self.fraction!r}")
        axes = smooth_axes(shape) if self.axes is None else tuple(int(a) for a in self.axes)
        if any(not 0 <= a < len(shape) for a in axes):
            raise ValueError(f"axes {axes} out of range for shape {shape}")
        block = tuple(max(1, math.ceil(self.fraction * n)) if a in axes else n for a, n in enumerate(shape))
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "axes", axes)
        object.__setattr__(self, "_block", block)

    @property
    def subspace_dim(self) -> int:
        """Dimension m of the sampled subspace."""
        return int(np.prod(self._block))

    def sample(self, rng: np.random.Generator, q: int, d: int, iteration: int) -> NDArray[np.float64]:
        if d != int(np.prod(self.shape)):
            size = int(np.prod(self.shape))
            raise ValueError(f"the sampler is for arrays of shape {self.shape} ({size} values), got d = {d}")
        coef = rng.standard_normal((q, *self._block))
        axes = tuple(self.axes)  # type: ignore[arg-type]
        if axes and min(self.shape[a] for a in axes) >= PRODUCT_MIN_SIDE:
            # The band's coefficients times the basis of each axis: no pass over the zero padding. The bases'
            # columns are orthonormal, so unit coefficients make unit directions: no pass over the d values.
            flat = coef.reshape(q, -1)
            u = np.divide(flat, row_norms(flat, keepdims=True), out=flat).reshape(coef.shape)
            for a in axes:
                basis = _inverse_dct_basis(self.shape[a], self._block[a])
                if a + 1 == u.ndim - 1:  # the last axis: one matrix product over all rows (the same sums)
                    u = (u.reshape(-1, u.shape[-1]) @ basis.T).reshape(*u.shape[:-1], basis.shape[0])
                elif a + 1 == u.ndim - 2:
                    u = basis @ u
                else:
                    u = np.moveaxis(np.moveaxis(u, a + 1, -1) @ basis.T, -1, a + 1)
            return np.ascontiguousarray(u).reshape(q, d)
        padded = np.zeros((q, *self.shape))
        padded[(slice(None), *(slice(0, b) for b in self._block))] = coef
        u = idctn(padded, axes=tuple(a + 1 for a in axes), norm="ortho") if axes else padded
        u = np.ascontiguousarray(u).reshape(q, d)
        return np.divide(u, row_norms(u, keepdims=True), out=u)  # (u is this call's own array)

    def scale(self, d: int) -> float:
        return float(self.subspace_dim)


@functools.lru_cache(maxsize=16)
def _inverse_dct_basis(n: int, band: int) -> NDArray[np.float64]:
    """``(n, band)``: column k is the orthonormal inverse DCT-II of the k-th unit vector (the k-th cosine)."""
    basis = idct(np.eye(n)[:, :band], axis=0, norm="ortho")
    basis.setflags(write=False)
    return basis


def _low_frequency(context):  # type: ignore[no-untyped-def]
    """``directions="low-frequency"``: the lowest quarter of frequencies of the problem's array shape.

    A problem that states no shape (or no axis long enough to smooth) gets the uniform sphere.
    """
    from .samplers import SphereDirections

    shape = smoothable_shape(context)
    return SphereDirections() if shape is None else LowFrequencyDirections(shape)


register_sampler("low-frequency", _low_frequency)


@dataclass(frozen=True)
class WideningLowFrequency:
    """Low-frequency directions whose band widens like √t: ``fraction · √(t + 1)`` of each smooth axis at
    iteration t, the full space from ``t + 1 = fraction⁻²`` on (the 16th iteration for a quarter).

    Early iterates move far and the coarse structure decides where they go, which the lowest frequencies
    probe with few queries; late ones refine a boundary point, where a fixed low band stalls at the band's
    own optimum. The band widens as fast as :class:`~zeroopt.sample.counts.SqrtProbeGrowth` grows the probes, so the
    probes per dimension of the band fall like 1/√t rather than 1/t. ``scale`` is d, as for a mixture: a
    forward-difference estimate is a scaled projection of the gradient until the band is full.

    Examples
    --------
    >>> import numpy as np
    >>> s = WideningLowFrequency((1, 28, 28))
    >>> [s.band(t).subspace_dim for t in (0, 3, 8, 15)]
    [49, 196, 441, 784]
    """

    shape: tuple[int, ...]
    fraction: float = DEFAULT_FREQUENCY_FRACTION

    def band(self, iteration: int) -> LowFrequencyDirections:
        """The low-frequency sampler of iteration ``iteration``."""
        return LowFrequencyDirections(self.shape, min(1.0, self.fraction * math.sqrt(iteration + 1)))

    def sample(self, rng: np.random.Generator, q: int, d: int, iteration: int) -> NDArray[np.float64]:
        return self.band(iteration).sample(rng, q, d, iteration)

    def scale(self, d: int) -> float:
        return float(d)


def _widening_low_frequency(context):  # type: ignore[no-untyped-def]
    """``directions="widening-low-frequency"``: :class:`WideningLowFrequency` over the problem's array shape
    (the uniform sphere where it states none)."""
    from .samplers import SphereDirections

    shape = smoothable_shape(context)
    return SphereDirections() if shape is None else WideningLowFrequency(shape)


register_sampler("widening-low-frequency", _widening_low_frequency)


def band_fraction(shape: tuple[int, ...] | None, full_side: int = FULL_BAND_SIDE,
                  fraction: float = DEFAULT_FREQUENCY_FRACTION) -> float:
    """The share of each smooth axis's frequencies the size rule keeps for an array of ``shape``.

    ``max(full_side / n, fraction)`` for the longest smooth axis n of an image (two smooth axes or more), and 1
    (the full space) when no smooth axis is longer than ``full_side``, for signals of one smooth axis (not
    measured) and for an array that states no shape: a band at least ``full_side`` frequencies wide and at most
    the lowest ``fraction`` of each side (CGBA's and QEBA's reduction by 4 on ImageNet).

    Examples
    --------
    >>> [band_fraction(s) for s in [(1, 28, 28), (3, 32, 32), (3, 64, 64), (3, 224, 224), (4096,), None]]
    [1.0, 1.0, 0.5, 0.25, 1.0, 1.0]
    """
    axes = () if shape is None else smooth_axes(tuple(shape))
    if len(axes) < 2:
        return 1.0
    longest = max((int(shape[a]) for a in axes), default=0)  # type: ignore[index]
    return 1.0 if longest <= full_side else max(full_side / longest, fraction)


def _by_size(context):  # type: ignore[no-untyped-def]
    """``directions="by-size"``: full-space orthonormal probes (``"orthogonal"``) on an array whose smooth sides are
    at most :data:`FULL_BAND_SIDE` long, that is not an image or states no shape, else the band :func:`band_fraction`
    keeps — large images answer mostly to smooth changes, which a band of a few thousand patterns measures with
    far fewer probes than the full space."""
    from .samplers import make_sampler

    shape = smoothable_shape(context)
    fraction = band_fraction(shape)
    if shape is None or fraction >= 1.0:
        return make_sampler("orthogonal", context)
    return LowFrequencyDirections(shape, fraction)


register_sampler("by-size", _by_size)
