"""The attack's own cost per query: seconds spent outside a nearly free model, ours beside the peers.

The model is a numpy linear layer (10 classes, float32 weights, ``argmax(x @ W.T)``), timed on every call; what
an attack spends outside it, divided by the queries it made, is its own cost per query. Inputs are uniform
random images of shape (C, H, H) for d = 784 (1×28×28), 3,072 (3×32×32), 12,288 (3×64×64), 150,528
(3×224×224) and 202,800 (3×260×260, EfficientNet-Lite2's input), attacked one per call and 32 per call (ours in
lockstep, foolbox's batched; ART and the CGBA reference code attack the inputs of a call one after another, so
their 32-input cost is their one-input cost and is not run again). Each row runs in
a fresh child process, whose peak memory is reported as the growth of its resident set over the attack
(``ru_maxrss`` after minus the RSS just before). Peers run through the suite's adapters
(:mod:`benchmarks.attacks`) with a plain query counter in place of the suite's monitor, which stops them at the
budget.

    python -m benchmarks.overhead --label before              # every attack, d and batch size
    python -m benchmarks.overhead --label after --attacks ours-sign-growing ours-sign ours-rgf
    python -m benchmarks.overhead --page                      # the page from the stored JSON files
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
from typing import Any

import numpy as np

from benchmarks.pages import write_page

OUT = Path(__file__).resolve().parent / "results" / "overhead"
SHAPES = {784: (1, 28, 28), 3072: (3, 32, 32), 12288: (3, 64, 64), 150528: (3, 224, 224), 202800: (3, 260, 260)}
OURS = ("ours-sign-growing", "ours-sign", "ours-rgf", "ours-sign-growing-nearly")
#: Our rows' solver and solver options ("-nearly": probes orthonormalised only while q/d >= 1/200, not the default).
OURS_RUNS = {"ours-sign-growing": ("sign-growing", {}), "ours-sign": ("sign", {}), "ours-rgf": ("rgf", {}),
             "ours-sign-growing-nearly": ("sign-growing", {"directions": "nearly-orthogonal"})}
PEERS = ("art-hsj", "art-signopt", "art-geoda", "fb-hsja", "cgba-h")
#: Peers that attack a call's inputs one after another (their one-input row is their cost at any batch size).
ONE_AT_A_TIME = ("art-hsj", "art-signopt", "art-geoda", "cgba-h")
#: The page's labels: before and after the cost work on the full-space default, and the default's size rule.
PAGE_LABELS = ("before", "after", "size-rule")
#: Goals of issue 48: own ms per query at (d, inputs per call).
GOALS = {(150528, 1): 1.0, (3072, 32): 0.2}
N_CLASSES = 10
#: Address space allowed to each row's process: the 8 GB goal of issue 48 with room for the libraries.
MEMORY_CAP_GIB = 12.0


def budget_for(dim: int, inputs: int) -> int:
    """Queries per input: 1k, fewer where 32 inputs of a large d would take minutes."""
    if inputs == 1:
        return 1000
    return {12288: 500, 150528: 200, 202800: 200}.get(dim, 1000)


class FreeModel:
    """The linear layer as a timed hard-label callable; counts samples and stops peers at ``limit`` of them."""

    def __init__(self, dim: int, seed: int = 0, limit: int | None = None) -> None:
        rng = np.random.default_rng(seed)
        self.w = (rng.standard_normal((N_CLASSES, dim)) / np.sqrt(dim)).astype(np.float32)
        self.limit, self.samples, self.calls, self.seconds = limit, 0, 0, 0.0

    def __call__(self, x: Any) -> np.ndarray:
        from benchmarks.monitor import BudgetExhausted

        start = time.perf_counter()
        x = np.asarray(x, dtype=np.float32)
        if self.limit is not None and self.samples + len(x) > self.limit:
            x = x[: self.limit - self.samples]
        labels = (x.reshape(len(x), -1) @ self.w.T).argmax(1)
        self.samples, self.calls = self.samples + len(x), self.calls + 1
        self.seconds += time.perf_counter() - start
        if self.limit is not None and self.samples >= self.limit:
            raise BudgetExhausted("budget spent")
        return labels


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def one_row(name: str, dim: int, inputs: int, seed: int = 0) -> dict[str, Any]:
    """Run one attack on ``inputs`` random images of dimension ``dim``; its cost outside the model."""
    shape, budget = SHAPES[dim], budget_for(dim, inputs)
    rng = np.random.default_rng(seed + 1)
    x0 = rng.random((inputs, *shape), dtype=np.float32)
    model = FreeModel(dim, seed, limit=None if name.startswith("ours") else inputs * budget)
    y0 = model(x0)
    model.samples = model.calls = 0
    model.seconds = 0.0
    row: dict[str, Any] = {"attack": name, "dim": dim, "inputs": inputs, "budget": budget}
    _import(name)  # the libraries' import time and memory are not the attack's
    rss0 = _rss_mib()
    start = time.perf_counter()
    try:
        extra = _run(name, model, x0, y0, budget, seed)
    except Exception as err:  # a peer that cannot run at this d is shown as such
        return {**row, "error": f"{type(err).__name__}: {str(err).splitlines()[0][:160]}"}
    wall = time.perf_counter() - start
    q = model.samples
    return {**row, **extra, "queries": q, "model_calls": model.calls, "wall_s": wall, "model_s": model.seconds,
            "own_ms_per_query": 1e3 * (wall - model.seconds) / max(q, 1),
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "rss_growth_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - rss0}


def _import(name: str) -> None:
    import applications.hardlabel  # noqa: F401

    if name.startswith("art-"):
        import art.attacks.evasion  # noqa: F401
        import art.estimators.classification  # noqa: F401
    elif name.startswith("fb-"):
        import foolbox  # noqa: F401


def _run(name: str, model: FreeModel, x0: np.ndarray, y0: np.ndarray, budget: int, seed: int) -> dict[str, Any]:
    if name.startswith("ours-"):
        from applications.hardlabel import attack

        solver, options = OURS_RUNS[name]
        res = attack(model, x0, y0, budget=budget, solver=solver, seed=seed, n_classes=N_CLASSES,
                     solver_options=options)
        return {"median_l2": float(np.median(res.distortion)), "success": float(np.mean(res.success))}
    from benchmarks.attacks.art_peers import ArtGeoDA, ArtHopSkipJump, ArtSignOPT
    from benchmarks.attacks.base import Batch
    from benchmarks.attacks.cgba_peer import CGBA
    from benchmarks.attacks.foolbox_peers import HOPSKIPJUMP, FoolboxDecision

    adapter = {"art-hsj": ArtHopSkipJump, "art-signopt": ArtSignOPT, "art-geoda": ArtGeoDA, "cgba-h": CGBA}.get(name)
    peer = adapter() if adapter else FoolboxDecision(*HOPSKIPJUMP, group_size=len(x0))
    if peer.unavailable():
        raise RuntimeError(peer.unavailable())
    batch = Batch(x0=x0, y0=y0.astype(np.int64), target=None, starts=None, bounds=(0.0, 1.0), n_classes=N_CLASSES)
    if peer.group_size == 1 and len(x0) > 1:
        raise ValueError("attacks one input per call")
    peer.run(model, batch, budget, seed)  # type: ignore[arg-type]
    return {}


def _child(name: str, dim: int, inputs: int) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "benchmarks.overhead", "--child", name, str(dim), str(inputs)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
        return {"attack": name, "dim": dim, "inputs": inputs, "budget": budget_for(dim, inputs), "error": tail[:200]}
    return json.loads(lines[-1])


def measure(label: str, attacks: list[str], dims: list[int], inputs: list[int], repeats: int) -> Path:
    """Run every (attack, d, inputs) ``repeats`` times (the median row kept) and store them in ``<label>.json``."""
    path = OUT / f"{label}.json"
    stored = json.loads(path.read_text()) if path.exists() else {"rows": []}
    rows = {(r["attack"], r["dim"], r["inputs"]): r for r in stored["rows"]}
    argv = " ".join(sys.argv[1:])
    for dim in dims:
        for n in inputs:
            # Attacks one input at a time: the one-input row is its cost.
            names = [name for name in attacks if n == 1 or name not in ONE_AT_A_TIME]
            # The attacks take turns, repeat by repeat, so a change of load falls on each alike.
            turns = [[_child(name, dim, n) for name in names] for _ in range(repeats)]
            for j, name in enumerate(names):
                runs = [turn[j] for turn in turns]
                ok = [r for r in runs if "error" not in r]
                row = sorted(ok, key=lambda r: r["own_ms_per_query"])[len(ok) // 2] if ok else runs[0]
                row["repeats_ms"] = [round(r["own_ms_per_query"], 4) for r in ok]
                row["load"] = list(os.getloadavg())
                rows[(name, dim, n)] = row
                print(json.dumps(row), flush=True)
                cmds = stored.get("commands", [])
                stored.update(commands=cmds + [f"python -m benchmarks.overhead {argv}"] * (not cmds or cmds[-1] !=
                              f"python -m benchmarks.overhead {argv}"), date=time.strftime("%Y-%m-%d %H:%M"),
                              rows=list(rows.values()))
                OUT.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(stored))
    return path


def _cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return "–"
    if "error" in row:
        return "cannot run" if "one input per call" not in row["error"] else "one at a time"
    return f"{row['own_ms_per_query']:.3g}"


def page(labels: tuple[str, ...] = PAGE_LABELS) -> Path:
    """The page: own ms/query per d, one and 32 inputs, before/after for ours, beside the peers; and a plot."""
    data = {lab: json.loads((OUT / f"{lab}.json").read_text()) for lab in labels if (OUT / f"{lab}.json").exists()}
    index = {(lab, r["attack"], r["dim"], r["inputs"]): r for lab, d in data.items() for r in d["rows"]}
    names = [a for a in OURS + PEERS if any(k[1] == a for k in index)]
    commands = [c for d in data.values() for c in d["commands"]] + ["python -m benchmarks.overhead --page"]
    lines = ["# The attack's own cost per query, with a nearly free model", "", "```bash", *commands, "```", "",
             "Milliseconds per query spent outside a numpy linear layer (10 classes), median of the repeats (module "
             "docstring for the set-up). Each labelled command writes its rows to `LABEL.json`; `--page` writes "
             "this page from them. Load while each ran:", ""]
    for lab, d in data.items():
        loads = [r["load"][0] for r in d["rows"] if "load" in r]
        lines.append(f"- {lab}: 1-min load {min(loads):.1f}–{max(loads):.1f} on {os.cpu_count()} CPUs")
    for n in (1, 32):
        lines += ["", f"## {n} input{'s' if n > 1 else ''} per call", "",
                  "| attack | " + " | ".join(f"d = {d:,}" for d in SHAPES) + " |",
                  "|---|" + "---|" * len(SHAPES)]
        for name in names:
            for lab in _labels_of(name, labels, index):
                if not any(k[:2] == (lab, name) for k in index):
                    continue
                cells = []
                for dim in SHAPES:
                    row = index.get((lab, name, dim, n))
                    cell = "one at a time" if n > 1 and name in ONE_AT_A_TIME else _cell(row)
                    if row and "budget" in row and "error" not in row:
                        cell += f" ({row['budget']} q, {row['rss_growth_mib']:.0f} MiB)"
                    cells.append(cell)
                tag = f" {lab}" if name.startswith("ours") else ""
                lines.append(f"| {name}{tag} | " + " | ".join(cells) + " |")
        for (dim, k), goal in GOALS.items():
            if k == n:
                lines.append(f"\nGoal: ≤ {goal} ms per query at d = {dim:,}.")
    lines += ["", "Each cell: ms per query (queries per input, growth of the process's resident set over the attack, "
              "MiB; a fresh process per cell). \"one at a time\": ART attacks a call's inputs one after another, "
              "so its one-input cost holds.", "",
              "![own ms per query against d, one and 32 inputs per call](overhead.png)"]
    notes = OUT / "notes.md"  # the profile and the changes behind the figures, written by hand
    if notes.exists():
        lines += ["", notes.read_text().rstrip()]
    _plot(index, labels, names)
    out = OUT / "README.md"
    write_page(out, lines, echo=False)
    return out


def _labels_of(name: str, labels: tuple[str, ...], index: dict[tuple, dict[str, Any]]) -> tuple[str, ...]:
    """The labels whose rows of ``name`` the page shows: every label for ours, the first that ran it for a peer."""
    if name.startswith("ours"):
        return labels
    return next(((lab,) for lab in labels if any(k[:2] == (lab, name) for k in index)), labels[:1])


def _plot(index: dict[tuple, dict[str, Any]], labels: tuple[str, ...], names: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from applications.figures import save_figure

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, n in zip(axes, (1, 32), strict=True):
        for name in names:
            for lab in _labels_of(name, labels, index):
                pts = [(d, index[(lab, name, d, n)]["own_ms_per_query"]) for d in SHAPES
                       if (lab, name, d, n) in index and "error" not in index[(lab, name, d, n)]]
                if pts:
                    style = "--" if lab == labels[0] and name.startswith("ours") and len(labels) > 1 else "-"
                    ax.plot(*zip(*pts, strict=True), style, marker="o", label=f"{name} {lab}" if name.startswith(
                        "ours") else name)
        for (dim, k), goal in GOALS.items():
            if k == n:
                ax.plot([dim], [goal], "k*", markersize=12, label=f"goal at d = {dim:,}")
        ax.set(xscale="log", yscale="log", xlabel="d", title=f"{n} input{'s' if n > 1 else ''} per call")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("own ms per query")
    for ax in axes:
        ax.legend(fontsize=6)
    fig.tight_layout()
    save_figure(fig, OUT / "overhead.png")  # a palette PNG: the results tree is size-limited
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--label", default="run", help="the JSON file the rows go to (results/overhead/LABEL.json)")
    p.add_argument("--attacks", nargs="+", default=list(OURS[:3] + PEERS), choices=OURS + PEERS)
    p.add_argument("--dims", nargs="+", type=int, default=list(SHAPES), choices=list(SHAPES))
    p.add_argument("--inputs", nargs="+", type=int, default=[1, 32])
    p.add_argument("--repeats", type=int, default=3, help="runs of each row (the median kept)")
    p.add_argument("--page", action="store_true", help="write the page from the JSON files of --page-labels")
    p.add_argument("--page-labels", nargs="+", default=list(PAGE_LABELS), help="the labels the page shows, in order")
    p.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        # A row that would take the machine's memory fails with MemoryError instead (and is shown as such).
        cap = int(MEMORY_CAP_GIB * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        print(json.dumps(one_row(args.child[0], int(args.child[1]), int(args.child[2]))))
    elif args.page:
        print(page(tuple(args.page_labels)))
    else:
        measure(args.label, args.attacks, args.dims, args.inputs, args.repeats)


if __name__ == "__main__":
    main()
