"""Where the boundary's slope lives along the default attack's runs: a white-box look at the gradient of g.

The issue's levers for query efficiency include probes from a low-frequency subspace (QEBA, GeoDA, CGBA) and
probes guided by the run's own history (guided evolution strategies, prior-guided RGF). Either pays only if the
gradient of g(θ) — the boundary distance the attack minimises — holds much more of its norm in that subspace than
a random subspace of the same size. This module measures that along real runs, with the network's own gradient.

The default attack runs to a budget on the first n inputs of a CNN experiment (without the pruning polish),
through a registered copy of its solver that records every iterate and estimate (``sign-growing-traced``: the
registry's route for a solver written outside the package). At iterates spread over each input's run, the
boundary along θ is found by bisection on labels and ∇g is taken from the white-box margin gradient there
(∇g ∝ −(I − θ̂θ̂ᵀ)J∇m, J the clip's mask). Reported per point:

- the share of |∇g|² in each band of 2-D DCT frequencies (bands by max(i, j) of the frequency index, per
  channel), over the band's share of the coordinates: its *density* (1 everywhere: no frequency structure);
- the share of |∇g|² in the span of the last 10 and 40 estimates, over that of a random subspace of the dimension;
- the squared cosine to ∇g of a sign estimate whose q signs are all right (Monte Carlo over probe draws):
  isotropic probes, probes shaped by |θ| as the default shapes them, and probes drawn with each band's variance
  set to its density (or its square root) — the most a frequency prior that knew ∇g's spectrum could give.

Usage::

    python -m benchmarks.studies.gradient_structure --experiments mnist-targeted,cifar-targeted --n 3 --budget 8000 \\
        --out benchmarks/results/ablation/gradient-structure/README.md
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Generator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.fft import dctn, idctn

from benchmarks.pages import (
    GENERATED_MARKER,
    command_first,
    command_line,
    grouped,
    kept_head,
    table_data,
    table_rows,
    write_page,
)
from benchmarks.studies.late_probes import first_crossing, input_oracles, white_box_experiment

#: Band edges on max(i, j) of a 2-D DCT frequency index (the last band runs to the side's length).
BAND_EDGES = (0, 2, 4, 7, 11, 16, 22)
#: The history spans looked at (numbers of past estimates).
SPANS = (10, 40)
#: Probes of the Monte-Carlo sign estimates (sign-growing's cap) and their draws per point.
MC_PROBES, MC_DRAWS = 200, 4
#: Points per run at which ∇g is taken, spread evenly from the iteration below to the run's last.
POINTS, FIRST_ITERATION = 8, 10
TRACED = "sign-growing-traced"
#: What the traced solver records, step by step: (run, iteration, iterate, estimate, next iterate, value).
_SINK: list[tuple[int, int, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], float]] = []
#: The estimate of the iteration running now (the traced solver reads it once the iteration returns).
_SEEN: dict[str, Any] = {}


def band_index(shape: tuple[int, ...], edges: tuple[int, ...] = BAND_EDGES) -> NDArray[np.intp]:
    """Each coordinate's band (flat, C order) for an array of ``shape`` whose last two axes are an image's."""
    h, w = shape[-2:]
    radial = np.maximum(*np.meshgrid(np.arange(h), np.arange(w), indexing="ij"))
    band = np.digitize(radial, [*edges[1:]])  # edges[0] = 0: band k holds edges[k] <= max(i, j) < edges[k + 1]
    return np.broadcast_to(band, shape).reshape(-1)


def band_shares(vector: NDArray[np.float64], shape: tuple[int, ...], bands: NDArray[np.intp]) -> NDArray[np.float64]:
    """Share of |vector|² in each band of its orthonormal 2-D DCT (over the last two axes of ``shape``)."""
    coef = dctn(vector.reshape(shape), axes=(-2, -1), norm="ortho").reshape(-1)
    energy = np.bincount(bands, weights=coef**2, minlength=int(bands.max()) + 1)
    return energy / energy.sum()


def span_share(vector: NDArray[np.float64], rows: NDArray[np.float64]) -> float:
    """Share of |vector|² in the span of ``rows``."""
    basis = np.linalg.qr(np.asarray(rows, dtype=float).T)[0]
    return float(np.sum((basis.T @ vector) ** 2) / (vector @ vector))


def sign_cos2(gradient: NDArray[np.float64], rng: np.random.Generator, *, shape: tuple[int, ...] | None = None,
              bands: NDArray[np.intp] | None = None, band_variance: NDArray[np.float64] | None = None,
              pixel_factors: NDArray[np.float64] | None = None, q: int = MC_PROBES,
              draws: int = MC_DRAWS) -> float:
    """Mean squared cosine to ``gradient`` of ``Σ sign(∇·u_i) u_i`` over q orthonormalised probes: Gaussian DCT
    coefficients with each band's ``band_variance`` (none: isotropic), then scaled by ``pixel_factors``."""
    d, out = gradient.size, []
    for _ in range(draws):
        z = rng.standard_normal((q, d))
        if band_variance is not None:
            z = z * np.sqrt(band_variance[bands])[None, :]
            z = idctn(z.reshape(q, *shape), axes=(-2, -1), norm="ortho").reshape(q, d)
        if pixel_factors is not None:
            z = z * pixel_factors[None, :]
        u = np.linalg.qr(z.T)[0].T
        est = np.sign(u @ gradient) @ u
        out.append(float((est @ gradient) ** 2 / ((est @ est) * (gradient @ gradient))))
    return float(np.mean(out))


