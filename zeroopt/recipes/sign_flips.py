"""A search over sign vectors: flip blocks of the incumbent's signs, coarse to fine, one query each.

Where the natural search space is {±1}ᵈ — the L∞ distance from x0 to a boundary along θ is smallest at a vertex
direction of the cube, a sign vector — a descent on ℝᵈ spends its probes on directions that cannot be optimal.
This search (RayS's, Chen & Gu, KDD 2020, from its paper) keeps a sign vector, flips one block of its signs per
candidate with blocks halving in size as the rounds go (the whole vector, then halves, quarters, …), and asks for
each candidate only whether its value is below the incumbent's: an oracle answering :class:`~zeroopt.Evaluate`
with ``cap`` at the incumbent's value spends one query on a candidate that is not, and searches for the value of
one that is. Every iterate is ``c·s`` for a sign vector ``s``, with ``c = ‖x0‖/√d`` (the start's length, so an
iterate of the unit sphere stays on it).

The parts, each of one stage (:mod:`zeroopt.core.stages`):

- :class:`BlockFlips` (``sample``): the candidates, from a block order (:func:`block_order`: ranges of the flat
  vector, or square tiles of an image, coarse to fine);
- :class:`BelowIncumbent` (``estimate``): each candidate asked at the incumbent's value, refined only if below;
  or :class:`BelowLoweredIncumbent`: asked once a margin below it, and taken at that target when it passes;
- :class:`TakeBest` (``step``): the best candidate below the incumbent becomes the iterate, and β the share of
  the coordinates the next block holds;
- :class:`~zeroopt.PrecisionFollowsValue` (``precision``): a candidate's value searched to a precision relative
  to it and to β — a flip of fewer coordinates moves the distance less, so it is measured finer.

:func:`sign_flips` is their chain, with its defaults in its signature.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Generator, Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray

from ..core.arrays import host, like
from ..core.base import GradientEstimate, Move, SolverContext
from ..core.chain import Chain, chain
from ..core.stages import FixedProbes, Iteration
from ..oracles.requests import Compare, Comparison, Evaluate, Evaluation, Request, Response
from ..sample.precision import PrecisionFollowsValue
from .registry import options_from, register_solver

__all__ = ["BLOCK_LAYOUTS", "RELATIVE_EPS", "BelowIncumbent", "BelowLoweredIncumbent", "BlockFlips", "TakeBest",
           "block_order", "onto_the_cube", "sign_flips", "signs_of"]

BlockLayout = Literal["memory", "tiles", "channel-tiles"]
#: How blocks of coordinates are formed: contiguous ranges of the flat vector (RayS's), square tiles of an image
#: across its channels (ranges of a Z-order over rows and columns), or square tiles of one channel at a time,
#: coarse to fine in all three.
BLOCK_LAYOUTS: tuple[str, ...] = ("memory", "tiles", "channel-tiles")
#: How a candidate is taken (:func:`sign_flips`'s ``accept``): its value searched out, or asked a margin below.
ACCEPT_RULES: tuple[str, ...] = ("search", "margin")
#: :func:`sign_flips`'s default ``relative_eps``: a candidate's value searched to a tenth of what a flip of every
#: coordinate can change (the why: its docstring).
RELATIVE_EPS = 0.1
#: The memory key under which :class:`BlockFlips` keeps its place in the schedule: (level, block index).
POSITION = "flip_position"
#: ... the length of every coordinate of an iterate (‖x0‖/√d: the start's length kept) ...
SCALE = "flip_scale"
#: ... whether the start's own signs are still to be offered, and whether this iteration's first candidate is them ...
OFFER = "flip_offer"
OFFERED = "flip_offered"
#: ... and the share of the coordinates the next block holds (the next iteration's β).
NEXT_SHARE = "flip_next_share"


def signs_of(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """The sign vector of ``x`` (a zero coordinate counts as +1)."""
    return np.where(np.asarray(x) < 0, -1.0, 1.0)


def _z_order(rows: int, cols: int) -> NDArray[np.intp]:
    """The pixels of a ``rows × cols`` grid in Z-order (bits of row and column interleaved): any aligned range of
    4ᵏ of them is a square tile, and halving a range splits it into two rectangles."""
    r, c = np.divmod(np.arange(rows * cols), cols)
    code = np.zeros(rows * cols, dtype=np.int64)
    for bit in range(max(rows, cols).bit_length()):
        code |= ((r >> bit) & 1) << (2 * bit + 1) | ((c >> bit) & 1) << (2 * bit)
    return np.argsort(code, kind="stable")


def block_order(dim: int, shape: tuple[int, ...] | None, layout: BlockLayout) -> NDArray[np.intp]:
    """The coordinates in the order whose contiguous ranges are the blocks flipped.

    ``"memory"``: ``0 … d−1``. ``"tiles"``, for an image ``(C, H, W)`` or ``(H, W)``: pixels in Z-order, each with
    all its channels, so a block is a tile of the image across every channel. ``"channel-tiles"``: each channel's
    pixels in Z-order, one channel after the other, so a block is a tile of one channel (a colour change, not only
    a brightness change, once blocks are within a channel). Any other shape falls back to ``"memory"``.
    """
    if layout not in BLOCK_LAYOUTS:
        raise ValueError(f"block layout {layout!r} is not one of {BLOCK_LAYOUTS}")
    if layout == "memory" or shape is None or len(shape) not in (2, 3) or math.prod(shape) != dim:
        return np.arange(dim)
    channels, rows, cols = (1, *shape) if len(shape) == 2 else shape
    pixels = _z_order(rows, cols)
    if layout == "channel-tiles":
        return (np.arange(channels)[:, None] * rows * cols + pixels[None, :]).ravel()
    return (np.arange(channels)[None, :] * rows * cols + pixels[:, None]).ravel()


@functools.lru_cache(maxsize=8)
def _cached_order(dim: int, shape: tuple[int, ...] | None, layout: BlockLayout) -> NDArray[np.intp]:
    return block_order(dim, shape, layout)


@dataclass(frozen=True)
class BlockFlips:
    """Stage ``sample``: ``q`` candidates, each the incumbent's signs with the next block of the schedule flipped.

    The schedule: at level ℓ the coordinates (in the order :func:`block_order` gives for ``layout`` and ``shape``)
    fall in 2^ℓ blocks of ⌈d/2^ℓ⌉; the blocks of a level are flipped in turn, then the next level's. Once blocks
    are single coordinates the last level repeats (RayS's schedule), or with ``revisit`` the schedule starts
    again from level ``revisit`` (its blocks of d/2^revisit). A start that is not a sign vector is offered its own
    signs, unflipped, first: the search moves onto the cube there even where they are not below the start
    (:func:`onto_the_cube`), since every later candidate is a flip of the iterate's signs.
    """

    layout: BlockLayout = "memory"  # as sign_flips builds it
    shape: tuple[int, ...] | None = None  # the input's shape, which the "tiles" layouts read
    revisit: int | None = None
    stage: ClassVar[str] = "sample"
    draws: ClassVar[bool] = False  # the schedule is the same at every seed

    def init(self, x0: NDArray[np.float64]) -> Mapping[str, Any]:
        x = host(x0)
        scale = float(np.linalg.norm(x)) / math.sqrt(max(x.size, 1)) or 1.0
        # A start that is not a sign vector (times its scale) is offered its own signs first.
        return {POSITION: (0, 0), SCALE: scale, OFFER: not np.allclose(np.abs(x), scale, rtol=1e-9)}

    def blocks(self, d: int, position: tuple[int, int], count: int) -> tuple[list[NDArray[np.intp]], tuple[int, int]]:
        """The next ``count`` blocks (as coordinate indices) from ``position``, and the position after them."""
        order = _cached_order(d, self.shape, self.layout)
        level, index = position
        out = []
        for _ in range(count):
            size = math.ceil(d / 2**level)
            start, end = index * size, min(d, (index + 1) * size)
            out.append(order[start:end])
            index += 1
            if end >= d:  # the level is done: the next, or once blocks are single coordinates this one or `revisit`
                level, index = (level + 1 if size > 1 else level if self.revisit is None else self.revisit), 0
        return out, (level, index)

    def update(self, it: Iteration) -> Iteration:
        x = host(it.state.x)
        d, signs, offer = x.size, signs_of(x), bool(it.memory.get(OFFER, False))
        blocks, position = self.blocks(d, it.memory.get(POSITION, (0, 0)), max(it.q - offer, 0))
        candidates = [signs] if offer else []
        for block in blocks:
            flipped = signs.copy()
            flipped[block] *= -1.0
            candidates.append(flipped)
        probes = np.array(candidates) * it.memory.get(SCALE, 1.0)
        share = len(self.blocks(d, position, 1)[0][0]) / d
        return replace(it, probes=like(probes, it.state.x), scale=1.0,
                       memory={**it.memory, POSITION: position, OFFER: False, OFFERED: offer, NEXT_SHARE: share})


@dataclass(frozen=True)
class BelowIncumbent:
    """Stage ``estimate``: every candidate asked whether its value is below the incumbent's (one query), and
    searched to the iteration's precision only where it is. Writes the best candidate (no gradient: ``g`` = 0)."""

    stage: ClassVar[str] = "estimate"

    def init(self, x0: NDArray[np.float64]) -> Mapping[str, Any]:
        return {}

    def update(self, it: Iteration) -> Generator[Request, Response, Iteration]:
        s, points = it.state, it.probes
        zero = like(np.zeros(host(s.x).size), s.x)
        if points is None or len(points) == 0:
            return replace(it, estimate=GradientEstimate(g=zero, eps=0.0, used=0), direction=zero)
        level = float(s.fx)
        cap = level if math.isfinite(level) else None
        resp = yield Evaluate(points=points, eps=it.eps, hints=np.full(len(points), level), cap=cap)
        assert isinstance(resp, Evaluation)
        values, eps = np.asarray(resp.values, dtype=float), np.asarray(resp.eps, dtype=float)
        best = int(np.argmin(values)) if len(values) else -1
        found = best >= 0 and values[best] < level
        est = GradientEstimate(g=zero, eps=float(eps.max(initial=0.0)), used=len(values),
                               best_x=points[best] if found else None,
                               best_f=float(values[best]) if found else math.inf,
                               best_eps=float(eps[best]) if found else 0.0)
        return replace(it, estimate=(yield from onto_the_cube(it, est, float(values[0]), float(eps[0]))),
                       direction=zero)


def onto_the_cube(it: Iteration, est: GradientEstimate, known: float = math.inf,
                  known_eps: float = 0.0) -> Generator[Request, Response, GradientEstimate]:
    """``est``, or where this iteration offered the start's own signs and no candidate passed, those signs at
    their value — ``known`` where the oracle already said it (finite), else searched out with no cap: the iterate
    moves onto the cube there (:class:`TakeBest`), also above the start's value, since every later candidate
    flips the iterate's signs; the start stays the best point seen.

    A start off the cube (a targeted attack's direction towards a target image) can lie below every vertex near
    it, and a search that only takes candidates below it would then never move."""
    if not it.memory.get(OFFERED) or est.best_x is not None or it.probes is None or not len(it.probes):
        return est
    value, eps = known, known_eps
    if not math.isfinite(value):
        resp = yield Evaluate(points=it.probes[:1], eps=it.eps, hints=np.full(1, float(it.state.fx)), cap=None)
        assert isinstance(resp, Evaluation)
        value, eps = float(np.asarray(resp.values)[0]), float(np.asarray(resp.eps)[0])
    if not math.isfinite(value):  # no boundary along its own signs: the search stays where it is
        return est
    return replace(est, used=est.used + 1, best_x=it.probes[0], best_f=value, best_eps=eps)


#: The memory key of :class:`BelowLoweredIncumbent`'s gain factor κ (the target is the value f less ``κ·β·|f|``).
GAIN = "flip_gain"


@dataclass(frozen=True)
class BelowLoweredIncumbent:
    """Stage ``estimate``: every candidate asked once whether its value is below the incumbent's value f less
    ``κ·β·|f|``, with β the share of the coordinates its block flips; the first that is becomes the iterate at that
    target (at its own value where the oracle computed it to compare), with no search for its own.

    A flip of a share β of the signs moves the value by about β of itself, and searching out how much costs more
    queries than the comparison did; asked below the incumbent by a margin, a candidate that passes has gained at
    least that margin, for one query. κ follows the outcomes, as a (1+1) evolution strategy's step does: up by
    ``growth`` on a success and down by ``growth ** (−p / (1 − p))`` on a failure, so it settles where a share
    ``success_rate`` = p of the candidates pass.
    """

    gain: float = 1.0
    growth: float = 1.5
    success_rate: float = 0.2
    max_margin: float = 0.5
    stage: ClassVar[str] = "estimate"

    def __post_init__(self) -> None:
        for name, value, ok in (("gain", self.gain, self.gain > 0), ("growth", self.growth, self.growth > 1),
                                ("success_rate", self.success_rate, 0 < self.success_rate < 1),
                                ("max_margin", self.max_margin, 0 < self.max_margin < 1)):
            if not ok:
                raise ValueError(f"{name} out of range: {value!r} (gain > 0, growth > 1, success_rate and max_margin "
                                 "in (0, 1))")

    def init(self, x0: NDArray[np.float64]) -> Mapping[str, Any]:
        return {GAIN: float(self.gain)}

    def update(self, it: Iteration) -> Generator[Request, Response, Iteration]:
        s, points = it.state, it.probes
        level = float(s.fx)
        kappa = float(it.memory.get(GAIN, self.gain))
        target = level - min(self.max_margin, kappa * float(s.beta)) * abs(level)
        # No candidate, no incumbent value yet, or a value of 0 with no margin to ask below: each candidate searched.
        if points is None or len(points) == 0 or not target < level:
            return (yield from BelowIncumbent().update(it))
        resp = yield Compare(points=points, levels=np.full(len(points), target))
        assert isinstance(resp, Comparison)
        below = np.asarray(resp.below, dtype=bool)
        passed = int(np.flatnonzero(below)[0]) if below.any() else -1
        failures = len(below) if passed < 0 else passed
        kappa *= self.growth ** ((passed >= 0) - failures * self.success_rate / (1.0 - self.success_rate))
        # An oracle that computed the values to compare them has said the candidate's own; else the target bounds it.
        known = resp.values is not None and passed >= 0
        value = float(np.asarray(resp.values)[passed]) if known else target
        value_eps = float(np.asarray(resp.eps)[passed]) if known and resp.eps is not None else level - target
        zero = like(np.zeros(host(s.x).size), s.x)
        est = GradientEstimate(g=zero, eps=0.0, used=len(below), best_x=points[passed] if passed >= 0 else None,
                               best_f=value if passed >= 0 else math.inf, best_eps=value_eps if passed >= 0 else 0.0)
        first = (math.inf, 0.0) if resp.values is None else (
            float(np.asarray(resp.values)[0]), 0.0 if resp.eps is None else float(np.asarray(resp.eps)[0]))
        return replace(it, estimate=(yield from onto_the_cube(it, est, *first)), direction=zero,
                       memory={**it.memory, GAIN: kappa})


@dataclass(frozen=True)
class TakeBest:
    """Stage ``step``: the best candidate below the incumbent becomes the iterate (or the start's own signs where
    :func:`onto_the_cube` searched them out); otherwise the iterate stays. The next iteration's β is the share of
    the coordinates its block holds (what the sampler noted; else β)."""

    stage: ClassVar[str] = "step"

    def init(self, x0: NDArray[np.float64]) -> Mapping[str, Any]:
        return {}

    def update(self, it: Iteration) -> Iteration:
        s, est = it.state, it.estimate
        beta = float(it.memory.get(NEXT_SHARE, s.beta))
        onto_cube = bool(it.memory.get(OFFERED)) and est is not None and math.isfinite(est.best_f)
        if est is not None and est.best_x is not None and (est.best_f < s.fx or onto_cube):
            move = Move(est.best_x, est.best_f, est.best_eps, 1.0, s.step, beta, memory=it.memory)
        else:
            move = Move(s.x, s.fx, s.fx_eps, 0.0, s.step, beta, memory=it.memory)
        return replace(it, move=move)


def sign_flips(
    dim: int,
    shape: tuple[int, ...] | None = None,
    *,
    q: int = 1,
    layout: BlockLayout = "memory",
    relative_eps: float = RELATIVE_EPS,
    revisit: int | None = None,
    accept: Literal["search", "margin"] = "margin",
) -> Chain:
    """The sign-vector search as a chain: ``q`` block flips a round, each asked at the incumbent's value.

    Parameters
    ----------
    dim, shape
        The problem's dimension and, for an image, its shape (the ``"tiles"`` layouts read it).
    q
        Candidates per round, asked together (one model call for all of them where the oracle batches); one
        a round takes each improvement before the next candidate is formed, as RayS does.
    layout
        How blocks are formed (:data:`BLOCK_LAYOUTS`): ranges of the flat vector (RayS's: for an image ``(C, H,
        W)``, bands of rows), or square tiles of an image. Which ends lower depends on the
        start (docs/defaults.md).
    relative_eps
        The precision a candidate below the incumbent is searched to, relative to its value, for a flip of every
        coordinate; a flip of a share β of them is measured to ``relative_eps · β`` of its value (β follows the
        blocks: :class:`TakeBest`). Near a flat boundary a flip of a share β of the signs moves the distance
        by about β of itself, so the default measures a tenth of what a flip can change: coarser, the small
        late improvements go unseen; finer, each costs queries that change no comparison.
    revisit
        Once the blocks are single coordinates: ``None`` flips them again in turn (RayS's schedule); a level ℓ
        starts the schedule again from its blocks of d/2^ℓ coordinates.
    accept
        How a candidate is taken: ``"search"`` asks it at the incumbent's value and searches out its own value
        where it is below (:class:`BelowIncumbent`, RayS's way); ``"margin"`` asks it once at a target a margin
        below the incumbent's value, which it is taken at when it passes (:class:`BelowLoweredIncumbent`).
    """
    if int(q) < 1:
        raise ValueError(f"q must be a positive number of candidates a round, got {q!r}")
    if not relative_eps > 0:
        raise ValueError(f"relative_eps must be positive, got {relative_eps!r}")
    if revisit is not None and not (isinstance(revisit, int) and revisit >= 0):
        raise ValueError(f"revisit must be None or a level >= 0, got {revisit!r}")
    if accept not in ACCEPT_RULES:
        raise ValueError(f"accept must be one of {ACCEPT_RULES}, got {accept!r}")
    return chain(
        PrecisionFollowsValue(relative_eps),
        FixedProbes(int(q)),
        BlockFlips(layout, None if shape is None else tuple(shape), revisit),
        BelowIncumbent() if accept == "search" else BelowLoweredIncumbent(),
        TakeBest(),
        name="sign-flips", beta=1.0, step=1.0,
    )


#: :func:`sign_flips`'s keyword arguments as the registry's options (``solver_options``, ``-o key=value``).
SignFlipsOptions = options_from(sign_flips)


@register_solver("sign-flips", SignFlipsOptions, "Search over sign vectors: block flips coarse to fine, each "
                 "candidate one query at the incumbent's value (RayS's search)", search_space="sign vectors")
def _sign_flips(opts: SignFlipsOptions, context: SolverContext) -> Chain:
    return sign_flips(context.dim, context.shape, **dataclasses.asdict(opts))
