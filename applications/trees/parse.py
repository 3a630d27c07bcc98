"""Read LightGBM and scikit-learn tree ensembles into :class:`~.ensemble.Ensemble` (class scores from leaves).

Supported: ``lightgbm.Booster`` / ``LGBMClassifier`` (binary, cross-entropy, multiclass and multiclass-OvA
objectives; numerical splits), and scikit-learn's ``RandomForestClassifier``, ``ExtraTreesClassifier``,
``GradientBoostingClassifier`` and ``DecisionTreeClassifier``. Labels are positions in ``classes_``, as
everywhere in the project.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .ensemble import Ensemble, Tree, float32_down

__all__ = ["as_ensemble"]

_LGB_BINARY = ("binary", "cross_entropy", "xentropy")
_LGB_MULTI = ("multiclass", "softmax", "multiclassova", "multiclass_ova", "ova", "ovr")


def as_ensemble(model: Any) -> Ensemble:
    """The :class:`Ensemble` of a fitted LightGBM or scikit-learn tree classifier.

    Raises
    ------
    TypeError
        For a model of another kind.
    NotImplementedError
        For what the exact solver does not model (categorical splits, LightGBM's zero-as-missing,
        multi-output forests).
    """
    if isinstance(model, Ensemble):
        return model
    lgb = sys.modules.get("lightgbm")
    if lgb is not None:
        if isinstance(model, lgb.Booster):
            return from_lightgbm(model)
        if isinstance(model, lgb.LGBMClassifier):
            return from_lightgbm(model.booster_)
    name = type(model).__name__
    if name in ("RandomForestClassifier", "ExtraTreesClassifier"):
        return _from_forest(model, [e.tree_ for e in model.estimators_], name)
    if name in ("DecisionTreeClassifier", "ExtraTreeClassifier"):
        return _from_forest(model, [model.tree_], name)
    if name == "GradientBoostingClassifier":
        return _from_gradient_boosting(model)
    raise TypeError(
        f"cannot read a tree ensemble from {name}; supported: lightgbm.Booster / LGBMClassifier and scikit-learn's "
        "RandomForestClassifier, ExtraTreesClassifier, GradientBoostingClassifier, DecisionTreeClassifier"
    )


# ------------------------------------------------------------------------------------------------ LightGBM


def from_lightgbm(booster: Any) -> Ensemble:
    """Ensemble of a ``lightgbm.Booster`` (the trees ``dump_model()`` lists, as ``predict`` uses them)."""
    dump = booster.dump_model()
    objective = str(dump.get("objective", "")).split(" ")[0]
    k_trees = int(dump["num_tree_per_iteration"])
    if objective in _LGB_BINARY:
        n_classes = 2
    elif objective in _LGB_MULTI:
        n_classes = k_trees
    else:
        raise NotImplementedError(
            f"this lightgbm.Booster has objective {objective!r}; the exact solver reads binary, cross_entropy and "
            "multiclass classifiers"
        )
    info = dump["tree_info"]
    # boosting="rf" averages its trees instead of summing them.
    scale = 1.0 / max(1, len(info) // k_trees) if dump.get("average_output") else 1.0
    trees = []
    for i, t in enumerate(info):
        cls = 1 if n_classes == 2 else i % k_trees
        trees.append(_lgb_tree(t["tree_structure"], n_classes, cls, scale))
    return Ensemble(trees, np.zeros(n_classes), int(dump["max_feature_idx"]) + 1, "first", "lightgbm")


def _lgb_tree(root: dict[str, Any], n_classes: int, cls: int, scale: float) -> Tree:
    feature, threshold, left, right, values = [], [], [], [], []

    def add(node: dict[str, Any]) -> int:
        i = len(feature)
        feature.append(-1)
        threshold.append(0.0)
        left.append(-1)
        right.append(-1)
        values.append(0.0)
        if "leaf_value" in node and "split_feature" not in node:
            values[i] = float(node["leaf_value"]) * scale
            return i
        if node.get("decision_type", "<=") != "<=":
            raise NotImplementedError("categorical splits (decision_type '==') are not supported by the exact solver")
        if node.get("missing_type") == "Zero":
            raise NotImplementedError(
                "this model treats zeros as missing (zero_as_missing=True): values near 0 follow the default "
                "branch, which the exact solver does not model; retrain with zero_as_missing=False"
            )
        feature[i] = int(node["split_feature"])
        threshold[i] = float(node["threshold"])
        left[i] = add(node["left_child"])
        right[i] = add(node["right_child"])
        return i

    add(root)
    value = np.zeros((len(feature), n_classes))
    value[:, cls] = values
    return Tree(np.array(feature, dtype=np.int64), float32_down(np.array(threshold)),
                np.array(left, dtype=np.int64), np.array(right, dtype=np.int64), value)


# -------------------------------------------------------------------------------------------- scikit-learn


def _sk_tree(tree: Any, value: np.ndarray) -> Tree:
    left = np.asarray(tree.children_left, dtype=np.int64)
    inner = left >= 0
    feature = np.where(inner, tree.feature, -1).astype(np.int64)
    # scikit-learn casts inputs to float32 and compares them with a float64 threshold.
    threshold = np.where(inner, float32_down(np.asarray(tree.threshold, dtype=np.float64)), 0).astype(np.float32)
    return Tree(feature, threshold, left, np.asarray(tree.children_right, dtype=np.int64), value)


def _from_forest(model: Any, trees: list[Any], name: str) -> Ensemble:
    if getattr(model, "n_outputs_", 1) != 1:
        raise NotImplementedError(f"multi-output {name} is not supported by the exact solver")
    out = []
    for t in trees:
        v = np.asarray(t.value, dtype=np.float64)[:, 0, :]
        # predict_proba normalises each leaf's (weighted) class counts, then averages over the trees.
        total = v.sum(axis=1, keepdims=True)
        v = np.divide(v, total, out=np.zeros_like(v), where=total > 0) / len(trees)
        out.append(_sk_tree(t, v))
    return Ensemble(out, np.zeros(len(model.classes_)), int(model.n_features_in_), "first", name)


def _from_gradient_boosting(model: Any) -> Ensemble:
    stages = model.estimators_
    k_trees = stages.shape[1]
    n_classes = len(model.classes_)
    trees = []
    for stage in stages:
        for k, reg in enumerate(stage):
            leaf = np.asarray(reg.tree_.value, dtype=np.float64)[:, 0, 0] * model.learning_rate
            value = np.zeros((len(leaf), n_classes))
            value[:, 1 if k_trees == 1 else k] = leaf
            trees.append(_sk_tree(reg.tree_, value))
    ens = Ensemble(trees, np.zeros(n_classes), int(model.n_features_in_), "last" if k_trees == 1 else "first",
                   "GradientBoostingClassifier")
    # The init estimator's constant raw score: the decision function minus the trees at one probe point.
    probe = np.zeros((1, ens.n_features), dtype=np.float32)
    raw = np.atleast_2d(np.asarray(model.decision_function(probe), dtype=np.float64)).reshape(1, -1)
    trees_only = ens.scores(probe)[0]
    base = np.zeros(n_classes)
    if k_trees == 1:
        base[1] = raw[0, 0] - trees_only[1]
    else:
        base[:] = raw[0] - trees_only
    ens.base = base
    return ens
