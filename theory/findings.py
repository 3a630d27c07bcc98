"""What each theory study reads off its own results: the lines of findings on its page.

Each ``*_findings(run, summaries, fits)`` turns a study's cell summaries and slope fits into Markdown lines —
a slope inside or outside the acceptance band, the ratio of the two criteria, a noise floor beside the one
Theorem 1's bounds predict. :mod:`theory.studies` names one per study.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .analysis import CellSummary, Fit, fit_along
from .predictions import oracle_noise_floor, smoothing_noise_floor
from .runner import StudyRun, StudySpec

__all__ = [
    "D_BAND", "DELTA_BAND", "beta_findings", "d_findings", "delta_findings", "eps_findings", "linesearch_findings",
    "predicted_floor",
]

D_BAND = (0.85, 1.15)  # the acceptance band for the d-slope
DELTA_BAND = (1.7, 2.3)  # 2 ± 15%, the same relative band for the δ-slope


def _band(slope: float, band: tuple[float, float]) -> str:
    return "inside" if band[0] <= slope <= band[1] else "OUTSIDE"


def _slope_lines(fits: Sequence[Fit], expected: float, band: tuple[float, float], what: str) -> list[str]:
    out = []
    for f in fits:
        out.append(
            f"{what} — {f.measure} vs log({f.regressor}) ({', '.join(f'{k}={v}' for k, v in f.fixed.items())}): "
            f"{f.fit.describe()}; theory {expected:g}, band [{band[0]}, {band[1]}]: {_band(f.fit.slope, band)}."
        )
    return out


def _ratio_line(summaries: Sequence[CellSummary]) -> str:
    parts = []
    for s in summaries:
        if math.isfinite(s.bound_iterations) and math.isfinite(s.medians["average_iterations"]):
            q = f", q={s.q}" if s.q != 1 else ""
            parts.append(f"d={s.d}, δ={s.delta:g}{q}: {s.medians['average_iterations'] / s.bound_iterations:.3f}")
    head = "Median average-criterion hit / theory bound N (below 1 = the bound holds with room): "
    return head + "; ".join(parts) + "."


def d_findings(run: StudyRun, summaries: Sequence[CellSummary], fits: Sequence[Fit]) -> list[str]:
    out = _slope_lines([f for f in fits if f.axis == "d"], 1.0, D_BAND, "d-scaling")
    if run.spec.solver == "rgf-fixed":
        out.append(_ratio_line(summaries))
    return out


def linesearch_findings(run: StudyRun, summaries: Sequence[CellSummary], fits: Sequence[Fit]) -> list[str]:
    along_d = [f for f in fits if f.axis == "d" and f.measure.endswith("queries")]
    out = _slope_lines(along_d, 1.0, D_BAND, "line search, queries")
    rng = np.random.default_rng(np.random.SeedSequence(run.spec.root_seed, spawn_key=(1,)))
    for f in fit_along(run, "d", "iterate_queries", rng=rng, offset=0.0):
        out.append(f"line search, queries vs log d itself: {f.fit.describe()}.")
    return out


def delta_findings(run: StudyRun, summaries: Sequence[CellSummary], fits: Sequence[Fit]) -> list[str]:
    out = []
    for f in (x for x in fits if x.axis == "delta"):
        benign = run.spec.family != "pseudo_huber" and f.measure.startswith("iterate")
        note = (
            " (benign family: the gradient decays geometrically near the minimiser, so single iterates need only "
            "O(d log(1/δ)); Theorem 1's 1/δ² is a worst-case bound and shows in the average criterion)"
            if benign else f"; theory 2, band [{DELTA_BAND[0]}, {DELTA_BAND[1]}]: {_band(f.fit.slope, DELTA_BAND)}"
        )
        out.append(f"δ-scaling — {f.measure} vs log(1/δ): {f.fit.describe()}{note}.")
    out.append(_ratio_line(summaries))
    return out


def _by_setting(summaries: Sequence[CellSummary]) -> dict[tuple[float, float, int, str], list[CellSummary]]:
    """Cells grouped by everything but d, in grid order."""
    groups: dict[tuple[float, float, int, str], list[CellSummary]] = {}
    for s in summaries:
        groups.setdefault((s.delta, s.eps_factor, s.q, s.beta), []).append(s)
    return groups


def eps_findings(run: StudyRun, summaries: Sequence[CellSummary], fits: Sequence[Fit]) -> list[str]:
    out = []
    for (delta, ef, q, _), rows in _by_setting(summaries).items():
        cens = sum(s.censored["iterate_iterations"] for s in rows)
        total = sum(s.runs for s in rows)
        flagged = sum(s.flagged_runs for s in rows)
        stalled = [s for s in rows if s.censored["iterate_iterations"] * 2 >= s.runs]
        floor = ", ".join(
            f"d={s.d}: {s.tail_grad:.3g}" + (f" (predicted {p:.3g})" if (p := predicted_floor(run.spec, s)) else "")
            for s in stalled
        )
        setting = f"δ = {delta:g}, ε = {ef:g}·βδ²" + (f", q = {q}" if len(run.spec.qs) > 1 else "")
        out.append(
            f"{setting}: {total - cens}/{total} runs reached ‖∇f‖ ≤ δ, ToleranceMonitor flagged {flagged}/{total}"
            + (f"; stalled cells sit at a floor ‖∇f‖ ≈ {floor}" if stalled else "")
            + "."
        )
    out += _slope_lines([f for f in fits if f.axis == "d"], 1.0, D_BAND, "d-scaling under oracle error")
    return out


def predicted_floor(spec: StudySpec, s: CellSummary) -> float | None:
    """The second-moment prediction of a cell's floor (:mod:`theory.predictions`), where one applies."""
    opts = dict(spec.family_options)
    if spec.solver != "rgf-fixed" or s.q != 1:
        return None
    if spec.family == "rotated_quadratic" and s.eps > 0:
        trace = s.d * (opts.get("mu", 0.2) + opts.get("L", 1.0)) / 2.0
        noise = spec.noise if spec.noise in ("uniform", "gaussian") else "uniform"
        return oracle_noise_floor(trace, s.d, opts.get("L", 1.0), s.beta_value, s.eps, noise=noise)
    if spec.family == "log_norm" and s.eps == 0:
        return smoothing_noise_floor(s.d, 2.0, s.beta_value)  # log(1+‖x‖²) ≈ ‖x‖² near its minimiser
    return None


