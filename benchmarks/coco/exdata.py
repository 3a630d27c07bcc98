"""COCO's exdata read back: each run's precision (best noise-free f − f_opt) against evaluations, and ECDFs.

A solver's folder holds, per function and dimension, a ``.dat`` file that COCO's observer writes a block of per run
(a ``%`` header line, then ``evaluations … best-noise-free-f-minus-fopt …`` rows, each where the precision crossed
one of COCO's logging targets). The ECDF here is COCO's runtime ECDF: the share of (run, target) pairs solved
within a budget, over :data:`TARGETS` (51 targets 10² … 10⁻⁸, as ``cocopp``'s); its area is the mean over
log10(evaluations / d) from 0 to log10(budget multiplier).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

#: COCO's ECDF targets on f − f_opt: 51, log-spaced from 10² down to 10⁻⁸.
TARGETS = np.logspace(2, -8, 51)
#: Points per decade of the log-spaced budget grid the ECDF and its area are read on.
GRID_PER_DECADE = 50
#: BBOB's function groups (COCO's names), by function number; bbob-largescale shares them.
GROUPS = {
    "separable f1-5": range(1, 6),
    "moderate f6-9": range(6, 10),
    "ill-conditioned f10-14": range(10, 15),
    "multimodal adequate f15-19": range(15, 20),
    "multimodal weak f20-24": range(20, 25),
}
_DAT = re.compile(r"bbobexp_f(\d+)_DIM(\d+)\.dat$")

Trace = list[tuple[int, float]]  # (evaluations, best precision so far) at each logged improvement


def read_folder(folder: Path) -> dict[tuple[int, int], list[Trace]]:
    """Every run in one solver's exdata folder: ``{(function, dimension): [trace per run, in run order]}``."""
    runs: dict[tuple[int, int], list[Trace]] = {}
    for dat in sorted(folder.rglob("*.dat")):
        m = _DAT.search(dat.name)
        if m is None:
            continue
        blocks: list[Trace] = []
        for line in dat.read_text().splitlines():
            if line.startswith("%"):
                blocks.append([])
            elif line.strip() and blocks:
                cols = line.split()
                blocks[-1].append((int(cols[0]), float(cols[2])))
        runs.setdefault((int(m.group(1)), int(m.group(2))), []).extend(blocks)
    return runs


def hitting_times(trace: Trace, targets: NDArray[np.float64] = TARGETS) -> NDArray[np.float64]:
    """The evaluations at which ``trace`` first reached each target (inf where it never did)."""
    out = np.full(len(targets), np.inf)
    for evals, precision in trace:
        newly = (precision <= targets) & np.isinf(out)
        out[newly] = evals
    return out


def ecdf(traces: Iterable[tuple[Trace, int]], multiplier: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The runtime ECDF of ``traces`` (each with its dimension): budgets in evaluations / d on a log grid from 1
    to ``multiplier``, and the share of (run, target) pairs solved within each."""
    grid = np.logspace(0, np.log10(multiplier), max(2, int(GRID_PER_DECADE * np.log10(multiplier)) + 1))
    times = [hitting_times(t) / d for t, d in traces]
    if not times:
        return grid, np.zeros_like(grid)
    hits = np.concatenate(times)
    return grid, np.array([(hits <= b).mean() for b in grid])


def area(traces: Sequence[tuple[Trace, int]], multiplier: int) -> float:
    """The ECDF's mean over log10(evaluations / d) in [0, log10(multiplier)] (1: every target at d evaluations)."""
    grid, share = ecdf(traces, multiplier)
    x = np.log10(grid)
    return float(np.sum((share[1:] + share[:-1]) / 2 * np.diff(x)) / (x[-1] - x[0]))


def at_budget(traces: Sequence[tuple[Trace, int]], multiplier: int) -> float:
    """The share of (run, target) pairs solved within the whole budget."""
    return float(ecdf(traces, multiplier)[1][-1])


def group_traces(runs: dict[tuple[int, int], list[Trace]], functions: Iterable[int]) -> list[tuple[Trace, int]]:
    """The runs on ``functions`` (every dimension), each with its dimension."""
    wanted = set(functions)
    return [(t, d) for (f, d), traces in sorted(runs.items()) if f in wanted for t in traces]
