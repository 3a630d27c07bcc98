"""An initial search that tries each candidate direction once, against the best one so far (a record search).

The knock-out tournament (:mod:`.tournament`) first asks every candidate whether its own far point is
adversarial, then asks every survivor again at each shared radius while all of them survive — with 30
candidates, about a hundred queries before the first descent step. Finding the smallest of n boundary
distances with one-bit questions needs only about one question per candidate, if each is asked at the right
radius: just below the best distance known so far. So here the first adversarial candidate (the leader) is
bracketed to within ``finest`` on the log scale, and every other candidate is then asked once, at the lower
end of the best one's bracket: a "yes" makes it the new best (a record, about ln n of them in n random
candidates), bracketed in turn from the radius it answered at. Only the final best is bisected to ε. With 30
candidates that is about 30 + 5 + 3 ln 30 + one bisection — half the tournament's queries — for the same
winner up to the bracket's resolution.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from zeroopt.core.arrays import copy

from .boundary import BoundaryOracleGroup, Ray, RaySearch
from .tournament import FINEST_RATIO, FIRST_SHRINK

__all__ = ["record_search"]


@dataclass
class _Record:
    """One input's search: its candidates, the best one so far and the bracket (lo, hi] of its distance."""

    rays: list[Ray | None]
    lams: list[float]
    next: int = 0  # the next candidate to ask
    best: int = -1  # index of the best candidate so far (-1: none adversarial yet)
    lo: float = 0.0  # the best candidate is not adversarial here ...
    hi: float = math.inf  # ... and adversarial here
    shrink: float = FIRST_SHRINK
    phase: str = "leader"  # leader -> refine -> challenge (-> refine after a record) -> done
    done: bool = False
    radius: float = field(default=0.0, repr=False)  # the radius of this round's question


def _question(st: _Record, owner: int, finest: float) -> RaySearch | None:
    """This round's one query for an input (``None``: its search is over)."""
    if st.phase == "refine":
        if not (st.lo > 0 and st.lo >= finest * st.hi):
            st.radius = st.shrink * st.hi if st.lo == 0 else math.sqrt(st.lo * st.hi)
            return RaySearch(owner, st.rays[st.best], st.radius, 0.0, "compare")
        st.phase, st.next = "challenge", st.next + 1  # bracketed: on to the next candidate
    while st.next < len(st.rays) and st.rays[st.next] is None:
        st.next += 1  # a zero candidate has no boundary
    if st.next >= len(st.rays):
        st.done = True
        return None
    # leader: is the candidate's own far point adversarial? challenge: is it adversarial just below the best
    # candidate's distance?
    st.radius = st.lams[st.next] if st.phase == "leader" else st.lo
    return RaySearch(owner, st.rays[st.next], st.radius, 0.0, "compare")


def _answer(st: _Record, search: RaySearch) -> None:
    """Update an input's search with the answer to its question."""
    if not search.done:  # out of budget: keep what is known
        st.done = True
        return
    yes = bool(search.below)
    if st.phase == "leader":
        if yes:
            st.best, st.hi, st.lo, st.phase = st.next, st.radius, 0.0, "refine"
        else:
            st.next += 1
    elif st.phase == "refine":
        if yes:
            st.hi = st.radius
            if st.lo == 0:
                st.shrink = st.shrink**2  # still far outside: fall faster on the log scale
        else:
            st.lo = st.radius
    elif yes:  # a record: the new best is adversarial at the old best's lower end, its distance unknown below
        st.best, st.hi, st.lo, st.phase, st.shrink = st.next, st.radius, 0.0, "refine", FINEST_RATIO
    else:
        st.next += 1


def record_search(
    group: BoundaryOracleGroup,
    candidates: dict[int, NDArray[np.float64]],
    eps: float,
    *,
    finest: float = FINEST_RATIO,
    relative: float = 0.0,
) -> dict[int, tuple[NDArray[np.float64], float]]:
    """The best candidate direction and its boundary distance g (to ``eps``) per input, about one query per
    candidate (see the module docstring). Inputs of which no candidate is adversarial are left out.

    Parameters
    ----------
    group
        The boundary oracle group (charges every query to its input's ledger).
    candidates
        Per input, ``(n, d)`` candidate directions θ, each first asked at its own length (the point x0 + θ).
    eps
        Precision of the winner's final bisection.
    finest
        A best candidate is bracketed until the ends of its bracket are within this ratio.
    relative
        The final bisection also ends within this share of its value (0: at ``eps`` only).
    """
    if not 0 < finest < 1:
        raise ValueError(f"finest must be in (0, 1), got {finest!r}")
    states = {
        i: _Record(rays=[group.ray(i, t) for t in thetas], lams=[group.distance.length(t) for t in thetas])
        for i, thetas in candidates.items()
    }
    while True:
        asked = {i: q for i, st in states.items() if not st.done and (q := _question(st, i, finest)) is not None}
        if not asked:
            break
        group.run(list(asked.values()))
        for i, q in asked.items():
            _answer(states[i], q)
    found = {i: st for i, st in states.items() if st.best >= 0}
    finals = {i: RaySearch(i, st.rays[st.best], st.hi, eps, "global", lo=st.lo, eps_relative=relative)
              for i, st in found.items()}
    group.run(list(finals.values()))
    out: dict[int, tuple[NDArray[np.float64], float]] = {}
    for i, st in found.items():
        s, ray = finals[i], st.rays[st.best]
        assert ray is not None
        # A bisection cut short by the budget still leaves a known adversarial radius: its upper end.
        value = s.value if s.done and np.isfinite(s.value) else s.hi
        out[i] = (copy(ray.direction), float(min(value, st.hi)))
    return out
