"""The count stage's probe schedules: a number of probes ``q`` that changes over the iterations.

A new schedule is ``schedule(state) -> int`` with the :class:`~zeroopt.core.stages.CountsProbes` mixin; a constant
``q`` is :class:`~zeroopt.core.stages.FixedProbes`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..core.base import SolverState
from ..core.stages import CountsProbes

__all__ = ["ProbeSchedule", "SqrtProbeGrowth"]


@dataclass(frozen=True)
class ProbeSchedule(CountsProbes):
    """A number of probes that changes over the iterations: ``q = schedule(iteration)``.

    A chain's ``count`` stage; this one reads only the iteration:
    ``ProbeSchedule(lambda t: 10 if t < 50 else 20)``.
    """

    schedule: Callable[[int], int]

    def __call__(self, state: SolverState) -> int:
        return int(self.schedule(state.iteration))


@dataclass(frozen=True)
class SqrtProbeGrowth(CountsProbes):
    """q growing like √t: ``q_t = min(cap, ceil(start · √(t + 1)))`` (HopSkipJump's schedule).

    Early iterations, far from a minimum, need only a rough direction, and a cheap one lets many more of
    them happen inside a small budget; later ones, whose progress is limited by the estimate's variance,
    get more probes. ``start = cap`` is a constant q.
    """

    start: int
    cap: int

    def __post_init__(self) -> None:
        if not 0 < self.start <= self.cap:
            raise ValueError(f"need 0 < start <= cap probes, got start={self.start}, cap={self.cap}")

    def __call__(self, state: SolverState) -> int:
        return int(min(self.cap, math.ceil(self.start * math.sqrt(state.iteration + 1))))
