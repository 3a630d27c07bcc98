"""The L∞ study's peers: RayS's reference code through the hard-capped label view, and the page's RayS columns."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from benchmarks.studies.linf import build_parser, eps_for, page
from benchmarks.studies.linf_peers import rays_dir, run_rays

W = np.random.default_rng(3).normal(size=64)
MARGIN = 0.5


def two_class(x: NDArray[Any]) -> NDArray[np.int64]:
    """Class 1 past the plane w·(x − 0.5) = ``MARGIN``: on 1×8×8 inputs, the nearest L∞ point is at MARGIN/‖w‖₁."""
    return (np.asarray(x, dtype=np.float64).reshape(len(x), -1) @ W - W.sum() * 0.5 > MARGIN).astype(np.int64)


@pytest.mark.skipif(not (rays_dir() / "RayS_Single.py").exists(),
                    reason="RayS's reference code (shared/peers/RayS) is missing; set ZEROOPT_SHARED")
def test_rays_through_the_capped_view_keeps_the_cap_and_a_decreasing_best() -> None:
    import torch

    cuda = torch.Tensor.cuda
    x0 = np.full((1, 8, 8), 0.5, dtype=np.float32)
    run = run_rays(two_class, x0, 0, 60, 2, (0.0, 1.0), seed=0)
    assert torch.Tensor.cuda is cuda  # the CPU shim is undone
    assert run.spent == 60  # RayS goes on to its query_limit; its binary search is cut there
    dists = [d for _, d in run.trace]
    queries = [q for q, _ in run.trace]
    assert len(dists) > 2 and all(a > b for a, b in zip(dists, dists[1:], strict=False))
    assert all(a < b for a, b in zip(queries, queries[1:], strict=False)) and queries[-1] <= 60
    at = [run.at(b) for b in range(61)]
    assert all(a >= b for a, b in zip(at, at[1:], strict=False)) and np.isfinite(at[-1])
    assert at[-1] >= MARGIN / np.abs(W).sum() - 1e-6  # no point nearer than the exact minimum
    assert run.queries_to(at[-1]) == queries[-1] and run.queries_to(at[-1] / 2) is None


def _rows(peers: list[str]) -> list[dict[str, Any]]:
    labels = {"ours": "ours (sign-growing, L∞)", "rays": "RayS (reference code)", "hsj": "ART HopSkipJump (norm=inf)"}
    values = {("ours", 250): [0.25, 0.8, np.inf], ("ours", 500): [0.2, 0.3, np.inf],
              ("peer", 250): [0.2, 0.5, 0.6], ("peer", 500): [0.1, 0.25, 0.3]}
    first = [120, 300, 480]  # a peer's first query at ≤ ε, per input
    rows = []
    for budget in (250, 500):
        for key in ["ours", *peers]:
            v = values["ours" if key == "ours" else "peer", budget]
            ours_first = [90, 410 if budget >= 500 else None, None]  # ours' trace: its first query at ≤ ε
            q = ours_first if key == "ours" else [f if f <= budget else None for f in first]
            rows.append({"experiment": "mnist-untargeted", "budget": budget, "key": key, "eps": 0.3,
                         "attack": labels[key], "values": v, "queries_to_eps": q})
    return rows


def test_the_page_lists_rays_columns_and_its_protocol() -> None:
    lines = page(_rows(["rays", "hsj"]), "python -m benchmarks.studies.linf --n 3")
    assert lines[0].startswith("# The L∞ attack beside RayS") and lines[2].startswith("Command: `python -m")
    text = "\n".join(lines)
    for column in ("RayS median L∞", "ours / RayS per input", "HSJ median L∞", "success ours / RayS / HSJ",
                   "success at ε ours / RayS / HSJ"):
        assert column in text
    row = next(line for line in lines if line.startswith("| mnist-untargeted | 500 |"))
    # medians 0.3 / 0.25; per-input ratios 2, 1.2, ∞ (median 2); success 2 / 3 and 3 / 3, at ε as well
    assert row == ("| mnist-untargeted | 500 | 0.3000 | 0.2500 | 0.2500 | 2.000 | 2.000 | 67% / 100% / 100% | "
                   "67% / 100% / 100% |")
    # ours' run with the largest budget reached ε at query 90 on input 0 and 410 on input 1; the peers' 120, 300, 480
    assert "| mnist-untargeted | 0.3 | ours (sign-growing, L∞) | 67% | 250 | 250 |" in text
    assert "| mnist-untargeted | 0.3 | RayS (reference code) | 100% | 300 | 300 |" in text
    only = "\n".join(page(_rows(["rays"]), "c"))
    assert "RayS median L∞" in only and "HSJ" not in only


def test_ours_queries_to_eps_are_read_off_its_trace() -> None:
    from benchmarks.studies.linf import _first_query_within

    trace = np.array([[12, 0.5], [40, 0.31], [77, 0.29], [130, 0.2]])  # (queries, best L∞) at each improvement
    assert _first_query_within(trace, 0.3) == 77 and _first_query_within(trace, 0.5) == 12
    assert _first_query_within(trace, 0.1) is None and _first_query_within(trace, None) is None


def test_the_peers_and_eps_arguments() -> None:
    a = build_parser().parse_args(["--peers", "rays", "--eps", "cifar=8/255,gbdt=0.1"])
    assert a.peers == ["rays"] and a.eps["cifar"] == pytest.approx(8 / 255) and a.eps["mnist"] == 0.3
    assert eps_for("gbdt-mnist", a.eps) == 0.1 and eps_for("mnist-targeted", a.eps) == 0.3
    assert build_parser().parse_args([]).peers == ["rays", "hsj", "fb-hsj"]
    assert build_parser().parse_args([]).budgets == "250,500,1000,2000"
    for bad in (["--peers", "rays,boundary"], ["--eps", "mnist"]):
        with pytest.raises(SystemExit):
            build_parser().parse_args(bad)
