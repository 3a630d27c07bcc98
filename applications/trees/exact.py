"""``exact_minimal_adversarial``: the exact minimal adversarial perturbation of a tree ensemble, verified.

For each input: untargeted, one program per other class t ("t beats the true class", which is exactly "the
label is no longer y"), the most likely classes first and each later program cut off at the best distance
so far; targeted, one program where the target beats every other class. The optimum is a float32 point on
the closed side of every threshold it crosses (see :mod:`.ensemble`), and the model itself labels it again.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from applications.hardlabel.adapters import as_label_model
from applications.hardlabel.bounds import check_inside, flat_bounds

from .milp import NORMS, Outcome, solve_program
from .parse import as_ensemble

__all__ = ["ExactResult", "exact_minimal_adversarial"]

DEFAULT_MARGIN = 1e-5  # strict score wins: F_t - F_c >= margin, ten times HiGHS's MIP feasibility tolerance (1e-6)
MARGIN_RETRIES = 2  # a point the model does not confirm is re-solved with a 100x larger margin, this often
DEFAULT_GAP = 1e-6  # HiGHS's relative optimality gap


@dataclass
class ExactResult:
    """Exact minimal adversarial distances of a batch of inputs.

    Attributes
    ----------
    x_adv : numpy.ndarray
        ``(N, *input_shape)`` float32: the closest adversarial point found (NaN where none).
    distance : numpy.ndarray
        Its distance to the input in ``norm`` (0: already misclassified; inf: none inside the bounds).
    bound : numpy.ndarray
        A proven lower bound on the minimal distance (equal to ``distance`` up to the solver's gap when
        ``status`` is ``"optimal"``).
    status : list of str
        ``"optimal"``, ``"time_limit"`` (``distance`` is the best found, ``bound`` what is proven),
        ``"infeasible"`` (no adversarial point inside the bounds), ``"misclassified"`` (the model already
        gets the input wrong) or ``"unverified"`` (the model did not confirm the program's point even with a
        larger margin; ``distance`` is inf and ``bound`` still holds).
    label : numpy.ndarray
        The model's own label of ``x_adv`` (-1 where none).
    seconds : numpy.ndarray
        Solve time per input.
    programs : numpy.ndarray
        Programs solved per input (untargeted: one per class not pruned).
    norm : str
    """

    x_adv: NDArray[np.float32]
    distance: NDArray[np.float64]
    bound: NDArray[np.float64]
    status: list[str]
    label: NDArray[np.int64]
    seconds: NDArray[np.float64]
    programs: NDArray[np.int64]
    norm: str
    notes: list[str] = field(default_factory=list)

    @property
    def gap(self) -> NDArray[np.float64]:
        """Relative gap ``(distance - bound) / distance`` (0 when optimal)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            g = (self.distance - self.bound) / self.distance
        # No point found: an infinite gap, unless nothing exists (bound inf too: infeasible, gap 0).
        g = np.where(np.isinf(self.distance), np.where(np.isinf(self.bound), 0.0, np.inf), g)
        return np.where(self.distance > 0, g, 0.0)

    def summary(self) -> str:
        """One line: statuses, median distance, time."""
        counts = {s: self.status.count(s) for s in dict.fromkeys(self.status)}
        finite = self.distance[np.isfinite(self.distance)]
        med = f"{np.median(finite):.4g}" if finite.size else "-"
        return (f"exact {self.norm}: {len(self.status)} inputs {counts}; median distance {med}; "
                f"{self.seconds.sum():.1f} s")


