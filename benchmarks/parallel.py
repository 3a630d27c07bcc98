"""Make the suite's runs with many workers: ``python -m benchmarks.parallel [options]``.

A thin layer over the campaign executors (:mod:`applications.campaign.executors`): the work is split into one
task per (experiment group, input position); each task runs ``benchmarks.run_suite --runs-only --shard p/N``
inside a worker (Ray actors with ``--executor ray``: CPU workers, or GPU workers sharing a device with
``--gpus-per-worker``), against a private scratch database that holds only the index of the runs already
stored, so it skips them. The task returns the records it made and **only this driver writes the results
database**, one transaction per run, so workers may be on other machines. Runs have the same seeds as a
serial run (a run's seed depends only on the suite seed, the experiment, the attack and the input) and a
plain ``run_suite`` invocation then reuses them and writes the tables. Runs made this way carry the
``--made-on`` label, and the speed table leaves them out.

Example
-------
``python -m benchmarks.parallel --preset full --attacks ours --experiments mnist-untargeted,mnist-targeted
--executor ray --workers 14 --made-on "16-core box" --minutes 8``

For CPU and GPU workers at once, run two invocations on the same database (``--torch-device cuda
--gpus-per-worker 0.25`` for the GPU one).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from applications.campaign.executors import make_executor
from benchmarks import sizing
from benchmarks.store import RunStore
from benchmarks.suite_options import RESULTS
from zeroopt.recipes.plugins import add_plugin_argument, load_plugin_arguments, plugin_key


@dataclass(frozen=True)
class Task:
    """One input position of a group of experiments (every attack asked for), with what a worker needs."""

    experiments: str
    position: int
    shards: int
    argv: tuple[str, ...] = ()
    stop_at: float | None = None  # time.time() after which the task starts nothing


def tasks_for(preset: str, experiments: list[str]) -> list[Task]:
    """One task per input position of the largest plan among ``experiments``, long-budget positions first."""
    plans = [sizing.PRESETS[preset][name] for name in experiments]
    n = max(max(p.n_ours, p.n_peers) for p in plans)
    joined = ",".join(experiments)
    return [Task(joined, p, n) for p in range(n)]


def suite_argv(task: Task, args: argparse.Namespace) -> list[str]:
    """The ``run_suite`` options of one task (without ``--db`` and the deadline, which the worker adds)."""
    cmd = ["--preset", args.preset, "--experiments", task.experiments, "--shard", f"{task.position}/{task.shards}"]
    cmd += ["--runs-only", "--no-progress", "--torch-device", args.torch_device, "--seed", str(args.seed)]
    cmd += ["--results-dir", str(args.results_dir), "--tag", args.tag or args.preset]
    if args.attacks:
        cmd += ["--attacks", args.attacks]
    if args.made_on:
        cmd += ["--made-on", args.made_on]
    for plugin in args.plugins:  # a file by its absolute path: a worker may run elsewhere
        cmd += ["--plugin", plugin_key(plugin)]
    return cmd


def run_task(item: tuple[Task, str, list[tuple[str, str, int, int, str | None]]], cache: dict[Any, Any]) -> list:
    """In a worker: run one shard against a scratch database seeded with the stored runs' index; return its runs."""
    from benchmarks import run_suite

    task, tag, index = item
    if task.stop_at is not None and time.time() >= task.stop_at:
        return []
    with tempfile.TemporaryDirectory(prefix="zeroopt-shard-") as tmp:
        scratch = RunStore(Path(tmp) / "runs.sqlite", tag)
        for experiment, attack, image, budget, error in index:
            # A stand-in that makes the runner skip the run exactly as the real record would.
            scratch.save({"experiment": experiment, "attack": attack, "image": image, "budget": budget,
                          "error": error, "_stand_in": True})
        argv = [*task.argv, "--db", str(scratch.path)]
        if task.stop_at is not None:
            argv += ["--deadline-minutes", f"{max(task.stop_at - time.time(), 0.0) / 60:.2f}"]
        run_suite.main(argv)
        return [r for r in scratch.all_records() if not r.get("_stand_in")]


def main(argv: list[str] | None = None) -> int:
    """Run every task; returns a process exit code (1 if any task failed)."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.parallel", description=__doc__.split("\n\n")[0])
    p.add_argument("--preset", choices=sorted(sizing.PRESETS), default="full")
    p.add_argument("--tag", default=None, help="results sub-folder and database tag (default: the preset name)")
    p.add_argument("--results-dir", type=Path, default=RESULTS)
    p.add_argument("--db", type=Path, default=None, help="results database (default ~/.cache/zeroopt/results.sqlite)")
    p.add_argument("--experiments", required=True, help="comma list of experiments")
    p.add_argument("--attacks", default=None, help="as for run_suite (default: all)")
    add_plugin_argument(p)  # passed to every task's run_suite
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--executor", choices=["local", "ray"], default="ray",
                   help="ray: parallel workers; local: one task after the other in this process")
    p.add_argument("--address", default=None, help="Ray cluster address (default: start a local one)")
    p.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    p.add_argument("--gpus-per-worker", type=float, default=0.0, help="GPU share of each worker (e.g. 0.25)")
    p.add_argument("--torch-device", default="cpu", help="device of the torch models in every worker")
    p.add_argument("--made-on", default=None, help="label kept in every run (see run_suite --made-on)")
    p.add_argument("--minutes", type=float, default=None, help="start no attack call after this many minutes")
    args = p.parse_args(argv)
    load_plugin_arguments(p, args)
    tag = args.tag or args.preset
    store = RunStore(args.db, tag)
    names = [e for e in args.experiments.split(",") if e]
    stop_at = None if args.minutes is None else time.time() + 60 * args.minutes
    index = store.index()
    items = [(Task(t.experiments, t.position, t.shards, tuple(suite_argv(t, args)), stop_at), tag, index)
             for t in tasks_for(args.preset, names)]
    executor = (make_executor("ray", address=args.address, workers=args.workers,
                              gpus_per_worker=args.gpus_per_worker) if args.executor == "ray"
                else make_executor("local"))
    started = time.perf_counter()
    failed = stored = 0
    bar = tqdm(total=len(items), desc="shards", unit="task")
    try:
        for out in executor.imap(run_task, items):
            if out.error is not None:
                failed += 1
                print(f"[parallel] position {out.item[0].position} failed: {out.error}", flush=True)
            else:
                for record in out.result:
                    store.save(record)  # the driver alone writes the database
                    stored += 1
            bar.update()
    finally:
        bar.close()
        executor.close()
    print(f"[parallel] {len(items)} task(s), {failed} failed, {stored} run(s) stored in {store.path}, "
          f"{(time.perf_counter() - started) / 60:.1f} min", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
