"""Run one attack over one experiment through the monitor, and keep every finished run.

The runner is the only place that builds monitors: black-box attacks get a fresh
:class:`~benchmarks.monitor.QueryMonitor` per attack call (owner mode for attacks that take one input at a
time, nearest-original mode for groups), the white-box floor gets none. After each call it writes one JSON
record per input (see :func:`make_record`), so an interrupted suite resumes where it stopped.
"""

from __future__ import annotations

import time
import traceback
import zlib
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from benchmarks.attacks.base import Attack, Batch, Reported, describe
from benchmarks.experiment_base import Experiment, Job
from benchmarks.monitor import BudgetExhausted, InputTrace, QueryMonitor
from benchmarks.resources import Usage, measure
from benchmarks.store import RunStore, encode_array


def derive_seed(suite_seed: int, experiment: str, attack: str, image: int, replicate: int = 0) -> int:
    """The seed of one attack call, from the suite seed (stable across processes and runs).

    ``replicate`` > 0 gives the same call another seed — the same inputs, another draw of the attack's own random
    choices (the start, the basin) — and 0 the seed every stored run was made with.
    """
    key = [suite_seed, zlib.crc32(experiment.encode()), zlib.crc32(attack.encode()), image]
    if replicate:
        key.append(int(replicate))
    return int(np.random.SeedSequence(key).generate_state(1)[0])


@dataclass
class RunSummary:
    """What one :func:`run_attack` call did."""

    attack: str
    ran: int = 0
    skipped: int = 0
    left: int = 0
    errors: list[str] = field(default_factory=list)


def run_attack(
    exp: Experiment,
    attack: Attack,
    store: RunStore,
    *,
    suite_seed: int,
    context: dict[str, Any],
    replicate: int = 0,
    retry_errors: bool = False,
    redo_nonadversarial: bool = False,
    progress: bool = True,
    shard: tuple[int, int] | None = None,
    deadline: float | None = None,
) -> RunSummary:
    """Run ``attack`` on every job of ``exp`` not already stored.

    Parameters
    ----------
    exp : Experiment
        The experiment.
    attack : Attack
        The adapter.
    store : RunStore
        Where finished runs go (and are looked up).
    suite_seed : int
        The one seed all per-call seeds derive from.
    replicate : int
        0, or another draw of every call's seed on the same inputs (:func:`derive_seed`).
    context : dict
        Copied into every record (command line, loaders, versions).
    retry_errors : bool
        Rerun stored runs that ended with an error.
    redo_nonadversarial : bool
        Rerun stored runs whose returned point the harness did not label adversarial (``claim.adversarial``
        false), e.g. runs made before a fix of the attack's final re-check. Runs that returned no point are kept.
    progress : bool
        Show a tqdm bar.
    shard : (int, int), optional
        ``(k, n)``: only the inputs at positions ``p % n == k`` (parallel workers split an experiment).
    deadline : float, optional
        A :func:`time.perf_counter` value after which no new attack call starts (the rest counts as ``left``).
    """
    summary = RunSummary(attack.name)
    pending: list[Job] = []
    for job in exp.jobs(attack.family):
        if shard is not None and job.position % shard[1] != shard[0]:
            continue
        image = int(exp.index[job.position])
        record = store.load(exp.name, attack.name, image)
        made_with = None if record is None else int(record.get("replicate") or 0)
        if made_with is not None and made_with != replicate:
            # Kept, it would stand in this replicate's column; replaced, another draw's run would be lost.
            raise SystemExit(f"tag {store.tag!r} holds {exp.name}/{attack.name} runs made with replicate "
                             f"{made_with}, not {replicate}: give each replicate its own --tag")
        redo = record is not None and (
            (retry_errors and record.get("error")) or (redo_nonadversarial and _returned_nonadversarial(record))
        )
        if record and int(record["budget"]) >= job.budget and not redo:
            summary.skipped += 1
        else:
            pending.append(job)
    bar = tqdm(total=len(pending), desc=f"{exp.name} {attack.name}", disable=not progress or not pending, leave=False)
    for budget, same_budget in groupby(sorted(pending, key=lambda j: (j.budget, j.position)), key=lambda j: j.budget):
        jobs = list(same_budget)
        for lo in range(0, len(jobs), attack.group_size):
            chunk = [j.position for j in jobs[lo : lo + attack.group_size]]
            if deadline is not None and time.perf_counter() > deadline:
                summary.left += len(chunk)
                continue
            seed = derive_seed(suite_seed, exp.name, attack.name, int(exp.index[chunk[0]]), replicate)
            for record in _run_chunk(exp, attack, chunk, budget, seed):
                store.save({**record, **context, "replicate": replicate})
                summary.ran += 1
                if record.get("error"):
                    summary.errors.append(f"{exp.name}/{attack.name}/{record['image']}: {record['error']}")
            bar.update(len(chunk))
    bar.close()
    return summary


def _returned_nonadversarial(record: dict[str, Any]) -> bool:
    """Whether a stored run returned a point that the harness, labelling it alone, found not adversarial."""
    return (record.get("claim") or {}).get("adversarial") is False


