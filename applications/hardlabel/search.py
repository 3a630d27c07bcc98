"""One boundary search along a ray, as a state machine: the paper's Algorithm 1 and the bisection after it.

A :class:`RaySearch` asks one point per round (``nxt``) and is fed the model's label of it; the oracle group
(:mod:`.boundary`) advances every pending search in lockstep, one model call per round.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .ray import Ray

__all__ = ["GALLOPING_GROWTH", "MAX_DOWN_RATIO", "PAPER_LOCAL_GROWTH", "PAPER_LOCAL_RATIO", "STEPS_BEFORE_GROWTH",
           "RaySearch"]

PAPER_LOCAL_RATIO = 0.01  # Algorithm 1's increase/decrease ratio α
#: Algorithm 1 widens its bracket by the same ratio α at every step (growth 1); galloping doubles the ratio after
#: each step, from the third on, so a value far from the hint is bracketed in a few queries (the counts:
#: docs/attack.md).
PAPER_LOCAL_GROWTH = 1.0
GALLOPING_GROWTH = 2.0
#: Steps taken at α itself before the ratio grows: a value within ~2α of its hint (most of them late in a run)
#: then costs exactly what Algorithm 1 costs, where galloping from the first step costs one query more.
STEPS_BEFORE_GROWTH = 2
#: A downward step never goes below half the current bracket's end (so λ stays positive).
MAX_DOWN_RATIO = 0.5


@dataclass
class RaySearch:
    """State machine of one value (or comparison) search along a ray; one query per round.

    Modes: ``"local"`` (Algorithm 1 around a hint, censored at ``cap``), ``"global"`` (known adversarial at
    ``start``: bisect [0, start]; when ``start`` exceeds ``cap`` first check at ``cap``), ``"compare"``
    (a single query at ``start``). A global search whose ``start`` is below ``cap`` costs no query to start.
    A local search given ``hi`` (a λ known adversarial) starts there without a query when ``start`` is not
    below it, and otherwise bisects up to it once ``start`` proves non-adversarial.
    A local search's steps away from its hint are ``ratio`` for the first :data:`STEPS_BEFORE_GROWTH`, then
    multiplied by ``growth`` after each step (1: the paper's fixed ratio; 2: galloping).
    A bisection ends once its bracket is within ``eps``, or within ``eps_relative`` of its upper end, whichever is
    coarser.
    """

    owner: int
    ray: Ray | None
    start: float
    eps: float
    mode: str = "local"
    cap: float = math.inf
    ratio: float = PAPER_LOCAL_RATIO
    growth: float = PAPER_LOCAL_GROWTH
    phase: str = "start"
    lo: float = 0.0
    hi: float = math.inf
    nxt: float = 0.0
    value: float = math.inf
    achieved: float = 0.0
    done: bool = False
    aborted: bool = False
    below: bool = False
    step_ratio: float = field(default=0.0, repr=False)  # the local search's current widening ratio
    steps: int = field(default=0, repr=False)  # steps taken away from the hint so far
    eps_relative: float = 0.0  # a bisection also ends once its bracket is within this share of its upper end

    def __post_init__(self) -> None:
        self.step_ratio = self.ratio
        if self.ray is None:  # a zero direction has no boundary to find
            self._finish(math.inf)
            return
        if self.mode == "compare":
            self.nxt = self.start
            return
        v = self.start if np.isfinite(self.start) and self.start > 0 else min(1.0, self.ray.lam_max)
        if self.mode in ("local", "global") and v >= self.cap:
            v, self.phase = self.cap, "at_cap"
        elif self.mode == "local" and v >= self.hi:  # the known adversarial end: step down from it at once
            self.phase, self.nxt = "down", self.hi * (1 - self.step_ratio)
            return
        elif self.mode == "global":
            # The caller already saw the model label the point at `start` adversarial: bisect [0, start].
            self.lo, self.hi = min(self.lo, v), v  # a caller may know a non-adversarial λ (lo) already
            self._bisect_or_finish()
            return
        self.nxt = min(v, self.ray.lam_max)

    def _finish(self, value: float, achieved: float = 0.0) -> None:
        self.value, self.achieved, self.done = value, achieved, True

    def _bisect_or_finish(self) -> None:
        if self.hi - self.lo <= max(self.eps, self.eps_relative * self.hi):
            self._finish(self.hi, self.hi - self.lo)
        else:
            self.phase, self.nxt = "bisect", 0.5 * (self.lo + self.hi)

    def feed(self, adversarial: bool) -> None:
        """Advance with the label of the point at ``self.nxt``."""
        lam, ray = self.nxt, self.ray
        assert ray is not None
        if self.mode == "compare":
            self.below = adversarial
            self._finish(lam if adversarial else math.inf)
            return
        if self.phase == "at_cap":
            if not adversarial:  # g(θ) >= cap: censored, one query spent
                self._finish(math.inf)
                return
            self.hi = lam
            if self.mode == "global":
                self.lo = 0.0
                self._bisect_or_finish()
            else:
                self.phase, self.nxt = "down", lam * (1 - self.step_ratio)
            return
        if self.phase == "start":
            if adversarial:
                self.hi, self.phase, self.nxt = lam, "down", lam * (1 - self.step_ratio)
            elif math.isfinite(self.hi):  # below a known adversarial end: the bracket is complete
                self.lo = lam
                self._bisect_or_finish()
            else:
                self.lo, self.phase = lam, "up"
                self._step_up(first=True)
            return
        if self.phase == "up":
            if adversarial:
                self.hi = lam
                self._bisect_or_finish()
            else:
                self.lo = lam
                self._step_up()
            return
        if self.phase == "down":
            if adversarial:
                self._widen()
                self.step_ratio = min(self.step_ratio, MAX_DOWN_RATIO)
                self.hi, self.nxt = lam, lam * (1 - self.step_ratio)
            else:
                self.lo = lam
                self._bisect_or_finish()
            return
        # bisect
        if adversarial:
            self.hi = lam
        else:
            self.lo = lam
        self._bisect_or_finish()

    def _widen(self) -> None:
        """After each step away from the hint: the ratio grows by ``growth`` once STEPS_BEFORE_GROWTH are taken."""
        self.steps += 1
        if self.steps >= STEPS_BEFORE_GROWTH:
            self.step_ratio *= self.growth

    def _step_up(self, first: bool = False) -> None:
        assert self.ray is not None
        if self.lo >= self.cap or self.lo >= self.ray.lam_max:
            # Censored above the cap, or no adversarial point along this ray inside the bounds.
            self._finish(math.inf)
            return
        if not first:
            self._widen()
        self.nxt = min(self.lo * (1 + self.step_ratio), self.ray.lam_max, max(self.cap, self.lo))
