"""How good is each gradient estimate per query? Cosine to the true gradient and bias, by direction sampler.

On a linear function f(x) = g·x (so every finite difference is exact and only the sampling matters) over an
array of shape ``(1, side, side)``, each estimator of :mod:`zeroopt.estimate.estimators` is run with ``q`` probes
from each sampler, many times; we report the mean cosine between the estimate and g, and the relative bias
‖mean estimate − g‖ / ‖g‖ (forward differences only: signs carry no scale). Two gradients: a *smooth* one
(low-frequency, as an image model's boundary normal often is) and a *white* one (no structure). A
low-frequency sampler wins on the first and loses on the second: the part is a prior, not a free lunch.
A third case adds curvature to the white one (``f(x) = g·x + ½ Σ c_i x_i²``, c > 0 and unequal, the gradient
at the probes' centre still g), so that most comparisons find a higher value whatever the slope, as near a
minimum: the sign estimator with a baseline keeps more of its cosine there than the plain one, and with the
baseline shrunk by its noise it is the plain one where the comparisons are balanced (the linear cases).
The ``"widening-hedge"`` mixture (half the probes from a low-frequency band that widens along a run) is shown at
its first iteration, where its band is narrowest: on the white gradient it costs nothing up to q = 20 (the
band's bias is still below its noise) and a sixth of the cosine at q = 200; on the smooth one it gains 2–3×.
The ``"orthogonal"`` sampler (uniform directions, orthonormal within each estimate) measures q distinct
directions where independent ones overlap: its advantage grows with q/d (at q = 200 of d = 784 the sign
estimate's cosine on the white gradient is about 0.40 against the sphere's 0.37).

Usage: ``python -m theory.estimator_quality --out benchmarks/results/theory/estimators``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from scipy.fft import idctn

import zeroopt
from zeroopt.oracles.requests import Compare, Comparison, Evaluation
from zeroopt.sample.samplers import make_sampler

__all__ = ["estimate_quality", "smooth_gradient"]

ESTIMATORS = {"forward-difference": zeroopt.forward_difference, "sign": zeroopt.sign_of_difference,
              "sign with baseline": zeroopt.centered_sign_of_difference,
              "sign with shrunk baseline": zeroopt.shrunk_centered_sign_of_difference}
#: The curved case: the mean curvature term at radius β, in standard deviations of the slope term (about 88% of
#: the comparisons then find a higher value, as late in a run near a minimum).
CURVATURE_OFFSET = 1.2
SAMPLERS = ("gaussian", "sphere", "orthogonal", "low-frequency", "multi-scale", "widening-hedge")
STYLES = {"forward-difference": "--", "sign": "-", "sign with baseline": ":", "sign with shrunk baseline": "-."}


def smooth_gradient(shape: tuple[int, ...], rng: np.random.Generator, keep: float = 0.2) -> np.ndarray:
    """A unit gradient whose DCT energy lies in the lowest ``keep`` of each spatial axis's frequencies."""
    coef = np.zeros(shape)
    block = tuple(slice(0, max(1, int(keep * n))) if n >= 8 else slice(None) for n in shape)
    coef[block] = rng.standard_normal(coef[block].shape)
    g = idctn(coef, axes=tuple(a for a, n in enumerate(shape) if n >= 8), norm="ortho").ravel()
    return g / np.linalg.norm(g)


def curvature_for(g: np.ndarray, beta: float, rng: np.random.Generator, offset: float = CURVATURE_OFFSET) -> np.ndarray:
    """A positive, unequal diagonal curvature whose mean term at radius ``beta`` is ``offset`` standard
    deviations of the slope term ``beta u·g`` (u uniform on the unit sphere)."""
    c = np.abs(rng.standard_normal(g.size))
    target_mean = offset * beta * np.linalg.norm(g) / np.sqrt(g.size) / (beta**2 / 2)
    return c * target_mean / c.mean()


def _answer(req: Any, g: np.ndarray, curvature: np.ndarray | None = None) -> Any:
    values = req.points @ g
    if curvature is not None:
        values = values + 0.5 * (req.points**2) @ curvature
    if isinstance(req, Compare):
        return Comparison(below=values < req.levels, queries=len(values), exhausted=False)
    return Evaluation(values=values, eps=np.zeros(len(values)), queries=len(values), exhausted=False)


def estimate_quality(
    estimator: str, sampler: str, g: np.ndarray, shape: tuple[int, ...], q: int, reps: int, seed: int,
    curvature: np.ndarray | None = None,
) -> dict[str, float]:
    """Mean cosine to ``g`` and relative bias of ``reps`` estimates with ``q`` probes each (of ``f(x) = g·x``,
    plus ``½ Σ curvature_i x_i²`` when given: the gradient at the probes' centre is still g)."""
    d = g.size
    smp = make_sampler(sampler, zeroopt.SolverContext(dim=d, shape=shape))
    rng = np.random.default_rng(seed)
    x, beta = np.zeros(d), 1e-3
    ests = []
    for _ in range(reps):
        u = smp.sample(rng, q, d, 0)
        gen = ESTIMATORS[estimator](x, 0.0, u, beta, smp.scale(d), 0.0)
        req = next(gen)
        try:
            gen.send(_answer(req, g, curvature))
        except StopIteration as done:
            ests.append(done.value.g)
    e = np.array(ests)
    cos = (e @ g) / np.maximum(np.linalg.norm(e, axis=1), 1e-300) / np.linalg.norm(g)
    signs = not estimator.startswith("forward")
    bias = float("nan") if signs else float(np.linalg.norm(e.mean(axis=0) - g) / np.linalg.norm(g))
    return {"cosine": float(cos.mean()), "bias": bias}