def _register_traced() -> None:
    """``sign-growing-traced``: the registry's sign-growing, each step recording (run, iteration, x, estimate)."""
    import zeroopt

    if TRACED in zeroopt.list_solvers():
        return
    spec = zeroopt.get_solver("sign-growing")

    @dataclasses.dataclass(frozen=True)
    class Traced(zeroopt.Chain):
        def step_generator(self, state: Any) -> Generator[Any, Any, Any]:
            out = yield from zeroopt.Chain.step_generator(self, state)
            # (the run's generator stays the same object from its start to its end: it names the run)
            _SINK.append((id(state.rng), state.iteration, np.array(state.x), np.array(_SEEN["g"]),
                          np.array(out.state.x), float(state.fx)))
            return out

    @dataclasses.dataclass(frozen=True)
    class Seen(zeroopt.Estimate):
        def update(self, it: Any) -> Generator[Any, Any, Any]:
            it = yield from zeroopt.Estimate.update(self, it)
            _SEEN["g"] = it.estimate.g
            return it

    @zeroopt.register_solver(TRACED, spec.options_type, "sign-growing, recording every iterate and estimate",
                             defaults=spec.context_defaults)
    def _make(opts: Any, ctx: Any) -> zeroopt.Chain:
        built = spec.factory(opts, ctx)
        traced = built.with_part(Seen(built.find(zeroopt.Estimate).estimator))  # type: ignore[union-attr]
        return Traced(**{f.name: getattr(traced, f.name) for f in dataclasses.fields(traced)})


def boundary_gradient(labels: Any, adversarial: Any, margin_gradient: Any, x0: NDArray[np.float64],
                      theta: NDArray[np.float64], value: float, lo: Any, hi: Any) -> NDArray[np.float64] | None:
    """∇g at direction ``theta`` (up to a positive factor; ``None`` where no crossing lies near ``value``)."""
    t = theta / np.linalg.norm(theta)
    g0 = float(first_crossing(labels, adversarial, x0, t[None], value, lo, hi, window=0.2, bisections=40)[0])
    if not np.isfinite(g0):
        return None
    raw = x0 + g0 * t
    grad = -margin_gradient(np.clip(raw, lo, hi)) * ((raw > lo) & (raw < hi))
    grad -= t * (t @ grad)
    norm = float(np.linalg.norm(grad))
    return grad / norm if norm > 0 else None


