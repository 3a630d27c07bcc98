"""One mixed-integer program: the closest point of a box where class ``t`` beats given classes (Kantchelian et al.).

Kantchelian, Tygar and Joseph, "Evasion and Hardening of Tree Ensemble Classifiers", ICML 2016. Each feature j
matters only through the threshold interval it falls in. With its distinct thresholds a_0 < ... < a_{M-1}
(float32, "left iff x <= a"), binary predicates p_{jm} = [x_j <= a_m] are monotone in m; a point of interval k
costs δ_{jk} = its distance to x0_j, so a separable distance is linear in p: Σ_k δ_{jk} (p_{jk} - p_{j,k-1}).
Squared L2 uses δ², L1 uses δ, and L∞ bounds every feature's δ by one variable s. Leaf variables l ∈ [0, 1]
sum to 1 per tree, and each split's left leaves sum to at most p, its right leaves to at most 1 - p, which
forces the leaf that the predicates reach. Class scores are then linear in l.

The program is solved by HiGHS through :func:`scipy.optimize.milp`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from .ensemble import Ensemble, float32_down, float32_up

__all__ = ["NORMS", "Outcome", "solve_program"]

NORMS = ("l2", "linf", "l1")
OBJECTIVE_SCALE = 1e3  # largest objective coefficient after scaling: HiGHS's absolute gap (1e-6) stays negligible
#: HiGHS's MIP presolve stays off: with it, HiGHS 1.12 (scipy 1.17.1's) returned a point 0.719 from x0 as optimal,
#: dual bound included, on a 3-tree LightGBM model whose program has a point 0.406 away (the case is an example in
#: tests/test_trees_exact.py; without presolve it finds 0.406). Presolve bugs of this kind are known upstream
#: (suboptimal points reported optimal, fixed release by release), and an exact solver must not trust one. The cost,
#: measured on the suite's models, each input with and without it in turn: level on HIGGS (4 inputs, 1.7-10 s
#: either way), up to 2.5x on GBDT MNIST (3 inputs, 4-15 s against 4-6 s). Without it, the suite's stored minima
#: of the first 20 inputs of both tree experiments came out the same to 1e-9.
PRESOLVE = False


@dataclass
class Outcome:
    """What one program gave.

    ``status``: ``"optimal"``, ``"time_limit"`` (``x`` is the best point found, or ``None``), ``"infeasible"``
    (no point of the box, or none under the cutoff). ``distance`` is the norm of ``x - x0`` computed from the
    point; ``bound`` a proven lower bound on the program's optimum.
    """

    status: str
    x: NDArray[np.float32] | None
    distance: float
    bound: float
    seconds: float


def _intervals(a: NDArray[np.float32]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Closed float32 intervals [L_k, U_k], k = 0..M, between the sorted thresholds ``a``."""
    up = np.nextafter(a, np.float32(np.inf)).astype(np.float64)
    lower = np.concatenate([[-np.inf], up])
    upper = np.concatenate([a.astype(np.float64), [np.inf]])
    return lower, upper


def _cost(delta: NDArray[np.float64], norm: str) -> NDArray[np.float64]:
    return delta**2 if norm == "l2" else delta


def _distance(d: NDArray[np.float64], norm: str) -> float:
    if norm == "l2":
        return float(np.linalg.norm(d))
    if norm == "l1":
        return float(np.abs(d).sum())
    return float(np.abs(d).max(initial=0.0))


