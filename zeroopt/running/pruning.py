"""Pruning a radial objective's point: take out the coordinates its value does not need.

Where the value f(θ) is a radius along a direction θ (``SolverContext(radial=True)``: the point
p = f(θ)·θ is what the value measures, e.g. the distance to a decision boundary along θ), a coordinate of p
that does not hold the point where it is can be set to zero: p' (p without it) is shorter, and one comparison —
"f(p'/|p'|) < |p'|?" — tells whether p' still reaches the set p reached. A descent over θ cannot see such
coordinates on a piecewise-constant objective (a tree ensemble's boundary distance moves only where a ray
crosses a split): every small probe of them leaves the value where it is, so they keep whatever the start and
the random steps gave them. On a smooth objective every coordinate pulls its weight and the first few trials
are refused, which ends the pass (``patience``).

:func:`prune_run` is one pass, as a run (a generator of requests returning an
:class:`~zeroopt.OptimizeResult`): the coordinates in order of size, smallest first, in blocks that each
carry a share ``min_share`` of |p|² (a block of many tiny coordinates is worth one query; a large coordinate
is tried alone), one comparison per block. :func:`pruning` makes such passes a ``polish`` for
:func:`~zeroopt.solve_many`, which prunes a run's best point whenever the run converges with budget left.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ..oracles.requests import Compare, Comparison, Evaluate, Evaluation
from .driver import RunGenerator
from .records import OptimizeResult, Status

__all__ = ["PRUNE_MIN_SHARE", "PRUNE_PATIENCE", "Polisher", "prune_blocks", "prune_run", "pruning"]

#: The least share of |p|² a block of coordinates carries: taking a block out shortens p by at least ~half
#: this share, so no query is spent on a gain below the precision a boundary search reaches (about 0.1%).
PRUNE_MIN_SHARE = 0.01
#: Consecutive refusals that end a pass: on a smooth objective the first blocks (the smallest coordinates,
#: the likeliest to be free) are refused too, and a pass there costs this many queries.
PRUNE_PATIENCE = 8

#: A ``polish`` for :func:`~zeroopt.solve_many`, ``polish(x, f(x), precision)``: a run (generator of requests)
#: that returns a better point or the same one.
Polisher = Callable[[NDArray[np.float64], float, float], RunGenerator]


def _check_share(min_share: float) -> None:
    if not 0 < min_share <= 1:
        raise ValueError(f"min_share must be in (0, 1], got {min_share!r}")


def _check_patience(patience: int) -> None:
    if isinstance(patience, bool) or not isinstance(patience, (int, np.integer)) or patience < 1:
        raise ValueError(f"patience must be a positive integer, got {patience!r}")


def prune_blocks(point: NDArray[np.float64], min_share: float = PRUNE_MIN_SHARE) -> list[NDArray[np.int64]]:
    """The non-zero coordinates of ``point``, smallest first, cut into blocks of squared mass ≥ ``min_share``.

    A block closes as soon as it carries ``min_share`` of ``|point|²``; what is left at the end (less than
    that) joins the last block.

    Examples
    --------
    >>> [b.tolist() for b in prune_blocks(np.array([0.0, 3.0, 0.1, 0.1, 4.0]), min_share=0.3)]
    [[2, 3, 1], [4]]
    """
    _check_share(min_share)
    p = np.asarray(point, dtype=float).ravel()
    order = np.flatnonzero(p)[np.argsort(np.abs(p[p != 0]), kind="stable")]
    total = float(np.sum(p * p))
    blocks: list[NDArray[np.int64]] = []
    start, mass = 0, 0.0
    for i, j in enumerate(order):
        mass += p[j] * p[j]
        if mass >= min_share * total:
            blocks.append(order[start:i + 1])
            start, mass = i + 1, 0.0
    if start < len(order):
        if blocks:
            blocks[-1] = np.concatenate([blocks[-1], order[start:]])
        else:
            blocks.append(order[start:])
    return blocks


def prune_run(
    x: NDArray[np.float64],
    fx: float,
    fx_eps: float = 0.0,
    *,
    min_share: float = PRUNE_MIN_SHARE,
    patience: int = PRUNE_PATIENCE,
) -> RunGenerator:
    """One pruning pass over the point ``fx · x/|x|`` of a radial objective (a run: yields :class:`Compare`).

    Each block of :func:`prune_blocks` is taken out of the point when the comparison says the shorter point
    still reaches the set (f along its direction below its length); the pass ends after ``patience``
    consecutive refusals, at the last block, or when the budget runs out. When something was taken out, f is
    then evaluated along the pruned direction (to ``fx_eps``, searched down from the pruned length, which
    reaches the set). Returns that direction and value — the point it was given when nothing could be taken
    out.
    """
    _check_patience(patience)
    theta = np.asarray(x, dtype=float).ravel()
    norm = float(np.linalg.norm(theta))
    if not (math.isfinite(fx) and fx > 0 and norm > 0):
        raise ValueError(f"a pruning pass needs a finite positive value and a non-zero direction, got {fx!r}")
    point = fx * theta / norm
    length, refused, queries, trials = fx, 0, 0, 0
    status = Status.CONVERGED
    for block in prune_blocks(point, min_share):
        trial = point.copy()
        trial[block] = 0.0
        trial_length = float(np.linalg.norm(trial))
        if trial_length == 0.0:  # the whole point: nothing would be left to reach the set with
            continue
        resp = yield Compare(points=(trial / trial_length)[None, :], levels=np.array([trial_length]))
        assert isinstance(resp, Comparison)
        queries, trials = resp.queries, trials + 1
        if len(resp.below) == 0:  # the budget ran out before the comparison
            status = Status.BUDGET
            break
        if resp.below[0]:
            point, length, refused = trial, trial_length, 0
        else:
            refused += 1
            if refused >= patience:
                break
    value, value_eps = length, fx_eps
    if length < fx and status is not Status.BUDGET:
        # The pruned point's length only bounds f along its direction: a descent that goes on from it needs the
        # value itself (the semicircular step, for one, takes it as the circle's diameter). Searched downward
        # from the length, which is known to reach the set.
        resp = yield Evaluate(points=(point / length)[None, :], eps=fx_eps or None, hints=np.array([length]),
                              upper=np.array([length]))
        assert isinstance(resp, Evaluation)
        queries = resp.queries
        if len(resp.values):
            if resp.values[0] < length:
                value, value_eps = float(resp.values[0]), float(resp.eps[0])
        else:
            status = Status.BUDGET
    return OptimizeResult(x=point / length, fun=value, fun_eps=value_eps, queries=queries, iterations=trials,
                          status=status, message=f"pruned {fx:.6g} -> {value:.6g} in {trials} comparisons",
                          solver="prune")


def pruning(min_share: float = PRUNE_MIN_SHARE, patience: int = PRUNE_PATIENCE) -> Polisher:
    """A ``polish`` for :func:`~zeroopt.solve_many`: one :func:`prune_run` pass from the point it is given.

    Examples
    --------
    >>> import numpy as np
    >>> from zeroopt import IndependentGroup, as_oracle, drive
    >>> # the distance from 0 along θ to the half-space {x_0 >= 0.9}: only the first coordinate matters
    >>> g = lambda t: 0.9 * np.linalg.norm(t) / t[0] if t[0] > 0 else 1e9
    >>> group = IndependentGroup([as_oracle(g, (3,), budget=50)])
    >>> # a point at length 1.6 along (1, 1, 0.5)/1.5, inside the half-space (g there is 1.35)
    >>> (r,) = drive([pruning()(np.array([1.0, 1.0, 0.5]), 1.6, 0.0)], group)
    >>> round(r.fun, 4), r.x.tolist()  # then evaluated along the pruned direction
    (0.9, [1.0, 0.0, 0.0])
    """
    _check_share(min_share)  # here, not when the attack is already spending its last queries
    _check_patience(patience)

    def polish(x: NDArray[np.float64], fx: float, fx_eps: float) -> RunGenerator:
        return prune_run(x, fx, fx_eps, min_share=min_share, patience=patience)

    return polish
