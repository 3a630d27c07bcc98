"""benchmarks.studies.unseen_models: the per-input comparison it writes."""

from __future__ import annotations

import numpy as np

from benchmarks.studies.unseen_models import markdown, summarize


def test_the_page_pairs_inputs_and_leaves_out_flips_of_the_order_of_1e_35() -> None:
    rows = [{"model": "toy", "inputs": 4, "budgets": [250, 500],
             "l2": [{"250": [1.0, 2.0, 4.0, 1e-35], "500": [1.0, 1.0, 1.0, 1.0]},
                    {"250": [0.5, 2.0, 8.0, 1e-35], "500": [1.0, 1.0, 1.0, 1.0]}]}]
    text = markdown(summarize(rows), ["old", "new"], "python -m benchmarks.studies.unseen_models ...")
    line = next(x for x in text.splitlines() if x.startswith("| new / old, per input"))
    # 250: ratios 0.5, 1, 2 (the 1e-35 flip left out): median 1.000, one input lower, one higher, of four.
    assert "| 1.000 (25% / 25%) | 1.000 (0% / 0%) |" in line
    assert "| median old | 1.500 | 1.000 |" in text and "| mean new | 2.625 | 1.000 |" in text


def test_targeted_runs_aim_at_one_other_class_the_same_for_both_configurations(monkeypatch) -> None:
    import benchmarks.studies.unseen_models as unseen

    rng = np.random.default_rng(0)
    w = rng.normal(size=(16, 10))

    def model(x: np.ndarray) -> np.ndarray:  # a linear 10-class model on 16 features, labels only
        return np.argmax((np.asarray(x).reshape(len(x), -1) - 0.5) @ w, axis=1)

    x = rng.uniform(size=(40, 16))
    pool = rng.uniform(size=(400, 16))
    monkeypatch.setattr(unseen, "_models", lambda seed, which: ({"toy": model}, x, model(x), pool))
    seen = {}
    from applications.hardlabel import attack as real_attack

    def spy(labels, x0, y0, **kw):  # noqa: ANN001
        seen.setdefault("targets", []).append(kw["target"])
        return real_attack(labels, x0, y0, **kw)

    monkeypatch.setattr("applications.hardlabel.attack", spy)
    rows = unseen.compare([{}, {}], n=5, budget=300, seed=3, targeted=True)
    first, second = seen["targets"]
    assert np.array_equal(first, second) and np.all(first != model(x)[:5])
    assert rows[0]["l2"][0] == rows[0]["l2"][1]  # the same options, the same targets: the same runs
    assert "targeted, batched" in unseen.markdown(unseen.summarize(rows), ["a", "b"], "cmd", targeted=True)


def test_the_random_forest_is_a_second_tree_model_to_ask_for_by_name() -> None:
    import pytest

    import benchmarks.studies.unseen_models as unseen
    from applications.hardlabel import as_label_model

    models, x, y, _ = unseen._models(0, ("forest",))
    (forest,) = models.values()
    labels = as_label_model(forest, n_classes=10)
    assert labels.piecewise_constant  # the attack takes it for a tree ensemble
    assert np.mean(np.asarray(labels(x)) == y) > 0.9  # and it is a model worth attacking
    with pytest.raises(SystemExit, match="choose among"):
        unseen.main(["--b", "{}", "--models", "cnn,svm", "--out", "/nonexistent"])
