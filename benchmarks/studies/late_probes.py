"""How well a late iterate's comparisons follow the boundary's slope: a white-box look at the attack's probes.

The default attack runs to a budget on the first n inputs of a CNN experiment (without the pruning polish); at
its descent's last iterate (the ray θ and its value g0) the boundary distance is then probed with the network's
own gradient at hand. q
orthonormal probes u ⟂ θ at angle β give the directions θ̂ + βu; for each:

- the comparison the attack would make: is the point at the tangent plane's level (``probe_level="tangent"``,
  distance g0 / cos ∠(θ̂, θ̂ + βu)) adversarial?
- the sign of the true directional derivative u·∇g, from the white-box gradient of the adversarial margin at the
  boundary point (∇g ∝ −(I − θ̂θ̂ᵀ)∇m);
- the boundary distance itself along θ̂ ± βu (first crossing, by grid and bisection), for an antithetic estimate.

Reported per β: the share of comparisons that read "higher", how often a comparison agrees with the directional
derivative's sign, and the cosine to the true gradient of the sign estimate from the comparisons (plain and
centred, as ``baseline="shrunk"`` centres them), of the antithetic sign estimate sign(g(θ̂+βu) − g(θ̂−βu)), and of
the ideal one (every sign right). On a flat boundary the comparisons are exact at any β (the test's linear model);
where the measured cosine falls short of the ideal one, g is rough at the probes' scale. (The antithetic estimate
needs two crossings per direction; compared at one level, such a pair costs two comparisons, so it pays only where
its cosine exceeds √2 times the centred one's, the cosine of twice as many one-sided probes.)

Usage::

    python -m benchmarks.studies.late_probes --experiments mnist-targeted,cifar-targeted --n 3 --budgets 2000,20000 \\
        --out benchmarks/results/ablation/late-probes/README.md
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.pages import command_line, grouped, table_data, table_rows, write_page

Labels = Callable[[NDArray[np.float64]], NDArray[np.int64]]

#: The probe radii looked at: Sign-OPT-like, sign-growing's late floor (0.01) and twice it.
BETAS = (0.005, 0.01, 0.02)
#: The window around g0 searched for a probe's first crossing, as a share of g0, and its grid.
WINDOW, GRID, BISECTIONS = 0.1, 21, 20


def first_crossing(labels: Labels, adversarial: Callable[[NDArray[np.int64]], NDArray[np.bool_]],
                   x0: NDArray[np.float64], dirs: NDArray[np.float64], g0: float, lo: Any, hi: Any,
                   *, window: float = WINDOW, grid: int = GRID, bisections: int = BISECTIONS) -> NDArray[np.float64]:
    """Distance from ``x0`` to the first adversarial point along each row of ``dirs`` within g0·(1 ± window);
    ``nan`` where the window's lower end is already adversarial or nothing in it is."""
    u = dirs / np.linalg.norm(dirs, axis=1, keepdims=True)
    lams = g0 * np.linspace(1 - window, 1 + window, grid)
    pts = np.clip(x0[None, None] + lams[None, :, None] * u[:, None, :], lo, hi).reshape(-1, u.shape[1])
    adv = adversarial(labels(pts)).reshape(len(u), grid)
    first = np.where(adv.any(axis=1), adv.argmax(axis=1), -1)
    found = first > 0
    low, high = lams[np.maximum(first - 1, 0)], lams[np.maximum(first, 0)]
    for _ in range(bisections):
        mid = (low + high) / 2
        hit = adversarial(labels(np.clip(x0 + mid[:, None] * u, lo, hi)))
        high, low = np.where(hit, mid, high), np.where(hit, low, mid)
    return np.where(found, high, np.nan)


def _cosine(signs: NDArray[np.float64], u: NDArray[np.float64], direction: NDArray[np.float64]) -> float:
    est = signs @ u
    norm = float(np.linalg.norm(est))
    return float(est @ direction / norm) if norm > 0 else float("nan")


