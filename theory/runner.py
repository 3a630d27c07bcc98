"""The study runner: one solver over a grid of (d, δ, ε, q, β) with many seeds from one SeedSequence.

Each grid cell runs ``seeds`` independent runs. The randomness of run ``s`` in dimension ``d`` —
the problem's start (and rotation), the solver's directions, the oracle's noise — comes from
``SeedSequence(root_seed, spawn_key=(d, s))``, the same for every δ, ε, q and β of that (d, s): cells
that differ only in those settings see common random numbers, so their differences are not seed noise.

A run stops at its first hit of both criteria (or runs on to its cap, for floor studies), and is capped
at ``cap × 16 (d+4) L1 (f(x0) − f*) / δ²`` iterations — a fixed fraction of the theory's leading term,
so censoring means the same thing in every cell.
"""

from __future__ import annotations

import math
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

import zeroopt
from zeroopt import ToleranceMonitor

from .bounds import admissible_beta, iteration_bound, leading_iteration_bound, theorem1_beta
from .hitting import FirstHitStop, first_hit, gradient_norms, query_counts
from .problems import Family, f_gap, make_problem

__all__ = ["BetaRule", "Cell", "StudyInterrupted", "StudySpec", "cells", "run_cell_seed", "run_study", "seed_sequence"]

BetaRule = float | str
"""``"admissible"`` (:func:`theory.bounds.admissible_beta`), ``"theorem1"`` (``δ/((d+4)L1)``, zeroopt's
``rgf-fixed`` default) or a number: a smoothing radius fixed across d."""

TRACE_POINTS = 400  # trajectory samples kept per traced run (log-spaced in the iteration)


@dataclass(frozen=True)
class StudySpec:
    """What to run.

    Attributes
    ----------
    name
        Folder name under the results directory.
    title
        One-line description for the report.
    solver
        zeroopt solver name (``"rgf-fixed"`` for the theory step, ``"rgf"`` for the line search).
    family
        Problem family (:data:`theory.problems.FAMILIES`).
    dims, deltas, eps_factors, qs, betas
        The grid. ``ε = factor · β · δ²`` — in units of Theorem 1's precision condition, so factor 1 is
        exactly at the condition (c = 1) and 0 is an exact oracle.
    seeds
        Runs per cell.
    root_seed
        Entropy of the study's SeedSequence.
    noise
        Oracle error kind for ε > 0 (:class:`zeroopt.NoisyOracle`).
    cap
        Iteration cap as a fraction of the leading bound ``16 (d+4) L1 (f(x0) − f*) / δ²``.
    stop_at_hit
        Stop each run once every criterion in ``criteria`` is met; ``False`` runs to the cap (floors).
    criteria
        The hit criteria a run waits for (``"iterate"``, ``"average"``); the other is still recorded,
        censored if the run stopped first.
    solver_options, family_options
        Extra options, as ``(name, value)`` pairs.
    traces
        Seeds per cell whose trajectories (queries, f, ‖∇f‖) are kept for plots.
    """

    name: str
    title: str
    solver: str = "rgf-fixed"
    family: Family = "log_norm"
    dims: tuple[int, ...] = (16, 32, 64, 128, 256)
    deltas: tuple[float, ...] = (0.1,)
    eps_factors: tuple[float, ...] = (0.0,)
    qs: tuple[int, ...] = (1,)
    betas: tuple[BetaRule, ...] = ("admissible",)
    seeds: int = 32
    root_seed: int = 20190506
    noise: str = "uniform"
    cap: float = 1.0
    stop_at_hit: bool = True
    criteria: tuple[str, ...] = ("iterate", "average")
    solver_options: tuple[tuple[str, Any], ...] = ()
    family_options: tuple[tuple[str, Any], ...] = ()
    traces: int = 2

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        out = asdict(self)
        out["solver_options"] = dict(self.solver_options)
        out["family_options"] = dict(self.family_options)
        return out


@dataclass(frozen=True)
class Cell:
    """One grid point."""

    d: int
    delta: float
    eps_factor: float
    q: int
    beta: BetaRule


def cells(spec: StudySpec) -> list[Cell]:
    """The grid, d outermost."""
    return [
        Cell(d, delta, ef, q, b)
        for d in spec.dims for delta in spec.deltas for ef in spec.eps_factors for q in spec.qs for b in spec.betas
    ]


def seed_sequence(spec: StudySpec, d: int, seed: int) -> np.random.SeedSequence:
    """The SeedSequence of run ``seed`` in dimension ``d`` (a child of ``SeedSequence(root_seed)``)."""
    return np.random.SeedSequence(spec.root_seed, spawn_key=(int(d), int(seed)))


