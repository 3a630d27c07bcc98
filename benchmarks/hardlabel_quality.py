"""MNIST quality of the hard-label attack: median/mean L2 at 4k, 8k, 14k queries and at convergence.

Reproduces the bars of the attack issue on the paper authors' own MNIST network (mnist_cw_bn.pt):
100 correctly classified test images chosen by a seeded permutation, untargeted, every solver run once at
the largest budget (smaller budgets are read off each input's trace of improvements, so they are exactly
what a run with that budget would have returned); 60k-query convergence on the first 20; targeted
(target = (y0 + 1) mod 10, initial directions from other test images of the target class) on 20 images.

Resumable: each (experiment, solver, chunk of images) is saved in the results database (``--db``, default
``~/.cache/zeroopt/results.sqlite``; table ``files``, name ``hardlabel/runs/<chunk>.json``) and skipped when it
is already there (``python -m benchmarks.import_runs`` loads the chunk files of earlier versions).

    python -m benchmarks.hardlabel_quality            # everything (about 30 min on 2 cores)
    python -m benchmarks.hardlabel_quality --images 10 --solvers rgf   # a smaller slice
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

from applications.datasets import load_mnist_test
from applications.hardlabel import attack, attack_keywords
from applications.models import load_mnist_cw_bn
from benchmarks.pages import write_page
from benchmarks.store import FileStore
from zeroopt.recipes.plugins import add_plugin_argument, load_plugin_arguments

OUT = Path(__file__).resolve().parent / "results" / "hardlabel"
DB: Path | None = None  # results database (None: the user's default one)
BUDGETS = (4000, 8000, 14000)
CONVERGED = 60_000
# Figures to beat (ANCHORS.md §2, recomputed from the Sign-OPT authors' logs; paper Table 1).
BARS = {
    "OPT (authors)": {4000: 3.66, 8000: 2.42, 14000: 1.76},
    "Sign-OPT (authors)": {4000: 1.54, 8000: 1.19, 14000: 1.10},
    "OPT targeted (authors)": {4000: 3.44, 8000: 2.75, 14000: 2.35},
    "Sign-OPT targeted (authors)": {4000: 2.24, 8000: 1.67, 14000: 1.50},
}
CHUNK = 20


def _git(*args: str, check: bool = True) -> str:
    """``git ARGS`` run at the repository root, its output stripped (raises OSError/CalledProcessError)."""
    import subprocess

    root = Path(__file__).resolve().parent.parent
    return subprocess.run(["git", *args], capture_output=True, text=True, check=check, cwd=root).stdout.strip()


def git_commit() -> str:
    import subprocess

    try:
        commit = _git("rev-parse", "--short", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no", check=False)
        return commit + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def code_version() -> str:
    """The last commit that changed the attack's code (``zeroopt/``, ``applications/``), ``+dirty`` if edited since.

    Stored chunks are keyed by it, so a rerun after the attack changed makes new runs (and keeps the old
    ones under their own key), while commits that touch only pages or benchmarks reuse what is stored.
    """
    import subprocess

    try:
        last = _git("log", "-1", "--format=%h", "--", "zeroopt", "applications")
        dirty = _git("status", "--porcelain", "--untracked-files=no", "--", "zeroopt", "applications")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return (last or "unknown") + ("+dirty" if dirty else "")


# The commit of the code this process loaded: read once, since HEAD may move while a long run goes on.
COMMIT = git_commit()
CODE = code_version()


def pick_images(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """First n correctly classified test images in a seeded permutation of the 10k test set."""
    x, y = load_mnist_test()
    model = load_mnist_cw_bn()
    order = np.random.default_rng(seed).permutation(len(x))
    chosen: list[int] = []
    device = next(model.parameters()).device
    with torch.inference_mode():
        for start in range(0, len(order), 500):
            idx = order[start : start + 500]
            pred = model(torch.from_numpy(x[idx]).to(device)).argmax(1).cpu().numpy()
            chosen.extend(int(i) for i, p in zip(idx, pred, strict=True) if p == y[i])
            if len(chosen) >= n:
                break
    ids = np.array(chosen[:n])
    return ids, x[ids], y[ids]


def run_chunk(name: str, solver: str, ids: np.ndarray, budget: int, targeted: bool, seed: int, options: dict) -> dict:
    # Chunks made before the code version was part of the key (``hardlabel/runs/<name>.json``) stay stored
    # for the pages that cite them; new runs go under the attack's code version.
    key = f"{OUT.name}/runs/{CODE}/{name}.json"
    stored = FileStore(DB).get(key)
    if stored is not None:
        return json.loads(stored)
    x, y = load_mnist_test()
    model = load_mnist_cw_bn()
    target = (y[ids] + 1) % 10 if targeted else None
    # Target examples (targeted), and the untargeted fallback starting directions for inputs whose random
    # directions all fail (this network labels all random noise from an "8" as "8"), come from test images
    # outside the attacked set (the paper used training images, which are not available here).
    mask = np.ones(len(x), bool)
    mask[ids] = False
    pool = (x[mask], y[mask])
    t0 = time.perf_counter()
    res = attack(
        model,
        x[ids],
        y[ids],
        target=target,
        budget=budget,
        solver=solver,
        seed=seed,
        n_classes=10,
        progress=sys.stderr.isatty(),
        **attack_keywords({"target_pool": pool, **options}),
    )
    record = {
        "solver": solver,
        "options": {k: v for k, v in options.items()},
        "budget": budget,
        "targeted": targeted,
        "image_ids": ids.tolist(),
        "queries": res.queries.tolist(),
        "success": res.success.tolist(),
        "distortion": res.distortion.tolist(),
        "trace": [t.tolist() for t in res.trace],
        "model_calls": res.model_calls,
        "wall_time": time.perf_counter() - t0,
        "model_time": res.model_time,
        "torch_threads": torch.get_num_threads(),
        "commit": COMMIT,
        "code": CODE,
        "load_average": list(os.getloadavg()),
    }
    FileStore(DB).put(key, json.dumps(record).encode())
    return record


def at_budget(trace: list, b: int) -> float:
    reached = [d for q, d in trace if q <= b]
    return reached[-1] if reached else float("inf")


def summarize(records: list[dict], budgets: tuple[int, ...]) -> dict:
    traces = [t for r in records for t in r["trace"]]
    out = {}
    for b in budgets:
        d = np.array([at_budget(t, b) for t in traces])
        ok = np.isfinite(d)
        out[str(b)] = {
            "n": int(len(d)),
            "success_rate": float(ok.mean()),
            "median_l2": float(np.median(d)),  # inf-aware: a failure counts as an infinite distortion
            "mean_l2": float(d[ok].mean()) if ok.any() else float("inf"),
        }
    return out


def main(argv: list[str] | None = None) -> None:
    global OUT, DB
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--images", type=int, default=100)
    p.add_argument("--converge-images", type=int, default=20)
    p.add_argument("--targeted-images", type=int, default=20)
    p.add_argument("--solvers", nargs="+", default=["rgf", "sign"])
    add_plugin_argument(p)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--skip", nargs="*", default=[], choices=["untargeted", "converged", "targeted"])
    p.add_argument("--out", type=Path, default=OUT, help="results folder (default: benchmarks/results/hardlabel)")
    p.add_argument("--db", type=Path, default=None, help="database of the runs (default ~/.cache/zeroopt)")
    args = p.parse_args(argv)
    load_plugin_arguments(p, args)
    torch.set_num_threads(args.threads)
    # Full float32 on GPUs too (no TF32), so labels near the boundary match what a CPU computes.
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    OUT, DB = args.out, args.db
    ids, _, _ = pick_images(max(args.images, args.converge_images, args.targeted_images), args.seed)
    summary: dict = {
        "command": "python -m benchmarks.hardlabel_quality " + " ".join(argv or sys.argv[1:]),
        "bars": BARS,
        "results": {},
        "commit": COMMIT,
        "code": CODE,
        "load_average_start": list(os.getloadavg()),
        "torch_threads": args.threads,
        "date": time.strftime("%Y-%m-%d"),
        "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
    }
    experiments = []
    if "untargeted" not in args.skip:
        experiments += [("untargeted", s, ids[: args.images], max(BUDGETS), False, BUDGETS) for s in args.solvers]
    if "converged" not in args.skip:
        experiments += [("converged", "rgf", ids[: args.converge_images], CONVERGED, False, BUDGETS + (CONVERGED,))]
    if "targeted" not in args.skip:
        experiments += [("targeted", s, ids[: args.targeted_images], max(BUDGETS), True, BUDGETS) for s in args.solvers]
    for exp, solver, sel, budget, targeted, budgets in experiments:
        records = []
        for c in range(0, len(sel), CHUNK):
            chunk = sel[c : c + CHUNK]
            name = f"{exp}-{solver}-b{budget}-s{args.seed}-{c:03d}-{c + len(chunk):03d}"
            rec = run_chunk(name, solver, chunk, budget, targeted, args.seed, {})
            records.append(rec)
            print(f"{name}: {summarize([rec], budgets)[str(budgets[-1])]}  {rec['wall_time']:.0f}s", flush=True)
        s = summarize(records, budgets)
        s["queries_per_second"] = sum(sum(r["queries"]) for r in records) / sum(r["wall_time"] for r in records)
        s["model_calls_per_query"] = sum(r["model_calls"] for r in records) / sum(sum(r["queries"]) for r in records)
        # Where and when each chunk was made: its commit, the attack's code version, and the machine's load
        # when it finished (the q/s column is a contended figure when other jobs share the CPU).
        s["chunks"] = [
            {k: r.get(k) for k in ("commit", "code", "wall_time", "load_average", "torch_threads")} for r in records
        ]
        summary["results"][f"{exp}/{solver}"] = s
    summary["load_average_end"] = list(os.getloadavg())
    write_page(OUT / "mnist_quality.md", render(summary), summary)


def render(summary: dict) -> str:
    lines = [
        "# Hard-label attack on the authors' MNIST CNN (mnist_cw_bn.pt)",
        "",
        f"Command: `{summary['command']}` (commit {summary['commit']}, {summary['torch_threads']} torch "
        f"thread(s), device: {summary['device']})",
        "",
        "Median / mean L2 at each query budget (a failure counts as +inf in the median). "
        "Budgets below a run's budget are read off each input's trace.",
        "",
        "| experiment / solver | n | "
        + " | ".join(f"{b} median / mean / success" for b in ("4000", "8000", "14000", "60000"))
        + " | q/s | calls/query |",
        "|---|---|" + "---|" * 4 + "---|---|",
    ]
    for key, s in summary["results"].items():
        cells = []
        for b in ("4000", "8000", "14000", "60000"):
            if b in s:
                cells.append(f"{s[b]['median_l2']:.3f} / {s[b]['mean_l2']:.3f} / {s[b]['success_rate']:.0%}")
            else:
                cells.append("–")
        n = s["4000"]["n"]
        lines.append(
            f"| {key} | {n} | "
            + " | ".join(cells)
            + f" | {s['queries_per_second']:.0f} | {s['model_calls_per_query']:.4f} |"
        )
    lines += [
        "",
        "Chunks (20 images each): commit the run was made at / the attack's code version / load average "
        "(1, 5, 15 min) when it finished; chunks made before these were recorded show `?`.",
        "",
    ]
    for key, s in summary["results"].items():
        made = [
            f"{c.get('commit') or '?'} / {c.get('code') or '?'} / "
            + (", ".join(f"{v:.1f}" for v in c["load_average"]) if c.get("load_average") else "?")
            for c in s.get("chunks", [])
        ]
        lines.append(f"- {key}: " + "; ".join(made))
    if "load_average_start" in summary:
        lines += [
            "",
            "Load average of the machine (1, 5, 15 min) when this command started: "
            + ", ".join(f"{v:.1f}" for v in summary["load_average_start"])
            + "; when it ended: "
            + ", ".join(f"{v:.1f}" for v in summary["load_average_end"])
            + f" ({os.cpu_count()} CPUs).",
        ]
    lines += ["", "Bars (median L2 at 4k / 8k / 14k):", ""]
    for name, bar in summary["bars"].items():
        lines.append(f"- {name}: " + " / ".join(f"{v:.2f}" for v in bar.values()))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
