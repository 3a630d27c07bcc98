"""Hard-label adapters: every supported model kind, the query counters, the checks on inputs and outputs."""

from __future__ import annotations

import math
import warnings

import lightgbm
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression

from applications.hardlabel.adapters import LabelModel, ModelOutputError, as_label_model, infer_n_classes

N_FEATURES = 6


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    """Three well separated classes in 6 dimensions, shaped as (n, 2, 3) "images" to exercise flattening."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=120)
    x = rng.normal(size=(120, N_FEATURES)) + 3.0 * np.eye(3, N_FEATURES)[y]
    return x.reshape(120, 2, 3), y


@pytest.fixture
def net() -> torch.nn.Module:
    generator = torch.Generator().manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(N_FEATURES, 3))
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator))
    return module.eval()


def _lgbm_params(objective: str, **extra: object) -> dict[str, object]:
    return {
        "objective": objective,
        "num_leaves": 4,
        "min_data_in_leaf": 5,
        "verbose": -1,
        "num_threads": 1,
        **extra,
    }


# ------------------------------------------------------------------------------------------------ torch


def test_torch_labels_are_argmax_of_logits(net: torch.nn.Module, data: tuple[np.ndarray, np.ndarray]) -> None:
    x = data[0][:10]
    model = as_label_model(net)
    expected = net(torch.from_numpy(x).float()).argmax(dim=1).numpy()
    for batch in (x, x.astype(np.float32), torch.from_numpy(x)):
        labels = model(batch)
        assert labels.dtype == np.int64 and labels.shape == (10,)
        np.testing.assert_array_equal(labels, expected)
    assert (model.calls, model.samples) == (3, 30)
    assert model.kind == "torch" and model.n_classes is None


def test_torch_chunks_by_batch_size_and_counts_exactly(
    net: torch.nn.Module, data: tuple[np.ndarray, np.ndarray]
) -> None:
    x = data[0][:10]
    whole = as_label_model(net)(x)
    chunked = as_label_model(net, batch_size=4)
    np.testing.assert_array_equal(chunked(x), whole)
    assert (chunked.calls, chunked.samples) == (3, 10)  # chunks of 4, 4, 2
    assert chunked(x[:0]).shape == (0,)  # an empty batch reaches no model
    assert (chunked.calls, chunked.samples) == (3, 10)
    chunked.reset_counters()
    assert (chunked.calls, chunked.samples) == (0, 0)


def test_torch_tensor_input_is_passed_without_round_trip_as_the_models_own_copy() -> None:
    received: list[torch.Tensor] = []

    class Probe(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(2, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            received.append(x)
            out = self.linear(x)
            x.fill_(7.0)  # a model may write into what it is sent
            return out

    x = torch.zeros(3, 2)
    as_label_model(Probe().eval())(x)
    assert isinstance(received[0], torch.Tensor) and received[0] is not x
    assert received[0].device == x.device and received[0].dtype == x.dtype
    assert bool((x == 0).all())


def test_torch_converts_to_module_dtype(net: torch.nn.Module, data: tuple[np.ndarray, np.ndarray]) -> None:
    x = data[0][:8].astype(np.float32)
    model = as_label_model(net.double())
    expected = net(torch.from_numpy(x).double()).argmax(dim=1).numpy()
    np.testing.assert_array_equal(model(x), expected)
    # Read-only and reversed (negative-stride) arrays are accepted too.
    frozen = x.copy()
    frozen.flags.writeable = False
    np.testing.assert_array_equal(model(frozen), expected)
    np.testing.assert_array_equal(model(x[::-1]), expected[::-1])


def test_torch_module_without_parameters_and_device_checks(net: torch.nn.Module) -> None:
    model = as_label_model(torch.nn.Flatten(), device="cpu")  # logits are the inputs themselves
    np.testing.assert_array_equal(model(np.array([[[0.0, 2.0]], [[3.0, 1.0]]])), [1, 0])
    with pytest.raises(ValueError, match="parameters are on cpu but device=meta"):
        as_label_model(net, device="meta")


def test_torch_training_mode_warns_when_it_matters(net: torch.nn.Module) -> None:
    with_dropout = torch.nn.Sequential(net, torch.nn.Dropout(0.5))
    with pytest.warns(UserWarning, match="eval"):
        as_label_model(with_dropout.train())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        as_label_model(with_dropout.eval())
        as_label_model(net.train())  # no dropout or batch norm: training mode changes nothing


def test_torch_bad_outputs() -> None:
    x = np.ones((4, 3))

    class Returns(torch.nn.Module):
        def __init__(self, fn) -> None:
            super().__init__()
            self.fn = fn

        def forward(self, t: torch.Tensor) -> object:
            return self.fn(t)

    def one_nan(t: torch.Tensor) -> torch.Tensor:
        out = t.clone()
        out[2, 1] = math.nan
        return out

    with pytest.raises(ModelOutputError, match="1 NaN/inf logits"):
        as_label_model(Returns(one_nan))(x)
    with pytest.raises(ModelOutputError, match="returned tuple"):
        as_label_model(Returns(lambda t: (t, t)))(x)
    with pytest.raises(ModelOutputError, match=r"shape \(4, 3\), expected \(n, n_classes\) = \(4, 10\)"):
        as_label_model(Returns(lambda t: t), n_classes=10)(x)
    with pytest.raises(ModelOutputError, match=r"expected labels of shape \(4,\)"):
        as_label_model(Returns(lambda t: t[:3]))(x)


def test_torch_model_raising_is_wrapped(net: torch.nn.Module) -> None:
    model = as_label_model(net)
    bad = np.zeros((2, 5))  # the net wants 6 features
    with pytest.raises(ModelOutputError, match=r"torch model raised RuntimeError.*shape \(2, 5\)") as info:
        model(bad)
    assert isinstance(info.value.__cause__, RuntimeError)
    assert (model.calls, model.samples) == (1, 2)  # the query was sent, so it counts


# -------------------------------------------------------------------------------------------- callables


def test_callable_returning_labels() -> None:
    seen: list[object] = []

    def fn(x: np.ndarray) -> list[int]:
        seen.append(x)
        return [int(row.sum() > 0) for row in x]

    model = as_label_model(fn, n_classes=2)
    x = np.array([[1.0, 2.0], [-3.0, 1.0], [0.5, 0.0]])
    np.testing.assert_array_equal(model(x), [1, 0, 1])
    np.testing.assert_array_equal(model(torch.from_numpy(x)), [1, 0, 1])
    assert all(isinstance(batch, np.ndarray) for batch in seen)  # tensors become numpy for non-torch models
    assert (model.calls, model.samples, model.kind) == (2, 6, "callable")
    # Integral floats and booleans are labels too.
    np.testing.assert_array_equal(as_label_model(lambda x: np.array([1.0, 0.0, 1.0]))(x), [1, 0, 1])
    np.testing.assert_array_equal(as_label_model(lambda x: x[:, 0] > 0)(x), [1, 0, 1])


def test_callable_returning_scores() -> None:
    scores = np.array([[0.1, 0.7, 0.2], [0.5, 0.4, 0.1]])
    model = as_label_model(lambda x: scores, n_classes=3)
    np.testing.assert_array_equal(model(np.zeros((2, 4))), [1, 0])
    np.testing.assert_array_equal(
        as_label_model(lambda x: torch.from_numpy(scores))(np.zeros((2, 1))), [1, 0]
    )
    half = torch.from_numpy(scores).to(torch.bfloat16)  # numpy has no bfloat16
    np.testing.assert_array_equal(as_label_model(lambda x: half)(np.zeros((2, 1))), [1, 0])


@pytest.mark.parametrize(
    ("output", "n_classes", "message"),
    [
        (np.array([[0.1, math.nan], [0.3, 0.2]]), None, "1 NaN/inf scores"),
        (np.array([[0.1, math.inf], [0.3, 0.2]]), None, "NaN/inf scores"),
        (np.array([0, 1, 2]), None, r"for 2 inputs; expected labels of shape \(2,\)"),
        (np.array([[0], [1]]), None, r"shape \(2, 1\)"),
        (np.array([[0.1, 0.9], [0.3, 0.2]]), 3, r"expected \(n, n_classes\) = \(2, 3\)"),
        (np.array([0, 3]), 3, r"labels from 0 to 3; expected labels in \[0, 3\)"),
        (np.array([-1, 0]), None, "labels from -1 to 0; expected labels >= 0"),
        (np.array([0.2, 0.9]), None, r"non-integer labels.*\(p > 0.5\)"),
        (np.array([math.nan, 1.0]), None, "NaN/inf labels"),
        (np.array(["cat", "dog"]), None, "expected numeric labels"),
        (None, None, "expected numeric labels"),
    ],
)
def test_callable_bad_outputs(output: object, n_classes: int | None, message: str) -> None:
    model = as_label_model(lambda x: output, n_classes=n_classes)
    with pytest.raises(ModelOutputError, match=message):
        model(np.zeros((2, 3)))
    assert (model.calls, model.samples) == (1, 2)


def test_callable_score_width_must_not_change() -> None:
    widths = iter([3, 4])
    model = as_label_model(lambda x: np.zeros((len(x), next(widths))))
    model(np.zeros((2, 1)))
    with pytest.raises(ModelOutputError, match="4 scores per input, but 3 on an earlier call"):
        model(np.zeros((2, 1)))


def test_callable_raising_is_wrapped() -> None:
    def broken(x: np.ndarray) -> np.ndarray:
        raise KeyError("feature 'age'")

    with pytest.raises(
        ModelOutputError, match=r"callable model raised KeyError: .*age.*shape \(5, 3\)"
    ) as info:
        as_label_model(broken)(np.zeros((5, 3)))
    assert isinstance(info.value.__cause__, KeyError)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 40), batch_size=st.integers(1, 50))
def test_chunking_preserves_labels_and_counts(n: int, batch_size: int) -> None:
    model = as_label_model(lambda x: (x[:, 0] * 7).astype(np.int64) % 5, batch_size=batch_size)
    x = np.arange(n, dtype=np.float64).reshape(n, 1)
    np.testing.assert_array_equal(model(x), (np.arange(n) * 7) % 5)
    assert model.calls == math.ceil(n / batch_size) and model.samples == n


# ----------------------------------------------------------------------------------------- scikit-learn


def test_sklearn_labels_are_indices_into_classes(data: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = data
    names = np.array(["cat", "ant", "bee"])  # not sorted: indices follow classes_, which sklearn sorts
    classifier = LogisticRegression().fit(x.reshape(len(x), -1), names[y])
    model = as_label_model(classifier)
    assert model.n_classes == 3 == infer_n_classes(classifier) and model.kind == "sklearn"
    labels = model(x[:20])  # (n, 2, 3) inputs are flattened
    np.testing.assert_array_equal(classifier.classes_[labels], classifier.predict(x[:20].reshape(20, -1)))
    assert (model.calls, model.samples) == (1, 20)


def test_sklearn_checks(data: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = data
    classifier = LogisticRegression().fit(x.reshape(len(x), -1), y)
    model = as_label_model(classifier, n_classes=3)
    with pytest.raises(ValueError, match="fitted on 6 features but each input has shape"):
        model(np.zeros((2, 5)))
    assert (model.calls, model.samples) == (0, 0)  # rejected before anything was sent
    with pytest.raises(ValueError, match="n_classes=4 was given but LogisticRegression has 3 classes"):
        as_label_model(classifier, n_classes=4)
    with pytest.raises(TypeError, match="fit it first"):
        as_label_model(LogisticRegression())


# --------------------------------------------------------------------------------------------- LightGBM


def test_lightgbm_booster_binary(data: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = data
    flat = x.reshape(len(x), -1)
    booster = lightgbm.train(_lgbm_params("binary"), lightgbm.Dataset(flat, y == 1), num_boost_round=5)
    model = as_label_model(booster)
    assert model.n_classes == 2 == infer_n_classes(booster) and model.kind == "lightgbm"
    np.testing.assert_array_equal(model(x), (booster.predict(flat) > 0.5).astype(np.int64))
    assert (model.calls, model.samples) == (1, len(x))
    # A Booster loaded from text names its objective "binary sigmoid:1".
    loaded = lightgbm.Booster(model_str=booster.model_to_string())
    np.testing.assert_array_equal(as_label_model(loaded)(x), model(x))


def test_lightgbm_booster_multiclass(data: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = data
    flat = x.reshape(len(x), -1)
    params = _lgbm_params("softmax", num_class=3)  # an alias of "multiclass"
    booster = lightgbm.train(params, lightgbm.Dataset(flat, y), num_boost_round=5)
    model = as_label_model(booster, batch_size=50)
    assert model.n_classes == 3 == infer_n_classes(booster)
    np.testing.assert_array_equal(model(x), booster.predict(flat).argmax(axis=1))
    assert (model.calls, model.samples) == (3, 120)
    with pytest.raises(ValueError, match="fitted on 6 features"):
        model(np.zeros((1, 7)))


def test_lightgbm_booster_non_classifier_is_refused(data: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = data
    booster = lightgbm.train(_lgbm_params("regression"), lightgbm.Dataset(x.reshape(len(x), -1), y), 2)
    with pytest.raises(TypeError, match="objective 'regression', which is not a classifier"):
        as_label_model(booster)
    assert infer_n_classes(booster) is None


def test_lgbm_classifier(data: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = data
    flat = x.reshape(len(x), -1)
    values = np.array([10, 20, 30])
    classifier = lightgbm.LGBMClassifier(
        n_estimators=5, num_leaves=4, min_child_samples=5, n_jobs=1, verbose=-1
    )
    classifier.fit(flat, values[y])
    model = as_label_model(classifier)
    assert model.n_classes == 3 and model.kind == "sklearn"
    labels = model(x)
    assert set(np.unique(labels)) <= {0, 1, 2}
    np.testing.assert_array_equal(values[labels], classifier.predict(flat))
    with pytest.raises(TypeError, match="fit it first"):
        as_label_model(lightgbm.LGBMClassifier())


# ----------------------------------------------------------------------------------- inputs and options


@pytest.mark.parametrize(
    ("batch", "error", "message"),
    [
        (np.zeros((2, 3), dtype=np.uint8), TypeError, "float32 or float64 array, got uint8"),
        ([[0.0, 1.0]], TypeError, "got list"),
        (torch.zeros(2, 3, dtype=torch.int64), TypeError, "floating tensor"),
        (np.zeros(3), ValueError, "batch axis"),
        (np.array([[0.0, math.nan]]), ValueError, "NaN or inf"),
        (torch.tensor([[math.inf, 0.0]]), ValueError, "NaN or inf"),
    ],
)
def test_bad_inputs_are_refused_before_any_query(batch: object, error: type[Exception], message: str) -> None:
    model = as_label_model(lambda x: np.zeros(len(x), dtype=np.int64))
    with pytest.raises(error, match=message):
        model(batch)  # type: ignore[arg-type]
    assert (model.calls, model.samples) == (0, 0)


def test_options_are_validated(net: torch.nn.Module) -> None:
    with pytest.raises(ValueError, match="n_classes must be an integer >= 2"):
        as_label_model(net, n_classes=1)
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        as_label_model(net, batch_size=0)
    with pytest.raises(ValueError, match="device applies to torch modules only"):
        as_label_model(lambda x: x, device="cpu")
    with pytest.raises(TypeError, match="unsupported model type int"):
        as_label_model(3)


def test_label_model_passes_through(net: torch.nn.Module) -> None:
    model = as_label_model(net, n_classes=3)
    assert as_label_model(model) is model and as_label_model(model, n_classes=3) is model
    assert isinstance(model, LabelModel) and infer_n_classes(model) == 3 and infer_n_classes(net) is None
    with pytest.raises(ValueError, match="n_classes=5 was given"):
        as_label_model(model, n_classes=5)
    assert "calls=0" in repr(model)


def test_torch_model_runs_without_tf32_and_the_flags_come_back() -> None:
    """TF32 moves a GPU's logits by ~1e-3, far more than a boundary search's ~1e-6: the adapter turns it off
    for the model's call only (on a CPU the flags change nothing, but they are what a GPU would read)."""
    seen: list[tuple[bool, bool]] = []

    class Spy(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            seen.append((torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32))
            return torch.stack([x.flatten(1).sum(1), -x.flatten(1).sum(1)], dim=1)

    cudnn, matmul = torch.backends.cudnn, torch.backends.cuda.matmul
    before = (cudnn.allow_tf32, matmul.allow_tf32)
    cudnn.allow_tf32 = matmul.allow_tf32 = True
    try:
        labels = as_label_model(Spy(), n_classes=2)(np.ones((3, 4), dtype=np.float32))
        assert labels.tolist() == [0, 0, 0]
        assert seen == [(False, False)]
        assert (cudnn.allow_tf32, matmul.allow_tf32) == (True, True)
    finally:
        cudnn.allow_tf32, matmul.allow_tf32 = before
