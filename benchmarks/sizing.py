"""Suite presets and a time estimate from measured throughput.

Rates are queries per second per attack family and model, measured on the development machine (2 CPU cores,
one torch thread, other jobs sharing the cores) with 2-image runs; ``benchmarks/results/suite/*/speed.md``
has the figures of each run. They only size the suite: the reports use the times actually measured.

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
    Roughly ten times the default (``--plan`` prints the estimate).
"""

from __future__ import annotations

from benchmarks.experiments import PAPER_GBDT, Plan

MNIST_BUDGETS = (1000, 2000, 4000, 8000, 14000, 20000)

PRESETS: dict[str, dict[str, Plan]] = {
    "quick": {
        "mnist-untargeted": Plan(1, 1, (250, 500, 1000), n_long=1, long_budget=1500),
        "mnist-targeted": Plan(1, 1, (250, 500, 1000)),
        "cifar-untargeted": Plan(1, 1, (250, 500)),
        "cifar-targeted": Plan(1, 1, (250, 500)),
        "gbdt-higgs": Plan(2, 2, (250, 500, 1000)),
        "gbdt-mnist": Plan(1, 1, (250, 500, 1000)),
    },
    "default": {
        "mnist-untargeted": Plan(10, 5, MNIST_BUDGETS, n_long=2, long_budget=50000),
        "mnist-targeted": Plan(10, 5, MNIST_BUDGETS, n_long=2, long_budget=50000),
        "cifar-untargeted": Plan(5, 3, (1000, 2000, 4000, 8000, 10000)),
        "cifar-targeted": Plan(5, 3, (1000, 2000, 4000, 8000, 10000)),
        "gbdt-higgs": Plan(10, 5, PAPER_GBDT["gbdt-higgs"]["queries"]),
        "gbdt-mnist": Plan(10, 5, PAPER_GBDT["gbdt-mnist"]["queries"]),
    },
    "full": {
        "mnist-untargeted": Plan(100, 20, MNIST_BUDGETS, n_long=20, long_budget=50000),
        "mnist-targeted": Plan(100, 20, MNIST_BUDGETS, n_long=20, long_budget=50000),
        "cifar-untargeted": Plan(20, 10, MNIST_BUDGETS),
        "cifar-targeted": Plan(20, 10, MNIST_BUDGETS),
        "gbdt-higgs": Plan(50, 20, PAPER_GBDT["gbdt-higgs"]["queries"]),
        "gbdt-mnist": Plan(50, 20, PAPER_GBDT["gbdt-mnist"]["queries"]),
    },
}

GBDT_ROUNDS = {"quick": 10, "default": 100, "full": 100}
CW_STEPS = {"quick": 100, "default": 1000, "full": 1000}

# Measured queries/s (1 torch thread, 2 cores shared with other jobs). Keys: model, then attack name prefix.
RATES: dict[str, dict[str, float]] = {
    "mnist": {"ours": 1100, "art-hsj": 1450, "art-signopt": 650, "fb-boundary": 750, "fb-hsja": 800},
    "cifar": {"ours": 420, "art-hsj": 420, "art-signopt": 220, "fb-boundary": 220, "fb-hsja": 230},
    "gbdt": {"ours": 8000, "art-hsj": 8000, "art-signopt": 2800, "fb-boundary": 1500, "fb-hsja": 2000},
}
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
