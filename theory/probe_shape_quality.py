"""What probes shaped by the iterate buy per query, and what they cost when the prior is wrong.

:class:`zeroopt.IterateShapedProbes` puts a share w of each probe's variance on the coordinates in proportion to
the iterate's |xᵢ|. On a linear function f(y) = g·y (every comparison exact, only the sampling matters) in
d = 784 dimensions, with an iterate x that uses a fifth of the coordinates, we measure the mean cosine between
the sign estimate (orthonormal probes, the shrunk baseline: ``sign-growing``'s estimator) and g, for w = 0 (plain
probes) and larger shares, against q. Two gradients:

- *on the iterate's support*: g = |x| ⊙ ξ with ξ white — the gradient lives where the iterate does, as a
  boundary distance's does near a minimum, where the direction points along the boundary's normal;
- *white*: g independent of x. Any q-dimensional subspace holds q/d of an isotropic gradient's energy on
  average, and orthonormal probes measure their subspace whatever its shape: the shaped probes lose nothing;
- *off the iterate's support*: g zero wherever x is not — the prior is wrong, and the shaped probes spend more
  of their variance where the gradient has none. This is the part's cost; the floor 1 − w bounds it.

A descent step along the estimate gains in proportion to the squared cosine (for an exact line search on a
smooth objective), so the ratio of squared cosines is the ratio of progress per query.

Usage: ``python -m theory.probe_shape_quality --out benchmarks/results/theory/probe-shape``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from zeroopt import IterateShapedProbes, orthonormal_rows
from zeroopt.estimate.estimators import shrunk_mean_sign

__all__ = ["shaped_cosine"]

WEIGHTS = (0.0, 0.3, 0.5, 0.9)


def shaped_cosine(g: np.ndarray, x: np.ndarray, weight: float, q: int, reps: int, seed: int) -> float:
    """Mean cosine to ``g`` of the shrunk-baseline sign estimate from ``q`` orthonormal probes shaped by ``x``."""
    rng = np.random.default_rng(seed)
    shape = IterateShapedProbes(weight, orthonormal=True)
    total = 0.0
    for _ in range(reps):
        u = shape(orthonormal_rows(rng, q, g.size), x, None)
        signs = np.where(u @ g < 0, -1.0, 1.0)  # f(x + βu) < f(x) exactly when the slope along u is negative
        if abs(float(signs.mean())) < 1.0:  # (every sign alike: nothing to centre on)
            signs = signs - shrunk_mean_sign(signs)
        est = signs @ u
        norm = float(np.linalg.norm(est))
        total += float(est @ g) / (norm * float(np.linalg.norm(g))) if norm > 0 else 0.0
    return total / reps


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--d", type=int, default=784)
    p.add_argument("--support", type=float, default=0.2, help="share of the coordinates the iterate uses")
    p.add_argument("--q", type=int, nargs="+", default=[10, 20, 50, 100, 200])
    p.add_argument("--reps", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/theory/probe-shape"))
    a = p.parse_args(argv)
    rng = np.random.default_rng(a.seed)
    x = np.zeros(a.d)
    used = rng.choice(a.d, size=max(1, int(a.support * a.d)), replace=False)
    x[used] = rng.uniform(0.2, 1.0, size=used.size) * rng.choice([-1.0, 1.0], size=used.size)
    grads = {"on the iterate's support": np.abs(x) * rng.standard_normal(a.d), "white": rng.standard_normal(a.d),
             "off the iterate's support": (x == 0) * rng.standard_normal(a.d)}
    rows = [{"gradient": name, "weight": w, "q": q, "cosine": round(shaped_cosine(g, x, w, q, a.reps, a.seed), 4)}
            for name, g in grads.items() for w in WEIGHTS for q in a.q]
    cosine = {(r["gradient"], r["weight"], r["q"]): r["cosine"] for r in rows}
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "probe_shape.json").write_text(json.dumps(rows, indent=0) + "\n")
    cmd = "python -m theory.probe_shape_quality " + " ".join(sys.argv[1:] if argv is None else argv)
    lines = ["# Probes shaped by the iterate: the sign estimate's cosine to the gradient", "", f"Command: `{cmd}`", "",
             f"Linear f in d = {a.d}; the iterate uses {used.size} coordinates (|xᵢ| uniform in [0.2, 1]); "
             f"{a.reps} estimates per cell, orthonormal probes, shrunk-baseline signs (`sign-growing`'s estimator); "
             "cells: mean cosine to ∇f. Weight 0 is plain probes; 0.3 is `sign-growing`'s default where the value "
             "is a radius (`zeroopt.recipes.solvers.GROWING_PROBE_SHAPE`). Progress per query goes with the squared "
             "cosine.", ""]
    for name in grads:
        lines += [f"## gradient {name}", "", "| probe shape weight | " + " | ".join(f"q={q}" for q in a.q) + " |",
                  "|---|" + "---|" * len(a.q)]
        for w in WEIGHTS:
            cells = [f"{cosine[name, w, q]:.3f}" for q in a.q]
            lines.append(f"| {w} | " + " | ".join(cells) + " |")
        lines.append("")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .figures import save_figure

    fig, axes = plt.subplots(1, len(grads), figsize=(12, 3.4), sharey=True)
    for ax, name in zip(axes, grads, strict=True):
        for i, w in enumerate(WEIGHTS):
            ax.plot(a.q, [cosine[name, w, q] for q in a.q], marker="o", color=f"C{i}", label=f"weight {w}")
        ax.set(xscale="log", xlabel="queries per estimate (q)", title=f"gradient {name}")
    axes[0].set_ylabel("mean cosine to ∇f")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, a.out / "probe_shape.png")
    lines += ["![cosine per query](probe_shape.png)", ""]
    (a.out / "README.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
