"""A tree ensemble as plain arrays: the common form of LightGBM and scikit-learn models for the exact solver.

Every model is read into the same picture: K class scores, each the sum of a constant and of one leaf value
per tree (a tree's leaf holds a vector of K contributions: LightGBM's multiclass trees touch one class only,
a random forest's leaves hold class fractions), and the label is the argmax of the scores with a stated tie
rule. A binary model with one raw score F becomes the two scores ``(0, F)``.

Split thresholds are stored as **float32** values with the rule "go left iff x <= t": both LightGBM and
scikit-learn compare the float32 input (promoted to double) with a double threshold, and on float32 inputs
``x <= t`` is the same as ``x <= t32`` where ``t32`` is the largest float32 not above ``t``. With float32
thresholds every threshold interval ``(t_k, t_{k+1}]`` is a closed float32 interval
``[next32(t_k), t_{k+1}]``, so the exact solver's optimum is a float32 point that the model labels exactly as
the program says — no nudging past a threshold can be off by a rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["Ensemble", "Tree", "float32_down", "float32_up"]


def float32_down(t: NDArray[np.float64] | float) -> NDArray[np.float32]:
    """Largest float32 value ``<= t`` (elementwise; ``±inf`` kept)."""
    t = np.asarray(t, dtype=np.float64)
    f = t.astype(np.float32)
    over = f.astype(np.float64) > t
    return np.where(over, np.nextafter(f, np.float32(-np.inf)), f).astype(np.float32)


def float32_up(t: NDArray[np.float64] | float) -> NDArray[np.float32]:
    """Smallest float32 value ``>= t`` (elementwise)."""
    t = np.asarray(t, dtype=np.float64)
    f = t.astype(np.float32)
    under = f.astype(np.float64) < t
    return np.where(under, np.nextafter(f, np.float32(np.inf)), f).astype(np.float32)


@dataclass
class Tree:
    """One binary decision tree in array form (the layout of scikit-learn's ``tree_``).

    Attributes
    ----------
    feature : numpy.ndarray of int
        Split feature of each node (-1 at leaves).
    threshold : numpy.ndarray of float32
        Split threshold: go left iff ``x[feature] <= threshold`` (leaves: 0).
    left, right : numpy.ndarray of int
        Children (-1 at leaves).
    value : numpy.ndarray of float64, shape (n_nodes, K)
        Contribution of each leaf to the K class scores (rows of internal nodes are unused).
    """

    feature: NDArray[np.int64]
    threshold: NDArray[np.float32]
    left: NDArray[np.int64]
    right: NDArray[np.int64]
    value: NDArray[np.float64]

    @property
    def leaves(self) -> NDArray[np.int64]:
        """Indices of the leaf nodes."""
        return np.flatnonzero(self.left < 0)

    def paths(self) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """Every (leaf, ancestor, side) triple: ``leaf`` lies in the left (side 0) or right (1) subtree of
        ``ancestor``; leaves numbered by their position in :attr:`leaves`. Cached."""
        cached = getattr(self, "_paths", None)
        if cached is not None:
            return cached
        parent = np.full(len(self.left), -1, dtype=np.int64)
        side = np.zeros(len(self.left), dtype=np.int64)
        inner = np.flatnonzero(self.left >= 0)
        parent[self.left[inner]], side[self.left[inner]] = inner, 0
        parent[self.right[inner]], side[self.right[inner]] = inner, 1
        rows: list[tuple[int, int, int]] = []
        for pos, leaf in enumerate(self.leaves):
            node = int(leaf)
            while parent[node] >= 0:
                rows.append((pos, int(parent[node]), int(side[node])))
                node = int(parent[node])
        arr = np.array(rows, dtype=np.int64).reshape(-1, 3)
        self._paths = (arr[:, 0], arr[:, 1], arr[:, 2])
        return self._paths

    def apply(self, x: NDArray[np.float32]) -> NDArray[np.int64]:
        """Leaf index reached by each row of ``x`` ``(n, d)`` (float32)."""
        node = np.zeros(len(x), dtype=np.int64)
        rows = np.arange(len(x))
        active = self.left[node] >= 0
        while active.any():
            r, nd = rows[active], node[active]
            go_left = x[r, self.feature[nd]] <= self.threshold[nd]
            node[r] = np.where(go_left, self.left[nd], self.right[nd])
            active = self.left[node] >= 0
        return node


@dataclass
class Ensemble:
    """K class scores = ``base`` + the leaf values of every tree; label = argmax with a tie rule.

    Attributes
    ----------
    trees : list of Tree
    base : numpy.ndarray, shape (K,)
        Constant scores (init scores, or 0).
    n_features : int
    ties : str
        ``"first"``: equal scores go to the lowest class index (numpy's argmax: LightGBM, random forests,
        multiclass gradient boosting); ``"last"``: to the highest (scikit-learn's binary gradient boosting
        predicts class 1 when its raw score is exactly 0).
    source : str
        What the ensemble was read from (for messages).
    """

    trees: list[Tree]
    base: NDArray[np.float64]
    n_features: int
    ties: str = "first"
    source: str = ""

    @property
    def n_classes(self) -> int:
        """Number of classes K."""
        return int(self.base.shape[0])

    def scores(self, x: NDArray[np.floating]) -> NDArray[np.float64]:
        """Class scores ``(n, K)`` of the rows of ``x`` (cast to float32, as the models do)."""
        x32 = np.asarray(x, dtype=np.float32).reshape(len(x), -1)
        out = np.tile(self.base, (len(x32), 1))
        for tree in self.trees:
            out += tree.value[tree.apply(x32)]
        return out

    def labels(self, x: NDArray[np.floating]) -> NDArray[np.int64]:
        """Predicted class indices under the ensemble's tie rule."""
        s = self.scores(x)
        if self.ties == "first":
            return np.argmax(s, axis=1)
        return s.shape[1] - 1 - np.argmax(s[:, ::-1], axis=1)

    def beats_strictly(self, t: int, c: int) -> bool:
        """Whether class ``t`` must score strictly above class ``c`` to win (a tie goes to ``c``)."""
        return c < t if self.ties == "first" else c > t

    def thresholds(self) -> dict[int, NDArray[np.float32]]:
        """Sorted distinct thresholds of every split feature."""
        per: dict[int, list[NDArray[np.float32]]] = {}
        for tree in self.trees:
            inner = tree.left >= 0
            for f in np.unique(tree.feature[inner]):
                per.setdefault(int(f), []).append(tree.threshold[inner & (tree.feature == f)])
        return {f: np.unique(np.concatenate(v)) for f, v in per.items()}