def gradient_structure(experiment: str, n: int, budget: int, seed: int) -> list[dict[str, Any]]:
    """Run the traced default on the first ``n`` inputs to ``budget``; the module docstring's figures per point."""
    from applications.hardlabel import Polish, attack, attack_keywords
    from zeroopt.recipes.registry import recipe_defaults
    from zeroopt.recipes.sign_solvers import sign_growing_on_radius
    from zeroopt.sample.shaping import shape_weights

    probe_shape = recipe_defaults(sign_growing_on_radius)["probe_shape"]

    _register_traced()
    exp, b, opts = white_box_experiment(experiment, n, budget)
    _SINK.clear()
    res = attack(exp.label_fn, b.x0, b.y0, target=b.target, budget=budget, seed=seed, bounds=b.bounds,
                 n_classes=b.n_classes, solver=TRACED, **{**attack_keywords(opts), "polish": Polish(prune=False)})
    runs: dict[int, list[tuple[Any, ...]]] = {}
    for run, *step in _SINK:
        runs.setdefault(run, []).append(tuple(step))
    shape, (lo, hi) = tuple(b.x0.shape[1:]), b.bounds
    bands = band_index(shape)
    sizes = np.bincount(bands) / bands.size
    rng, out = np.random.default_rng(seed), []
    for i in range(len(b.x0)):
        final = np.asarray(res.solver_results[i].x, dtype=float).ravel()
        final = final / np.linalg.norm(final)
        # The input's winning run: the one whose last step ended at the descent's result.
        steps = max(runs.values(), key=lambda s: abs(s[-1][3] @ final) / np.linalg.norm(s[-1][3]))
        if not res.success[i] or abs(steps[-1][3] @ final) / np.linalg.norm(steps[-1][3]) < 1 - 1e-9:
            continue
        labels, adversarial, margin_gradient = input_oracles(exp, b, i)
        x0 = b.x0[i].reshape(-1).astype(float)

        last = len(steps) - 1
        for k in sorted({int(round(v)) for v in np.linspace(min(FIRST_ITERATION, last), last, POINTS)}):
            it, x, value = steps[k][0], steps[k][1], steps[k][4]
            grad = boundary_gradient(labels, adversarial, margin_gradient, x0, x, value, lo, hi)
            if grad is None:
                continue
            density = band_shares(grad, shape, bands) / sizes
            row: dict[str, Any] = {"experiment": experiment, "budget": budget, "input": i, "iteration": it,
                                   "of": steps[-1][0], "density": [round(float(v), 4) for v in density]}
            for m in SPANS:
                past = np.array([step[2] for step in steps[max(0, k - m):k]])
                row[f"span{m}"] = span_share(grad, past) / (len(past) / grad.size) if len(past) else float("nan")
            iso = sign_cos2(grad, rng)
            factors = shape_weights(x, probe_shape)
            row["cos2_isotropic"] = iso
            row["shaped"] = sign_cos2(grad, rng, pixel_factors=factors) / iso
            for power, key in ((1.0, "band"), (0.5, "band_sqrt")):
                row[key] = sign_cos2(grad, rng, shape=shape, bands=bands, band_variance=density**power) / iso
                row[f"{key}_shaped"] = sign_cos2(grad, rng, shape=shape, bands=bands, band_variance=density**power,
                                                 pixel_factors=factors) / iso
            out.append(row)
    return out


def _halves(rows: list[dict[str, Any]]) -> None:
    """Each point's half of its run (``"early"``, ``"late"``), as ``phase``."""
    for r in rows:
        r.setdefault("phase", "early" if r["iteration"] <= r["of"] / 2 else "late")


