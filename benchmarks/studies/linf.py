"""The L∞ attack beside its peers, RayS's reference code and HopSkipJump (ART's, foolbox's), on the suite's CNNs.

Ours runs once per budget and input (``attack(..., norm=np.inf)`` with the attack's own solver, one input per
call as the peers run, so no input borrows another's directions; its returned points are re-checked by the attack
and re-measured here). Each peer runs
once per input at the largest budget through :class:`CappedLabels` — hard labels, every sample one query, the
best L∞ adversarial among the queried points recorded as a step function of the queries, the run stopped at the
budget — and is read at every budget from that record, as the suite reads peers that do not plan from their
budget. The peers: ``rays``, RayS (Chen & Gu, KDD 2020), its reference code ``RayS_Single.py`` loaded at run time
from ``<shared>/peers/RayS``; ``hsj``, ART's HopSkipJump with ``norm=np.inf``; ``fb-hsj``, foolbox's
HopSkipJumpAttack with ``constraint="linf"``.

Beside the distances, RayS's own protocol: the success rate at a threshold ε per experiment (``--eps``) and
the mean and median queries to success — the first query at which the best L∞ was ≤ ε: for a peer in its record,
for ours in the trace of its run with the largest budget (the attack's record of each improvement).

Usage::

    python -m benchmarks.studies.linf --experiments mnist-untargeted,cifar-untargeted --n 5 \\
        --budgets 250,500,1000,2000 --peers rays,hsj --out benchmarks/results/ablation/linf/README.md

Each finished run (one input, one attack, one budget) is kept in the results database under the attack's code
version as soon as it ends, and a rerun of the same command reads it back: a long study stopped part-way resumes
where it stopped, and the page is written once every run is there (``--no-store`` runs everything again).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections.abc import Callable, Iterable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.pages import command_line, write_page
from benchmarks.studies.linf_peers import PEERS, TARGETED, CappedLabels, Exhausted, best_within, rays_dir

#: The peers' view and runners live in :mod:`benchmarks.studies.linf_peers`; the view is named here as well.
__all__ = ["DEFAULT_EPS", "CappedLabels", "Exhausted", "build_parser", "eps_for", "main", "measure",
           "names_from", "our_linf_solver", "page", "per_input_ratio"]

#: RayS's thresholds: ε per experiment prefix (its MNIST and CIFAR-10 settings).
DEFAULT_EPS: dict[str, float] = {"mnist": 0.3, "cifar": 8 / 255}
#: The peers' short names in the column heads.
SHORT = {"ours": "ours", "rays": "RayS", "hsj": "HSJ", "fb-hsj": "fb HSJ"}


def our_linf_solver(result: Any = None) -> str:
    """The solver ``attack(..., norm=np.inf)`` ran with none named: the one its runs record, else the default.

    Parameters
    ----------
    result : AttackResult, optional
        A run of the attack; its solver results name the solver that ran.

    Returns
    -------
    str
        That solver's name, or the L∞ default (:func:`applications.hardlabel.default_solver`) where no run
        names one.
    """
    from applications.hardlabel import default_solver

    ran = (getattr(r, "solver", None) for r in getattr(result, "solver_results", None) or [])
    return next((str(s) for s in ran if s), default_solver(np.inf))


def measure(experiment: str, n: int, budgets: list[int], seed: int, peers: list[str] | None = None,
            eps: float = np.inf, store: Any = None) -> list[dict[str, Any]]:
    """Rows per (experiment, budget, attack): per-input L∞ distances and queries to ≤ ``eps``.

    Parameters
    ----------
    experiment : str
        A suite experiment (its first ``n`` inputs are attacked; a targeted one's start from its target-class
        pool: ours searches the pool with ``Start(target_pool=...)``, each peer starts from its first image, as
        the suite runs them, and only the peers in :data:`~benchmarks.studies.linf_peers.TARGETED` run).
    n : int
        The number of inputs.
    budgets : list of int
        Ours runs at each; each peer once at the largest, read at each.
    seed : int
        Ours' seed; each peer's global generators are seeded with it before every input.
    peers : list of str, optional
        Keys of :data:`PEERS` (default all).
    eps : float, default inf
        The threshold of RayS's protocol.
    store : FileStore, optional
        Where each finished run (one input, one attack, one budget) is kept as soon as it ends — ours under the
        attack's code version (:func:`benchmarks.hardlabel_quality.code_version`), a peer's under its name
        alone — and read back instead of rerun: an interrupted study resumes where it stopped, and a change to
        ours reruns ours only. ``None``: nothing is kept.

    Returns
    -------
    list of dict
        ``experiment``, ``budget``, ``key``, ``attack``, ``eps``, per-input ``values`` (L∞, ``inf`` for a
        failure) and ``queries_to_eps`` (``None``: not ≤ ``eps`` within the budget), ``seconds`` (of the runs,
        also where read back).
    """
    import torch

    from applications.hardlabel import Start, attack
    from benchmarks.experiments import Plan, build
    from benchmarks.hardlabel_quality import CODE

    torch.set_num_threads(1)
    exp = build(experiment, Plan(n_ours=n, n_peers=n, budgets=tuple(budgets)), seed=0, torch_device="cpu")
    b = exp.batch(list(range(min(n, len(exp.x)))))
    lo, hi = float(np.min(b.bounds[0])), float(np.max(b.bounds[1]))
    targets = None if b.target is None else [int(t) for t in b.target]
    prefix = f"linf/{CODE}/{experiment}/seed{seed}"
    peers_prefix = f"linf-peers/{experiment}/seed{seed}"  # the peers' code does not move with ours

    def aims(i: int) -> dict[str, Any]:
        """Ours' target and start for input ``i`` (none untargeted)."""
        if targets is None:
            return {}
        pool = b.starts[i]
        return {"target": b.target[i:i + 1], "start": Start(target_pool=(pool, np.full(len(pool), targets[i])))}

    def ours(i: int, budget: int) -> dict[str, Any]:
        """One input alone, as the peers run: no input borrows another's directions (attack()'s fallback)."""
        t0 = time.perf_counter()
        r = attack(exp.label_fn, b.x0[i:i + 1], b.y0[i:i + 1], budget=budget, seed=seed, norm=np.inf,
                   n_classes=b.n_classes, bounds=(lo, hi), **aims(i))
        label = int(np.asarray(exp.label_fn(r.x_adv))[0])
        ok = bool(r.success[0]) and (label != b.y0[i] if targets is None else label == targets[i])
        linf = float(np.abs(r.x_adv.astype(np.float64) - b.x0[i:i + 1].astype(np.float64)).max())
        return {"value": linf if ok else np.inf, "trace": np.asarray(r.trace[0]).tolist(),
                "solver": our_linf_solver(r), "seconds": time.perf_counter() - t0}

    def peer(key: str, i: int) -> dict[str, Any]:
        t0 = time.perf_counter()
        capped = PEERS[key][1](exp.label_fn, b.x0[i], int(b.y0[i]), max(budgets), b.n_classes, (lo, hi), seed,
                               None if targets is None else targets[i],
                               None if targets is None else b.starts[i][0])
        return {"trace": [list(t) for t in capped.trace], "seconds": time.perf_counter() - t0}

    rows = []
    inputs = range(len(b.x0))
    for budget in budgets:
        runs = [_kept(store, f"{prefix}/ours/{budget}/{i}", lambda i=i, budget=budget: ours(i, budget),
                      f"ours {experiment} {budget} input {i + 1}/{len(b.x0)}") for i in inputs]
        rows.append({"experiment": experiment, "budget": budget, "key": "ours", "eps": eps,
                     "attack": f"ours ({runs[0]['solver']}, L∞)", "values": [r["value"] for r in runs],
                     "queries_to_eps": [_first_query_within(r["trace"], eps) for r in runs],
                     "seconds": sum(r["seconds"] for r in runs)})
    for key in peers if peers is not None else list(PEERS):
        if targets is not None and key not in TARGETED:
            continue
        runs = [_kept(store, f"{peers_prefix}/{key}/{max(budgets)}/{i}", lambda key=key, i=i: peer(key, i),
                      f"{key} {experiment} {max(budgets)} input {i + 1}/{len(b.x0)}") for i in inputs]
        for budget in budgets:
            first = [_first_query_within(r["trace"], eps) for r in runs]
            rows.append({"experiment": experiment, "budget": budget, "key": key, "eps": eps, "attack": PEERS[key][0],
                         "values": [best_within(r["trace"], budget) for r in runs],
                         "queries_to_eps": [q if q is not None and q <= budget else None for q in first],
                         "seconds": sum(r["seconds"] for r in runs)})
    return rows


