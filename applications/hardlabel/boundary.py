"""The hard-label oracle: g(θ), the distance from x0 to the decision boundary along θ, to precision ε.

Every value is found by searching along a ray with hard-label queries (the paper's Algorithm 1: a local
search that widens the bracket by a ratio α around a previous value, then a binary search down to ε).
All pending searches — the q probes of an iteration, for every image of the batch — advance in lockstep:
each round sends *one* point per search to the model in a single call. Every sample is charged to its
image's :class:`~zeroopt.QueryLedger` before it is sent, so a budget is never exceeded, and every
adversarial point the model confirms is kept: the best one is what the attack returns.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from zeroopt import Compare, Comparison, Evaluate, Evaluation, FlatCoordinates, FlatMask, OracleGroup, QueryLedger
from zeroopt.oracle import Request, Response

from .distance import L2, Distance
from .flat import flat_pixels
from .ray import Bound, Ray

__all__ = ["BoundaryOracleGroup", "Ray", "RaySearch"]

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
        if self.hi - self.lo <= self.eps:
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


@dataclass
class ImageState:
    """Per-image bookkeeping: ledger, best verified adversarial, trace of improvements."""

    x0: NDArray[np.float64]  # as the model sees it (float32 values), so distances are exact
    label: int
    target: int | None
    ledger: QueryLedger
    best_distance: float = math.inf
    best_point: NDArray[np.float64] | None = None
    trace: list[tuple[int, float]] = field(default_factory=list)

    def is_adversarial(self, labels: NDArray[np.int64]) -> NDArray[np.bool_]:
        if self.target is None:
            return labels != self.label
        return labels == self.target


class BoundaryOracleGroup(OracleGroup):
    """Answers g(θ) requests for many images at once, one model call per search step.

    Parameters
    ----------
    model
        Hard-label model on a batch ``(n, *input_shape)`` returning ``(n,)`` labels.
    images
        Per-image state (x0 flat, label, target, ledger).
    input_shape
        Shape of one input as the model expects it.
    bounds
        (lower, upper) of the input domain: scalars or flat arrays of one value per feature (as made by
        :func:`.bounds.flat_bounds`); every queried point is clipped to it.
    default_eps
        Precision used when a request does not state one.
    ratio, growth
        Algorithm 1's widening ratio α, and the factor it grows by after each step of a local search (1: the
        paper's fixed ratio).
    on_round
        Optional callback after every model call with the number of samples sent (progress bars).
    distance
        The norm every distance is measured in (:mod:`.distance`): rays are parametrised by it, and the best
        points are kept by it.
    """

    def __init__(
        self,
        model: Callable[[NDArray[np.float32]], NDArray[np.int64]],
        images: Sequence[ImageState],
        input_shape: tuple[int, ...],
        bounds: tuple[Bound, Bound],
        *,
        default_eps: float,
        ratio: float = PAPER_LOCAL_RATIO,
        growth: float = PAPER_LOCAL_GROWTH,
        on_round: Callable[[int], None] | None = None,
        distance: Distance = L2,
    ) -> None:
        self.model = model
        self.distance = distance
        self.images = list(images)
        self.input_shape = tuple(input_shape)
        self.lo, self.hi = bounds
        self.default_eps = default_eps
        self.ratio = ratio
        self.growth = growth
        self.on_round = on_round
        self.model_seconds = 0.0

    # -------------------------------------------------------------------------------- the search engine

    def ray(self, owner: int, theta: NDArray[np.float64], *, reach: bool = True) -> Ray | None:
        return Ray.make(self.images[owner].x0, theta, self.lo, self.hi, reach=reach, length=self.distance.length)

    def query(
        self, owners: NDArray[np.int64], points: NDArray[np.float64], *, record: bool = True
    ) -> NDArray[np.bool_]:
        """Send ``points`` (already paid for) to the model; record every confirmed adversarial."""
        batch = np.asarray(points, dtype=np.float32).reshape((len(points), *self.input_shape))
        t0 = time.perf_counter()
        try:
            labels = np.asarray(self.model(batch))
        except BaseException as err:
            self.refund_unsent(owners[getattr(err, "samples_sent", len(points)) :])
            raise
        finally:
            self.model_seconds += time.perf_counter() - t0
        if self.on_round is not None:
            self.on_round(len(points))
        adversarial = np.zeros(len(points), dtype=bool)
        for owner in np.unique(owners):
            rows = np.flatnonzero(owners == owner)
            img = self.images[owner]
            adv = img.is_adversarial(labels[rows])
            adversarial[rows] = adv
            if record and adv.any():
                hits = rows[adv]
                # Distances of the float32 points the model actually saw, so the figure is honest.
                dist = self.distance.of(batch[hits].reshape(len(hits), -1).astype(np.float64) - img.x0)
                # (img.x0 holds the float32 values the model sees, so an input that is already
                # misclassified has distortion exactly 0.)
                j = int(np.argmin(dist))
                if dist[j] < img.best_distance:
                    img.best_distance = float(dist[j])
                    img.best_point = batch[hits[j]].copy()
                    img.trace.append((img.ledger.spent, img.best_distance))
        return adversarial

    def refund_unsent(self, owners: NDArray[np.int64]) -> None:
        """Give each owner back one query per point of theirs that was paid for but never sent to the model."""
        for owner, count in zip(*np.unique(owners, return_counts=True), strict=True):
            self.images[int(owner)].ledger.refund(int(count))

    def run(self, searches: Sequence[RaySearch]) -> None:
        """Advance ``searches`` in lockstep until each is done or aborted for lack of budget."""
        active = [s for s in searches if not s.done]
        while active:
            # Charge each image for its searches' next points, in order; those it cannot afford stop.
            wanted: dict[int, int] = {}
            for s in active:
                wanted[s.owner] = wanted.get(s.owner, 0) + 1
            allowed = {o: self.images[o].ledger.affordable(n) for o, n in wanted.items()}
            for o, n in allowed.items():
                self.images[o].ledger.charge(n)
            sending: list[RaySearch] = []
            for s in active:
                if allowed[s.owner] > 0:
                    allowed[s.owner] -= 1
                    sending.append(s)
                else:
                    s.aborted = True
            if not sending:
                break
            owners = np.fromiter((s.owner for s in sending), dtype=np.int64, count=len(sending))
            # Each point in a float64 row, rounded into the float32 batch the model gets: one m×d array per round.
            points = np.empty((len(sending), self.images[sending[0].owner].x0.size), dtype=np.float32)
            row = np.empty(points.shape[1])
            for k, s in enumerate(sending):
                points[k] = s.ray.point(s.nxt, self.lo, self.hi, out=row)  # type: ignore[union-attr]
            adversarial = self.query(owners, points)
            for s, adv in zip(sending, adversarial, strict=True):
                s.feed(bool(adv))
            active = [s for s in sending if not s.done]

    # ---------------------------------------------------------------------------------- OracleGroup API

    def queries(self, member: int) -> int:
        return self.images[member].ledger.spent

    def remaining(self, member: int) -> int | float:
        return self.images[member].ledger.remaining

    def _value_search(self, owner: int, p: NDArray[np.float64], hint: float, lower: float, upper: float,
                      eps: float, cap: float) -> RaySearch:
        """A search for g at ``p``: Algorithm 1 around ``hint``, or — when an earlier answer bracketed it in
        [``lower``, ``hint``], ``hint`` labelled adversarial — a bisection of that bracket, no query to start.
        A finite ``upper`` (labelled adversarial already) ends Algorithm 1's bracket without a query."""
        ray = self.ray(owner, p)
        if math.isfinite(hint) and math.isfinite(lower) and 0.0 <= lower < hint < cap:
            return RaySearch(owner, ray, hint, eps, "global", cap, self.ratio, self.growth, lo=lower)
        hi = upper if math.isfinite(upper) and 0.0 < upper < cap else math.inf
        return RaySearch(owner, ray, hint, eps, "local", cap, self.ratio, self.growth, hi=hi)

    def answer(self, requests: Sequence[tuple[int, Request]]) -> list[Response]:
        per_request: list[list[RaySearch]] = []
        for owner, req in requests:
            searches = []
            if isinstance(req, Evaluate):
                eps = req.eps if req.eps is not None else self.default_eps
                cap = math.inf if req.cap is None else req.cap
                hints = req.hints if req.hints is not None else np.full(len(req.points), math.nan)
                lower = req.lower if req.lower is not None else np.full(len(req.points), math.nan)
                upper = req.upper if req.upper is not None else np.full(len(req.points), math.nan)
                for p, h, low, up in zip(req.points, hints, lower, upper, strict=True):
                    searches.append(self._value_search(owner, p, float(h), float(low), float(up), eps, cap))
            elif isinstance(req, Compare):
                for p, level in zip(req.points, req.levels, strict=True):
                    # (a comparison asks once at its level: no need for where the ray leaves the box)
                    searches.append(RaySearch(owner, self.ray(owner, p, reach=False), float(level), 0.0, "compare"))
            elif not isinstance(req, FlatCoordinates):  # (answered below, at no query)
                raise TypeError(f"unknown request {type(req).__name__}")
            per_request.append(searches)
        self.run([s for group in per_request for s in group])
        responses: list[Response] = []
        for (owner, req), searches in zip(requests, per_request, strict=True):
            # Answer the longest prefix of finished searches; anything after an aborted one is dropped.
            k = next((i for i, s in enumerate(searches) if not s.done), len(searches))
            exhausted = k < len(searches)
            spent = self.images[owner].ledger.spent
            if isinstance(req, FlatCoordinates) and self.distance is not L2:
                responses.append(FlatMask(flat=None, queries=spent))  # flat_pixels' geometry is L2's: knows nothing
            elif isinstance(req, FlatCoordinates):
                responses.append(flat_pixels(self.images[owner].x0, np.asarray(req.point, dtype=float), req.value,
                                             req.radius, self.lo, self.hi, spent))
            elif isinstance(req, Evaluate):
                responses.append(
                    Evaluation(
                        values=np.array([s.value for s in searches[:k]], dtype=float),
                        eps=np.array([s.achieved for s in searches[:k]], dtype=float),
                        queries=spent,
                        exhausted=exhausted,
                    )
                )
            else:
                responses.append(
                    Comparison(below=np.array([s.below for s in searches[:k]], dtype=bool), queries=spent,
                               exhausted=exhausted)
                )
        return responses
