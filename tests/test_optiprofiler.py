"""The OptiProfiler entry point: its solvers keep OptiProfiler's budget and return their best point; a truncated
value's stated precision bounds the rounding; a tiny benchmark writes its page (where optiprofiler is installed)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.optiprofiler import Solver, as_solver, truncation_precision
from benchmarks.optiprofiler.__main__ import main


def _round(value: float, digits: int) -> float:
    """``value`` to ``digits`` significant digits, as OptiProfiler's ``truncated`` feature rounds it."""
    return float(f"{value:.{digits - 1}e}")


def test_the_stated_precision_bounds_the_rounding() -> None:
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.standard_normal(500) * 10.0 ** rng.integers(-12, 12, 500), [0.0, 9.9999996, -1e-300]])
    for digits in (3, 6, 9):
        bound = truncation_precision(digits)
        for v in values:
            answer = _round(float(v), digits)
            assert abs(answer - v) <= bound(answer) * (1 + 1e-12) + 1e-300
    assert truncation_precision(6, perturbed=True)(1.0) == pytest.approx(3 * truncation_precision(6)(1.0))


@pytest.mark.parametrize("entry", ["coordinate+qn", "coordinate+qn+noise", "rgf/one-run", "Powell"])
def test_a_solver_keeps_the_budget_and_returns_its_best_point(entry: str) -> None:
    seen: list[tuple[float, np.ndarray]] = []

    def fun(x: np.ndarray) -> float:
        value = float(np.sum((x - 0.3) ** 2) + 0.1 * np.sum(np.cos(7 * x)))
        seen.append((value, np.array(x, dtype=float)))
        return value

    solver = as_solver(entry, 20, feature="truncated")
    x = solver(fun, np.zeros(3))
    assert 0 < len(seen) <= 20 * 3
    best = min(seen, key=lambda p: p[0])
    assert np.array_equal(x, best[1])
    if entry.startswith("coordinate+qn"):  # with restarts, a zeroopt entry spends OptiProfiler's whole budget
        assert len(seen) == 60
    again: list[tuple[float, np.ndarray]] = seen[:]
    seen.clear()
    assert np.array_equal(Solver(entry, 20, solver.precision)(fun, np.zeros(3)), x) and len(seen) == len(again)


def test_arguments_are_checked_before_any_run() -> None:
    with pytest.raises(SystemExit, match="unknown"):
        main(["--solvers", "no-such-solver"])
    with pytest.raises(SystemExit, match="features"):
        main(["--features", "plain,sideways"])


def test_a_tiny_benchmark_writes_its_page(tmp_path) -> None:  # noqa: ANN001
    pytest.importorskip("optiprofiler")
    page = tmp_path / "page.md"
    main(["--solvers", "coordinate+qn,coordinate+qn+noise", "--peers", "Powell", "--features", "plain,truncated",
          "--problems", "BEALE", "--max-eval-factor", "20", "--page", str(page)])
    text = page.read_text()
    assert "| coordinate+qn+noise |" in text and "| solver | plain | truncated |" in text
    png = page.with_suffix(".png")
    assert png.exists() and png.stat().st_size < 150_000
