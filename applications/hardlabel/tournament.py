"""A cheap initial search: a knock-out tournament of candidate directions at shared radii.

The reference code bisects every adversarial candidate direction to precision ε (about 20 queries each;
300-400 queries for 100 candidates even with pruning) before the solver takes its first step. Here all of
an input's adversarial candidates are instead asked, one query each, whether they are still adversarial at
a common, shrinking radius r: those that are survive, and r shrinks geometrically — faster after a round
that every candidate survived. When no candidate survives a round the shrink factor moves toward 1 (the
radii get finer), and once a single candidate is
left, or the radii differ by less than ``finest``, only that candidate is bisected to ε, from the bracket
the tournament already established. The winner is the candidate with (up to the last ratio) the smallest
boundary distance, found for about one query per candidate plus a dozen per round.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from zeroopt.core.arrays import copy

from .boundary import BoundaryOracleGroup, RaySearch

__all__ = ["FIRST_SHRINK", "FINEST_RATIO", "tournament"]

FIRST_SHRINK = 0.5  # the radius halves while candidates survive (a bisection on the log scale)
FINEST_RATIO = 0.9  # stop refining the shared radius once consecutive radii are within 10%


@dataclass
class _Bracket:
    """One input's tournament: the surviving directions, the radius they are known adversarial at, and
    the largest radius at which all of them failed (a lower bound on their boundary distance)."""

    alive: list[NDArray[np.float64]]
    upper: float
    lower: float = 0.0
    shrink: float = FIRST_SHRINK
    done: bool = False


def tournament(
    group: BoundaryOracleGroup,
    hits: dict[int, list[tuple[NDArray[np.float64], float]]],
    eps: float,
    *,
    first_shrink: float = FIRST_SHRINK,
    finest: float = FINEST_RATIO,
    accelerate: bool = True,
    relative: float = 0.0,
) -> dict[int, tuple[NDArray[np.float64], float]]:
    """The best direction and its boundary distance g (to ``eps``) per input, from adversarial candidates.

    Parameters
    ----------
    group
        The boundary oracle group (charges every query to its input's ledger).
    hits
        Per input, ``(unit direction, λ)`` pairs whose point ``x0 + λ θ`` the model labelled adversarial.
    eps
        Precision of the winner's final bisection.
    first_shrink, finest
        The radius shrinks by ``first_shrink`` while candidates survive; after a round nobody survives the
        factor becomes its square root, until it exceeds ``finest``.
    accelerate
        After a round that *every* candidate survived — one that ranked nobody, typical of the first rounds,
        far outside the boundary — the factor becomes its square (the radius falls twice as fast on the log
        scale): the mirror image of the square root after a round nobody survived. ``False``: the radius
        halves at every round that someone survived (the ``"halving-tournament"`` start).
    relative
        The final bisection also ends within this share of its value (0: at ``eps`` only).
    """
    if not 0 < first_shrink < finest < 1:
        raise ValueError(f"need 0 < first_shrink < finest < 1, got {first_shrink}, {finest}")
    brackets: dict[int, _Bracket] = {}
    for i, h in hits.items():
        if not h:
            continue
        upper = min(lam for _, lam in h)
        # Candidates known adversarial only farther out than the best one are still worth a query at the
        # first shared radius, which is below every one of them.
        brackets[i] = _Bracket(alive=[d for d, _ in h], upper=upper, shrink=first_shrink)
    while True:
        live = {i: b for i, b in brackets.items() if not b.done}
        for b in live.values():
            if len(b.alive) == 1 or b.shrink > finest:
                b.done = True
        live = {i: b for i, b in live.items() if not b.done}
        if not live:
            break
        searches: list[RaySearch] = []
        for i, b in live.items():
            r = b.shrink * b.upper
            searches += [RaySearch(i, group.ray(i, d), r, 0.0, "compare") for d in b.alive]
        group.run(searches)
        per: dict[int, list[RaySearch]] = {}
        for s in searches:
            per.setdefault(s.owner, []).append(s)
        for i, b in live.items():
            ss = per[i]
            if any(not s.done for s in ss):  # out of budget: keep what is known
                b.done = True
                continue
            survivors = [s.ray.direction for s in ss if s.below]  # type: ignore[union-attr]
            r = b.shrink * b.upper
            if survivors:
                if accelerate and len(survivors) == len(b.alive):
                    b.shrink = b.shrink**2
                b.alive, b.upper = survivors, r
            else:
                b.lower, b.shrink = max(b.lower, r), math.sqrt(b.shrink)
    finals = [
        RaySearch(i, group.ray(i, b.alive[0]), b.upper, eps, "global", lo=b.lower, eps_relative=relative)
        for i, b in brackets.items()
    ]
    group.run(finals)
    out: dict[int, tuple[NDArray[np.float64], float]] = {}
    for s, (i, b) in zip(finals, brackets.items(), strict=True):
        # A bisection cut short by the budget still leaves a known adversarial radius: its upper end.
        value = s.value if s.done and np.isfinite(s.value) else s.hi
        out[i] = (copy(b.alive[0]), float(min(value, b.upper)))  # a numpy array or a tensor of the model's
    return out
