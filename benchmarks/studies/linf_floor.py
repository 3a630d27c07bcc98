"""The L∞ study's attacks beside a white-box L∞ floor, input by input.

The L∞ study (:mod:`benchmarks.studies.linf`) sets ours beside RayS; this page asks how far above what a
white-box attack finds each ends. The floor of an input is the smallest ε at which projected gradient descent
with the model's gradients (:func:`white_box_linf`: a margin loss, ``steps`` signed-gradient steps, ``restarts``
starts, one at x0 and the others uniform in the ball) finds a point the model labels otherwise, bisected over ε.
It is an upper bound on the true minimum — a black-box run below it on some inputs means PGD missed a closer
point there, not that the run is wrong (every L∞ figure of the study is re-checked by the model's labels). Where
ours and RayS both end at it, a goal that asks ours well below RayS asks for points no attack here has found.

Usage::

    python -m benchmarks.studies.linf_floor --study benchmarks/results/ablation/linf/mnist-untargeted/README.json \\
        --out benchmarks/results/ablation/linf/floor/mnist-untargeted.md

The floor of each (experiment, input, settings) is kept in the results database, so a rerun reads it back.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.pages import command_line, write_page

#: "At the floor": within this factor of it (as the L2 floor page counts).
NEAR = 1.05
#: The goal the L∞ issue sets: ours ≤ this × RayS, input by input.
GOAL = 0.9


def white_box_linf(model: Any, labels: Any, x0: np.ndarray, y0: np.ndarray, bounds: tuple[float, float], *,
                   steps: int = 200, restarts: int = 10, bisections: int = 14, seed: int = 0) -> np.ndarray:
    """Per input, the smallest L∞ radius (to ``bisections`` halvings of the box's width) at which PGD finds a point
    that ``labels`` (the hard labels the attacks see) puts in another class than ``y0``; the width where none.

    Parameters
    ----------
    model : torch.nn.Module
        The same network, whose logits give the gradients (margin loss: the best other logit less the true one).
    labels : callable
        The model's hard labels of a batch of inputs: every point PGD ends at is checked by it.
    x0, y0 : ndarray
        The inputs (a batch) and their labels.
    bounds : tuple of float
        The input box.
    steps, restarts, bisections, seed
        Signed-gradient steps per start (step 2.5·ε/steps, halved for the second half), starts per radius (the
        first at x0, the others uniform in the ball, drawn from ``seed``), halvings of the radius interval.
    """
    import torch

    lo, hi = bounds
    x = torch.as_tensor(x0, dtype=torch.float32)
    y = torch.as_tensor(y0, dtype=torch.long)
    gen = torch.Generator().manual_seed(seed)
    shape = (len(x),) + (1,) * (x.ndim - 1)
    own_class: Any = None  # each input's own logit, masked out of the best other one
    below, above = np.zeros(len(x)), np.full(len(x), float(hi - lo))
    for _ in range(bisections):
        eps = torch.as_tensor((below + above) / 2, dtype=torch.float32).reshape(shape)
        found = np.zeros(len(x), dtype=bool)
        for r in range(restarts):
            delta = (torch.rand(x.shape, generator=gen) * 2 - 1) * eps if r else torch.zeros_like(x)
            for t in range(steps):
                delta.requires_grad_(True)
                logits = model((x + delta).clamp(lo, hi))
                if own_class is None:
                    own_class = torch.nn.functional.one_hot(y, logits.shape[1]).bool()
                true = logits.gather(1, y[:, None])[:, 0]
                others = logits.masked_fill(own_class, -torch.inf)
                (grad,) = torch.autograd.grad((others.max(1).values - true).sum(), delta)
                with torch.no_grad():
                    size = 2.5 * eps / steps * (1.0 if t < steps // 2 else 0.5)
                    delta = torch.minimum(torch.maximum(delta + size * grad.sign(), -eps), eps)
                    delta = (x + delta).clamp(lo, hi) - x
            found |= np.asarray(labels((x + delta).clamp(lo, hi).detach().numpy())) != y0
        mid = (below + above) / 2
        above, below = np.where(found, mid, above), np.where(found, below, mid)
    return above


def floor_of(experiment: str, n: int, settings: dict[str, int], store: Any) -> list[float]:
    """The white-box floor of the experiment's first ``n`` inputs (the L∞ study's), kept in ``store``."""
    name = f"linf-floor/{experiment}/{n}/" + ",".join(f"{k}={v}" for k, v in sorted(settings.items()))
    got = None if store is None else store.get(name)
    if got is not None:
        return json.loads(got)
    import torch

    from benchmarks.experiments import Plan, build

    torch.set_num_threads(1)
    exp = build(experiment, Plan(n_ours=n, n_peers=n, budgets=(1000,)), seed=0, torch_device="cpu")
    if exp.torch_model is None or exp.target is not None:
        raise SystemExit(f"{experiment}: the floor needs an untargeted experiment with a torch model")
    b = exp.batch(list(range(min(n, len(exp.x)))))
    model = b.torch_model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    bounds = (float(np.min(b.bounds[0])), float(np.max(b.bounds[1])))
    t0 = time.perf_counter()
    floor = white_box_linf(model, exp.label_fn, b.x0, b.y0, bounds, **settings).tolist()
    print(f"{experiment}: white-box floor of {len(floor)} inputs in {time.perf_counter() - t0:.0f} s",
          file=sys.stderr)
    if store is not None:
        store.put(name, json.dumps(floor).encode())
    return floor


def rows_beside(study: list[dict[str, Any]], floor: list[float]) -> list[dict[str, Any]]:
    """Per (budget, attack) of the study's rows: the median of L∞ / floor input by input and the share at it."""
    f = np.asarray(floor, dtype=float)
    out = []
    for r in study:
        v = np.asarray([np.inf if x is None else x for x in r["values"]], dtype=float)
        ratio = v / f[:len(v)]
        out.append({"budget": r["budget"], "key": r["key"], "attack": r["attack"],
                    "median_ratio": float(np.median(ratio)), "at_floor": float(np.mean(ratio <= NEAR)),
                    "below": int(np.sum(ratio < 1.0)), "n": len(v)})
    return out