def _run_chunk(exp: Experiment, attack: Attack, positions: list[int], budget: int, seed: int) -> list[dict[str, Any]]:
    batch = exp.batch(positions)
    monitor: QueryMonitor | None = None
    if attack.family != "white-box":
        monitor = QueryMonitor(
            exp.label_fn, exp.bounds, budget=budget, on_exhausted="record" if attack.hard_budget else "raise"
        )
        monitor.register(batch.x0, batch.y0, batch.target)
    reported: list[Reported] | None = None
    error = ""
    with measure() as usage:
        try:
            reported = _call(attack, monitor, batch, budget, seed)
        except BudgetExhausted:  # an adapter let the monitor's stop through: the trace is still complete
            reported = None
        except Exception as exc:  # keep the monitor's (valid) record of what was queried before the failure
            error = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
    if reported is None:
        reported = [Reported(note=error or "stopped by the monitor at the budget") for _ in positions]
    claims = _verify_claims(exp, batch, reported)
    return [
        make_record(
            exp, attack, positions[k], budget, seed, monitor, k, reported[k], claims[k], usage, len(positions), error
        )
        for k in range(len(positions))
    ]


def _call(attack: Attack, monitor: QueryMonitor | None, batch: Batch, budget: int, seed: int) -> list[Reported]:
    """Run the adapter with the monitor in the attribution mode it declares."""
    if monitor is None or attack.attribution == "nearest" or attack.attribution == "none":
        return attack.run(monitor, batch, budget, seed)
    if attack.attribution == "positional":
        with monitor.by_position():
            return attack.run(monitor, batch, budget, seed)
    if len(batch) != 1:
        raise ValueError(f"{attack.name}: owner attribution needs one input per call, got {len(batch)}")
    with monitor.owned_by(0):
        return attack.run(monitor, batch, budget, seed)


def _verify_claims(exp: Experiment, batch: Batch, reported: list[Reported]) -> list[dict[str, Any]]:
    """Check each returned adversarial with the model directly (not a query: the harness's own check)."""
    claims: list[dict[str, Any]] = [{"distortion": None, "adversarial": None, "in_bounds": None} for _ in reported]
    have = [k for k, r in enumerate(reported) if r.x_adv is not None]
    if not have:
        return claims
    x_adv = np.stack([np.asarray(reported[k].x_adv, dtype=np.float32) for k in have])
    labels = exp.label_fn(x_adv)
    lo, hi = batch.bounds
    for j, k in enumerate(have):
        diff = x_adv[j].astype(np.float64) - batch.x0[k].astype(np.float64)
        hit = labels[j] == batch.target[k] if batch.target is not None else labels[j] != batch.y0[k]
        claims[k] = {
            "distortion": float(np.sqrt(np.sum(diff * diff))),
            "adversarial": bool(hit),
            "in_bounds": bool(np.all((x_adv[j] >= lo - 1e-6) & (x_adv[j] <= hi + 1e-6))),
        }
    return claims


def make_record(
    exp: Experiment,
    attack: Attack,
    position: int,
    budget: int,
    seed: int,
    monitor: QueryMonitor | None,
    k: int,
    reported: Reported,
    claim: dict[str, Any],
    usage: Usage,
    group_size: int,
    error: str,
) -> dict[str, Any]:
    """The JSON record of one input of an attack call.

    For black-box attacks the distortion, success and query count are the monitor's; the attack's own
    figures are kept beside them (``attack_queries``, ``claim``) with the outcome of the cross-check.
    For the white-box floor they come from its own, verified, result and there is no query count.
    """
    record: dict[str, Any] = {
        "experiment": exp.name,
        "attack": attack.name,
        "family": attack.family,
        "image": int(exp.index[position]),
        "position": position,
        "y0": int(exp.y[position]),
        "target": None if exp.target is None else int(exp.target[position]),
        "budget": budget,
        "seed": seed,
        "config": describe(attack),
        "attack_queries": reported.queries,
        "claim": claim,
        "note": reported.note,
        "error": error,
        "time": {
            "wall": usage.wall_time / group_size,
            "group_wall": usage.wall_time,
            "group_size": group_size,
            "peak_rss_mb": usage.peak_rss_mb,
            "peak_extra_mb": usage.peak_extra_mb,
            "memory_method": usage.method,
        },
    }
    if monitor is None:
        ok = bool(claim["adversarial"] and claim["in_bounds"])
        record.update(
            queries=None,
            count_check="n/a",
            trace=None,
            distortion=claim["distortion"] if ok else None,
            success=ok,
            x_best=encode_array(reported.x_adv) if ok else None,
        )
        record["time"].update(model=None, group_model=None, model_calls=None, group_model_calls=None)
        return record
    trace: InputTrace = monitor.inputs[k]
    best = float(trace.best_at(budget))
    if reported.queries is None:
        check = "n/a"
    else:
        check = "exact" if reported.queries == trace.count else "mismatch"
    claim_below = claim["distortion"] is not None and claim["adversarial"] and claim["distortion"] < best - 1e-9
    record.update(
        queries=trace.count,
        budget_exceeded=max(0, trace.count - budget),
        count_check=check,
        trace={"q": trace.steps_q, "d": trace.steps_d},
        distortion=best if np.isfinite(best) else None,
        success=bool(np.isfinite(best)),
        out_of_bounds=trace.out_of_bounds,
        ambiguous=trace.ambiguous,
        claim_below_monitor=bool(claim_below),
        x_best=encode_array(trace.best_x),
    )
    share = 1.0 / group_size
    record["time"].update(
        model=monitor.model_time * share,
        group_model=monitor.model_time,
        model_calls=monitor.model_calls * share,
        group_model_calls=monitor.model_calls,
        group_samples=monitor.model_samples,
    )
    return record
