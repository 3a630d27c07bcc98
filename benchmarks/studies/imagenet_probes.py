"""Which probe sampler on ImageNet size: the attack with full-space probes against the same attack with
``directions=`` swapped.

At 3 x 224 x 224 = 150,528 dimensions the ``sign-growing`` attack with ``directions="orthogonal"`` draws its probes
from the full space, while the decision-based attacks of recent years (QEBA, GeoDA, CGBA-H) probe a low-frequency
subspace there, as the default's size rule (``directions="by-size"``) does.

This study attacks EfficientNet-Lite0 (the PyPI wheel) on the first K correctly
classified shared ImageNet validation images, in the suite's seeded order (``benchmarks.imagenet_experiments``:
``_rng(seed, "imagenet")``), untargeted, once per configuration and budget: every budget is its own attack call
with that budget, and all K inputs of one configuration go into one call (the attack batches them; each input's
randomness depends on the seed only). Per input it records L2, success, queries, the wall time of the call, and
the attack's own time outside the model (``res.wall_time - res.model_time``, per query of the call).

A second, model-free part times the samplers alone at the image's shape: ``sample(rng, q, d, t)`` for the q an
estimate of the default attack draws (20 at its first iteration, up to 200 later).

Raw records go to a JSON cache (``--cache``); a run computes only the (configuration, budget) cells the cache
lacks, so a long study can be run in parts and the page (``--out``) is written from whatever the cache holds.

Usage::

    python -m benchmarks.studies.imagenet_probes --k 3 --budgets 500,2000 --configs full-space,low-frequency \\
        --out benchmarks/results/ablation/imagenet-probes/README.md
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.pages import READING_MARKER, command_line, kept_reading, write_page

#: The configurations: the label on the page and the solver options of the attack call.
CONFIGS: dict[str, dict[str, Any]] = {
    "full-space": {"directions": "orthogonal"},
    "default": {},
    "low-frequency": {"directions": "low-frequency"},
    "multi-scale": {"directions": "multi-scale"},
    "nearly-orthogonal": {"directions": "nearly-orthogonal"},
    "widening-hedge": {"directions": "widening-hedge"},
}
#: The samplers timed alone (the registered names) and the probe counts timed.
SAMPLERS = ("orthogonal", "nearly-orthogonal", "low-frequency", "multi-scale")
SAMPLER_QS = (20, 100, 200)
N_CLASSES = 1000


def imagenet_order(n: int, seed: int) -> np.ndarray:
    """The suite's seeded order of the ``n`` shared images (``benchmarks.experiment_base.seeded_rng(seed,
    "imagenet")``, as ``benchmarks.imagenet_experiments`` draws it; written out here so the study imports no model
    code)."""
    return np.random.default_rng(np.random.SeedSequence([seed, *b"imagenet"])).permutation(n)


def first_correct(labels: Callable[[np.ndarray], np.ndarray], x: np.ndarray, y: np.ndarray, order: np.ndarray,
                  k: int, chunk: int = 10) -> np.ndarray:
    """Indices of the first ``k`` images in ``order`` that ``labels`` classifies correctly (an error if fewer)."""
    found: list[int] = []
    for lo in range(0, len(order), chunk):
        idx = order[lo:lo + chunk]
        found.extend(int(i) for i in idx[labels(x[idx]) == y[idx]])
        if len(found) >= k:
            return np.array(found[:k], dtype=np.int64)
    raise ValueError(f"only {len(found)} of {len(x)} images are classified correctly; {k} asked for")


def run_cell(model: Any, x: np.ndarray, y: np.ndarray, index: np.ndarray, config: str, budget: int, seed: int,
             n_classes: int = N_CLASSES, starts: np.ndarray | None = None,
             options: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One attack call: the inputs ``index`` of ``x`` under ``config`` at ``budget``; one record per input.

    ``starts``: for a targeted attack, one image per input whose class is its target (the suite's imagenet-targeted
    rule, :func:`benchmarks.imagenet_experiments.targets_and_starts`), offered as the start's target pool.
    ``options``: the solver options of ``config`` where it is not one of :data:`CONFIGS` (another study's)."""
    from applications.hardlabel import Start, attack

    target = start = None
    if starts is not None:
        target = y[starts]
        start = Start(target_pool=(x[starts], target))
    res = attack(model, x[index], y[index], target=target, budget=budget, seed=seed, n_classes=n_classes,
                 start=start, solver_options=CONFIGS[config] if options is None else options)
    own = float(res.wall_time - res.model_time)
    total = int(res.queries.sum())
    return [
        {"config": config, "budget": int(budget), "image": int(i), "l2": float(res.distortion[j]),
         "success": bool(res.success[j]), "queries": int(res.queries[j]), "call_inputs": len(index),
         "wall_s": float(res.wall_time), "model_s": float(res.model_time), "own_s": own,
         "own_ms_per_query": 1e3 * own / max(total, 1)}
        for j, i in enumerate(index)
    ]


