"""The ImageNet experiments of the suite: EfficientNet-Lite0 on the shared validation images.

``imagenet-untargeted`` and ``imagenet-targeted`` attack the same inputs: the correctly classified images among
the 50 of ``../shared/data/imagenet`` (224 × 224, :func:`applications.datasets.load_imagenet_val`), in an order
drawn from the suite seed. With 1,000 classes and 50 images, a target class ``(y0 + 1) mod K`` (the rule of the
other targeted experiments) would have no example to start from, and a hard-label attack cannot find a
specific class among 1,000 by random search; so the targeted experiment's rule is: input ``k``'s target is the
class of the ``k``-th correctly classified image *not* attacked (the same seeded order, read from its other
end, skipping images of the input's own class), and that image is the one starting example every attack gets.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from applications import datasets
from applications.hardlabel import as_label_model
from benchmarks.experiment_base import Experiment, Plan, correctly_classified, seeded_rng

NAMES = ("imagenet-untargeted", "imagenet-targeted")
N_CLASSES = 1000
#: ART's GeoDA at the sub-dimension its authors use on ImageNet at 224 × 224 (a 75 × 75 block of DCT
#: frequencies; ART's default, 10, is sized for small images).
GEODA_SUB_DIM = 75


@functools.cache
def _images() -> tuple[np.ndarray, np.ndarray]:
    return datasets.load_imagenet_val()


@functools.cache
def _model(device: str) -> torch.nn.Module:
    from applications.models import load_efficientnet_lite0

    return load_efficientnet_lite0(device)


def targets_and_starts(
    order: np.ndarray, correct: list[int], n: int, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per attacked input (the first ``n`` of ``correct``), a target class and the index of its one example.

    The examples are the correctly classified images not attacked, taken from the far end of ``order`` (so
    they do not depend on ``n``), each used once, skipping those of the input's own class.

    Examples
    --------
    >>> y = np.array([0, 1, 2, 3, 1])
    >>> targets_and_starts(np.arange(5), [0, 1, 2, 3, 4], 2, y)
    (array([1, 3]), array([4, 3]))
    """
    attacked = set(correct[:n])
    rest = [int(i) for i in order[::-1] if int(i) in set(correct) and int(i) not in attacked]
    targets, starts = [], []
    for i in correct[:n]:
        pick = next((j for j in rest if y[j] != y[i]), None)
        if pick is None:
            raise ValueError(f"not enough correctly classified images left as targets for {n} targeted inputs")
        rest.remove(pick)
        targets.append(int(y[pick]))
        starts.append(pick)
    return np.array(targets, dtype=np.int64), np.array(starts, dtype=np.int64)


def build_imagenet(name: str, plan: Plan, seed: int, torch_device: str = "cpu") -> Experiment:
    """Materialise ``imagenet-untargeted`` or ``imagenet-targeted``."""
    if name not in NAMES:
        raise ValueError(f"unknown ImageNet experiment {name!r}; choose from {', '.join(NAMES)}")
    targeted = name.endswith("-targeted")
    x, y = _images()
    model = _model(torch_device)
    label_fn = as_label_model(model, n_classes=N_CLASSES)
    n = max(plan.n_ours, plan.n_peers)
    order = seeded_rng(seed, "imagenet").permutation(len(x))  # both experiments attack the same inputs
    correct = correctly_classified(x, y, label_fn, order, lambda found: False, chunk=10)
    accuracy = len(correct) / len(x)
    need = 2 * n if targeted else n
    if len(correct) < need:
        raise ValueError(f"only {len(correct)} of the {len(x)} images are classified correctly; {name} with {n} "
                         f"inputs needs {need}")
    index = np.array(correct[:n], dtype=np.int64)
    target = starts = None
    notes = [
        f"ImageNet validation images 1-50 (shared/data/imagenet), resized to 256 on the shorter side and centre-"
        f"cropped to 224 x 224, pixels / 255; EfficientNet-Lite0 (PyPI wheel) labels {len(correct)} of them "
        f"correctly ({accuracy:.0%}); {n} of those are attacked, in a random order from seed {seed}.",
        f"ART's GeoDA runs at sub-dimension {GEODA_SUB_DIM} (its authors' ImageNet setting), untargeted only.",
    ]
    if targeted:
        target, pool = targets_and_starts(order, correct, n, y)
        starts = x[pool][:, None]  # (n, 1, 3, 224, 224): one starting example per input
        notes.append(
            "Targeted: input k's target is the class of the k-th correctly classified image not attacked (the "
            "seeded order read from its other end, never the input's own class); that image is every attack's "
            "one starting example (the only image of its class here)."
        )
    return Experiment(
        name=name,
        title=f"ImageNet {'targeted' if targeted else 'untargeted'} (EfficientNet-Lite0, 224 x 224)",
        stem=name.replace("-", "_"),
        plan=plan,
        index=index,
        x=x[index],
        y=y[index],
        target=target,
        starts=starts,
        bounds=(0.0, 1.0),
        n_classes=N_CLASSES,
        label_fn=label_fn,
        torch_model=model,
        image_like=True,
        notes=notes,
        facts={"accuracy": accuracy, "correct": len(correct), "geoda_sub_dim": GEODA_SUB_DIM},
    )