def _kept(store: Any, name: str, run: Callable[[], dict[str, Any]], what: str) -> dict[str, Any]:
    """``store``'s record ``name``, else ``run()``'s, stored as soon as it returns; one progress line either way."""
    got = None if store is None else store.get(name)
    record = json.loads(got) if got is not None else run()  # Python's JSON keeps ∞ (``Infinity``)
    if got is None and store is not None:
        store.put(name, json.dumps(record).encode())
    took = "stored" if got is not None else f"{record['seconds']:.0f} s"
    best = record["value"] if "value" in record else record["trace"][-1][1]  # (ours' trace is empty before a hit)
    print(f"{what}: {best:.4g} ({took})", file=sys.stderr, flush=True)
    return record


def _median(values: list[float]) -> float:
    return float(np.median(values))


def per_input_ratio(ours: list[float], peer: list[float]) -> float:
    """The per-input median of ours / peer (both ∞: a tie, 1)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.asarray(ours, dtype=float) / np.asarray(peer, dtype=float)
    return float(np.median(np.where(np.isnan(r), 1.0, r)))


def _first_query_within(trace: Any, eps: float | None) -> int | None:
    """The query count at the first improvement of an attack's trace ``(queries, best distance)`` to ``≤ eps``."""
    trace = np.asarray(trace, dtype=float).reshape(-1, 2)  # (a stored empty trace comes back flat)
    hits = [] if eps is None else np.flatnonzero(trace[:, 1] <= eps)
    return int(trace[hits[0], 0]) if len(hits) else None


