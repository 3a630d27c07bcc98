"""Initial directions for the attack: the reference code's search, batched, with a fallback.

For each input, candidate directions θ are probed with one query each (is x0 + θ adversarial?); the
adversarial ones are then bisected towards x0 in chunks, each first checked at the best distance so far.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from zeroopt import (
    BoxDirections,
    DirectionSampler,
    FreshStart,
    RaceWinner,
    SolverState,
    halving_rounds,
    make_sampler,
    race,
)
from zeroopt.core.arrays import copy

from .boundary import BoundaryOracleGroup, ImageState, RaySearch
from .inputs import as_batch
from .pieces import SELECTIONS
from .record import record_search
from .tournament import tournament

if TYPE_CHECKING:
    from .run import AttackRun

__all__ = [
    "already_adversarial", "fallback_candidates", "fallback_picks", "flat_pool", "fresh_initial_search",
    "initial_candidates", "initial_directions", "initial_search", "uniform_candidates",
]

INITIAL_CHUNK = 10  # initial directions bisected per round-trip, so later ones are pruned by the best so far
#: Most new random directions drawn per input and round once every earlier one failed (each round doubles the last
#: one's up to this): a round's candidates are held in memory at once, d values each.
MAX_RETRY_DIRECTIONS = 64


def flat_pool(
    target_examples: ArrayLike | None, target_pool: tuple[ArrayLike, ArrayLike] | None, dim: int
) -> tuple[NDArray[np.float64] | None, tuple[NDArray[np.float64], NDArray[np.int64]] | None]:
    """The caller's target examples and pool as flat float arrays, converted once for all inputs."""
    examples = None if target_examples is None else as_batch(target_examples, "target_examples").reshape(-1, dim)
    pool = None
    if target_pool is not None:
        pool = (as_batch(target_pool[0], "target_pool x").reshape(-1, dim), np.asarray(target_pool[1]))
    return examples, pool


def initial_candidates(
    images: list[ImageState],
    todo: list[int],
    rngs: list[np.random.Generator],
    n_initial: int,
    tgt: NDArray[np.int64] | None,
    target_examples: NDArray[np.float64] | None,
    target_pool: tuple[NDArray[np.float64], NDArray[np.int64]] | None,
    sampler: DirectionSampler | None = None,
) -> dict[int, NDArray[np.float64]]:
    """Candidate directions θ per input: random (untargeted) or toward target examples.

    ``target_examples`` and the pool's inputs come flat, ``(M, d)``, as :func:`flat_pool` makes them.
    Untargeted candidates are Gaussian (the reference code's), or drawn by ``sampler`` — any zeroopt
    direction sampler — and scaled to the Gaussian's typical norm √d.
    """
    if isinstance(n_initial, bool) or not isinstance(n_initial, (int, np.integer)) or n_initial <= 0:
        raise ValueError(f"n_initial must be a positive integer, got {n_initial!r}")
    out: dict[int, NDArray[np.float64]] = {}
    if tgt is None:
        for i in todo:
            d = images[i].x0.size
            if sampler is None:
                out[i] = rngs[i].standard_normal((n_initial, d))
            else:
                out[i] = sampler.sample(rngs[i], n_initial, d, 0) * math.sqrt(d)
        return out
    if target_examples is None and target_pool is None:
        raise ValueError(
            "a targeted attack starts from examples of the target class: pass start=Start(target_examples=...) "
            "with (M, *input_shape) inputs, or start=Start(target_pool=(x, y)) to draw them from a dataset"
        )
    for i in todo:
        if target_examples is not None:
            pool = target_examples
        else:
            px, py = target_pool  # type: ignore[misc]
            pool = px[py == tgt[i]]
            if len(pool) == 0:
                raise ValueError(f"target_pool holds no example of target class {tgt[i]} (input {i})")
        pick = rngs[i].permutation(len(pool))[:n_initial]
        out[i] = pool[pick] - images[i].x0
    return out


def uniform_candidates(
    group: BoundaryOracleGroup, todo: list[int], rngs: list[np.random.Generator], n_uniform: int
) -> dict[int, NDArray[np.float64]]:
    """``n_uniform`` candidates θ = z − x0 per input, z uniform in the input domain (HopSkipJump's start):
    :class:`zeroopt.BoxDirections` offsets, probed at z itself."""
    out: dict[int, NDArray[np.float64]] = {}
    for i in todo:
        x0 = group.images[i].x0
        out[i] = BoxDirections(group.lo - x0, group.hi - x0).offsets(rngs[i], n_uniform, x0.size)
    return out


