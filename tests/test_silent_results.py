"""Results that must never be silently wrong: a model writing into its batch, labels that depend on the batch,
and the query counts of an attack cut short by a fault."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from applications.hardlabel import ModelOptions, ModelOutputError, Verify, attack

W = np.random.default_rng(7).standard_normal((10, 64))
B = -W @ np.full(64, 0.5)


def scores(x: np.ndarray) -> np.ndarray:
    """A 10-class linear model on 64 features in [0, 1]; row-independent, so batches cannot change a label."""
    flat = x.reshape(len(x), -1).astype(np.float64)
    return (flat[:, None, :] * W[None]).sum(-1) + B


def inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.random.default_rng(3).uniform(0.2, 0.8, size=(n, 64)).astype(np.float32)
    return x, scores(x).argmax(1)


def in_place_numpy(b: np.ndarray) -> np.ndarray:
    b -= 0.5  # normalising in place, as many preprocessing functions do
    return (b.reshape(len(b), -1)[:, None, :].astype(np.float64) * W[None]).sum(-1)


class InPlaceTorch(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.sub_(0.5)
        return torch.from_numpy((x.reshape(len(x), -1).double().numpy()[:, None, :] * W[None]).sum(-1))


@pytest.mark.parametrize("writer", [in_place_numpy, InPlaceTorch()], ids=["numpy", "torch"])
def test_a_model_writing_into_its_batch_changes_nothing(writer) -> None:  # type: ignore[no-untyped-def]
    x, y = inputs(3)
    kw = {"budget": 300, "seed": 0, "n_classes": 10}
    clean = attack(scores, x, y, **kw)
    dirty = attack(writer, x, y, **kw)
    assert clean.success.all()
    np.testing.assert_array_equal(dirty.x_adv, clean.x_adv)
    np.testing.assert_array_equal(dirty.distortion, clean.distortion)
    np.testing.assert_array_equal(dirty.queries, clean.queries)
    assert dirty.x_adv.min() >= 0.0 and dirty.x_adv.max() <= 1.0


def test_a_batch_the_model_keeps_is_never_written_again() -> None:
    # The attack builds each round's points in one buffer; what the model was sent must stay as it was sent.
    kept: list[tuple[np.ndarray, np.ndarray]] = []

    def keeper(b: np.ndarray) -> np.ndarray:
        kept.append((b, b.copy()))
        return scores(b)

    x, y = inputs(2)
    attack(keeper, x, y, budget=200, seed=0, n_classes=10)
    assert len(kept) > 10
    assert all(np.array_equal(b, snapshot) for b, snapshot in kept)


def test_labels_that_depend_on_the_batch_never_make_an_input_already_adversarial() -> None:
    # Wrong for every batch of more than one input, right for an input sent alone.
    def batchy(b: np.ndarray) -> np.ndarray:
        labels = scores(b).argmax(1)
        return (labels + 1) % 10 if len(b) > 1 else labels

    x, y = inputs(3)
    res = attack(batchy, x, y, budget=300, seed=0, n_classes=10)
    labels_alone = np.array([scores(p[None]).argmax(1)[0] for p in res.x_adv])
    assert not (res.success & (res.distortion == 0)).any()
    assert np.all(labels_alone[res.success] != y[res.success])


def test_an_input_misclassified_once_is_not_a_success_at_distortion_0() -> None:
    # A label flip the first time an input is seen, as a noisy model may give; x0 must be asked again.
    seen: set[bytes] = set()

    def flips_first_sight(b: np.ndarray) -> np.ndarray:
        labels = scores(b).argmax(1)
        for k, row in enumerate(b):
            key = row.astype(np.float32).tobytes()
            if key not in seen:
                seen.add(key)
                labels[k] = (labels[k] + 1) % 10
        return labels

    x, y = inputs(2)
    res = attack(flips_first_sight, x, y, budget=300, seed=0, n_classes=10)
    assert not (res.success & (res.distortion == 0)).any()


def test_an_input_the_model_gets_wrong_is_a_success_at_distortion_0() -> None:
    x, y = inputs(3)
    y = y.copy()
    y[1] = (y[1] + 1) % 10  # the model's label for input 1 differs from the given one
    res = attack(scores, x, y, budget=300, seed=0, n_classes=10)
    assert res.success.all() and res.distortion[1] == 0.0 and res.queries[1] == 2  # labelled alone, then re-checked
    np.testing.assert_array_equal(res.x_adv[1], x[1])


class CountingFault:
    """The linear model, counting the samples it is sent, raising on call ``fail_at`` (or on the
    ``fail_alone``-th one-input call once ``after`` samples were sent)."""

    def __init__(self, fail_at: int | None = None, fail_alone: int | None = None, after: int = 0) -> None:
        self.fail_at, self.fail_alone, self.after = fail_at, fail_alone, after
        self.calls = self.samples = self.alone = 0

    def __call__(self, b: np.ndarray) -> np.ndarray:
        self.calls += 1
        late = self.samples >= self.after
        self.samples += len(b)
        if late and len(b) == 1:
            self.alone += 1
        if self.calls == self.fail_at or (self.fail_alone is not None and late and self.alone == self.fail_alone):
            raise RuntimeError("model server went away")
        return scores(b)


@pytest.mark.parametrize("fail_at", [2, 7, 8, 9, 15])
def test_a_fault_mid_round_reports_exactly_the_queries_the_model_saw(fail_at: int) -> None:
    x, y = inputs(6)
    model = CountingFault(fail_at=fail_at)
    with pytest.raises(ModelOutputError) as info:
        attack(model, x, y, budget=400, seed=0, n_classes=10, model_options=ModelOptions(batch_size=5))
    assert int(info.value.partial_result.queries.sum()) == model.samples


def test_a_fault_during_the_final_recheck_reports_exactly_the_queries_the_model_saw() -> None:
    x, y = inputs(3)
    budget, reserve = 400, 3
    # Once every input has spent all but its reserve, the only calls left are the re-check's, one point each.
    model = CountingFault(fail_alone=2, after=3 * (budget - reserve))
    with pytest.raises(ModelOutputError) as info:
        attack(model, x, y, budget=budget, seed=0, n_classes=10, verify=Verify(queries=reserve))
    partial = info.value.partial_result
    assert model.alone == 2 and int(partial.queries.sum()) == model.samples
