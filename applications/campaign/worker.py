"""One unit of work: attack a chunk of inputs of one (model, solver, budget, seed) group and return its rows.

The same function runs in the driver (local executor) and in Ray workers; it never touches the database:
rows go back to the driver, which alone writes them.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import zlib
from functools import cache
from typing import Any

import numpy as np

from .models import LoadedModel, load_model
from .spec import Task, input_seed

__all__ = ["machine", "run_task", "versions"]

VERSIONED = ("numpy", "scipy", "torch", "lightgbm", "scikit-learn", "zeroopt")


@cache
def versions() -> dict[str, str]:
    """Versions of Python and of the packages the results depend on."""
    out = {"python": platform.python_version()}
    for pkg in VERSIONED:
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def machine(device: str | None = None) -> dict[str, Any]:
    """Where an attack ran: host, CPU count and architecture, torch device and threads."""
    import torch

    return {
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "arch": platform.machine(),
        "device": device or "cpu",
        "torch_threads": torch.get_num_threads(),
    }


def get_model(spec: str, arch: str | None, device: str | None, models: dict[Any, Any]) -> LoadedModel:
    """A model from a worker's cache ``models`` (each worker loads a model once)."""
    key = ("model", spec, arch, device)
    if key not in models:
        models[key] = load_model(spec, arch=arch, device=device)
        if models[key].device.startswith("cuda"):  # asked for, or the default where torch sees a GPU
            import torch

            # Full float32 on GPUs (no TF32), so labels near the boundary match what float32 math gives.
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
    return models[key]


def run_task(task: Task, models: dict[Any, Any]) -> list[dict[str, Any]]:
    """Attack the task's inputs in one batched call; one row per input (without ``command``/``executor``).

    Parameters
    ----------
    task
        The chunk to attack.
    models
        The calling worker's model cache (filled on first use).
    """
    # Imported here: the attack's public names only.
    from applications.hardlabel import as_label_model, attack, attack_keywords

    loaded = get_model(task.model, task.arch, task.device, models)
    n_classes = loaded.n_classes
    if n_classes is None:
        n_classes = as_label_model(loaded.model).n_classes
    target = None
    if task.goal == "targeted:next":
        if n_classes is None:
            raise ValueError(f"{task.model}: a targeted campaign needs a model that tells its number of classes")
        target = (task.y + 1) % n_classes
    seeds = [input_seed(task.seed, i) for i in task.input_ids]
    # The campaign's [options] are flat settings and solver options: each setting goes to its piece.
    settings = {**task.options, "batch_size": task.batch_size, "target_pool": resolve(task.pool)}
    res = attack(
        loaded.model, task.x, task.y, target=target, budget=task.budget, solver=task.solver, seed=seeds,
        bounds=task.bounds, n_classes=n_classes, **attack_keywords(settings),
    )
    n = len(task.input_ids)
    where_json = json.dumps(machine(loaded.device), sort_keys=True, separators=(",", ":"))
    versions_json = json.dumps(versions(), sort_keys=True, separators=(",", ":"))
    rows = []
    for j, (key, s) in enumerate(zip(task.keys(), seeds, strict=True)):
        ok = bool(res.success[j])
        dist = float(res.distortion[j])
        rows.append({
            **dict(zip(("dataset", "input_id", "model", "solver", "budget", "seed", "goal", "options"), key,
                       strict=True)),
            "input_seed": s,
            "label": int(task.y[j]),
            "target": None if target is None else int(target[j]),
            "success": ok,
            "distortion": dist if np.isfinite(dist) else None,
            "queries": int(res.queries[j]),
            # Serialised here, in the worker: the driver, the one writer, then only inserts text.
            "trace": json.dumps([[int(q), float(d)] for q, d in res.trace[j]], separators=(",", ":")),
            "x_adv": _pack(res.x_adv[j]) if ok and task.store_adv else None,
            "wall_time": res.wall_time / n,  # the call's time shared evenly (inputs ran in lockstep)
            "model_calls": res.model_calls / n,
            "group_size": n,
            "versions": versions_json,
            "machine": where_json,
        })
    return rows


def resolve(shared: Any) -> Any:
    """An object handed out by an executor's ``share``: itself, or fetched from Ray's object store."""
    if type(shared).__module__.startswith("ray"):
        import ray

        return ray.get(shared)
    return shared


def _pack(x: np.ndarray) -> bytes:
    """An adversarial input as zlib-compressed float32 bytes (its shape is the dataset's)."""
    return zlib.compress(np.ascontiguousarray(x, dtype=np.float32).tobytes())


def unpack(blob: bytes, shape: tuple[int, ...]) -> np.ndarray:
    """Inverse of the packing of ``x_adv`` in the database."""
    return np.frombuffer(zlib.decompress(blob), dtype=np.float32).reshape(shape).copy()
