"""The campaign driver: plan the attacks not yet stored, hand chunks to an executor, store every finished row.

Only this driver writes the database, one transaction per attack, so an interrupt or a crash at any moment
leaves every finished attack stored exactly once and nothing half-written; rerunning the same campaign then
does only what is missing.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tqdm.auto import tqdm

from .data import load_data, resolve_name
from .db import ResultsDB
from .executors import LocalExecutor, RayExecutor
from .spec import Campaign, Task
from .worker import get_model, run_task

__all__ = ["CampaignSummary", "plan_tasks", "run_campaign"]


@dataclass
class CampaignSummary:
    """What one :func:`run_campaign` call did."""

    planned: int = 0
    already_stored: int = 0
    stored: int = 0
    failed: list[str] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0
    keys: list[tuple[Any, ...]] = field(default_factory=list)

    @property
    def throughput(self) -> float:
        """Attacks stored per second of this call."""
        return self.stored / self.seconds if self.seconds > 0 else 0.0


def plan_tasks(
    campaign: Campaign,
    db: ResultsDB,
    *,
    chunk: int | None = None,
    store_adv: bool = True,
    share: Callable[[Any], Any] = lambda obj: obj,
) -> tuple[list[Task], list[tuple[Any, ...]], int]:
    """The tasks of ``campaign`` whose attacks are not stored yet, every key, and how many are stored.

    Tasks are grouped by (model, solver, budget, seed) and cut into chunks of ``chunk`` inputs; data every
    task needs (the starting pool) goes through ``share`` (an executor's: Ray puts it in its object store).
    """
    assert campaign.data is not None
    data = load_data(campaign.data, bounds=campaign.bounds)
    name = resolve_name(campaign.data)
    ids = campaign.input_ids(len(data.x))
    size = chunk or campaign.chunk
    pool = campaign.pool_ids(len(data.x), ids)
    shared_pool = share((data.x[pool], data.y[pool])) if pool else None
    tasks: list[Task] = []
    all_keys: list[tuple[Any, ...]] = []
    for model in campaign.models:
        for solver in campaign.solvers:
            for budget in campaign.budgets:
                for seed in campaign.seeds:
                    keys = {i: (name, i, model, solver, int(budget), int(seed), campaign.goal, campaign.options_key)
                            for i in ids}
                    all_keys += keys.values()
                    done = db.stored_keys(keys.values())
                    todo = [i for i in ids if keys[i] not in done]
                    for lo in range(0, len(todo), size):
                        part = todo[lo : lo + size]
                        tasks.append(Task(
                            dataset=name, model=model, arch=campaign.arch, device=campaign.device, solver=solver,
                            budget=int(budget), seed=int(seed), goal=campaign.goal, options=dict(campaign.options),
                            options_key=campaign.options_key, batch_size=campaign.batch_size, input_ids=part,
                            x=data.x[part], y=data.y[part], bounds=data.bounds, store_adv=store_adv,
                            pool=shared_pool,
                        ))
    pending = sum(len(t.input_ids) for t in tasks)
    return tasks, all_keys, len(all_keys) - pending


@contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold a Ctrl-C until the block (one database write) is done, then raise it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[Any] = []
    previous = signal.signal(signal.SIGINT, lambda *a: caught.append(a))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def run_campaign(
    campaign: Campaign,
    db: ResultsDB,
    executor: LocalExecutor | RayExecutor | None = None,
    *,
    command: str = "",
    progress: bool = True,
    store_adv: bool = True,
    chunk: int | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    commit: str = "attack",
) -> CampaignSummary:
    """Run every attack of ``campaign`` not yet in ``db``; store each as it finishes.

    Parameters
    ----------
    campaign
        What to attack.
    db
        Where rows go (and which attacks are skipped because they are there).
    executor
        :class:`~applications.campaign.executors.LocalExecutor` (default) or a Ray one.
    command
        Stored with every row (the command line that made it).
    progress
        Campaign progress bar with ETA (and one bar per Ray worker).
    store_adv
        Keep each adversarial input in its row (for pictures; about 1–3 kB per MNIST row).
    chunk
        Inputs per task (default ``campaign.chunk``).
    on_row
        Called after each row is committed (tests inject an interrupt here).
    commit
        ``"attack"``: one transaction per attack (default); ``"task"``: one per finished chunk, for drivers
        that must store thousands of rows a second (a chunk's attacks finish together either way).

    Returns
    -------
    CampaignSummary
        Counts; ``interrupted`` when a Ctrl-C stopped it (every row stored so far is complete).
    """
    if commit not in ("attack", "task"):
        raise ValueError(f"commit must be 'attack' or 'task', got {commit!r}")
    started = time.perf_counter()
    executor = executor or LocalExecutor()
    tasks, keys, stored_before = plan_tasks(campaign, db, chunk=chunk, store_adv=store_adv, share=executor.share)
    summary = CampaignSummary(planned=len(keys), already_stored=stored_before, keys=keys)
    # Load every model here first: a bad model name fails before any work, and built-ins are trained and
    # cached once (Ray workers then read the cached file instead of racing to train it).
    local = isinstance(executor, LocalExecutor)
    for model in campaign.models:
        get_model(model, campaign.arch, campaign.device if local else "cpu", executor.cache if local else {})
    total = sum(len(t.input_ids) for t in tasks)
    bar = tqdm(total=total, desc="campaign", unit="attack", disable=not progress or total == 0, smoothing=0.05)
    worker_bars: dict[str, Any] = {}
    outcomes = executor.imap(run_task, tasks)
    try:
        for out in outcomes:
            task: Task = out.item
            if out.error is not None:
                summary.failed.append(f"{task.model}/{task.solver}/b{task.budget}/s{task.seed} inputs "
                                      f"{task.input_ids[0]}..{task.input_ids[-1]}: {type(out.error).__name__}: "
                                      f"{out.error}")
                bar.update(len(task.input_ids))
                continue
            for row in out.result:
                row.update(command=command, executor=executor.name, worker=out.worker,
                           finished_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
            if commit == "task":
                with _sigint_deferred():
                    summary.stored += db.insert_many(out.result)
            for row in out.result:
                if commit == "attack":
                    with _sigint_deferred():
                        summary.stored += db.insert(row)
                if on_row is not None:
                    on_row(row)
            bar.update(len(task.input_ids))
            if progress and executor.workers > 1:
                if out.worker not in worker_bars:
                    worker_bars[out.worker] = tqdm(desc=f"  {out.worker}", unit="attack", position=len(worker_bars) + 1,
                                                   leave=False)
                worker_bars[out.worker].update(len(task.input_ids))
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        outcomes.close()  # now, not at garbage collection: queued chunks are cancelled before we return
        for b in worker_bars.values():
            b.close()
        bar.close()
        summary.seconds = time.perf_counter() - started
    return summary
