"""Make the suite's runs with many worker processes: ``python -m benchmarks.parallel [options]``.

The suite itself runs one attack call at a time (one torch thread: the fairest timing on a shared CPU). On a
machine with many cores, or a GPU, this driver makes the same runs faster: it splits the work into one task per
(experiment group, input position), and keeps ``--cpu-workers`` CPU processes and ``--cuda-workers`` CUDA
processes busy, each running ``python -m benchmarks.run_suite --runs-only --shard p/N`` on the next task. The
runs land in the usual results folder, with the same seeds as a serial run (a run's seed depends only on the
suite seed, the experiment, the attack and the input), and are then reused by a plain ``run_suite`` invocation,
which writes the tables. Runs made this way carry the ``--made-on`` label, and the speed table leaves them out.

Example
-------
``python -m benchmarks.parallel --preset full --attacks ours --experiments mnist-untargeted,mnist-targeted
--cpu-workers 14 --made-on "16-core box" --minutes 8``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import sizing
from benchmarks.run_suite import RESULTS


@dataclass(frozen=True)
class Task:
    """One input position of a group of experiments (every attack asked for)."""

    experiments: str
    position: int
    shards: int


def tasks_for(preset: str, experiments: list[str]) -> list[Task]:
    """One task per input position of the largest plan among ``experiments``, long-budget positions first."""
    plans = [sizing.PRESETS[preset][name] for name in experiments]
    n = max(max(p.n_ours, p.n_peers) for p in plans)
    joined = ",".join(experiments)
    return [Task(joined, p, n) for p in range(n)]


def command(task: Task, args: argparse.Namespace, device: str, minutes_left: float) -> list[str]:
    """The ``run_suite`` command line of one task."""
    cmd = [sys.executable, "-m", "benchmarks.run_suite", "--preset", args.preset, "--experiments", task.experiments]
    cmd += ["--shard", f"{task.position}/{task.shards}", "--runs-only", "--no-progress", "--torch-device", device]
    cmd += ["--results-dir", str(args.results_dir), "--seed", str(args.seed)]
    cmd += ["--deadline-minutes", f"{max(minutes_left, 0.0):.2f}"]
    if args.tag:
        cmd += ["--tag", args.tag]
    if args.attacks:
        cmd += ["--attacks", args.attacks]
    if args.made_on:
        cmd += ["--made-on", args.made_on]
    return cmd


def main(argv: list[str] | None = None) -> int:
    """Run every task; returns a process exit code (1 if any task failed)."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.parallel", description=__doc__.split("\n\n")[0])
    p.add_argument("--preset", choices=sorted(sizing.PRESETS), default="full")
    p.add_argument("--tag", default=None, help="results sub-folder (default: the preset name)")
    p.add_argument("--results-dir", type=Path, default=RESULTS)
    p.add_argument("--experiments", required=True, help="comma list for every worker")
    p.add_argument("--cuda-experiments", default="", help="comma list given to CUDA workers first")
    p.add_argument("--attacks", default=None, help="as for run_suite (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cpu-workers", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    p.add_argument("--cuda-workers", type=int, default=0)
    p.add_argument("--made-on", default=None, help="label kept in every run (see run_suite --made-on)")
    p.add_argument("--minutes", type=float, default=None, help="start no attack call after this; kill at +1.5 min")
    p.add_argument("--logs", type=Path, default=Path("parallel-logs"))
    args = p.parse_args(argv)
    if args.cpu_workers < 0 or args.cuda_workers < 0 or args.cpu_workers + args.cuda_workers == 0:
        p.error("need at least one worker (--cpu-workers / --cuda-workers)")

    cpu_queue = deque(tasks_for(args.preset, [e for e in args.experiments.split(",") if e]))
    cuda_names = [e for e in args.cuda_experiments.split(",") if e]
    cuda_queue = deque(tasks_for(args.preset, cuda_names)) if cuda_names else deque()
    slots = ["cpu"] * args.cpu_workers + ["cuda"] * args.cuda_workers
    args.logs.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    stop_at = None if args.minutes is None else started + 60 * args.minutes
    kill_at = None if stop_at is None else stop_at + 90
    running: dict[int, tuple[subprocess.Popen[bytes], Task, Any]] = {}
    failed = 0
    done = 0

    def next_task(device: str) -> Task | None:
        # CUDA workers take their own group first, then help with the CPU queue; CPU workers never take
        # the CUDA group (on CPU, ResNet-20 runs are the slowest tasks).
        if device == "cuda" and cuda_queue:
            return cuda_queue.popleft()
        return cpu_queue.popleft() if cpu_queue else None

    while True:
        now = time.perf_counter()
        for slot, (proc, _, log) in list(running.items()):
            if proc.poll() is not None:
                log.close()
                failed += proc.returncode != 0
                done += 1
                del running[slot]
        if stop_at is None or now < stop_at:
            for slot, device in enumerate(slots):
                if slot in running:
                    continue
                task = next_task(device)
                if task is None:
                    continue
                minutes_left = 1e9 if stop_at is None else (stop_at - now) / 60
                env = dict(os.environ)
                if device == "cpu":
                    env["CUDA_VISIBLE_DEVICES"] = ""
                log = open(args.logs / f"{task.experiments.split(',')[0]}-{task.position:03d}.log", "wb")  # noqa: SIM115
                proc = subprocess.Popen(command(task, args, device, minutes_left), env=env, stdout=log, stderr=log)
                running[slot] = (proc, task, log)
        if not running and (not (cpu_queue or cuda_queue) or (stop_at is not None and now >= stop_at)):
            break
        if kill_at is not None and now > kill_at:
            for proc, _, _ in running.values():
                proc.kill()
            print(f"[parallel] killed {len(running)} task(s) at the hard stop", flush=True)
            break
        time.sleep(0.5)
    not_started = len(cpu_queue) + len(cuda_queue)
    print(
        f"[parallel] {done} task(s) finished ({failed} failed), {not_started} not started, "
        f"{(time.perf_counter() - started) / 60:.1f} min",
        flush=True,
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
