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
from typing import Any

import numpy as np
from numpy.typing import NDArray

from zeroopt import Compare, Comparison, Evaluate, Evaluation, FlatCoordinates, FlatMask, OracleGroup, QueryLedger
from zeroopt.core.arrays import host, is_foreign, like, namespace, take
from zeroopt.oracles.requests import Request, Response

from .criterion import Criterion, Misclassification
from .distance import L2, Distance
from .flat import flat_pixels
from .ray import Bound, Ray
from .search import (  # noqa: F401  (re-exported: the searches' names, where they were)
    GALLOPING_GROWTH,
    MAX_DOWN_RATIO,
    PAPER_LOCAL_GROWTH,
    PAPER_LOCAL_RATIO,
    STEPS_BEFORE_GROWTH,
    RaySearch,
)

__all__ = ["BoundaryOracleGroup", "Ray", "RaySearch"]

UNTARGETED = Misclassification()


@dataclass
class ImageState:
    """Per-image bookkeeping: ledger, best verified adversarial, trace of improvements."""

    x0: NDArray[np.float64]  # as the model sees it (float32 values), so distances are exact
    label: int
    ledger: QueryLedger
    best_distance: float = math.inf
    best_point: NDArray[np.float64] | None = None
    trace: list[tuple[int, float]] = field(default_factory=list)
    #: x0 on the model's device (``ModelOptions(arrays="model")``): the rays start there; ``None``: numpy.
    x0_device: Any = None


