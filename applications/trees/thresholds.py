"""LightGBM's ±1e-35 split thresholds, and a copy of a model with them moved where the data put them.

LightGBM places a bin edge at ±``kZeroThreshold`` (1e-35) next to 0, so on data with exact zeros (MNIST's
background pixels) a split ``x <= 1e-35`` separates 0 from every positive value and a perturbation of ~1e-35
crosses it. Moving such a threshold to the midpoint between 0 and the nearest non-zero training value of its
feature on that side keeps every training point on the same side of every split: the copy is the same
classifier on the training data, and its minimal adversarial perturbations are no longer ~1e-35.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["move_zero_thresholds", "zero_threshold_count"]

ZERO_EPS = 1e-30  # |t| below this (and > 0) is LightGBM's zero threshold


def zero_threshold_count(booster: Any, eps: float = ZERO_EPS) -> tuple[int, int]:
    """``(splits with 0 < |threshold| < eps, all splits)`` of a ``lightgbm.Booster``."""
    near = total = 0
    for t in _threshold_lines(booster.model_to_string()):
        total += len(t)
        near += int(np.count_nonzero((np.abs(t) > 0) & (np.abs(t) < eps)))
    return near, total


def _threshold_lines(text: str) -> list[np.ndarray]:
    return [np.array(m.group(1).split(), dtype=np.float64) for m in re.finditer(r"^threshold=(.*)$", text, re.M)]


def move_zero_thresholds(booster: Any, x_train: ArrayLike, eps: float = ZERO_EPS) -> tuple[Any, dict[str, int]]:
    """A copy of ``booster`` whose ±1e-35 thresholds sit halfway between 0 and the nearest training value.

    Parameters
    ----------
    booster
        A ``lightgbm.Booster`` (or ``LGBMClassifier``, whose ``booster_`` is used).
    x_train
        The training inputs ``(n, n_features)`` (any data whose labels the copy must keep).
    eps
        Thresholds with ``0 < |t| < eps`` are moved.

    Returns
    -------
    (booster, report)
        The new ``lightgbm.Booster`` and counts: ``moved``, ``kept`` (no non-zero training value on that side:
        nothing to move toward), ``splits``. Check with the data you care about that the labels agree (the
        tests do, on the training data).

    Examples
    --------
    >>> import lightgbm as lgb, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = np.round(rng.random((500, 4)) * 255) / 255 * (rng.random((500, 4)) > 0.5)  # pixels: many exact 0s
    >>> y = (x[:, 0] + x[:, 1] > 0.5).astype(int)
    >>> b = lgb.train({"objective": "binary", "verbose": -1, "num_leaves": 8}, lgb.Dataset(x, y), 5)
    >>> moved, report = move_zero_thresholds(b, x)
    >>> same = bool(np.all((b.predict(x) > 0.5) == (moved.predict(x) > 0.5)))
    >>> zero_threshold_count(b)[0] > 0, report["moved"] > 0, zero_threshold_count(moved)[0], same
    (True, True, 0, True)
    """
    import lightgbm as lgb

    booster = getattr(booster, "booster_", booster)
    x = np.asarray(x_train, dtype=np.float32).astype(np.float64)
    pos = np.where(x > 0, x, np.inf).min(axis=0)  # smallest positive value of each feature
    neg = np.where(x < 0, x, -np.inf).max(axis=0)  # largest negative value
    text = booster.model_to_string()
    report = {"moved": 0, "kept": 0, "splits": 0}
    lines = text.split("\n")
    feature_line: list[int] | None = None
    for n, line in enumerate(lines):
        if line.startswith("split_feature="):
            feature_line = [int(v) for v in line.split("=", 1)[1].split()]
        elif line.startswith("threshold=") and feature_line is not None:
            values = line.split("=", 1)[1].split()
            report["splits"] += len(values)
            for q, v in enumerate(values):
                t = float(v)
                if not 0 < abs(t) < eps:
                    continue
                target = pos[feature_line[q]] if t > 0 else neg[feature_line[q]]
                if not np.isfinite(target):
                    report["kept"] += 1
                    continue
                values[q] = repr(float(target) / 2)
                report["moved"] += 1
            lines[n] = "threshold=" + " ".join(values)
            feature_line = None
    # The header's tree_sizes gives each tree's byte length, which the new thresholds change: without it,
    # LightGBM parses the trees one after the other.
    lines = [line for line in lines if not line.startswith("tree_sizes=")]
    return lgb.Booster(model_str="\n".join(lines)), report