def beta_findings(run: StudyRun, summaries: Sequence[CellSummary], fits: Sequence[Fit]) -> list[str]:
    out = []
    for f in fits:
        if f.measure == "tail_grad" and f.axis == "d":
            rows = [s for s in summaries if all(str(getattr(s, k)) == str(v) for k, v in f.fixed.items())]
            pred = [predicted_floor(run.spec, s) for s in sorted(rows, key=lambda s: s.d)]
            out.append(
                f"noise floor ‖∇f‖ vs log d ({', '.join(f'{k}={v}' for k, v in f.fixed.items())}): {f.fit.describe()}"
                f"; floors {', '.join(f'{m:.3g}' for m in f.fit.medians)} for d = "
                f"{', '.join(str(int(x)) for x in f.fit.x)}"
                + (f" (predicted {', '.join(f'{p:.3g}' for p in pred)})" if all(p is not None for p in pred) else "")
                + "."
            )
    for (delta, _, _, beta), rows in _by_setting(summaries).items():
        reached = [f"d={s.d}: {s.runs - s.censored['iterate_iterations']}/{s.runs}" for s in rows]
        out.append(f"β = {beta}, δ = {delta:g}: runs reaching ‖∇f‖ ≤ δ: " + ", ".join(reached) + ".")
    return out