def sampler_cost(shape: tuple[int, ...], qs: Sequence[int] = SAMPLER_QS, names: Sequence[str] = SAMPLERS,
                 reps: int = 3, seed: int = 0) -> list[dict[str, Any]]:
    """Milliseconds per drawn direction of each registered sampler at ``shape`` (best of ``reps`` draws)."""
    from zeroopt import SolverContext
    from zeroopt.sample.samplers import make_sampler

    d = int(np.prod(shape))
    context = SolverContext(dim=d, shape=tuple(shape))
    rows = []
    for name in names:
        sampler = make_sampler(name, context)
        for q in qs:
            rng = np.random.default_rng(seed)
            best = np.inf
            for _ in range(reps):
                t0 = time.perf_counter()
                sampler.sample(rng, q, d, 0)
                best = min(best, time.perf_counter() - t0)
            rows.append({"sampler": name, "q": int(q), "d": d, "ms_per_direction": 1e3 * best / q})
    return rows


def load_cache(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {"records": [], "samplers": [], "meta": {}}


def save_cache(path: Path, cache: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(cache))


def summarize(records: list[dict[str, Any]], baseline: str = "full-space") -> list[dict[str, Any]]:
    """Per (budget, configuration): median L2, per-input ratios to ``baseline`` (same image, same budget), the
    geometric mean of those ratios, successes and own ms/query. Only images every configuration of that budget
    ran enter the medians."""
    out = []
    for budget in sorted({r["budget"] for r in records}):
        at = [r for r in records if r["budget"] == budget]
        configs = [c for c in CONFIGS if any(r["config"] == c for r in at)]
        images = sorted(set.intersection(*({r["image"] for r in at if r["config"] == c} for c in configs)))
        base = {r["image"]: r["l2"] for r in at if r["config"] == baseline}
        for c in configs:
            rows = {r["image"]: r for r in at if r["config"] == c and r["image"] in images}
            l2 = np.array([rows[i]["l2"] for i in images])
            ratios = [rows[i]["l2"] / base[i] if i in base and np.isfinite(base[i]) else float("nan") for i in images]
            finite = [v for v in ratios if np.isfinite(v) and v > 0]
            one = next(iter(rows.values()))
            out.append({
                "budget": budget, "config": c, "n": len(images), "median_l2": float(np.median(l2)),
                "ratios": ratios, "geomean_ratio": float(np.exp(np.mean(np.log(finite)))) if finite else float("nan"),
                "success": sum(rows[i]["success"] for i in images), "own_ms_per_query": one["own_ms_per_query"],
                "wall_s": one["wall_s"], "model_s": one["model_s"],
                "queries_mean": float(np.mean([rows[i]["queries"] for i in images])),
            })
    return out


def _kind(meta: dict[str, Any]) -> str:
    if not meta.get("targeted"):
        return "untargeted"
    return (f"targeted, input k's target the class of image {meta.get('target_images')}[k] (the next correctly "
            "classified images in the same order), offered as its start")


def page_lines(command: str, summary: list[dict[str, Any]], samplers: list[dict[str, Any]],
               meta: dict[str, Any]) -> list[str]:
    """The generated part of the page: the command, one table per budget, the sampler timings."""
    lines = ["# ImageNet probes: full-space orthogonal against low-frequency samplers", "",
             "```", command, "```", ""]
    if meta:
        lines += [f"Model {meta.get('model', '?')}; images {meta.get('images', '?')} (shared validation indices, "
                  f"first {meta.get('k', '?')} correctly classified in the suite's seeded order, seed "
                  f"{meta.get('order_seed', '?')}); attack seed {meta.get('seed', '?')}; "
                  f"{_kind(meta)}; torch threads "
                  f"{meta.get('threads', '?')}, BLAS threads {meta.get('threads', '?')}.", ""]
    for budget in sorted({s["budget"] for s in summary}):
        lines += [f"## Budget {budget}", "",
                  "| configuration | median L2 | L2 / full-space, per input | geo-mean ratio | success | "
                  "own ms/query | call wall s (model s) |",
                  "|---|---:|---|---:|---:|---:|---:|"]
        for s in (s for s in summary if s["budget"] == budget):
            ratios = ", ".join(f"{v:.2f}" for v in s["ratios"])
            lines.append(f"| {s['config']} | {s['median_l2']:.3f} | {ratios} | {s['geomean_ratio']:.2f} | "
                         f"{s['success']}/{s['n']} | {s['own_ms_per_query']:.1f} | "
                         f"{s['wall_s']:.0f} ({s['model_s']:.0f}) |")
        lines.append("")
    if samplers:
        qs = sorted({r["q"] for r in samplers})
        lines += ["## The samplers alone (ms per direction, best of 3 draws)", "",
                  f"At d = {samplers[0]['d']:,}, `sample(rng, q, d, 0)` of each registered sampler, no model.", "",
                  "| sampler | " + " | ".join(f"q = {q}" for q in qs) + " |",
                  "|---|" + "---:|" * len(qs)]
        for name in dict.fromkeys(r["sampler"] for r in samplers):
            cells = {r["q"]: r["ms_per_direction"] for r in samplers if r["sampler"] == name}
            lines.append(f"| {name} | " + " | ".join(f"{cells[q]:.2f}" for q in qs) + " |")
        lines.append("")
    return lines


def write(out: Path, command: str, cache: dict[str, Any]) -> str:
    """The page ``out`` (generated tables, then the reading kept from the page, if any) and its small JSON."""
    lines = page_lines(command, summarize(cache["records"]), cache.get("samplers", []), cache.get("meta", {}))
    def rnd(v: Any) -> Any:
        return round(v, 4) if isinstance(v, float) else v

    data = {"command": command, "meta": cache.get("meta", {}),
            "records": [{k: rnd(v) for k, v in r.items()} for r in cache["records"]],
            "samplers": [{k: rnd(v) for k, v in r.items()} for r in cache.get("samplers", [])]}
    return write_page(out, [*lines, READING_MARKER, *kept_reading(out)], data, echo=False)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--k", type=int, default=3, help="correctly classified images attacked")
    ap.add_argument("--budgets", default="500,2000")
    ap.add_argument("--configs", default="full-space,low-frequency")
    ap.add_argument("--seed", type=int, default=0, help="the attack's seed")
    ap.add_argument("--order-seed", type=int, default=0, help="the suite seed of the image order")
    ap.add_argument("--threads", type=int, default=1, help="torch and BLAS threads (1: the machine is shared)")
    ap.add_argument("--samplers", action="store_true", help="also time the samplers alone")
    ap.add_argument("--targeted", action="store_true",
                    help="targeted: input k's target is the class of the k-th correctly classified image not attacked")
    ap.add_argument("--cache", type=Path, default=None,
                    help="default ~/.cache/zeroopt/imagenet-probes.json (imagenet-probes-targeted.json)")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/ablation/imagenet-probes/README.md"))
    args = ap.parse_args(argv)
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(args.threads)
    threadpool_limits(args.threads)
    from applications import datasets
    from applications.hardlabel import as_label_model
    from applications.models import load_efficientnet_lite0

    x, y = datasets.load_imagenet_val()
    model = load_efficientnet_lite0("cpu")
    labels = as_label_model(model, n_classes=N_CLASSES)
    if args.cache is None:
        name = "imagenet-probes-targeted.json" if args.targeted else "imagenet-probes.json"
        args.cache = Path.home() / ".cache/zeroopt" / name
    need = 2 * args.k if args.targeted else args.k
    found = first_correct(labels, x, y, imagenet_order(len(x), args.order_seed), need)
    index, starts = (found[:args.k], found[args.k:]) if args.targeted else (found, None)
    cache = load_cache(args.cache)
    meta = {"model": "EfficientNet-Lite0 (PyPI wheel), CPU", "images": [int(i) for i in index], "k": args.k,
            "seed": args.seed, "order_seed": args.order_seed, "threads": args.threads,
            "targeted": bool(args.targeted), "target_images": None if starts is None else [int(i) for i in starts]}
    if cache["meta"] and (cache["meta"].get("images") != meta["images"] or cache["meta"].get("seed") != args.seed):
        raise SystemExit(f"{args.cache} holds runs on other inputs or seeds: {cache['meta']}; use another --cache")
    cache["meta"] = meta
    if args.samplers and not cache["samplers"]:
        cache["samplers"] = sampler_cost(tuple(x.shape[1:]))
        save_cache(args.cache, cache)
    done = {(r["config"], r["budget"]) for r in cache["records"]}
    for budget in (int(b) for b in args.budgets.split(",")):
        for config in args.configs.split(","):
            if (config, budget) in done:
                continue
            t0 = time.time()
            cache["records"] += run_cell(model, x, y, index, config, budget, args.seed, starts=starts)
            save_cache(args.cache, cache)
            print(f"{config} @ {budget}: {time.time() - t0:.0f} s", flush=True)
    write(args.out, command_line("studies.imagenet_probes", argv), cache)


if __name__ == "__main__":
    main()
