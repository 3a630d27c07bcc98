"""What makes a point adversarial: the attack's criterion, an object apart from the model, the distance and the search.

:func:`~applications.hardlabel.attack` takes one (``criterion=``), or builds it from ``target=``: ``None`` is
:class:`Misclassification`, labels are :class:`TargetedMisclassification`. A criterion of one's own subclasses
:class:`Criterion` and writes :meth:`Criterion.is_adversarial`; it sees top-1 labels only, as the attack does.

>>> import numpy as np
>>> Misclassification().is_adversarial(np.array([3, 7, 3]), 3, 0)
array([False,  True, False])
>>> class NotAsNine(Criterion):  # any other class, but never 9
...     def is_adversarial(self, labels, label, index):
...         return (labels != label) & (labels != 9)
>>> NotAsNine().is_adversarial(np.array([3, 7, 9]), 3, 0)
array([False,  True, False])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .inputs import as_labels

__all__ = ["Criterion", "Misclassification", "TargetedMisclassification", "as_criterion"]


class Criterion:
    """Which labels make a point of an input adversarial.

    A subclass writes :meth:`is_adversarial`; :meth:`for_batch` and :attr:`targets` have defaults that suit
    any criterion that names no target class.
    """

    def is_adversarial(self, labels: NDArray[np.int64], label: int, index: int) -> NDArray[np.bool_]:
        """Whether each point is adversarial, from the labels the model gave it.

        Parameters
        ----------
        labels : numpy.ndarray
            ``(m,)`` top-1 labels of ``m`` points of one input.
        label : int
            That input's own label (its ``y0``).
        index : int
            That input's position in the batch.

        Returns
        -------
        numpy.ndarray
            ``(m,)`` booleans.
        """
        raise NotImplementedError(f"{type(self).__name__} must define is_adversarial(labels, label, index)")

    @property
    def targets(self) -> NDArray[np.int64] | None:
        """Per input, the class its adversarial points must take, or ``None`` (no one class).

        With targets the start looks for examples of each input's target class
        (``Start(target_examples=...)``, ``Start(target_pool=...)``); without, it draws random directions.
        """
        return None

    def for_batch(self, y: NDArray[np.int64], n_classes: int | None) -> Criterion:
        """The criterion checked against a batch of ``len(y)`` inputs labelled ``y``, before any query.

        Raises ``ValueError`` (or ``TypeError``) for what cannot hold for this batch; the default has nothing
        to check.
        """
        return self


class Misclassification(Criterion):
    """Untargeted: any label but the input's own."""

    def is_adversarial(self, labels: NDArray[np.int64], label: int, index: int) -> NDArray[np.bool_]:
        return labels != label

    def __repr__(self) -> str:
        return "Misclassification()"


class TargetedMisclassification(Criterion):
    """Targeted: the label ``target_classes[i]`` for input ``i``.

    Parameters
    ----------
    target_classes : array_like
        ``(N,)`` class indices, none equal to its input's label.
    """

    def __init__(self, target_classes: ArrayLike) -> None:
        self.target_classes = target_classes

    def is_adversarial(self, labels: NDArray[np.int64], label: int, index: int) -> NDArray[np.bool_]:
        return labels == self.target_classes[index]  # type: ignore[index]

    @property
    def targets(self) -> NDArray[np.int64]:
        return self.target_classes  # type: ignore[return-value]

    def for_batch(self, y: NDArray[np.int64], n_classes: int | None) -> TargetedMisclassification:
        tgt = as_labels(self.target_classes, len(y), "target", n_classes)
        if (tgt == y).any():
            i = int(np.flatnonzero(tgt == y)[0])
            raise ValueError(f"target equals y0 for input {i} (label {y[i]}); a targeted attack needs another class")
        return TargetedMisclassification(tgt)

    def __repr__(self) -> str:
        return f"TargetedMisclassification({self.target_classes!r})"


def as_criterion(criterion: Criterion | None, target: ArrayLike | None) -> Criterion:
    """The attack's criterion: ``criterion`` itself, else the one ``target`` spells (``None``: untargeted)."""
    if criterion is None:
        return Misclassification() if target is None else TargetedMisclassification(target)
    if target is not None:
        raise TypeError("pass the target in the criterion or as target=, not both: "
                        "criterion=TargetedMisclassification(target)")
    if not isinstance(criterion, Criterion):
        raise TypeError(f"criterion takes a Criterion (Misclassification(), TargetedMisclassification(target) or a "
                        f"subclass of one's own that writes is_adversarial), got {_show(criterion)}")
    return criterion


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"a {type(value).__name__}"