def exact_minimal_adversarial(
    model: Any,
    x: ArrayLike,
    y: ArrayLike,
    *,
    norm: str = "l2",
    target: ArrayLike | None = None,
    bounds: tuple[ArrayLike, ArrayLike] = (-np.inf, np.inf),
    time_limit: float | None = None,
    margin: float = DEFAULT_MARGIN,
    mip_rel_gap: float = DEFAULT_GAP,
    progress: bool = False,
) -> ExactResult:
    """Exact minimal adversarial perturbation of a tree ensemble (Kantchelian et al., ICML 2016), by HiGHS.

    Parameters
    ----------
    model
        ``lightgbm.Booster`` / ``LGBMClassifier`` or a scikit-learn ``RandomForestClassifier``,
        ``ExtraTreesClassifier``, ``GradientBoostingClassifier`` or ``DecisionTreeClassifier``.
    x
        Inputs ``(N, n_features)``, one input ``(n_features,)``, or images ``(N, *shape)`` (flattened for the
        model; ``x_adv`` keeps their shape); they are taken as float32, as the models see them.
    y
        Their labels ``(N,)``: positions in the model's ``classes_``.
    norm
        ``"l2"``, ``"linf"`` or ``"l1"``.
    target
        ``None`` (untargeted: any other label) or target labels ``(N,)``.
    bounds
        ``(lower, upper)``, scalars or per-feature arrays: the box the adversarial point must stay in.
    time_limit
        Seconds per input (all its programs together); ``None``: until optimal. At the limit, the best point
        found and the proven lower bound are returned (status ``"time_limit"``).
    margin
        Score margin of a strict win (ties are resolved as the model does; see :class:`.ensemble.Ensemble`).
        A program's optimum is exact among points whose winning score margin is at least this.
    mip_rel_gap
        HiGHS's relative optimality gap (on the objective: squared distance for L2).
    progress
        Show a progress bar over the inputs.

    Returns
    -------
    ExactResult

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from applications.trees import exact_minimal_adversarial
    >>> rng = np.random.default_rng(0)
    >>> xs = rng.random((200, 4)); ys = (xs[:, 0] + xs[:, 1] > 1).astype(int)
    >>> forest = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(xs, ys)
    >>> res = exact_minimal_adversarial(forest, xs[:3], forest.predict(xs[:3]), norm="linf", bounds=(0, 1))
    >>> res.status, bool(np.all(forest.predict(res.x_adv) != forest.predict(xs[:3])))
    (['optimal', 'optimal', 'optimal'], True)
    """
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time_limit must be positive seconds or None, got {time_limit!r}")
    if not margin > 0:
        raise ValueError(f"margin must be positive, got {margin!r}")
    ens = as_ensemble(model)
    xb = np.asarray(x, dtype=np.float64)
    if xb.ndim == 1:
        xb = xb[None]
    shape = xb.shape
    if xb.ndim > 2:  # images (N, H, W) or (N, C, H, W): the models see them flat
        xb = xb.reshape(len(xb), -1)
    if xb.ndim != 2 or xb.shape[1] != ens.n_features:
        raise ValueError(f"x must be (N, {ens.n_features}) for this {ens.source} model, got shape {shape}")
    if not np.all(np.isfinite(xb)):
        raise ValueError("x contains NaN or inf")
    x32 = xb.astype(np.float32)
    n, k = len(x32), ens.n_classes
    lo, hi = flat_bounds(bounds, (ens.n_features,))
    check_inside(x32, lo, hi, "x")
    y_arr = _labels(y, n, k, "y")
    tgt = None if target is None else _labels(target, n, k, "target")
    if tgt is not None and np.any(tgt == y_arr):
        raise ValueError("target equals y for some input; a targeted attack needs another class")
    label_model = as_label_model(model)
    own = np.asarray(label_model(x32))
    parsed = ens.labels(x32)
    if np.any(own != parsed):
        i = int(np.flatnonzero(own != parsed)[0])
        raise RuntimeError(f"the ensemble read from {ens.source} labels input {i} as {parsed[i]}, the model as "
                           f"{own[i]}: the model has a feature the exact solver does not read")

    out = ExactResult(np.full(x32.shape, np.nan, np.float32), np.full(n, np.inf), np.zeros(n), [""] * n,
                      np.full(n, -1, np.int64), np.zeros(n), np.zeros(n, np.int64), norm)
    bar = _bar(progress, n)
    try:
        for i in range(n):
            started = time.perf_counter()
            x0 = x32[i].astype(np.float64)
            adversarial = (own[i] != y_arr[i]) if tgt is None else (own[i] == tgt[i])
            if adversarial:
                out.x_adv[i], out.distance[i], out.bound[i] = x32[i], 0.0, 0.0
                out.status[i], out.label[i] = "misclassified", own[i]
            else:
                _solve_one(ens, label_model, x0, lo, hi, norm, int(y_arr[i]), None if tgt is None else int(tgt[i]),
                           time_limit, margin, mip_rel_gap, out, i)
            out.seconds[i] = time.perf_counter() - started
            if bar is not None:
                bar.update(1)
                bar.set_postfix_str(f"{out.status[i]} {out.distance[i]:.4g}")
    finally:
        if bar is not None:
            bar.close()
    out.x_adv = out.x_adv.reshape(shape)
    return out


