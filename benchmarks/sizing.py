"""Suite presets and a time estimate from measured throughput.

Rates are queries per second per attack family and model, measured on the development machine (2 CPU cores,
one torch thread); ``benchmarks/results/suite/*/speed.md`` has the figures of each run. They only size the
suite: the reports use the times actually measured. ``--plan`` prints the estimate of a preset.

Presets
-------
``quick``
    Every experiment, attack and output on one or two inputs at budgets up to 1.5k: checks the wiring in
    under two minutes.
``default``
    Sized to finish in about two hours on the development machine: the issue's budgets and experiments on
    fewer inputs (MNIST 10 ours / 5 peers, long budget 50k on 2; CIFAR-10 5 / 3 up to 10k; GBDT 10 / 5).
``full``
    The issue's sizes: MNIST 100 ours / 20 peers up to 20k and 50k on 20; CIFAR-10 20 / 10; GBDT 50 / 20.
    About twelve hours of one core here (``--plan``), so far more than the two hours the issue hoped for on this
    machine: run it as several processes (``--experiments`` / ``--attacks`` / ``--shard`` slices, which share
    one results database) or with :mod:`benchmarks.parallel` (Ray workers), then once more plainly to
    write the tables from the stored runs.
"""

from __future__ import annotations

from benchmarks.experiments import PAPER_GBDT, Plan

MNIST_BUDGETS = (250, 500, 1000, 2000, 4000, 8000, 14000, 20000)
#: ImageNet's budgets on a CPU (EfficientNet-Lite0 evaluates 10-25 images/s here); ``full`` adds 5k-20k for a GPU.
IMAGENET_BUDGETS = (250, 500, 1000, 2000)
IMAGENET_GPU_BUDGETS = (*IMAGENET_BUDGETS, 5000, 10000, 20000)

PRESETS: dict[str, dict[str, Plan]] = {
    "quick": {
        "mnist-untargeted": Plan(1, 1, (250, 500, 1000), n_long=1, long_budget=1500),
        "mnist-targeted": Plan(1, 1, (250, 500, 1000)),
        "cifar-untargeted": Plan(1, 1, (250, 500)),
        "cifar-targeted": Plan(1, 1, (250, 500)),
        "gbdt-higgs": Plan(2, 2, (250, 500, 1000)),
        "gbdt-higgs-box": Plan(2, 2, (250, 500, 1000)),
        "gbdt-mnist": Plan(1, 1, (250, 500, 1000)),
        "imagenet-untargeted": Plan(1, 1, (250,)),
        "imagenet-targeted": Plan(1, 1, (250,)),
    },
    "default": {
        "mnist-untargeted": Plan(10, 5, MNIST_BUDGETS, n_long=2, long_budget=50000),
        "mnist-targeted": Plan(10, 5, MNIST_BUDGETS, n_long=2, long_budget=50000),
        "cifar-untargeted": Plan(5, 3, (1000, 2000, 4000, 8000, 10000)),
        "cifar-targeted": Plan(5, 3, (1000, 2000, 4000, 8000, 10000)),
        "gbdt-higgs": Plan(10, 5, PAPER_GBDT["gbdt-higgs"]["queries"]),
        "gbdt-higgs-box": Plan(10, 5, PAPER_GBDT["gbdt-higgs"]["queries"]),
        "gbdt-mnist": Plan(10, 5, PAPER_GBDT["gbdt-mnist"]["queries"]),
        "imagenet-untargeted": Plan(10, 10, IMAGENET_BUDGETS),
        "imagenet-targeted": Plan(10, 10, IMAGENET_BUDGETS),
    },
    "full": {
        "mnist-untargeted": Plan(100, 20, MNIST_BUDGETS, n_long=20, long_budget=50000),
        "mnist-targeted": Plan(100, 20, MNIST_BUDGETS, n_long=20, long_budget=50000),
        "cifar-untargeted": Plan(20, 10, MNIST_BUDGETS),
        "cifar-targeted": Plan(20, 10, MNIST_BUDGETS),
        "gbdt-higgs": Plan(50, 20, PAPER_GBDT["gbdt-higgs"]["queries"]),
        "gbdt-higgs-box": Plan(50, 20, PAPER_GBDT["gbdt-higgs"]["queries"]),
        "gbdt-mnist": Plan(50, 20, PAPER_GBDT["gbdt-mnist"]["queries"]),
        "imagenet-untargeted": Plan(10, 10, IMAGENET_GPU_BUDGETS),
        "imagenet-targeted": Plan(10, 10, IMAGENET_GPU_BUDGETS),
    },
}