def resolve_beta(rule: BetaRule, d: int, L1: float, delta: float, q: int) -> float:
    """The smoothing radius a :data:`BetaRule` gives for this cell."""
    if rule == "admissible":
        return admissible_beta(d, L1, delta, q=q)
    if rule == "theorem1":
        return theorem1_beta(d, L1, delta)
    if isinstance(rule, (int, float)) and rule > 0:
        return float(rule)
    raise ValueError(f"beta rule must be 'admissible', 'theorem1' or a positive number, got {rule!r}")


def _trace(norms: np.ndarray, queries: np.ndarray, fvals: np.ndarray, f_star: float) -> dict[str, list[float]]:
    n = len(norms)
    idx = np.unique(np.geomspace(1, n, min(n, TRACE_POINTS)).astype(int) - 1)
    return {
        "queries": queries[idx].tolist(),
        "f_gap": (fvals[idx] - f_star).tolist(),
        "grad_norm": norms[idx].tolist(),
    }


def run_cell_seed(spec: StudySpec, cell: Cell, seed: int) -> dict[str, Any]:
    """Run one seed of one cell and return its record (plain JSON-ready values)."""
    started = time.perf_counter()
    problem_seq, solver_seq, noise_seq = seed_sequence(spec, cell.d, seed).spawn(3)
    problem = make_problem(
        spec.family, cell.d, delta=cell.delta, seed=int(problem_seq.generate_state(1)[0]),
        **dict(spec.family_options),
    )
    L1 = float(problem.L1)  # type: ignore[arg-type]
    gap = f_gap(problem)
    beta = resolve_beta(cell.beta, cell.d, L1, cell.delta, cell.q)
    eps = cell.eps_factor * beta * cell.delta**2
    if eps > 0:
        problem = problem.with_noise(spec.noise, eps, seed=int(noise_seq.generate_state(1)[0]))  # type: ignore[arg-type]
    grad0 = float(np.linalg.norm(problem.gradient(problem.x0)))
    max_iter = max(1, math.ceil(spec.cap * leading_iteration_bound(cell.d, L1, cell.delta, gap)))
    monitor = ToleranceMonitor(cell.delta, constant=1.0, warn=False)
    callbacks: list[Callable[..., Any]] = [monitor]
    if spec.stop_at_hit:
        callbacks.append(FirstHitStop(cell.delta, grad0, criteria=spec.criteria))  # type: ignore[arg-type]
    # The grid's q and β go to the solvers that have such options (the registry says which); anything
    # else a solver needs comes from its own defaults for a plain objective, or from solver_options.
    solver_spec = zeroopt.get_solver(spec.solver)
    grid = {k: v for k, v in (("q", cell.q), ("beta", beta)) if solver_spec.accepts(k)}
    # The analysed algorithm runs to max_iter: no no-progress stopping rule (a solver option, when it has one).
    analysed = {"patience": None} if solver_spec.accepts("patience") else {}
    options = {**grid, **analysed, **dict(spec.solver_options)}
    # One run, as the analysis has it: no restart after a run that ends before max_iter.
    result = zeroopt.minimize(
        problem, problem.x0, solver=spec.solver, budget=2**62, seed=solver_seq,
        max_iter=max_iter, callbacks=callbacks, restarts=False, **options,
    )
    norms = gradient_norms(result, grad0)
    queries = query_counts(result)
    hit_it = first_hit(norms, queries, cell.delta, "iterate")
    hit_avg = first_hit(norms, queries, cell.delta, "average")
    step = max((r.step_size for r in result.history), default=math.nan)
    bound = math.inf  # the analysis covers the fixed step only; a line search has no N here
    if spec.solver == "rgf-fixed":
        error = "zero-mean" if spec.noise in ("uniform", "gaussian") else "adversarial"
        # N for the theory step 1/(4(d+4)L1), not for the step the run took: a bound that follows the run's
        # own step moves with it, so a solver whose step were wrong by a factor of d would still meet it.
        bound = iteration_bound(cell.d, L1, cell.delta, gap, beta=beta, eps=eps, q=cell.q, step=None, error=error)
    tail = norms[len(norms) * 3 // 4:]
    record: dict[str, Any] = {
        **asdict(cell), "seed": seed, "beta_value": beta, "eps": eps, "L1": L1, "f_gap": gap, "grad0": grad0,
        "step": step, "bound_iterations": bound if math.isfinite(bound) else None, "max_iter": max_iter,
        "iterations": result.iterations, "queries": result.queries, "status": result.status.value,
        "hit_iterate_iter": hit_it.iteration, "hit_iterate_queries": hit_it.queries,
        "hit_iterate_censored": hit_it.censored,
        "hit_average_iter": hit_avg.iteration, "hit_average_queries": hit_avg.queries,
        "hit_average_censored": hit_avg.censored,
        "final_grad": float(norms[-1]), "min_grad": float(norms.min()), "tail_grad": float(np.median(tail)),
        "violations": len(monitor.violations), "flags": list(result.flags),
        "wall_s": time.perf_counter() - started,
    }
    if seed < spec.traces:
        fvals = np.concatenate([[problem(problem.x0)], result.history_array("f")])
        record["trace"] = _trace(norms, queries, fvals, problem.f_star)
    return record


def _key(cell: Cell, seed: int) -> tuple[Any, ...]:
    return cell.d, cell.delta, cell.eps_factor, cell.q, str(cell.beta), seed


def _record_key(r: dict[str, Any]) -> tuple[Any, ...]:
    return r["d"], r["delta"], r["eps_factor"], r["q"], str(r["beta"]), r["seed"]


def _tasks(spec: StudySpec) -> list[tuple[Cell, int]]:
    # Longest runs first (cost grows like (d+4)/δ²), so the last tasks to finish are short ones.
    todo = [(c, s) for c in cells(spec) for s in range(spec.seeds)]
    return sorted(todo, key=lambda t: -(t[0].d + 4) / t[0].delta**2)


def _run_serial(spec: StudySpec, tasks: Sequence[tuple[Cell, int]]) -> Iterator[dict[str, Any]]:
    for cell, seed in tasks:
        yield run_cell_seed(spec, cell, seed)


def _ignore_sigint() -> None:
    """In a worker: Ctrl-C is the parent's to handle (it stops the workers), not each run's."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool`` now: drop the queued runs and end the running ones (their work is lost, nothing else)."""
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        proc.terminate()
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        proc.join(timeout=5)


def _run_parallel(spec: StudySpec, tasks: Sequence[tuple[Cell, int]], workers: int) -> Iterator[dict[str, Any]]:
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_ignore_sigint)
    main = threading.current_thread() is threading.main_thread()
    # The workers start while the tasks are submitted: they inherit an ignored SIGINT, so a Ctrl-C sent to the
    # whole process group (a terminal's) reaches the parent alone, which stops them (_stop) at once.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    whole = False
    try:
        try:
            futures = [pool.submit(run_cell_seed, spec, cell, seed) for cell, seed in tasks]
        finally:
            if main:
                signal.signal(signal.SIGINT, previous)
        for fut in as_completed(futures):
            yield fut.result()
        whole = True
    finally:
        if whole:
            pool.shutdown(wait=True)
        else:  # Ctrl-C (or the generator closed early): queued runs are dropped, not waited for
            _stop(pool)


class StudyInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_study`; the workers are stopped.

    Attributes
    ----------
    records
        The runs that finished (with those :func:`run_study` was given as ``done``).
    total
        The runs of the whole study.
    wall_s
        Seconds spent before the interruption (in this call).
    stored_as
        Where the finished runs were kept (set by :func:`theory.studies.run_named_study`), or ``None``.
    """

    def __init__(self, records: list[dict[str, Any]], total: int, wall_s: float) -> None:
        super().__init__(f"{len(records)} of {total} runs finished")
        self.records, self.total, self.wall_s = records, total, wall_s
        self.stored_as: str | None = None


@dataclass
class StudyRun:
    """Raw outcome of :func:`run_study`: the spec, one record per run, and how long it took."""

    spec: StudySpec
    records: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    workers: int = 1


def run_study(spec: StudySpec, *, workers: int | None = None, progress: bool = True,
              done: Sequence[dict[str, Any]] = ()) -> StudyRun:
    """Run every (cell, seed) of ``spec``; ``workers`` processes (default: all CPUs), tqdm progress.

    Records come back sorted by (cell order, seed) whatever order the workers finished in, so the
    output is identical for any number of workers. Runs already in ``done`` (records of an interrupted call
    of the same spec) are not run again. Ctrl-C stops the workers at once and raises
    :class:`StudyInterrupted` with the runs that finished.
    """
    workers = max(1, workers if workers is not None else (os.cpu_count() or 1))
    have = {_record_key(r) for r in done}
    every = _tasks(spec)
    tasks = [(c, s) for c, s in every if _key(c, s) not in have]
    started = time.perf_counter()
    records = list(done)
    source = _run_serial(spec, tasks) if workers == 1 else _run_parallel(spec, tasks, workers)
    stream: Iterator[dict[str, Any]] = source
    if progress:
        from tqdm import tqdm

        stream = tqdm(source, total=len(tasks), desc=spec.name, unit="run", smoothing=0.05)
    try:
        for record in stream:
            records.append(record)
    except KeyboardInterrupt:
        source.close()  # stops the workers now (not when the generator is collected)
        raise StudyInterrupted(records, len(every), time.perf_counter() - started) from None
    order = {(c.d, c.delta, c.eps_factor, c.q, str(c.beta)): i for i, c in enumerate(cells(spec))}
    records.sort(key=lambda r: (order[(r["d"], r["delta"], r["eps_factor"], r["q"], str(r["beta"]))], r["seed"]))
    return StudyRun(spec=spec, records=records, wall_s=time.perf_counter() - started, workers=workers)