def fallback_picks(
    images: list[ImageState],
    todo: list[int],
    rngs: list[np.random.Generator],
    n_initial: int,
    tgt: NDArray[np.int64] | None,
    target_pool: tuple[NDArray[np.float64], NDArray[np.int64]] | None,
) -> dict[int, NDArray[np.int64]]:
    """Per untargeted input, the rows of ``target_pool`` (labelled differently) its fallback would try first.

    Only indices are drawn, from each input's generator, for every input of ``todo`` whether or not it will need
    its fallback, so that every generator moves the same way whatever the model answers. Empty for a targeted
    attack (no fallback) or without a pool.
    """
    if tgt is not None or target_pool is None:
        return {}
    py = target_pool[1]
    out: dict[int, NDArray[np.int64]] = {}
    for i in todo:
        other = np.flatnonzero(py != images[i].label)
        out[i] = other[rngs[i].permutation(len(other))[:n_initial]]
    return out


def fallback_candidates(
    images: list[ImageState],
    needy: list[int],
    picks: dict[int, NDArray[np.int64]],
    target_pool: tuple[NDArray[np.float64], NDArray[np.int64]] | None,
    tgt: NDArray[np.int64] | None,
) -> dict[int, NDArray[np.float64]]:
    """Untargeted inputs whose random directions all fail try directions toward inputs of other classes.

    Candidates: the examples of ``target_pool`` that :func:`fallback_picks` drew (if a pool is given), then the
    other inputs of the batch with a different label. Used only when every random direction failed, so inputs
    that random directions serve get exactly the results of one-at-a-time attacks. Each input gets at most as
    many candidates as it has queries left (one query asks one candidate; those past it could never be asked),
    so a batch of N inputs builds at most N × budget of them, not N²; inputs with none are left out.
    """
    if tgt is not None:
        return {}
    out: dict[int, NDArray[np.float64]] = {}
    for i in needy:
        x0, label, left = images[i].x0, images[i].label, images[i].ledger.remaining
        room = len(images) + len(picks.get(i, ())) if not math.isfinite(left) else max(0, int(left))
        rows: list[NDArray[np.float64]] = []
        if target_pool is not None and i in picks:
            rows += list(target_pool[0][picks[i][:room]])
        for img in images:
            if len(rows) >= room:
                break
            if img.label != label:
                rows.append(img.x0)
        if rows:
            out[i] = np.array(rows).reshape(-1, x0.size) - x0
    return out


def _probe(
    group: BoundaryOracleGroup, candidates: dict[int, NDArray[np.float64]]
) -> dict[int, list[tuple[NDArray[np.float64], float]]]:
    """One query per candidate θ (the point x0 + θ): which candidates give an adversarial point."""
    probes = []
    for i, thetas in candidates.items():
        for theta in thetas:
            probes.append(RaySearch(i, group.ray(i, theta), group.distance.length(theta), 0.0, "compare"))
    group.run(probes)
    hits: dict[int, list[tuple[NDArray[np.float64], float]]] = {i: [] for i in candidates}
    for s in probes:
        if s.done and s.below:
            hits[s.owner].append((s.ray.direction, s.start))  # type: ignore[union-attr]
    return hits


def initial_search(
    group: BoundaryOracleGroup,
    candidates: dict[int, NDArray[np.float64]],
    eps: float,
    selection: str = "bisect-all",
    relative: float = 0.0,
) -> dict[int, tuple[NDArray[np.float64], float]]:
    """The reference code's initialisation, batched.

    One query per candidate tells which candidate points are adversarial; inputs for which none is are left
    out of the answer (:func:`initial_directions` then tries their fallback). The adversarial candidates are then
    bisected towards x0 in chunks, each direction first checked at the best distance so far (one query
    prunes it). With ``selection="tournament"`` they are instead knocked out at shared radii and only the
    winner is bisected (:func:`~applications.hardlabel.tournament.tournament`: far fewer queries);
    ``"halving-tournament"`` is the same without its acceleration (the radius halves every round);
    ``"record"`` asks each candidate once, just below the best distance so far, with no probe round first
    (:func:`~applications.hardlabel.record.record_search`: about half the tournament's queries). A winner's
    distance is searched to ``eps``, or to ``relative`` of itself where that is coarser.
    """
    if selection not in SELECTIONS:
        raise ValueError(f"initial_selection must be one of {SELECTIONS}, got {selection!r}")
    if selection == "record":
        return record_search(group, candidates, eps, relative=relative)
    hits = _probe(group, candidates)
    if selection in ("tournament", "halving-tournament"):
        return tournament(group, hits, eps, accelerate=selection == "tournament", relative=relative)
    best: dict[int, tuple[NDArray[np.float64], float]] = {}
    for c in range(0, max((len(h) for h in hits.values()), default=0), INITIAL_CHUNK):
        searches = []
        for i, h in hits.items():
            cap = best[i][1] if i in best else math.inf
            for direction, lam in h[c : c + INITIAL_CHUNK]:
                searches.append(RaySearch(i, group.ray(i, direction), lam, eps, "global", cap,
                                            eps_relative=relative))
        group.run(searches)
        for s in searches:
            if s.done and np.isfinite(s.value) and s.value < best.get(s.owner, (None, math.inf))[1]:
                best[s.owner] = (copy(s.ray.direction), s.value)  # type: ignore[union-attr]
    return best


