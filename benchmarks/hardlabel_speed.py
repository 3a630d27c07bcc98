"""Speed of the hard-label attack against the model's own forward throughput, in the same run.

Attacks 20 MNIST test images at once on the authors' CNN (mnist_cw_bn.pt) and compares the attack's
queries per second with the model's forward throughput at batch 100 on the same machine and thread count
(the bar: at least 70%). Each configuration runs in a fresh subprocess so its peak resident memory is its
own; running two budgets shows that memory does not grow with the budget.

    python -m benchmarks.hardlabel_speed
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.pages import write_page
from zeroopt.recipes.plugins import add_plugin_argument, load_plugin_arguments

OUT = Path(__file__).resolve().parent / "results" / "hardlabel"


def forward_rates(threads: int, seconds: float = 3.0) -> dict[int, float]:
    """The model's forward rate at batch 1, 20 and 100 on the first test images, at ``threads`` torch threads,
    through the adapter the attack's queries take (:func:`benchmarks.speed.forward_rate`)."""
    import torch

    from applications.datasets import load_mnist_test
    from applications.hardlabel import as_label_model
    from applications.models import load_mnist_cw_bn
    from benchmarks.speed import forward_rate

    torch.set_num_threads(threads)
    x, _ = load_mnist_test()
    return forward_rate(as_label_model(load_mnist_cw_bn(), n_classes=10), x[:100], (1, 20, 100), seconds)


