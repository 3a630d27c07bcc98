"""GPU check of the hard-label attack: the model runs on CUDA, the attack's speed against its forward pass.

Run on a machine with a CUDA device (the MNIST files and model are read from ZEROOPT_SHARED):

    ZEROOPT_SHARED=/path/to/shared python -m benchmarks.device_check --out results.json
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from applications.datasets import load_mnist_test
from applications.hardlabel import attack
from applications.models import load_mnist_cw_bn


def forward_rate(model: torch.nn.Module, x: np.ndarray, batch: int, seconds: float = 2.0) -> float:
    dev = next(model.parameters()).device
    with torch.inference_mode():
        model(torch.from_numpy(x[:batch]).to(dev)).argmax(1).cpu()
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            model(torch.from_numpy(x[:batch]).to(dev)).argmax(1).cpu().numpy()
            n += batch
    return n / (time.perf_counter() - t0)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--images", type=int, default=20)
    p.add_argument("--budget", type=int, default=4000)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_mnist_cw_bn(device=device)
    x, y = load_mnist_test()
    with torch.inference_mode():
        pred = model(torch.from_numpy(x[:500]).to(device)).argmax(1).cpu().numpy()
    acc = float((pred == y[:500]).mean())
    ids = np.flatnonzero(pred == y[:500])[: args.images]
    out = {
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "accuracy_first_500": acc,
        "forward_images_per_second": {b: forward_rate(model, x, b) for b in (1, 20, 100, 1000)},
        "attacks": [],
    }
    for solver in ("rgf", "sign"):
        res = attack(model, x[ids], y[ids], budget=args.budget, solver=solver, seed=0, n_classes=10)
        with torch.inference_mode():
            adv = model(torch.from_numpy(res.x_adv).to(device)).argmax(1).cpu().numpy()
        q = int(res.queries.sum())
        out["attacks"].append(
            {
                "solver": solver,
                "budget": args.budget,
                "images": len(ids),
                "all_verified": bool(np.all(adv != y[ids])),
                "median_l2": float(np.median(res.distortion)),
                "queries_per_second": q / res.wall_time,
                "model_calls_per_query": res.model_calls / q,
                "share_in_model": res.model_time / res.wall_time,
                "max_queries": int(res.queries.max()),
            }
        )
    text = json.dumps(out, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
