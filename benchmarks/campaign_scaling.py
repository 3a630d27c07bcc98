"""Throughput of one attack campaign on the local executor and on 1 and 2 local Ray workers, same run.

``python -m benchmarks.campaign_scaling [--n 200 --budget 1000 --solver sign --runs local,ray:1,ray:2]`` attacks
the first ``n`` MNIST test images with the shared MNIST CNN (``mnist-cnn``), once per executor in the order
given, each into a fresh temporary database, and writes ``benchmarks/results/campaigns/<name>.{json,md}``
(``--name``, default ``scaling``) with attacks/s, queries/s,
the Ray start-up time, the load average before and after each run (the machine may be shared) and how many
per-input results agree with the local run.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from applications.campaign import Campaign, LocalExecutor, ResultsDB, run_campaign
from applications.campaign.db import KEY
from benchmarks.pages import write_page
from zeroopt.recipes.plugins import add_plugin_argument, load_plugin_arguments

OUT = Path(__file__).resolve().parent / "results" / "campaigns"


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else []


def _measure(name: str, campaign: Campaign, make: Any) -> dict[str, Any]:
    load_before = _load()
    t0 = time.perf_counter()
    executor = make()
    startup = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp, ResultsDB(Path(tmp) / "r.sqlite") as db:
        try:
            summary = run_campaign(campaign, db, executor, progress=sys.stderr.isatty(), store_adv=False)
        finally:
            executor.close()
        rows = list(db.rows())
    queries = sum(r["queries"] for r in rows)
    dist = np.array([r["distortion"] if r["success"] else np.inf for r in rows])
    print(f"[scaling] {name}: {summary.stored} attacks in {summary.seconds:.1f} s (+{startup:.1f} s start-up)",
          flush=True)
    return {
        "executor": name,
        "attacks": summary.stored,
        "failed": len(summary.failed),
        "seconds": round(summary.seconds, 2),
        "startup_seconds": round(startup, 2),
        "attacks_per_s": round(summary.stored / summary.seconds, 3),
        "queries_per_s": round(queries / summary.seconds, 1),
        "median_l2": float(np.median(dist)),
        "success": float(np.isfinite(dist).mean()),
        "load_before": load_before,
        "load_after": _load(),
        "results": {tuple(r[k] for k in KEY): (r["distortion"], r["queries"]) for r in rows},
    }


def main(argv: list[str] | None = None) -> int:
    """Run the three executors; returns a process exit code."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.campaign_scaling", description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=200)
    p.add_argument("--budget", type=int, default=1000)
    p.add_argument("--solver", default="sign")
    add_plugin_argument(p)  # exported to ZEROOPT_PLUGINS, which the Ray workers get
    p.add_argument("--chunk", type=int, default=25, help="inputs per attack call (the same for every executor)")
    p.add_argument("--runs", default="local,ray:1,ray:2", help="executors in order: local, ray:<workers>")
    p.add_argument("--name", default="scaling", help="output file stem")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    load_plugin_arguments(p, args)
    torch.set_num_threads(1)
    command = "python -m benchmarks.campaign_scaling " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    campaign = Campaign(models=["mnist-cnn"], data="mnist", solvers=[args.solver], budgets=[args.budget],
                        n=args.n, chunk=args.chunk)
    runs = []
    for spec in (v.strip() for v in args.runs.split(",") if v.strip()):
        if spec == "local":
            runs.append(_measure("local", campaign, LocalExecutor))
        else:
            from applications.campaign import RayExecutor

            w = int(spec.removeprefix("ray:"))
            runs.append(_measure(f"ray x{w}", campaign, lambda w=w: RayExecutor(workers=w)))
    by_name = {r["executor"]: r["results"] for r in runs}
    reference = by_name.get("local", runs[0]["results"])
    for r in runs:
        mine = r.pop("results")
        r["same_as_local"] = sum(mine.get(k) == v for k, v in reference.items())
    data = {
        "command": command,
        "campaign": f"{args.n} MNIST test images x mnist-cnn x {args.solver} x budget {args.budget}, seed 0, "
                    f"{args.chunk} inputs per attack call, model batches 'auto' (256 on a CPU)",
        "machine": {"host": platform.node(), "cpus": os.cpu_count(), "torch": torch.__version__,
                    "torch_threads_per_worker": 1},
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "runs": runs,
    }
    lines = [
        "# Campaign throughput: local executor vs local Ray workers", "", f"Command: `{command}`", "",
        f"Campaign: {data['campaign']}. Machine: {os.cpu_count()} CPUs, one torch thread per worker. "
        "Each run starts from an empty database.", "",
        "| executor | attacks | seconds | + start-up s | attacks/s | queries/s | median L2 "
        "| same (distortion, queries) as local | load average before → after |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in runs:
        lines.append(
            f"| {r['executor']} | {r['attacks']} | {r['seconds']} | {r['startup_seconds']} | {r['attacks_per_s']} | "
            f"{r['queries_per_s']} | {r['median_l2']:.3f} | {r['same_as_local']}/{len(reference)} | "
            f"{', '.join(map(str, r['load_before']))} → {', '.join(map(str, r['load_after']))} |"
        )
    write_page(args.out / f"{args.name}.md", lines, data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