GBDT_ROUNDS = {"quick": 10, "default": 100, "full": 100}
CW_STEPS = {"quick": 100, "default": 1000, "full": 1000}

# Measured queries/s, one torch thread, one or two suite processes on the 2-core development machine: the
# complete default run (benchmarks/results/suite/default/speed.md). The GBDT rates are the slower (MNIST) model's.
# Keys: model, then attack name prefix (the first prefix that matches counts).
# ours-sign-growing and art-geoda: the suite's one-input-per-call runs (tags base-B and geoda-B; two processes on
# the two cores, runs of 2k-32k queries): the default's own work per query (orthonormal probes shaped by the
# direction, the race, pruning) makes it 3-4x slower than plain `ours` on the CNNs, and far slower on GBDT MNIST,
# whose model is cheap beside it. GBDT (tags base-B, the default with 0.5 rad probes; two processes): GBDT MNIST
# 2,400-3,600 queries/s (the 32,230 runs the slower), HIGGS ~6,000.
RATES: dict[str, dict[str, float]] = {
    "mnist": {"ours-sign-growing": 550, "ours": 2300, "art-hsj": 2700, "art-signopt": 1000, "fb-boundary": 850,
              "fb-hsja": 1250, "art-geoda": 1000},
    "cifar": {"ours-sign-growing": 225, "ours": 700, "art-hsj": 750, "art-signopt": 300, "fb-boundary": 450,
              "fb-hsja": 500},
    "gbdt": {"ours-sign-growing": 2400, "ours": 12000, "art-hsj": 18000, "art-signopt": 4300, "fb-boundary": 5700,
             "fb-hsja": 9400},
}
# ImageNet (EfficientNet-Lite0, one torch thread, 2-core machine shared with other jobs): the quick preset's runs,
# one input at 250 queries. HopSkipJump's 100-image batches are slower per image than single ones on this CPU;
# GeoDA multiplies a 50,176 x 5,625 DCT basis (224², sub-dimension 75) per batch of probes.
RATES["imagenet"] = {"ours": 15, "art-hsj": 7, "art-signopt": 20, "fb-hsja": 19, "art-geoda": 3}
CW_SECONDS = {"mnist": (40.0, 10.0), "cifar": (60.0, 20.0)}  # (fixed, per input) for 9 x 1000 steps


def rate(experiment: str, attack: str) -> float:
    """Estimated queries/s of an attack on an experiment's model."""
    table = RATES[experiment.split("-")[0] if not experiment.startswith("gbdt") else "gbdt"]
    for prefix, value in table.items():
        if attack.startswith(prefix):
            return value
    return min(table.values())


def estimate_seconds(experiment: str, plan: Plan, attack: str, family: str, cw_steps: int = 1000) -> float:
    """Estimated seconds for one attack over an experiment's plan (every input to its full budget)."""
    if family == "white-box":
        fixed, per = CW_SECONDS.get(experiment.split("-")[0], (20.0, 5.0))
        n = plan.n_peers
        return (fixed + per * n) * cw_steps / 1000
    n = plan.n_ours if family == "ours" else plan.n_peers
    long_n = min(plan.n_long, n) if plan.long_budget else 0
    queries = (n - long_n) * plan.budget + long_n * (plan.long_budget or 0)
    return queries / rate(experiment, attack)
