"""The speed table: how fast each attack spends its queries, against the model's own forward throughput.

Per experiment, attack and run budget (attacks are compared at equal budgets): queries per second (all
queries the monitor counted / wall time), model calls per query, seconds per attacked input, the share of
wall time spent inside the model, and peak memory (resident set, process-wide, sampled during the run; its
excess over the size at the start of the run). Ratios put each of our attacks beside each peer at the same
budget: queries/s ours / peer, and seconds per input peer / ours (above 1: ours is faster). The model's
forward throughput at batch 1, 20 and 100 is the ceiling for any attack's queries/s.
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.monitor import LabelFn
from benchmarks.pages import write_page


def speed_rows(runs: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per (attack, run budget) from stored runs."""
    rows = []
    for name, records in runs.items():
        by_budget: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for r in records:
            by_budget[int(r["budget"])].append(r)
        for budget, recs in sorted(by_budget.items()):
            wall = sum(r["time"]["wall"] for r in recs)
            row: dict[str, Any] = {
                "attack": name,
                "family": recs[0]["family"],
                "budget": budget,
                "inputs": len(recs),
                "group_size": recs[0]["time"]["group_size"],
                "seconds_per_input": wall / len(recs),
                "peak_extra_mb": max(r["time"]["peak_extra_mb"] for r in recs),
                "peak_rss_mb": max(r["time"]["peak_rss_mb"] for r in recs),
            }
            if recs[0]["queries"] is not None:
                queries = sum(r["queries"] for r in recs)
                calls = sum(r["time"]["model_calls"] for r in recs)
                model = sum(r["time"]["model"] for r in recs)
                row.update(
                    queries=queries,
                    queries_per_second=queries / wall if wall > 0 else None,
                    calls_per_query=calls / queries if queries else None,
                    samples_per_call=queries / calls if calls else None,
                    model_share=model / wall if wall > 0 else None,
                )
            rows.append(row)
    return rows


def ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ours beside each peer at the same budget."""
    out = []
    for ours in (r for r in rows if r["family"] == "ours"):
        for peer in (r for r in rows if r["family"] != "ours" and r["budget"] == ours["budget"]):
            item = {
                "ours": ours["attack"],
                "peer": peer["attack"],
                "budget": ours["budget"],
                "time_speedup": peer["seconds_per_input"] / ours["seconds_per_input"],
            }
            if peer.get("queries_per_second") and ours.get("queries_per_second"):
                item["qps_ratio"] = ours["queries_per_second"] / peer["queries_per_second"]
            out.append(item)
    return out


def forward_rate(
    label_fn: LabelFn, pool: Any, batch_sizes: tuple[int, ...] = (1, 20, 100), seconds: float = 1.0
) -> dict[int, float]:
    """Inputs per second that ``label_fn`` labels at each batch size: the ceiling for any attack's queries/s.

    The one forward-rate timer of the benchmarks. Give it the model through the project's adapter
    (``applications.hardlabel.as_label_model``), the path every attack's queries take: the adapter runs each
    call in exact float32 (TF32 off on GPUs), so the ceiling and the attacks obey one rule for TF32.

    Parameters
    ----------
    label_fn : callable
        The model's label function (a batch in, labels out as numpy).
    pool : numpy.ndarray or torch.Tensor
        Inputs to cycle through (at least one); a tensor already on the model's device times the model without
        the host-to-device copy, as an attack whose arrays live on the device sends them.
    batch_sizes : tuple of int
        Batch sizes to time.
    seconds : float
        Minimum timing duration per batch size (after one warm-up call).

    Returns
    -------
    dict
        Inputs per second, by batch size.
    """
    out: dict[int, float] = {}
    for b in batch_sizes:
        batch = pool[np.arange(b) % len(pool)]  # the pool repeated up to b inputs
        if isinstance(batch, np.ndarray):
            batch = np.ascontiguousarray(batch, dtype=np.float32)
        label_fn(batch)  # warm-up: kernel choice, allocator
        n = 0
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            label_fn(batch)
            n += b
        out[b] = n / elapsed
    return out


def model_throughput(label_fns: dict[str, tuple[LabelFn, np.ndarray]], seconds: float) -> dict[str, dict[int, float]]:
    """Forward (label) throughput of each model at batch 1, 20 and 100, in samples per second."""
    return {name: forward_rate(fn, pool, (1, 20, 100), seconds) for name, (fn, pool) in label_fns.items()}


def _f(x: float | None, fmt: str = "{:.0f}") -> str:
    return "—" if x is None else fmt.format(x)


def render(data: dict[str, Any]) -> str:
    """Markdown of the speed table."""
    lines = ["# Speed: every attack through the same monitor, at equal budgets", ""]
    lines += [f"Command: `{data['command']}`", ""] + [f"- {n}" for n in data["notes"]]
    lines += ["", "## Model forward throughput (samples/s): the ceiling", ""]
    lines += ["| model | batch 1 | batch 20 | batch 100 |", "|---|---|---|---|"]
    for name, t in data["forward"].items():
        lines.append(f"| {name} | " + " | ".join(_f(t.get(b, t.get(str(b)))) for b in (1, 20, 100)) + " |")
    for exp, block in data["experiments"].items():
        lines += ["", f"## {exp}", ""]
        lines += [
            "| attack | budget | inputs | group | queries/s | calls/query | samples/call | s/input | in model "
            "| peak MiB (+extra) |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in block["rows"]:
            lines.append(
                f"| {r['attack']} | {r['budget']} | {r['inputs']} | {r['group_size']} | "
                f"{_f(r.get('queries_per_second'))} | {_f(r.get('calls_per_query'), '{:.3f}')} | "
                f"{_f(r.get('samples_per_call'), '{:.1f}')} | {r['seconds_per_input']:.1f} | "
                f"{_f(r.get('model_share'), '{:.0%}')} | {r['peak_rss_mb']:.0f} (+{r['peak_extra_mb']:.0f}) |"
            )
        if block["ratios"]:
            lines += ["", "| ours | peer | budget | time speed-up (peer s / ours s) | queries/s ours / peer |"]
            lines += ["|---|---|---|---|---|"]
            for q in block["ratios"]:
                lines.append(
                    f"| {q['ours']} | {q['peer']} | {q['budget']} | {q['time_speedup']:.2f} | "
                    f"{_f(q.get('qps_ratio'), '{:.2f}')} |"
                )
    return "\n".join(lines) + "\n"


def plot(data: dict[str, Any], path: Path) -> Path:
    """Queries/s of every black-box attack per experiment, beside the model's batch-1 and batch-100 ceiling."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from applications.figures import save_figure

    blocks = data["experiments"]
    ncols = min(3, len(blocks))
    nrows = -(-len(blocks) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.8 * ncols, 3.8 * nrows), squeeze=False)
    for ax in axes.ravel()[len(blocks) :]:
        ax.axis("off")
    for ax, (exp, block) in zip(axes.ravel(), blocks.items(), strict=False):
        rows = [r for r in block["rows"] if r.get("queries_per_second")]
        labels = [f"{r['attack']} @{r['budget']}" for r in rows]
        colors = ["tab:blue" if r["family"] == "ours" else "tab:orange" for r in rows]
        ax.barh(range(len(rows)), [r["queries_per_second"] for r in rows], color=colors)
        ax.set_yticks(range(len(rows)), labels, fontsize=6)
        ceiling = data["forward"].get(block.get("model", ""), {})
        for b, style in (("1", ":"), ("100", "--")):
            if b in ceiling:
                ax.axvline(ceiling[b], color="k", linestyle=style, linewidth=1, label=f"model, batch {b}")
        ax.set_xscale("log")
        ax.set_xlabel("queries / s")
        ax.set_title(exp, fontsize=9)
        ax.legend(fontsize=6)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path


def write(out_dir: Path, data: dict[str, Any]) -> Path:
    """Write ``speed.json``, ``speed.png`` and ``speed.md``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    figure = plot(data, out_dir / "speed.png")
    path = out_dir / "speed.md"
    write_page(path, render(data) + f"\n![{figure.name}]({figure.name})\n", data, echo=False)
    return path