def solve_program(
    ens: Ensemble,
    x0: NDArray[np.float64],
    lo: NDArray[np.float64],
    hi: NDArray[np.float64],
    norm: str,
    target: int,
    rivals: list[int],
    *,
    margin: float,
    cutoff: float = math.inf,
    time_limit: float = math.inf,
    mip_rel_gap: float = 1e-6,
) -> Outcome:
    """Minimal ``norm`` distance from ``x0`` to a point of ``[lo, hi]`` where ``target`` beats every rival.

    Parameters
    ----------
    ens : Ensemble
    x0 : numpy.ndarray
        Flat input (float32 values in float64).
    lo, hi : numpy.ndarray
        Flat box.
    norm : str
        ``"l2"``, ``"linf"`` or ``"l1"``.
    target : int
        The class that must win.
    rivals : list of int
        Classes it must beat: scores ``F_t - F_c >= margin`` where a tie goes to ``c``, ``>= 0`` otherwise.
        (Untargeted: one program per target with the original class as the only rival.)
    margin : float
        Score margin for a strict win (the solver's feasibility tolerance is 1e-7).
    cutoff : float
        Only points closer than this are wanted (prunes a class that cannot beat the best so far).
    time_limit : float
        Seconds for HiGHS.
    mip_rel_gap : float
        HiGHS's relative optimality gap.
    """
    started = time.perf_counter()
    # Trees that move the score differences at all.
    diffs = []
    for tree in ens.trees:
        leaves = tree.leaves
        d = np.stack([tree.value[leaves, target] - tree.value[leaves, c] for c in rivals])
        if np.any(d != 0):
            diffs.append((tree, leaves, d))
    thresholds: dict[int, list[NDArray[np.float32]]] = {}
    for tree, _, _ in diffs:
        inner = tree.left >= 0
        for f in np.unique(tree.feature[inner]):
            thresholds.setdefault(int(f), []).append(tree.threshold[inner & (tree.feature == f)])
    feats = sorted(thresholds)
    lo32 = float32_up(lo).astype(np.float64)
    hi32 = float32_down(hi).astype(np.float64)

    # ---- predicate variables p_{jm}, objective and L∞ rows
    col = 0
    p_start: dict[int, int] = {}
    a_of: dict[int, NDArray[np.float32]] = {}
    c_list, lb_list, ub_list = [], [], []
    linf_rows: list[tuple[NDArray[np.int64], NDArray[np.float64], float]] = []
    constant = 0.0
    feasible_cost_max = 0.0
    for j in feats:
        a = np.unique(np.concatenate(thresholds[j]))
        a_of[j], p_start[j] = a, col
        lower, upper = _intervals(a)
        ok = (upper >= lo32[j]) & (lower <= hi32[j])
        delta = np.maximum.reduce([lower - x0[j], np.zeros_like(lower), x0[j] - upper])
        cost = _cost(delta, norm)
        cost[~ok] = 0.0  # excluded by the bounds of p below; keep the coefficients finite
        feasible_cost_max = max(feasible_cost_max, float(cost.max()))
        kmin, kmax = int(np.argmax(ok)), len(ok) - 1 - int(np.argmax(ok[::-1]))
        m = np.arange(len(a))
        lb_p = (m >= kmax).astype(float)  # p_m = [k <= m]: 1 for m >= kmax, 0 for m < kmin
        ub_p = (m >= kmin).astype(float)
        if math.isfinite(cutoff):
            # Crossing a threshold costs at least that one coordinate's move: beyond the cutoff, never.
            k0 = int(np.searchsorted(a, x0[j], side="left"))
            crossing = np.where(m < k0, delta[:-1], delta[1:])
            too_far = crossing > cutoff
            ub_p[too_far & (m < k0)] = 0.0
            lb_p[too_far & (m >= k0)] = 1.0
        lb_list.append(lb_p)
        ub_list.append(ub_p)
        coef = cost[:-1] - cost[1:]
        if norm == "linf":
            linf_rows.append((col + m, coef, float(cost[-1])))
            c_list.append(np.zeros(len(a)))
        else:
            c_list.append(coef)
            constant += float(cost[-1])
        col += len(a)
    n_p = col

    # ---- monotone predicates: p_m <= p_{m+1} (x <= a_m implies x <= a_{m+1})
    rows_i, rows_j, rows_v, row_lo, row_hi = [], [], [], [], []
    r = 0
    for j in feats:
        m = len(a_of[j]) - 1
        if m <= 0:
            continue
        first = p_start[j] + np.arange(m)
        rows_i.append(np.repeat(r + np.arange(m), 2))
        rows_j.append(np.column_stack([first, first + 1]).ravel())
        rows_v.append(np.tile([1.0, -1.0], m))
        row_lo.append(np.full(m, -np.inf)), row_hi.append(np.zeros(m))
        r += m

    # ---- leaf variables and structure rows
    leaf_start = []
    score_coef = []
    for tree, leaves, d in diffs:
        leaf_start.append(col)
        n_leaf = len(leaves)
        # Σ leaves = 1
        rows_i.append(np.full(n_leaf, r)), rows_j.append(col + np.arange(n_leaf)), rows_v.append(np.ones(n_leaf))
        row_lo.append([1.0]), row_hi.append([1.0])
        r += 1
        inner = np.flatnonzero(tree.left >= 0)
        if len(inner):
            pos_of = np.full(len(tree.left), -1, dtype=np.int64)
            pos_of[inner] = np.arange(len(inner))
            leaf_pos, anc, side = tree.paths()
            # Row 2q: left leaves of inner node q minus p <= 0; row 2q+1: right leaves plus p <= 1.
            base_row = r + 2 * pos_of[anc] + side
            rows_i.append(base_row), rows_j.append(col + leaf_pos), rows_v.append(np.ones(len(leaf_pos)))
            f = tree.feature[inner]
            pcol = np.array([p_start[int(j)] + int(np.searchsorted(a_of[int(j)], t))
                             for j, t in zip(f, tree.threshold[inner], strict=True)], dtype=np.int64)
            rows_i.append(r + 2 * np.arange(len(inner))), rows_j.append(pcol), rows_v.append(-np.ones(len(inner)))
            rows_i.append(r + 2 * np.arange(len(inner)) + 1), rows_j.append(pcol), rows_v.append(np.ones(len(inner)))
            row_lo.append(np.full(2 * len(inner), -np.inf))
            row_hi.append(np.tile([0.0, 1.0], len(inner)))
            r += 2 * len(inner)
        score_coef.append((col + np.arange(n_leaf), d))
        col += n_leaf
    n_var = col + (1 if norm == "linf" else 0)
    s_col = col

    # ---- score rows: F_t - F_c >= base_c - base_t (+ margin when a tie goes to c)
    for q, c in enumerate(rivals):
        for cols, d in score_coef:
            rows_i.append(np.full(len(cols), r)), rows_j.append(cols), rows_v.append(d[q])
        need = ens.base[c] - ens.base[target] + (margin if ens.beats_strictly(target, c) else 0.0)
        row_lo.append([need]), row_hi.append([np.inf])
        r += 1

    # ---- objective, L∞ rows
    c = np.zeros(n_var)
    if n_p:
        c[:n_p] = np.concatenate(c_list)
    if norm == "linf":
        # s is the L∞ distance times `unit`, so that distances far below HiGHS's feasibility tolerance (1e-7)
        # still bind their rows.
        unit = OBJECTIVE_SCALE / feasible_cost_max if feasible_cost_max > 0 else 1.0
        c[s_col] = 1.0 / unit
        for cols, coef, last in linf_rows:
            rows_i.append(np.full(len(cols) + 1, r)), rows_j.append(np.append(cols, s_col))
            rows_v.append(np.append(coef * unit, -1.0))
            row_lo.append([-np.inf]), row_hi.append([-last * unit])
            r += 1
        constant = 0.0
    lb = np.zeros(n_var)
    ub = np.ones(n_var)
    if n_p:
        lb[:n_p], ub[:n_p] = np.concatenate(lb_list), np.concatenate(ub_list)
    if norm == "linf":
        ub[s_col] = np.inf
    a_mat = sparse.csr_array((np.concatenate(rows_v) if rows_v else [],
                              (np.concatenate(rows_i) if rows_i else [], np.concatenate(rows_j) if rows_j else [])),
                             shape=(r, n_var))
    r_lo = np.concatenate(row_lo) if row_lo else np.zeros(0)
    r_hi = np.concatenate(row_hi) if row_hi else np.zeros(0)

    # ---- flip the predicates above x0: u_m = p_m below x0's interval, u_m = 1 - p_m from it on, so u = 0 is
    # x0 and every objective coefficient is >= 0 with no constant. (A constant as large as the whole box would
    # drown the optimum in HiGHS's relative gap.)
    offset = np.zeros(n_var)
    sign = np.ones(n_var)
    for j in feats:
        k0 = int(np.searchsorted(a_of[j], x0[j], side="left"))
        offset[p_start[j] + k0 : p_start[j] + len(a_of[j])] = 1.0
        sign[p_start[j] + k0 : p_start[j] + len(a_of[j])] = -1.0
    shift = a_mat @ offset
    r_lo, r_hi = r_lo - shift, r_hi - shift
    a_mat = (a_mat @ sparse.diags_array(sign)).tocsr()
    constant += float(c @ offset)
    c = c * sign
    lb, ub = np.where(sign < 0, 1 - ub, lb), np.where(sign < 0, 1 - lb, ub)
    integrality = np.zeros(n_var)
    integrality[:n_p] = 1
    scale = OBJECTIVE_SCALE / feasible_cost_max if feasible_cost_max > 0 else 1.0
    x_best: NDArray[np.float32] | None = None
    for _ in range(2):
        outcome = _run(c, constant, scale, a_mat, r_lo, r_hi, lb, ub, integrality, norm, cutoff, time_limit - (
            time.perf_counter() - started), mip_rel_gap)
        status, u, dual = outcome
        if u is None:
            break
        p_val = offset + sign * u
        x = x0.astype(np.float32).copy()
        for j in feats:
            pj = p_val[p_start[j] : p_start[j] + len(a_of[j])] > 0.5
            k = int(np.argmax(pj)) if pj.any() else len(pj)
            lower, upper = _intervals(a_of[j])
            x[j] = np.float32(min(max(x0[j], lower[k]), upper[k]))
        x_best = x
        value = float(c @ u) + constant  # the program's own objective at its point, unscaled
        # HiGHS also stops at an absolute gap of 1e-6 on the scaled objective: when the optimum is tiny against
        # the largest coefficient, solve again with the objective scaled to the optimum, cut off at this point.
        if status != "optimal" or dual is None or value <= 0 or (value - dual / scale) <= mip_rel_gap * value:
            break
        scale = OBJECTIVE_SCALE / value
        cutoff = min(cutoff, _distance(x.astype(np.float64) - x0, norm) * (1 + 1e-9))
    seconds = time.perf_counter() - started

    def to_distance(objective: float) -> float:
        value = objective + constant
        return math.sqrt(max(value, 0.0)) if norm == "l2" else max(value, 0.0)

    if status == "infeasible":
        if x_best is not None:  # the re-solve under its own point's cutoff: keep the first answer
            d = _distance(x_best.astype(np.float64) - x0, norm)
            return Outcome("optimal", x_best, d, d, seconds)
        return Outcome("infeasible", None, math.inf, math.inf, seconds)
    bound = to_distance(dual / scale) if dual is not None and np.isfinite(dual) else 0.0
    if x_best is None:
        return Outcome("time_limit", None, math.inf, bound, seconds)
    distance = _distance(x_best.astype(np.float64) - x0, norm)
    return Outcome(status, x_best, distance, min(bound, distance), seconds)