def page(experiment: str, rows: list[dict[str, Any]], floor: list[float], settings: dict[str, int],
         command: str) -> list[str]:
    """The page's lines: per budget, each attack's median L∞ / floor and its share of inputs at the floor."""
    keys = list(dict.fromkeys(r["key"] for r in rows))
    names = {r["key"]: r["attack"] for r in rows}
    lines = [f"# {experiment}: the L∞ attacks beside a white-box floor", "", f"Command: `{command}`", "",
             f"White-box floor: PGD with the model's gradients ({', '.join(f'{k} {v}' for k, v in settings.items())}; "
             f"module docstring), median {np.median(floor):.4f} over {len(floor)} inputs. Each cell: the median over "
             f"inputs of the attack's L∞ / the floor; in brackets the share of inputs within {NEAR} × the floor, then "
             "how many are below it (PGD missed a closer point there).", "",
             "| budget | " + " | ".join(names[k] for k in keys) + " |", "|---:|" + "---:|" * len(keys)]
    for budget in sorted({r["budget"] for r in rows}):
        cells = {r["key"]: r for r in rows if r["budget"] == budget}
        lines.append(f"| {budget} | " + " | ".join(
            f"{c['median_ratio']:.3f} ({c['at_floor']:.0%}, {c['below']} below)" if (c := cells.get(k)) else "–"
            for k in keys) + " |")
    if "rays" in keys and "ours" in keys:
        top = max(r["budget"] for r in rows)
        rays = next(r for r in rows if r["budget"] == top and r["key"] == "rays")
        lines += ["", f"At {top} queries RayS ends at {rays['median_ratio']:.3f} × the floor (median over inputs); "
                  f"ours ≤ {GOAL} × RayS input by input asks about {GOAL * rays['median_ratio']:.3f} × it."]
    return lines


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--study", type=Path, required=True, help="an L∞ study page's JSON (one experiment)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--restarts", type=int, default=10)
    p.add_argument("--bisections", type=int, default=14)
    p.add_argument("--no-store", action="store_true", help="compute the floor again")
    a = p.parse_args(argv)
    if not a.study.exists():
        p.error(f"{a.study} does not exist: give the JSON an L∞ study page wrote (python -m benchmarks.studies.linf)")
    for name in ("steps", "restarts", "bisections"):
        if getattr(a, name) < 1:
            p.error(f"--{name} must be at least 1")
    study = json.loads(a.study.read_text())
    experiments = sorted({r["experiment"] for r in study})
    if len(experiments) != 1:
        p.error(f"the study page has {len(experiments) or 'no'} experiments; give the JSON of a page with one")
    from benchmarks.store import FileStore

    settings = {"steps": a.steps, "restarts": a.restarts, "bisections": a.bisections}
    n = max(len(r["values"]) for r in study)
    floor = floor_of(experiments[0], n, settings, None if a.no_store else FileStore(None))
    rows = rows_beside(study, floor)
    write_page(a.out, page(experiments[0], rows, floor, settings, command_line("studies.linf_floor", argv)),
               {"experiment": experiments[0], "floor": floor, "settings": settings, "rows": rows})


if __name__ == "__main__":
    main()