def summary(rows: list[dict[str, Any]]) -> list[str]:
    """Two Markdown tables: the band densities, and the spans' and priors' figures (medians over the points)."""
    _halves(rows)
    heads = [f"{lo}–{hi - 1}" for lo, hi in zip(BAND_EDGES[:-1], BAND_EDGES[1:], strict=True)]
    heads.append(f"{BAND_EDGES[-1]}–")
    lines = ["Density of |∇g|² per band of DCT frequencies, max(i, j) in the band (1: the band's share of the "
             "coordinates; medians over the points):", "",
             "| experiment | budget | half of the run | points | " + " | ".join(heads) + " |",
             "|---|---|---|---|" + "---|" * len(heads)]
    for (e, bud, ph), sel in grouped(rows, "experiment", "budget", "phase"):
        med = np.median(np.array([r["density"] for r in sel]), axis=0)
        lines.append(f"| {e} | {bud:,} | {ph} | {len(sel)} | " + " | ".join(f"{v:.2f}" for v in med) + " |")
    keys = [f"span{m}" for m in SPANS] + ["cos2_isotropic", "shaped", "band", "band_sqrt", "band_shaped",
                                          "band_sqrt_shaped"]
    lines += ["", "The span of the last m estimates: its share of |∇g|² over a random m-dimensional subspace's "
              "(median, and the points' range). The squared cosine of a sign estimate with every sign right "
              f"(q = {MC_PROBES}): isotropic, and as a ratio to it with probes shaped by |θ| (the default's shape), "
              "by each band's density (band), by its square root (band √), and both with the shape:", "",
              "| experiment | budget | half | span 10 | span 40 | cos² isotropic | shaped | band | band √ "
              "| band + shape | band √ + shape |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (e, bud, ph), sel in grouped(rows, "experiment", "budget", "phase"):
        cells = []
        for k in keys:
            v = np.array([r[k] for r in sel], dtype=float)
            cells.append(f"{np.nanmedian(v):.2f} ({np.nanmin(v):.1f}–{np.nanmax(v):.1f})" if k.startswith("span")
                         else f"{np.nanmedian(v):.3f}")
        lines.append(f"| {e} | {bud:,} | {ph} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--experiments", default="mnist-targeted,mnist-untargeted,cifar-targeted,cifar-untargeted")
    p.add_argument("--n", type=int, default=3, help="inputs per experiment (the first n)")
    p.add_argument("--budget", type=int, default=8000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True, help="Markdown page (a .json beside it)")
    p.add_argument("--reanalyze", action="store_true", help="rewrite the page from the JSON beside --out")
    a = p.parse_args(argv)
    if a.reanalyze:
        command, rows = table_rows(a.out.with_suffix(".json"))
    else:
        command = command_line("studies.gradient_structure", argv)
        rows = [r for e in a.experiments.split(",") for r in gradient_structure(e, a.n, a.budget, a.seed)]
    about = "\n\n".join(" ".join(line.strip() for line in part.splitlines()) if not part.lstrip().startswith("-")
                        else part for part in (__doc__ or "").split("\n\n")[1:4])
    head = command_first(kept_head(a.out), "# Where the boundary's slope lives along the default attack's runs",
                         command)
    figure = a.out.with_name("band_density.png")
    a.out.parent.mkdir(parents=True, exist_ok=True)
    plot_density(rows, figure)
    lines = [*head, GENERATED_MARKER, "", about, "", *summary(rows), "",
             f"![band densities]({figure.name})"]
    # A table to three decimals (all the page reads; the half of the run is derived): the JSON stays small.
    write_page(a.out, lines, table_data(command, rows, 3, drop=("phase",)))


def plot_density(rows: list[dict[str, Any]], path: Path) -> None:
    """The bands' densities (medians over the points), one line per experiment and half of the run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from applications.figures import save_figure

    fig, ax = plt.subplots(figsize=(6, 3.6))
    centres = [(lo + hi - 1) / 2 for lo, hi in zip(BAND_EDGES, [*BAND_EDGES[1:], 28], strict=True)]
    _halves(rows)
    groups = grouped(rows, "experiment", "budget", "phase")
    colours = {e: f"C{k}" for k, e in enumerate(sorted({g[0][0] for g in groups}))}  # one colour per experiment
    for (e, _, ph), sel in groups:
        ax.plot(centres, np.median(np.array([r["density"] for r in sel]), axis=0), marker="o",
                linestyle="-" if ph == "late" else ":",
                color=colours[e], label=f"{e}, {ph} half")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set(xlabel="DCT frequency, max(i, j) (band centre)", ylabel="share of |∇g|² / share of coordinates",
           title="Where the gradient of g lives, by frequency", yscale="log")
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


if __name__ == "__main__":
    main()