class BoundaryOracleGroup(OracleGroup):
    """Answers g(θ) requests for many images at once, one model call per search step.

    Parameters
    ----------
    model
        Hard-label model on a batch ``(n, *input_shape)`` returning ``(n,)`` labels. The array it is sent is
        written again on the next round: a model that keeps it must copy it (the attack's adapters do).
    images
        Per-image state (x0 flat, label, ledger).
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
    criterion
        Which labels make a point adversarial (:mod:`.criterion`; default: any but the input's own).
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
        criterion: Criterion = UNTARGETED,
    ) -> None:
        self.model = model
        self.distance = distance
        self.criterion = criterion
        self.images = list(images)
        self.input_shape = tuple(input_shape)
        self.lo, self.hi = bounds
        self.default_eps = default_eps
        self.ratio = ratio
        self.growth = growth
        self.on_round = on_round
        self.model_seconds = 0.0
        self._bounds_on_device: tuple[Any, Any] | None = None
        self._rows: NDArray[np.float32] | None = None
        self._row: NDArray[np.float64] | None = None

    # -------------------------------------------------------------------------------- the search engine

    def ray(self, owner: int, theta: NDArray[np.float64], *, reach: bool = True) -> Ray | None:
        img = self.images[owner]
        if img.x0_device is None:
            return Ray.make(img.x0, host(theta), self.lo, self.hi, reach=reach, length=self.distance.length)
        lo, hi = self._device_bounds
        return Ray.make(img.x0_device, like(theta, img.x0_device), lo, hi, reach=reach, length=self.distance.length)

    @property
    def _device_bounds(self) -> tuple[Any, Any]:
        """The bounds beside the rays on the model's device (scalars stay scalars)."""
        if self._bounds_on_device is None:
            ref = next(img.x0_device for img in self.images if img.x0_device is not None)
            self._bounds_on_device = tuple(b if np.ndim(b) == 0 else like(np.asarray(b, dtype=float), ref)
                                           for b in (self.lo, self.hi))
        return self._bounds_on_device

    def query(
        self, owners: NDArray[np.int64], points: NDArray[np.float64], *, record: bool = True
    ) -> NDArray[np.bool_]:
        """Send ``points`` (already paid for) to the model; record every confirmed adversarial."""
        on_device = is_foreign(points)
        batch = points.reshape((points.shape[0], *self.input_shape)) if on_device else \
            np.asarray(points, dtype=np.float32).reshape((len(points), *self.input_shape))
        t0 = time.perf_counter()
        try:
            labels = np.asarray(self.model(batch))  # (labels come back to the host: n integers)
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
            adv = self.criterion.is_adversarial(labels[rows], img.label, int(owner))
            adversarial[rows] = adv
            if record and adv.any():
                hits = rows[adv]
                # Distances of the float32 points the model actually saw, so the figure is honest.
                # (img.x0 holds the float32 values the model sees, so an input that is already
                # misclassified has distortion exactly 0.)
                seen = host(take(batch, hits)) if on_device else batch  # (the few hits only, to the host)
                at = np.arange(len(hits)) if on_device else hits
                dist, j = self._nearest(img.x0, seen, at)
                if dist < img.best_distance:
                    img.best_distance = dist
                    img.best_point = seen[at[j]].copy()
                    img.trace.append((img.ledger.spent, img.best_distance))
        return adversarial

    def _round_buffers(self, m: int, d: int) -> tuple[NDArray[np.float32], NDArray[np.float64]]:
        """A round's float32 rows and a float64 row to build each in, kept from round to round: fresh arrays of
        this size would be new memory, touched page by page, on every round (the model is sent its own copy)."""
        if self._rows is None or self._rows.shape[0] < m or self._rows.shape[1] != d:
            self._rows, self._row = np.empty((max(m, 1), d), dtype=np.float32), np.empty(d)
        return self._rows[:m], self._row

    def _nearest(self, x0: NDArray[np.float64], rows: NDArray[np.float32], at: NDArray[np.int64]) -> tuple[float, int]:
        """The least distance from ``x0`` among ``rows[at]``, and its position in ``at`` (the first of equals):
        each row widened to float64 in one reused buffer, not the hits' rows copied twice over."""
        delta = np.empty(x0.shape)
        best, arg = math.inf, 0
        for k, i in enumerate(at):
            dist = float(self.distance.of(np.subtract(rows[i].reshape(-1), x0, out=delta)[None, :])[0])
            if dist < best:
                best, arg = dist, k
        return best, arg

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
            device_x0 = self.images[sending[0].owner].x0_device
            if device_x0 is not None:  # the rows built on the model's device, in its namespace
                lo, hi = self._device_bounds
                xp = namespace(device_x0)
                rows = Ray.points([s.ray for s in sending], [s.nxt for s in sending], lo, hi)  # type: ignore[misc]
                points = xp.astype(rows, xp.float32)
            else:
                points, row = self._round_buffers(len(sending), self.images[sending[0].owner].x0.size)
                for k, s in enumerate(sending):
                    s.ray.point(s.nxt, self.lo, self.hi, out=row, into=points[k])  # type: ignore[union-attr]
            adversarial = self.query(owners, points)
            for s, adv in zip(sending, adversarial, strict=True):
                s.feed(bool(adv))
            active = [s for s in sending if not s.done]

    # ---------------------------------------------------------------------------------- OracleGroup API

    def queries(self, member: int) -> int:
        return self.images[member].ledger.spent

    def remaining(self, member: int) -> int | float:
        return self.images[member].ledger.remaining

    def _rays(self, owner: int, points: Any, *, reach: bool = True) -> list[Ray | None] | None:
        """On the model's device, the rays of all ``points`` at once (:meth:`Ray.make_many`); ``None`` in numpy."""
        img = self.images[owner]
        if img.x0_device is None:
            return None
        lo, hi = self._device_bounds
        thetas = like(points, img.x0_device)
        return Ray.make_many(img.x0_device, thetas, lo, hi, reach=reach, norms=self.distance.lengths(thetas))

    def _value_search(self, owner: int, p: NDArray[np.float64], hint: float, lower: float, upper: float,
                      eps: float, cap: float, ray: Ray | None | str = "make") -> RaySearch:
        """A search for g at ``p``: Algorithm 1 around ``hint``, or — when an earlier answer bracketed it in
        [``lower``, ``hint``], ``hint`` labelled adversarial — a bisection of that bracket, no query to start.
        A finite ``upper`` (labelled adversarial already) ends Algorithm 1's bracket without a query."""
        ray = self.ray(owner, p) if ray == "make" else ray
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
                rays = self._rays(owner, req.points)
                for k, (p, h, low, up) in enumerate(zip(req.points, hints, lower, upper, strict=True)):
                    ray = "make" if rays is None else rays[k]
                    searches.append(self._value_search(owner, p, float(h), float(low), float(up), eps, cap, ray))
            elif isinstance(req, Compare):
                rays = self._rays(owner, req.points, reach=False)
                for k, (p, level) in enumerate(zip(req.points, req.levels, strict=True)):
                    # (a comparison asks once at its level: no need for where the ray leaves the box)
                    ray = self.ray(owner, p, reach=False) if rays is None else rays[k]
                    searches.append(RaySearch(owner, ray, float(level), 0.0, "compare"))
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
            if isinstance(req, FlatCoordinates) and self.distance != L2:
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