def _solve_one(ens: Any, label_model: Any, x0: NDArray[np.float64], lo: NDArray[np.float64], hi: NDArray[np.float64],
               norm: str, y: int, target: int | None, time_limit: float | None, margin: float, gap: float,
               out: ExactResult, i: int) -> None:
    deadline = math.inf if time_limit is None else time.perf_counter() + time_limit
    scores = ens.scores(x0[None])[0]
    if target is None:
        # Most likely classes first: a close one found early cuts the later programs off.
        others = [c for c in np.argsort(scores[y] - scores, kind="stable") if c != y]
        jobs = [(int(c), [y]) for c in others]
    else:
        jobs = [(target, [c for c in range(ens.n_classes) if c != target])]
    best, best_x, best_label = math.inf, None, -1
    bounds: list[float] = []
    timed_out = unverified = False
    for t, rivals in jobs:
        left = deadline - time.perf_counter()
        if left <= 0:
            bounds.append(0.0)  # never looked at: nothing proven
            timed_out = True
            continue
        cut = best
        if norm == "linf" and not math.isfinite(cut):
            # L∞ programs are slow without a cutoff (HIGGS: ~60 s vs ~0.1 s with one): the squared-L2 program's
            # point satisfies the same constraints, so its L∞ distance bounds this program's optimum.
            # Only a point the model labels adversarial may bound it: at a tie the program can return x0 itself
            # (within HiGHS's tolerance of the margin), whose cutoff of 0 would rule this class out.
            warm, warm_label = _verified(ens, label_model, x0, lo, hi, "l2", t, rivals, margin, math.inf, left, gap,
                                         y, target)
            if warm.x is not None and warm_label >= 0:
                cut = float(np.abs(warm.x.astype(np.float64) - x0).max()) * (1 + 1e-9)
            left = max(deadline - time.perf_counter(), 0.01)
        outcome, label = _verified(ens, label_model, x0, lo, hi, norm, t, rivals, margin, cut, left, gap, y, target)
        out.programs[i] += 1
        if outcome.status == "infeasible":
            bounds.append(cut)  # nothing closer than the cutoff (inf: no adversarial point of this class at all)
            continue
        timed_out |= outcome.status == "time_limit"
        bounds.append(outcome.bound)
        if outcome.x is None:
            continue
        if label < 0:
            unverified = True
            continue
        if outcome.distance < best:
            best, best_x, best_label = outcome.distance, outcome.x, label
    lower = min(bounds) if bounds else 0.0
    if best_x is not None:
        out.x_adv[i], out.distance[i], out.label[i] = best_x, best, best_label
        out.bound[i] = min(lower, best)
        out.status[i] = "time_limit" if timed_out else "optimal"
    else:
        out.bound[i] = lower
        out.status[i] = "time_limit" if timed_out else ("unverified" if unverified else "infeasible")


def _verified(ens: Any, label_model: Any, x0: NDArray[np.float64], lo: NDArray[np.float64], hi: NDArray[np.float64],
              norm: str, t: int, rivals: list[int], margin: float, cutoff: float, left: float, gap: float, y: int,
              target: int | None) -> tuple[Outcome, int]:
    """Solve one program; label its point with the model; on disagreement retry with a larger margin."""
    started = time.perf_counter()
    outcome = solve_program(ens, x0, lo, hi, norm, t, rivals, margin=margin, cutoff=cutoff, time_limit=left,
                            mip_rel_gap=gap)
    first_bound = outcome.bound  # a larger margin shrinks the program: only the first bound is valid here
    for attempt in range(MARGIN_RETRIES + 1):
        outcome.bound = min(outcome.bound, first_bound)
        if outcome.x is None:
            return outcome, -1
        label = int(np.asarray(label_model(outcome.x[None]))[0])
        if (label != y) if target is None else (label == target):
            return outcome, label
        if attempt == MARGIN_RETRIES:
            break
        margin *= 100.0
        outcome = solve_program(ens, x0, lo, hi, norm, t, rivals, margin=margin, cutoff=cutoff,
                                time_limit=max(left - (time.perf_counter() - started), 0.01), mip_rel_gap=gap)
    return outcome, -1


def _labels(v: ArrayLike, n: int, k: int, name: str) -> NDArray[np.int64]:
    arr = np.asarray(v).reshape(-1)
    if arr.shape != (n,) or not np.all(arr == np.round(arr)) or arr.min(initial=0) < 0 or arr.max(initial=0) >= k:
        raise ValueError(f"{name} must hold {n} class indices in [0, {k}), got {np.asarray(v)!r}")
    return arr.astype(np.int64)


def _bar(enabled: bool, total: int):  # type: ignore[no-untyped-def]
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="input", desc="exact (MILP)")
