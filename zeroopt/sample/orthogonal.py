"""Orthogonal probe directions: the q probes of one estimate at right angles to each other.

Independent uniform directions overlap: in d dimensions two of them have a cosine of about 1/√d, and q of
them span their q dimensions unevenly, so some of the gradient is measured twice and some not at all. A
sign estimator then loses part of what its q comparisons could tell, and the more the larger q/d is (where
q ≪ d independent directions are already nearly orthogonal); an exact line search's gain on a smooth objective
goes like the squared cosine to the gradient. In the attack the gain is smaller: late in a run the boundary
distance is far from smooth (the cosines, ``python -m theory.estimator_quality``: docs/defaults.md).

:class:`OrthogonalDirections` draws q directions that are uniform on the sphere one by one (so
``d · E[u uᵀ] = I`` and every estimator's scale is the sphere's) but jointly orthonormal: the first
``min(q, d)`` rows of a Haar-random orthogonal matrix, and for q > d further independent blocks of d. The
construction is the Gram-Schmidt orthonormalisation of Gaussian vectors, that is the QR factorisation of
a Gaussian matrix with R's diagonal positive, which makes Q Haar-distributed (Mezzadri, *How to generate
random matrices from the classical compact groups*, Notices AMS 2007). Orthogonal random directions in
zeroth-order and evolution-strategy estimators: Choromanski et al., *Structured Evolution with Compact
Architectures for Scalable Policy Optimization* (ICML 2018).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import solve_triangular

from ..core.arrays import is_foreign, namespace
from ..core.rowwise import row_norms
from .samplers import register_sampler

__all__ = ["ORTHOGONAL_MIN_RATIO", "OrthogonalDirections", "gram_schmidt_rows", "orthogonalised", "orthonormal_rows"]

#: The ``"nearly-orthogonal"`` sampler orthonormalises a block of k rows in d dimensions only while k/d is at least
#: this: below it independent unit rows are within about √(k/d) of orthonormal, and Gram-Schmidt's k²·d work is
#: most of an iteration's arithmetic. 1/200 keeps every block of 20 or more rows orthonormal up to d = 4,000
#: (MNIST's 784 and CIFAR-10's 3,072 as ``"orthogonal"`` draws them); at 150,528 no block of up to 200 rows is.
#: Not the default: where it skips the orthonormalisation it changes the probes, and so the results.
ORTHOGONAL_MIN_RATIO = 1 / 200


def orthogonalised(k: int, d: int, min_ratio: float) -> bool:
    """Whether a block of ``k`` rows in ``d`` dimensions is orthonormalised under ``min_ratio``."""
    return k >= min_ratio * d


def gram_schmidt_rows(rows: NDArray[np.float64]) -> NDArray[np.float64]:
    """``rows`` (k linearly independent rows) orthonormalised in order, by Gram-Schmidt through the Cholesky factor
    of their Gram matrix: two matrix products and a triangular solve, several times faster than Householder QR,
    and exact enough while the Gram matrix is well conditioned. ``numpy.linalg.LinAlgError`` when it is not
    positive definite (dependent rows)."""
    if is_foreign(rows):  # another library's arrays: its Cholesky factor and solve, on its device
        xp = namespace(rows)
        return xp.linalg.solve(xp.linalg.cholesky(rows @ rows.T), rows)
    # (check_finite=False: the rows are draws or reshaped draws, finite by construction; the check costs ~20%.)
    return solve_triangular(np.linalg.cholesky(rows @ rows.T), rows, lower=True, check_finite=False)


def orthonormal_rows(rng: np.random.Generator, q: int, d: int, *, deferred: bool = False,
                     min_ratio: float = 0.0) -> NDArray[np.float64]:
    """``(q, d)`` rows, each uniform on the unit sphere, orthonormal within every block of ``d`` rows.

    With ``min_ratio``, a block of k rows with k/d below it comes back as its Gaussian draws scaled to unit length
    (:func:`orthogonalised`): independent uniform directions, nearly orthonormal where k ≪ d.

    With ``deferred``, a block of at most d/2 rows comes back as its Gaussian draws scaled to unit length, not
    yet orthonormalised: for a caller that reshapes the rows and then orthonormalises them itself
    (:class:`~zeroopt.sample.shaping.IterateShapedProbes` with ``orthonormal=True``). Gram-Schmidt of rows that were
    multiplied on the left by a lower-triangular matrix with a positive diagonal gives the same rows as
    Gram-Schmidt of the originals, and both the orthonormalisation (``G = L Q``) and the unit scaling are such
    matrices, as is a reshaping on the right by a diagonal (``Q D = L⁻¹ G D``): so the caller's one
    orthonormalisation yields the very directions two would have, for half the work. The blocks of more than
    d/2 rows are orthonormalised here as always (their Gram matrix is too ill-conditioned for the caller's
    Cholesky-based Gram-Schmidt).

    Examples
    --------
    >>> import numpy as np
    >>> u = orthonormal_rows(np.random.default_rng(0), 3, 5)
    >>> bool(np.allclose(u @ u.T, np.eye(3)))
    True
    """
    if q < 0 or d < 1:
        raise ValueError(f"need q >= 0 directions in d >= 1 dimensions, got q={q}, d={d}")
    blocks = []
    left = q
    while left > 0:
        k = min(left, d)
        gauss = rng.standard_normal((k, d))
        if 2 * k <= d:
            # With k <= d/2 the Gram matrix's condition number stays below ~34, so nothing is lost to rounding.
            if deferred or not orthogonalised(k, d, min_ratio):
                gauss /= row_norms(gauss, keepdims=True)
                blocks.append(gauss)
            else:
                blocks.append(gram_schmidt_rows(gauss))
        else:
            basis, upper = np.linalg.qr(gauss.T)
            # The signs of R's diagonal moved into Q (Mezzadri): Q is then Haar, whatever the QR convention.
            signs = np.sign(np.diag(upper))
            signs[signs == 0] = 1.0
            blocks.append((basis * signs).T)
        left -= k
    if len(blocks) == 1:
        return blocks[0]
    return np.concatenate(blocks) if blocks else np.empty((0, d))


@dataclass(frozen=True)
class OrthogonalDirections:
    """Uniform unit directions, orthonormal within each estimate (module docstring).

    Parameters
    ----------
    deferred
        Leave the orthonormalisation of blocks of at most d/2 rows to the probe shape that follows
        (:func:`orthonormal_rows` with ``deferred``): the same directions for one Gram-Schmidt pass instead of
        two. Only for a solver whose probes are reshaped and orthonormalised again
        (:class:`~zeroopt.sample.shaping.IterateShapedProbes` with ``orthonormal=True``), which
        :func:`~zeroopt.recipes.descent.sampled` sets up by itself.
    min_ratio
        Orthonormalise a block of k rows in d dimensions only while k/d is at least this (:func:`orthonormal_rows`);
        0: always (the registered ``"orthogonal"``); ``"nearly-orthogonal"`` uses :data:`ORTHOGONAL_MIN_RATIO`.

    Examples
    --------
    >>> import numpy as np
    >>> s = OrthogonalDirections()
    >>> u = s.sample(np.random.default_rng(0), 4, 10, 0)
    >>> bool(np.allclose(u @ u.T, np.eye(4))), s.scale(10)
    (True, 10.0)
    """

    deferred: bool = False
    min_ratio: float = 0.0
    #: Draws in any number of dimensions (no image shape): a solver may draw it within a subspace.
    shape_free: ClassVar[bool] = True

    def sample(self, rng: np.random.Generator, q: int, d: int, iteration: int) -> NDArray[np.float64]:
        return orthonormal_rows(rng, q, d, deferred=self.deferred, min_ratio=self.min_ratio)

    def scale(self, d: int) -> float:
        return float(d)


register_sampler("orthogonal", lambda context: OrthogonalDirections())
register_sampler("nearly-orthogonal", lambda context: OrthogonalDirections(min_ratio=ORTHOGONAL_MIN_RATIO))