def probe_quality(labels: Labels, adversarial: Callable[[NDArray[np.int64]], NDArray[np.bool_]],
                  margin_gradient: Callable[[NDArray[np.float64]], NDArray[np.float64]],
                  x0: NDArray[np.float64], theta: NDArray[np.float64], lo: Any, hi: Any, *,
                  betas: tuple[float, ...] = BETAS, q: int = 100, rng: np.random.Generator) -> list[dict[str, float]]:
    """The figures of the module's docstring at the point ``x0 + θ`` (on the boundary), one dict per β.

    ``margin_gradient(x)`` is the gradient of a margin that is positive where the label is adversarial."""
    t = theta / np.linalg.norm(theta)
    # A value the attack reports is the upper end of its bracket, a little past the boundary: probes compared at
    # that distance would read "lower" too often. The boundary along θ, to the bisection's precision, instead.
    g0 = float(first_crossing(labels, adversarial, x0, t[None], float(np.linalg.norm(theta)), lo, hi,
                              bisections=2 * BISECTIONS)[0])
    if not np.isfinite(g0):
        raise ValueError("no boundary crossing within the window around the point: pass a point on the boundary")
    ascent = -margin_gradient(np.clip(x0 + g0 * t, lo, hi))
    ascent -= t * (t @ ascent)  # ∇g on the sphere, up to a positive factor
    ascent /= np.linalg.norm(ascent)
    u = np.linalg.qr(rng.standard_normal((t.size, q)))[0].T
    u -= np.outer(u @ t, t)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    slope = u @ ascent
    ideal = _cosine(np.sign(slope), u, ascent)
    rows = []
    for beta in betas:
        plus = t[None] + beta * u
        unit = plus / np.linalg.norm(plus, axis=1, keepdims=True)
        level = g0 / (unit @ t)
        lower = adversarial(labels(np.clip(x0 + level[:, None] * unit, lo, hi)))
        signs = np.where(lower, -1.0, 1.0)
        g_plus = first_crossing(labels, adversarial, x0, plus, g0, lo, hi)
        g_minus = first_crossing(labels, adversarial, x0, t[None] - beta * u, g0, lo, hi)
        both = np.isfinite(g_plus) & np.isfinite(g_minus)
        anti = np.where(both, np.sign(np.where(both, g_plus - g_minus, 0.0)), 0.0)
        # One level for every probe, the median of the crossings (about half read "lower"): one-sided comparisons
        # there, centred, and antithetic pairs, whose difference cancels what moves both of a pair alike.
        level_mid = float(np.nanmedian(np.concatenate([g_plus, g_minus]))) if both.any() else np.nan
        low_plus, low_minus = g_plus < level_mid, g_minus < level_mid
        one = np.where(low_plus, -1.0, 1.0)
        pair = np.where(both, low_minus.astype(float) - low_plus.astype(float), 0.0)
        rows.append({
            "cos_median_level": _cosine(one - one.mean(), u, ascent),
            "cos_median_pairs": _cosine(pair, u, ascent),
            "beta": float(beta), "higher": float(np.mean(~lower)),
            "agree": float(np.mean(np.where(slope < 0, lower, ~lower))),
            "cos": _cosine(signs, u, ascent), "cos_centred": _cosine(signs - signs.mean(), u, ascent),
            "cos_antithetic": _cosine(anti, u, ascent), "cos_ideal": ideal, "found": float(np.mean(both)),
        })
    return rows


def white_box_experiment(experiment: str, n: int, budget: int) -> tuple[Any, Any, dict[str, Any]]:
    """The suite experiment (one torch thread, on the CPU), the batch of its first ``n`` inputs, and the options
    the suite's adapter gives the attack (the target pool) — for a white-box look at the default's runs."""
    import torch

    from benchmarks.experiments import Plan, build

    torch.set_num_threads(1)
    exp = build(experiment, Plan(n_ours=n, n_peers=n, budgets=(budget,)), seed=0, torch_device="cpu")
    if exp.torch_model is None:
        raise SystemExit(f"{experiment} has no torch model: the white-box gradient needs one")
    b = exp.batch(list(range(min(n, len(exp.x)))))
    opts: dict[str, Any] = {}
    if b.starts is not None:
        pool_class = b.target if b.target is not None else (b.y0 + 1) % b.n_classes
        opts["target_pool"] = (b.starts.reshape(-1, *b.x0.shape[1:]), np.repeat(pool_class, b.starts.shape[1]))
    return exp, b, opts


def input_oracles(exp: Any, b: Any, i: int) -> tuple[Labels, Callable[[NDArray[np.int64]], NDArray[np.bool_]],
                                                      Callable[[NDArray[np.float64]], NDArray[np.float64]]]:
    """For input ``i`` of batch ``b``: the labels of flat points (the experiment's own hard-label adapter), the
    criterion on labels, and the gradient of the adversarial margin (positive where the label is adversarial)."""
    import torch

    shape, model = b.x0.shape[1:], exp.torch_model
    y0, tgt = int(b.y0[i]), None if b.target is None else int(b.target[i])

    def labels(points: NDArray[np.float64]) -> NDArray[np.int64]:
        return np.asarray(exp.label_fn(points.reshape(-1, *shape)))

    def adversarial(lab: NDArray[np.int64]) -> NDArray[np.bool_]:
        return lab == tgt if tgt is not None else lab != y0

    def margin_gradient(x: NDArray[np.float64]) -> NDArray[np.float64]:
        xt = torch.tensor(x.reshape(1, *shape), dtype=torch.float32, requires_grad=True)
        z = model(xt)[0]
        c = tgt if tgt is not None else y0
        best_other = torch.cat([z[:c], z[c + 1:]]).max()
        (z[c] - best_other if tgt is not None else best_other - z[c]).backward()
        return xt.grad.numpy().reshape(-1).astype(float)

    return labels, adversarial, margin_gradient