def _cell(value: Any) -> Any:
    if isinstance(value, float):
        return None if np.isnan(value) else round(value, 4)
    return value


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--side", type=int, default=28, help="the array is (1, side, side)")
    p.add_argument("--q", type=int, nargs="+", default=[10, 20, 50, 100, 200])
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/theory/estimators"))
    a = p.parse_args(argv)
    shape = (1, a.side, a.side)
    rng = np.random.default_rng(a.seed)
    white = rng.standard_normal(int(np.prod(shape)))
    grads = {"smooth": smooth_gradient(shape, rng), "white": white, "white, curved": white}
    curvatures = {"white, curved": curvature_for(white, 1e-3, rng)}  # β = 1e-3, as estimate_quality probes
    rows = []
    for gname, g in grads.items():
        for est in ESTIMATORS:
            for smp in SAMPLERS:
                for q in a.q:
                    r = estimate_quality(est, smp, g, shape, q, a.reps, a.seed, curvatures.get(gname))
                    rows.append({"gradient": gname, "estimator": est, "sampler": smp, "q": q, **r})
    a.out.mkdir(parents=True, exist_ok=True)
    # A table: the column names once, then one row per line (diffable, without repeating every key); a sign
    # estimator's bias, which signs cannot show (NaN in the rows), is null.
    columns = list(rows[0])
    table = ",\n".join(json.dumps([_cell(v) for v in r.values()]) for r in rows)
    (a.out / "estimators.json").write_text(f'{{"columns": {json.dumps(columns)},\n"rows": [\n{table}\n]}}\n')
    cmd = "python -m theory.estimator_quality " + " ".join(sys.argv[1:] if argv is None else argv)
    lines = ["# Gradient estimates per query: cosine to the true gradient (bias)", "", f"Command: `{cmd}`", "",
             f"Linear f (curved in the third case) on shape {shape} (d = {int(np.prod(shape))}), {a.reps} estimates "
             "per cell; cells: mean "
             "cosine (relative bias ‖mean ĝ − g‖/‖g‖ for forward differences; it includes the mean's sampling error, "
             "about 1/(cosine·√reps), so only a value well above that — the low-frequency sampler's projection loss on "
             "the white gradient — is a true bias). The smooth gradient lies inside the sampler's subspace by "
             "construction: the favourable case. The multi-scale mixture (bands 1/8, 1/4, 1/2 and the full space) "
             "estimates a preconditioned gradient D∇f, D heavier on low frequencies (zeroopt.MixtureDirections): its "
             "large 'bias' is that preconditioning, by design; its cosine hedges between the two gradients — below "
             "low-frequency on the smooth one, above it on the white one. The curved case adds a positive, unequal "
             f"curvature whose mean term at the probe radius is {CURVATURE_OFFSET} standard deviations of the slope "
             "term (most comparisons then find a higher value, as near a minimum): there the sign estimator's baseline "
             "(zeroopt.centered_sign_of_difference, HopSkipJump's) recovers what the common offset hides; shrunk by "
             "its own noise (zeroopt.shrunk_centered_sign_of_difference) it subtracts nothing from balanced "
             "comparisons (the linear cases) and nearly the whole mean sign in the curved one.", ""]
    for gname in grads:
        lines += [f"## {gname} gradient", "", "| estimator | sampler | " + " | ".join(f"q={q}" for q in a.q) + " |",
                  "|---|---|" + "---|" * len(a.q)]
        for est in ESTIMATORS:
            for smp in SAMPLERS:
                cells = []
                for q in a.q:
                    r = next(x for x in rows
                             if (x["gradient"], x["estimator"], x["sampler"], x["q"]) == (gname, est, smp, q))
                    cells.append(f"{r['cosine']:.3f}" + ("" if np.isnan(r["bias"]) else f" ({r['bias']:.2f})"))
                lines.append(f"| {est} | {smp} | " + " | ".join(cells) + " |")
        lines.append("")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .figures import save_figure

    fig, axes = plt.subplots(1, len(grads), figsize=(4 * len(grads), 3.6), sharey=True)
    for ax, gname in zip(axes, grads, strict=True):
        for est in ESTIMATORS:
            for smp in SAMPLERS:
                ys = [next(x["cosine"] for x in rows if (x["gradient"], x["estimator"], x["sampler"], x["q"])
                           == (gname, est, smp, q)) for q in a.q]
                ax.plot(a.q, ys, marker="o", linestyle=STYLES[est], color=f"C{SAMPLERS.index(smp)}",
                        label=f"{est} / {smp}")  # colour: sampler; line style: estimator
        ax.set(xscale="log", xlabel="queries per estimate (q)", title=f"{gname} gradient")
    axes[0].set_ylabel("mean cosine to ∇f")
    axes[-1].legend(fontsize=6)
    fig.tight_layout()
    save_figure(fig, a.out / "estimators.png")
    lines += ["![cosine per query](estimators.png)", ""]
    (a.out / "README.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