def _queries(values: list[float]) -> tuple[str, str]:
    """Mean and median of the queries to success (— where none succeeded)."""
    if not values:
        return "—", "—"
    return f"{np.mean(values):.0f}", f"{np.median(values):.0f}"


def page(rows: list[dict[str, Any]], command: str) -> list[str]:
    """The page's lines: distances per budget, then success and queries at ε (RayS's protocol).

    Parameters
    ----------
    rows : list of dict
        :func:`measure`'s rows, ours and the peers' for every experiment and budget.
    command : str
        The command that made them, written under the title.

    Returns
    -------
    list of str
        The Markdown lines.
    """
    keys = list(dict.fromkeys(r["key"] for r in rows if r["key"] != "ours"))
    names = [SHORT.get(k, k) for k in keys]
    labels = dict.fromkeys(r["attack"] for r in rows)
    lines = [f"# The L∞ attack beside {', '.join(k for k in labels if not k.startswith('ours'))}", "",
             f"Command: `{command}`", "",
             f"Attacks: {'; '.join(labels)}. Median L∞ distortion of the first inputs of each suite experiment (a "
             "failure counts as ∞), the per-input median of ours / each peer (both failed: 1), success rates, and "
             "success at each experiment's ε. Ours is run with each budget; each peer once at the largest, read at "
             "each budget from the best adversarial it had queried (every sample one query, a hard cap).", "",
             "| experiment | budget | ours median L∞ | " + "".join(f"{p} median L∞ | " for p in names)
             + "".join(f"ours / {p} per input | " for p in names) + f"success {' / '.join(['ours', *names])} | "
             + f"success at ε {' / '.join(['ours', *names])} |",
             "|---|---:|" + "---:|" * (1 + 2 * len(keys) + 2)]

    def cell(exp: str, budget: int, key: str) -> dict[str, Any]:
        return next(r for r in rows if r["experiment"] == exp and r["budget"] == budget and r["key"] == key)

    experiments = list(dict.fromkeys(r["experiment"] for r in rows))
    for exp in experiments:
        for budget in sorted({r["budget"] for r in rows if r["experiment"] == exp}):
            got = [cell(exp, budget, k) for k in ["ours", *keys]]
            eps = got[0]["eps"]
            lines.append(f"| {exp} | {budget} | " + "".join(f"{_median(g['values']):.4f} | " for g in got)
                         + "".join(f"{per_input_ratio(got[0]['values'], g['values']):.3f} | " for g in got[1:])
                         + " / ".join(f"{np.isfinite(g['values']).mean():.0%}" for g in got) + " | "
                         + " / ".join(f"{(np.asarray(g['values']) <= eps).mean():.0%}" for g in got) + " |")
    lines += ["", "RayS's protocol: success at ε within the largest budget and the queries to success over the "
              "inputs that succeeded: the first query at which the best L∞ was ≤ ε, in a peer's record and in the "
              "trace of our run with the largest budget.", "",
              "| experiment | ε | attack | success at ε | mean queries | median queries |",
              "|---|---:|---|---:|---:|---:|"]
    for exp in experiments:
        budgets = sorted({r["budget"] for r in rows if r["experiment"] == exp})
        eps = cell(exp, budgets[0], "ours")["eps"]
        for key in ["ours", *keys]:
            first = cell(exp, budgets[-1], key)["queries_to_eps"]
            won = [q for q in first if q is not None]
            mean, median = _queries(won)
            lines.append(f"| {exp} | {eps:.4g} | {cell(exp, budgets[-1], key)['attack']} | "
                         f"{len(won) / len(first):.0%} | {mean} | {median} |")
    return lines