def late_probes(experiment: str, n: int, budget: int, q: int, seed: int) -> list[dict[str, Any]]:
    """Run the default attack on the first ``n`` inputs to ``budget`` and probe each input's last iterate."""
    from applications.hardlabel import attack, attack_keywords

    exp, b, opts = white_box_experiment(experiment, n, budget)
    # Without the pruning polish, so that the last iterate is the descent's own.
    res = attack(exp.label_fn, b.x0, b.y0, target=b.target, budget=budget, seed=seed, bounds=b.bounds,
                 n_classes=b.n_classes, **attack_keywords({**opts, "prune": False}))
    lo, hi = b.bounds
    out = []
    for i in range(len(b.x0)):
        if not res.success[i]:
            continue
        labels, adversarial, margin_gradient = input_oracles(exp, b, i)
        x0 = b.x0[i].reshape(-1).astype(float)
        # The descent's own last iterate (its ray and value), not the returned point: that one is the clipped
        # point, whose pixels past a bound sit exactly on it, where a probe's component pushing one back into the
        # box raises g whatever the rest does (nearly every comparison there reads "higher").
        run = res.solver_results[i]
        theta = np.asarray(run.x, dtype=float) / np.linalg.norm(run.x) * float(run.fun)
        rng = np.random.default_rng([seed, i])
        for row in probe_quality(labels, adversarial, margin_gradient, x0, theta, lo, hi, q=q, rng=rng):
            out.append({"experiment": experiment, "budget": budget, "input": i, "distance": float(res.distortion[i]),
                        **row})
    return out


def summary(rows: list[dict[str, Any]]) -> list[str]:
    """A Markdown table: per experiment, budget and β, the medians over the inputs."""
    keys = ("higher", "agree", "cos", "cos_centred", "cos_antithetic", "cos_median_level", "cos_median_pairs",
            "cos_ideal", "found")
    lines = ["| experiment | budget | β | inputs | higher | agree | cos | cos centred | cos antithetic "
             "| cos at the median level: one-sided | pairs | cos ideal | (centred / ideal)² | found |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (e, bud, beta), sel in grouped(rows, "experiment", "budget", "beta"):
        med = {k: float(np.nanmedian([r[k] for r in sel])) for k in keys}
        share = (med["cos_centred"] / med["cos_ideal"]) ** 2
        lines.append(f"| {e} | {bud:,} | {beta:g} | {len(sel)} | {med['higher']:.2f} | {med['agree']:.2f} | "
                     f"{med['cos']:.3f} | {med['cos_centred']:.3f} | {med['cos_antithetic']:.3f} | "
                     f"{med['cos_median_level']:.3f} | {med['cos_median_pairs']:.3f} | "
                     f"{med['cos_ideal']:.3f} | {share:.2f} | {med['found']:.2f} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--experiments", default="mnist-targeted,mnist-untargeted,cifar-targeted,cifar-untargeted")
    p.add_argument("--n", type=int, default=3, help="inputs per experiment (the first n)")
    p.add_argument("--budgets", default="2000,20000")
    p.add_argument("--q", type=int, default=100, help="probes per point")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True, help="Markdown page (a .json beside it)")
    p.add_argument("--reanalyze", action="store_true",
                   help="rewrite the page from the rows in the JSON beside --out (and its command), probing nothing")
    a = p.parse_args(argv)
    if a.reanalyze:
        command, rows = table_rows(a.out.with_suffix(".json"))
    else:
        command = command_line("studies.late_probes", argv)
        rows = [r for e in a.experiments.split(",") for bud in a.budgets.split(",")
                for r in late_probes(e, a.n, int(bud), a.q, a.seed)]
    # The docstring's account, as Markdown: bullets stay lines, wrapped lines join their own.
    about = "\n\n".join(re.sub(r"\n(?!- )\s*", " ", part) for part in (__doc__ or "").split("\n\n")[1:4])
    lines = ["# How well a late iterate's comparisons follow the boundary's slope", "", f"Command: `{command}`", "",
             about, "",
             "Medians over the inputs of each figure (agree: share of comparisons whose answer has the sign of the "
             "true directional derivative; found: share of probes whose crossings along θ̂ ± βu lie within "
             f"g0·(1 ± {WINDOW:g}), the antithetic estimate's sample; the median level: one level for every probe, "
             "the median of their crossings, compared one-sided (centred) or in antithetic pairs; (centred / ideal)²: "
             "the share of what q right signs would measure that the attack's own estimate gets).", "",
             *summary(rows)]
    # A table, to four decimals (all the page reads): the JSON stays small.
    write_page(a.out, lines, table_data(command, rows, 4))


if __name__ == "__main__":
    main()
