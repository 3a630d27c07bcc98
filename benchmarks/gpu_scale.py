"""The attack's speed on a GPU against the model's own batched forward rate, with its arithmetic on the device.

For the CIFAR-10 ResNet-20 and EfficientNet-Lite0 (ImageNet, 150,528 dimensions): the model's forward rate at a
large batch, then the default attack with 1, 16 and 64 inputs in flight — its arithmetic on the model's device
(``ModelOptions(arrays="model")``, the default on an accelerator) and, beside it at 16 inputs, on the host
(``arrays="numpy"``) — each as queries per second, the share of the forward rate it reaches, and where its time
went (model, own). TF32 stays off: the forward rate and the attack both call the model through the attack's
adapter, which turns it off for every model call. One JSON file.

Prepare the bundle on a machine with the shared data, then run it on the GPU machine (``benchmarks/gpu_bundle.sh``
prints the exact command)::

    bash benchmarks/gpu_bundle.sh            # here: .device/ with the data subset and the wheels
    python3 -m benchmarks.gpu_scale --out "$OUT"   # there, after the install line the bundle script prints

``--quick`` runs a few inputs at small budgets on whatever device there is (a smoke test of the script).
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path
from typing import Any

import numpy as np

IN_FLIGHT = (1, 16, 64)
#: Queries per input: enough iterations that the per-call overheads of the first ones do not dominate.
BUDGETS = {"cifar10-resnet20": 1000, "imagenet-effnet-lite0": 500}


def forward_images_per_s(model: Any, x: np.ndarray, batch: int, seconds: float, n_classes: int) -> float:
    """Images per second of ``model`` on batches of ``batch`` inputs from ``x`` already on its device, labels to
    the host, through the adapter the attack's queries take (:func:`benchmarks.speed.forward_rate`)."""
    import torch

    from applications.hardlabel import as_label_model
    from benchmarks.speed import forward_rate

    pool = torch.as_tensor(x, device=next(model.parameters()).device)
    return forward_rate(as_label_model(model, n_classes=n_classes), pool, (batch,), seconds)[batch]


def attack_rate(model: Any, x: np.ndarray, y: np.ndarray, budget: int, arrays: str, n_classes: int) -> dict:
    """The default attack on ``x``: queries per second, and its time in the model and outside it."""
    from applications.hardlabel import ModelOptions, attack

    res = attack(model, x, y, budget=budget, seed=0, n_classes=n_classes, model_options=ModelOptions(arrays=arrays))
    queries = int(res.queries.sum())
    return {"inputs": len(x), "budget": budget, "arrays": arrays, "queries": queries, "wall_s": res.wall_time,
            "model_s": res.model_time, "own_ms_per_query": 1e3 * (res.wall_time - res.model_time) / max(queries, 1),
            "queries_per_s": queries / res.wall_time, "model_calls": res.model_calls,
            "median_l2": float(np.median(res.distortion)), "success": int(res.success.sum())}


def models(device: str, quick: bool) -> list[tuple[str, Any, np.ndarray, np.ndarray, int]]:
    """(name, model, inputs it classifies correctly, their labels, classes) for each model that loads here."""
    import torch

    from applications import datasets
    from applications.models import load_cifar10_resnet20

    out = []
    net = load_cifar10_resnet20(device=device)
    x, y = datasets.load_cifar10_test_jpeg(order="interleaved")
    x, y = x[:400], y[:400]
    with torch.inference_mode():
        right = net(torch.as_tensor(x, device=device)).argmax(1).cpu().numpy() == y
    out.append(("cifar10-resnet20", net, x[right], y[right], 10))
    try:
        from applications.models import load_efficientnet_lite0

        eff = load_efficientnet_lite0(device)
    except ImportError as err:  # the wheels were not carried: say so in the JSON, measure the rest
        out.append(("imagenet-effnet-lite0", None, np.empty(0), np.empty(0), str(err)))
        return out
    x, y = datasets.load_imagenet_val(limit=16 if quick else None)
    with torch.inference_mode():
        right = np.concatenate([eff(torch.as_tensor(x[i:i + 16], device=device)).argmax(1).cpu().numpy()
                                for i in range(0, len(x), 16)]) == y
    out.append(("imagenet-effnet-lite0", eff, x[right], y[right], 1000))
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="folder for gpu_scale.json")
    p.add_argument("--quick", action="store_true", help="2 inputs at 60 queries, forward rate for 1 s")
    p.add_argument("--forward-batch", type=int, default=256)
    args = p.parse_args(argv)
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    report: dict[str, Any] = {
        "device": torch.cuda.get_device_name(0) if device == "cuda" else platform.processor() or "cpu",
        "torch": torch.__version__, "tf32": "off in every model call", "rows": [],
    }
    in_flight = (1, 2) if args.quick else IN_FLIGHT
    for name, model, x, y, classes in models(device, args.quick):
        if model is None:
            report["rows"].append({"model": name, "error": classes})
            continue
        rate = forward_images_per_s(model, x, args.forward_batch, 1.0 if args.quick else 5.0, classes)
        report["rows"].append({"model": name, "forward_images_per_s": rate, "forward_batch": args.forward_batch})
        budget = 60 if args.quick else BUDGETS[name]
        for n in in_flight:
            for arrays in (("model", "numpy") if n == in_flight[len(in_flight) // 2] else ("model",)):
                row = attack_rate(model, x[:n], y[:n], budget, arrays, classes)
                row.update(model=name, share_of_forward_rate=row["queries_per_s"] / rate)
                report["rows"].append(row)
                print(json.dumps(row), flush=True)
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / "gpu_scale.json").write_text(json.dumps(report, indent=1))  # what finished is kept


if __name__ == "__main__":
    main()