def start_search(
    run: AttackRun, candidates: dict[int, NDArray[np.float64]],
) -> dict[int, tuple[NDArray[np.float64], float, float]]:
    """:func:`initial_search` of ``candidates`` with the run's start, its selection and its precision: per input
    the winner's direction, its distance and the precision that distance was searched to (a relative precision
    left to the distance and never filled in: none)."""
    start = run.config.start
    found = initial_search(run.group, candidates, run.eps, start.initial_selection, start.relative_precision or 0.0)
    return {i: (theta, value, start.precision_of(value, run.eps)) for i, (theta, value) in found.items()}


def already_adversarial(group: BoundaryOracleGroup) -> list[int]:
    """Label every input once (one query each); return those still to attack (correctly classified, budget left).

    Each input is labelled alone, in its own model call: an input counts as already adversarial only when the
    model gets it wrong by itself, not because of the batch it was sent in.
    """
    images = group.images
    for i, img in enumerate(images):
        if img.ledger.affordable(1):
            img.ledger.charge(1)
            group.query(np.array([i]), img.x0[None])
    return [i for i, img in enumerate(images) if img.best_point is None and img.ledger.remaining > 0]


def initial_directions(
    run: AttackRun, todo: list[int], starts: int = 1, race_queries: int = 0
) -> tuple[list[int], list[NDArray[np.float64]], list[float], list[SolverState | None]]:
    """θ0 and g(θ0) for every input in ``todo`` that has an adversarial direction and budget left.

    The run's ``config`` supplies its ``start`` (``n_initial``, ``n_uniform``, the sampler, the selection,
    ``target_examples``, ``target_pool``) and its ``race`` (``race_iterations``, ``race_keeps_state``,
    ``race_halving``); its criterion's targets say whether the candidates point at target examples. Each family of
    candidates (the sampler's, and for untargeted attacks ``n_uniform`` toward uniform points of the domain) joins
    one search, whose winner is θ0 (with ``all_ones_first``, untargeted, the all-ones vertex is searched alone
    first, and the families only where it meets no boundary). The winners of separate searches race
    (:func:`zeroopt.race`, with the run's solver) and the one that got lowest is θ0: each family's own search when
    ``race_iterations > 0`` (a race of that many iterations), and ``starts`` independent searches, each of new
    candidates, when ``starts > 1`` (a race of ``race_queries`` queries per input, or of ``race_iterations`` when
    that comes first). Returns ``(inputs, unit directions, values, states)``: per input, the state of the race's
    winning run when ``race_keeps_state`` (the descent goes on from it, :class:`zeroopt.RaceWinner`), else ``None``
    (it starts afresh from the direction).
    """
    group, rngs, tgt, solver = run.group, run.rngs, run.targets, run.solver
    start, race_cfg = run.config.start, run.config.race
    examples, pool = flat_pool(start.target_examples, start.target_pool, run.context.dim)
    sampler = None if start.initial_directions == "gaussian" else make_sampler(start.initial_directions, run.context)
    racing = race_cfg.race_iterations > 0 or (starts > 1 and race_queries > 0)
    families = [initial_candidates(group.images, todo, rngs, start.n_initial, tgt, examples, pool, sampler)
                for _ in range(starts if racing else 1)]
    straight = families[0] if tgt is not None else {}
    if tgt is not None:  # directions toward target examples, as the distance's geometry asks them (L∞: vertices)
        families = [{i: group.distance.toward(th, group.images[i].x0, group.lo, group.hi) for i, th in f.items()}
                    for f in families]
    if tgt is None and start.n_uniform > 0:
        families.append(uniform_candidates(group, todo, rngs, start.n_uniform))
    picks = fallback_picks(group.images, todo, rngs, start.n_initial, tgt, pool)
    if not racing and len(families) > 1:  # one tournament over every candidate: one final bisection per input
        families = [{i: np.concatenate([f[i] for f in families if i in f]) for i in todo}]
    winners: dict[int, list[tuple[NDArray[np.float64], float, float]]] = {i: [] for i in todo}
    vertex: dict[int, tuple[NDArray[np.float64], float, float]] = {}
    if tgt is None and start.all_ones_first:  # the sampler's candidates serve only where the vertex finds nothing
        vertex = start_search(run, {i: np.ones((1, group.images[i].x0.size)) for i in todo})
        for i, winner in vertex.items():
            winners[i].append(winner)
    for candidates in families:
        asked = {i: th for i, th in candidates.items() if i not in vertex}
        for i, winner in (start_search(run, asked).items() if asked else ()):
            winners[i].append(winner)
    # A target class can lie along no vertex toward its examples (the binary-looking points far out are labelled
    # otherwise), but the straight line reaches each example itself: those lines, where the geometry bent them.
    bent = {i: th for i, th in straight.items() if not winners[i] and not np.array_equal(th, families[0][i])}
    for i, winner in (start_search(run, bent).items() if bent else ()):
        winners[i].append(winner)
    missing = fallback_candidates(group.images, [i for i in todo if not winners[i]], picks, pool, tgt)
    if missing:
        # Every family failed: directions toward inputs of other classes (a network can label every random-noise
        # direction from an input as the input's class: docs/attack.md).
        for i, winner in start_search(run, missing).items():
            winners[i].append(winner)
    if tgt is None:
        _retry_until_found(run, [i for i in todo if not winners[i]], winners, sampler)
    found = [i for i in todo if winners[i] and group.images[i].ledger.remaining > 0]
    if racing:
        rounds = halving_rounds(starts) if race_cfg.race_halving and starts > 1 else 1
        chosen = race(solver, [_distinct(winners[i]) for i in found], group, rngs=[rngs[i] for i in found],
                      members=found, iterations=race_cfg.race_iterations or None, queries=race_queries or None,
                      rounds=rounds)
    else:
        chosen = [RaceWinner(*min(winners[i], key=lambda s: s[1])) for i in found]
    best = {i: s for i, s in zip(found, chosen, strict=True) if s is not None}
    members = [i for i in best if group.images[i].ledger.remaining > 0]  # a race may have spent the rest
    thetas = [best[i].x / np.linalg.norm(best[i].x) for i in members]
    # A winner's state has the winning point as its iterate: it goes on from the same unit direction as every
    # other start (g depends on θ/‖θ‖ only).
    states = [replace(best[i].state, x=theta) if race_cfg.race_keeps_state and best[i].state is not None else None
              for i, theta in zip(members, thetas, strict=True)]
    return members, thetas, [best[i].f for i in members], states