def names_from(text: str, known: Iterable[str], what: str) -> list[str]:
    """The comma-separated names of ``text``, each one of ``known`` (an argparse error naming ``what`` else)."""
    known = list(known)
    names = [v for v in text.split(",") if v]
    unknown = [v for v in names if v not in known]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown {what}(s) {unknown or [text]}; choose from {', '.join(known)}")
    return names


def _peers(text: str) -> list[str]:
    return names_from(text, PEERS, "peer")


def _eps(text: str) -> dict[str, float]:
    """``mnist=0.3,cifar=8/255`` over :data:`DEFAULT_EPS`."""
    out = dict(DEFAULT_EPS)
    for item in (v for v in text.split(",") if v):
        prefix, sep, value = item.partition("=")
        try:
            out[prefix] = float(Fraction(value))
        except (ValueError, ZeroDivisionError):
            raise argparse.ArgumentTypeError(f"{item!r} is not prefix=value (mnist=0.3, cifar=8/255)") from None
        if not sep or not prefix:
            raise argparse.ArgumentTypeError(f"{item!r} is not prefix=value (mnist=0.3, cifar=8/255)")
    return out


def eps_for(experiment: str, eps: dict[str, float]) -> float | None:
    """The ε of the longest prefix of ``experiment`` in ``eps`` (``None``: none)."""
    hits = [k for k in eps if experiment.startswith(k)]
    return eps[max(hits, key=len)] if hits else None


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--experiments", default="mnist-untargeted,cifar-untargeted")
    p.add_argument("--n", type=int, default=5)
    p.add_argument("--budgets", default="250,500,1000,2000")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--peers", type=_peers, default=list(PEERS),
                   help=f"comma-separated, from {', '.join(PEERS)} (default all)")
    p.add_argument("--eps", type=_eps, default=dict(DEFAULT_EPS),
                   help="ε per experiment prefix, over the defaults mnist=0.3,cifar=8/255")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/ablation/linf/README.md"))
    p.add_argument("--db", type=Path, default=None,
                   help="where finished runs are kept, so a rerun resumes (default: the user's results database)")
    p.add_argument("--no-store", action="store_true", help="keep nothing: run every input again")
    return p


def main(argv: list[str] | None = None) -> None:
    p = build_parser()
    a = p.parse_args(argv)
    budgets = [int(v) for v in a.budgets.split(",")]
    experiments = a.experiments.split(",")
    eps = {e: eps_for(e, a.eps) for e in experiments}
    if len({e.endswith("-targeted") for e in experiments}) > 1:
        p.error("targeted and untargeted experiments have different peers (RayS is untargeted): give each its "
                "own --out page")
    missing = [e for e, v in eps.items() if v is None]
    if missing:
        p.error(f"no --eps for {', '.join(missing)} (give --eps prefix=value)")
    if "hsj" in a.peers and importlib.util.find_spec("art") is None:
        p.error("ART is not installed (pip install 'zeroopt[peers]'), or leave it out: --peers rays")
    if "fb-hsj" in a.peers and importlib.util.find_spec("foolbox") is None:
        p.error("foolbox is not installed (pip install 'zeroopt[peers]'), or leave it out: --peers rays")
    if "rays" in a.peers and not (rays_dir() / "RayS_Single.py").exists():
        p.error(f"RayS's reference code is not at {rays_dir()}; set ZEROOPT_SHARED, or --peers hsj")
    from benchmarks.store import FileStore

    store = None if a.no_store else FileStore(a.db)
    rows = [r for e in experiments for r in measure(e, a.n, budgets, a.seed, a.peers, float(eps[e] or 0), store)]
    data = [{**r, "values": [v if np.isfinite(v) else None for v in r["values"]]} for r in rows]  # JSON has no ∞
    write_page(a.out, page(rows, command_line("studies.linf", argv)), data)


if __name__ == "__main__":
    main()