def one_attack(images: int, budget: int, solver: str, threads: int, heap: bool = False) -> dict:
    import torch

    from applications.datasets import load_mnist_test
    from applications.hardlabel import attack
    from applications.models import load_mnist_cw_bn

    torch.set_num_threads(threads)
    model = load_mnist_cw_bn()
    x, y = load_mnist_test()
    with torch.inference_mode():
        pred = model(torch.from_numpy(x[:200])).argmax(1).numpy()
    ids = np.flatnonzero(pred == y[:200])[:images]
    import tracemalloc

    if heap:  # the attack's own allocations (numpy and Python), not torch's; tracing slows the run down
        tracemalloc.start()
    res = attack(model, x[ids], y[ids], budget=budget, solver=solver, seed=0, n_classes=10)
    heap_peak = tracemalloc.get_traced_memory()[1] if heap else float("nan")
    tracemalloc.stop()
    q = int(res.queries.sum())
    return {
        "solver": solver,
        "budget": budget,
        "images": images,
        "queries": q,
        "seconds": res.wall_time,
        "model_seconds": res.model_time,
        "queries_per_second": q / res.wall_time,
        "model_calls": res.model_calls,
        "model_calls_per_query": res.model_calls / q,
        "mean_samples_per_call": q / res.model_calls,
        "median_l2": float(np.median(res.distortion)),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "attack_heap_peak_mib": heap_peak / 2**20,
        "onednn_cache_capacity": os.environ.get("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "default"),
    }


def _heap(mib: float) -> str:
    return "–" if mib != mib else f"{mib:.1f}"  # NaN: not traced in this row


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--images", type=int, default=20)
    p.add_argument("--budgets", type=int, nargs="+", default=[2000, 8000])
    # The attack's default solver among them: the speed users get without choosing one.
    p.add_argument("--solvers", nargs="+", default=["rgf", "sign", "sign-growing"])
    add_plugin_argument(p)  # exported to ZEROOPT_PLUGINS, so each configuration's process loads it too
    p.add_argument("--child", nargs=3, metavar=("SOLVER", "BUDGET", "IMAGES"), help=argparse.SUPPRESS)
    p.add_argument("--heap", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    load_plugin_arguments(p, args)
    if args.child:
        print(json.dumps(one_attack(int(args.child[2]), int(args.child[1]), args.child[0], args.threads, args.heap)))
        return
    rows = []
    # Each configuration in a fresh process, so its peak RSS is its own. The last ones rerun the first solver
    # with torch's oneDNN kernel cache capped and the attack's heap traced (memory rows; tracing slows them):
    # that cache keeps one compiled kernel per batch shape seen, which is what makes the RSS of longer runs
    # larger, while the attack's own heap peak does not grow.
    configs = [(s, b, None) for s in args.solvers for b in args.budgets]
    configs += [(args.solvers[0], b, "4") for b in args.budgets]
    from benchmarks.hardlabel_quality import CODE, COMMIT  # the code this run measures

    load_start = list(os.getloadavg())
    for solver, budget, cache in configs:
        env = dict(os.environ)
        if cache is not None:
            env["ONEDNN_PRIMITIVE_CACHE_CAPACITY"] = cache
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmarks.hardlabel_speed",
                "--threads",
                str(args.threads),
                "--child",
                solver,
                str(budget),
                str(args.images),
            ]
            + (["--heap"] if cache is not None else []),
            check=True,
            capture_output=True,
            text=True,
            env=env,
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        rows[-1]["load_average"] = list(os.getloadavg())  # other jobs on the machine slow every figure
        print(rows[-1], flush=True)
    # Forward throughput measured in the same run, right after the attacks, at the same thread count.
    fwd = forward_rates(args.threads)
    for r in rows:
        r["ratio_to_forward_b100"] = r["queries_per_second"] / fwd[100]
    cmd = "python -m benchmarks.hardlabel_speed " + " ".join(argv if argv is not None else sys.argv[1:])
    load = {"start": load_start, "end": list(os.getloadavg()), "cpus": os.cpu_count()}
    summary = {
        "command": cmd,
        "commit": COMMIT,
        "code": CODE,
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "threads": args.threads,
        "load_average": load,
        "forward_images_per_second": fwd,
        "attacks": rows,
    }
    lines = [
        "# Hard-label attack speed on mnist_cw_bn.pt",
        "",
        f"Command: `{cmd}` ({args.threads} torch threads; commit {COMMIT}, the attack's code at {CODE})",
        "",
        f"Load average of the machine (1, 5, 15 min; {load['cpus']} CPUs) at the start: "
        + ", ".join(f"{v:.1f}" for v in load["start"])
        + "; at the end: "
        + ", ".join(f"{v:.1f}" for v in load["end"])
        + " (each row's load when it finished is in the last column). A load above the CPU count means other "
        "jobs shared the CPU: every rate here, the forward rates included, is then lower than on an idle machine.",
        "",
        "Model forward throughput (images/s): " + ", ".join(f"batch {b}: {v:.0f}" for b, v in fwd.items()),
        "",
        "| solver | images | budget | queries/s | ratio to forward@100 | model calls/query | samples/call "
        "| share of time in model | peak RSS MiB | attack heap peak MiB | oneDNN cache | median L2 | load average |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['solver']} | {r['images']} | {r['budget']} | {r['queries_per_second']:.0f} | "
            f"{r['ratio_to_forward_b100']:.2f} | {r['model_calls_per_query']:.4f} | {r['mean_samples_per_call']:.0f} | "
            f"{r['model_seconds'] / r['seconds']:.0%} | {r['peak_rss_mib']:.0f} | "
            f"{_heap(r['attack_heap_peak_mib'])} | "
            f"{r['onednn_cache_capacity']} | {r['median_l2']:.3f} | "
            + ", ".join(f"{v:.1f}" for v in r["load_average"])
            + " |"
        )
    lines += [
        "",
        "Peak RSS includes torch's oneDNN kernel cache, which keeps one compiled kernel per batch shape seen, so a",
        "longer run (more distinct round sizes) shows a larger RSS; with the cache capped",
        "(`ONEDNN_PRIMITIVE_CACHE_CAPACITY=4`) RSS is flat across budgets, and the attack's own heap peak",
        "(tracemalloc: numpy and Python objects) is the same at every budget.",
        "Rows with a capped cache trace the attack's heap (tracemalloc), which slows them: read speed off the others.",
        f"Machine: {os.uname().nodename}, {os.cpu_count()} CPUs visible; other jobs may share it (see the README).",
    ]
    write_page(OUT / "mnist_speed.md", lines, summary)


if __name__ == "__main__":
    main()