def _retry_until_found(run: AttackRun, needy: list[int],
                       winners: dict[int, list[tuple[NDArray[np.float64], float, float]]],
                       sampler: DirectionSampler | None) -> None:
    """Untargeted inputs that every direction and the fallback failed, with budget left, draw new random
    directions — twice as many each round, up to :data:`MAX_RETRY_DIRECTIONS` — until one is adversarial or the
    budget is spent: an input attacked alone, with no other input or pool to fall back on, is not given up while
    it has queries left. Inputs another direction served draw nothing here, so their results do not move."""
    group, start = run.group, run.config.start
    count = start.n_initial
    needy = [i for i in needy if 0 < group.images[i].ledger.remaining < math.inf]  # no budget: no end to draw to
    while needy:
        count = min(2 * count, MAX_RETRY_DIRECTIONS)
        fresh = initial_candidates(group.images, needy, run.rngs, count, None, None, None, sampler)
        for i, winner in start_search(run, fresh).items():
            winners[i].append(winner)
        needy = [i for i in needy if not winners[i] and group.images[i].ledger.remaining > 0]


def _distinct(
    winners: list[tuple[NDArray[np.float64], float, float]],
) -> list[tuple[NDArray[np.float64], float, float]]:
    """The winners without repeats: searches over overlapping candidates (a target pool) can pick the same one."""
    out: list[tuple[NDArray[np.float64], float, float]] = []
    for w in winners:
        if not any(np.array_equal(w[0], o[0]) for o in out):
            out.append(w)
    return out


def fresh_initial_search(run: AttackRun, members: list[int]) -> FreshStart:
    """``fresh_start`` for :func:`zeroopt.solve_many`: a new :func:`initial_directions` search (new candidates
    from each input's generator) for the runs whose basin is spent; run ``k`` attacks input ``members[k]``.
    One search per input (the race between independent starts is the first search's, sized by the budget)."""

    def fresh_start(runs: list[int]) -> list[tuple[NDArray[np.float64], float, float] | None]:
        inputs = [members[k] for k in runs]
        found, thetas, values, _ = initial_directions(run, inputs)
        got = {i: (t, v, run.config.start.precision_of(v, run.eps)) for i, t, v in zip(found, thetas, values,
                                                                                        strict=True)}
        return [got.get(i) for i in inputs]

    return fresh_start
