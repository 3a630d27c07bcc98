"""Does the final re-check fail on a GPU because of TF32 convolutions? The attack with and without them.

On a lent H200, 2.5-4.5% of CIFAR-10 best points failed the final re-check (labelled adversarial in a batched
call, not alone), never on the CPU (``benchmarks/results/ablation/h200-search-and-start``). cuDNN runs float32
convolutions in TF32 by default on Ampere and later GPUs (``torch.backends.cudnn.allow_tf32``), whose 10-bit
mantissa moves logits by ~1e-3: more than the re-check's margin. This runs the default attack on the same
inputs with TF32 allowed (turned on inside the model's forward, since the torch adapter turns it off around
every call) and disallowed, and writes success and medians to JSON:

    ZEROOPT_SHARED=/path/to/shared python -m benchmarks.gpu_recheck --n 150 --budget 1000 --out result.json
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from benchmarks.experiments import Experiment, Plan, build


class WithTF32(torch.nn.Module):
    """The wrapped model run with TF32 allowed inside its forward (PyTorch's default on recent GPUs): the
    attack's adapter turns TF32 off around every call, so a measurement of TF32 must turn it back on inside."""

    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from applications.hardlabel.adapters.torch_adapter import tf32

        with tf32(True):
            return self.inner(x)


def run(exp: Experiment, n: int, budget: int, tf32: bool) -> dict:
    from applications.hardlabel import as_label_model, attack

    assert exp.torch_model is not None
    model = as_label_model(WithTF32(exp.torch_model) if tf32 else exp.torch_model, n_classes=exp.n_classes)
    batch = exp.batch(list(range(n)))
    t0 = time.perf_counter()
    res = attack(model, batch.x0, batch.y0, budget=budget, seed=0, bounds=batch.bounds, n_classes=batch.n_classes)
    found = np.isfinite(res.distortion_at(budget))
    device = str(next(exp.torch_model.parameters()).device)
    return {"tf32": tf32, "device": device, "n": n, "budget": budget, "found": float(found.mean()),
            "success": float(res.success.mean()), "median_at_budget": float(np.median(res.distortion_at(budget))),
            "seconds": time.perf_counter() - t0}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=150)
    p.add_argument("--budget", type=int, default=1000)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    exp = build("cifar-untargeted", Plan(n_ours=a.n, n_peers=a.n, budgets=(a.budget,)), seed=0, torch_device=device)
    rows = [run(exp, a.n, a.budget, tf32) for tf32 in (True, False)]
    for r in rows:
        print(json.dumps(r), flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name() if device == "cuda" else "cpu", "rows": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()