def _run(c: NDArray[np.float64], constant: float, scale: float, a_mat: sparse.csr_array, r_lo: NDArray[np.float64],
         r_hi: NDArray[np.float64], lb: NDArray[np.float64], ub: NDArray[np.float64], integrality: NDArray[np.float64],
         norm: str, cutoff: float, time_limit: float, mip_rel_gap: float
         ) -> tuple[str, NDArray[np.float64] | None, float | None]:
    """One HiGHS call: (status, solution u or None, dual bound on the scaled objective without constant)."""
    rows, lo_rows, hi_rows = a_mat, r_lo, r_hi
    if math.isfinite(cutoff):
        limit = (cutoff**2 if norm == "l2" else cutoff) - constant
        # In the objective's scaled units, for the same reason as the L∞ rows.
        rows = sparse.vstack([a_mat, sparse.csr_array((c * scale)[None])]).tocsr()
        lo_rows, hi_rows = np.append(r_lo, -np.inf), np.append(r_hi, limit * scale)
    constraints = [LinearConstraint(rows, lo_rows, hi_rows)] if rows.shape[0] else []
    options: dict[str, object] = {"disp": False, "mip_rel_gap": mip_rel_gap, "presolve": PRESOLVE}
    if math.isfinite(time_limit):
        options["time_limit"] = max(float(time_limit), 0.01)
    res = milp(c * scale, integrality=integrality, bounds=Bounds(lb, ub), constraints=constraints, options=options)
    dual = getattr(res, "mip_dual_bound", None)
    dual = float(dual) if dual is not None and np.isfinite(dual) else None
    if res.status == 2:
        return "infeasible", None, dual
    if res.status == 0 and res.x is not None:
        return "optimal", res.x, dual if dual is not None else float(res.fun)
    if res.status == 1:
        return "time_limit", res.x, dual
    raise RuntimeError(f"HiGHS failed on the exact program: status {res.status}, {res.message}")
