"""Loaders of the shared data and the pretrained models built on them."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch

from applications import datasets
from applications.digits import load_digits_split, train_digits_cnn, train_digits_lightgbm
from applications.models import (
    CIFAR10_MEAN,
    CIFAR10_STD,
    NormalizedModel,
    load_cifar10_resnet20,
    load_mnist_cw_bn,
)

# The labels of the first 20 CIFAR-10 test images, a published fact independent of the files here.
FIRST_20_CIFAR10_LABELS = [3, 8, 8, 0, 6, 6, 1, 6, 3, 1, 0, 9, 5, 7, 9, 8, 5, 7, 8, 6]


@pytest.fixture(scope="module", autouse=True)
def _single_torch_thread() -> Iterator[None]:
    # These models are small: on a shared 2-core machine a second intra-op thread mostly waits for a time
    # slice, which made single forward passes take seconds.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def shared() -> Path:
    root = datasets.shared_dir()
    if not (root / "data").is_dir() or not (root / "models").is_dir():
        pytest.skip(f"shared data folder not found at {root}; set ZEROOPT_SHARED to run these tests")
    return root


@pytest.fixture(scope="module")
def mnist(shared: Path) -> tuple[np.ndarray, np.ndarray]:
    return datasets.load_mnist_test()


@pytest.fixture(scope="module")
def cifar_jpeg(shared: Path) -> tuple[np.ndarray, np.ndarray]:
    return datasets.load_cifar10_test_jpeg()


@pytest.fixture(scope="module")
def cifar_interleaved(shared: Path) -> tuple[np.ndarray, np.ndarray]:
    return datasets.load_cifar10_test_jpeg(order="interleaved")


@pytest.fixture(scope="module")
def cifar_lossless(shared: Path) -> tuple[np.ndarray, np.ndarray]:
    return datasets.load_cifar10_lossless_samples()


@pytest.fixture(scope="module")
def resnet(shared: Path) -> NormalizedModel:
    return load_cifar10_resnet20(device="cpu")


def _accuracy(model: torch.nn.Module, x: np.ndarray, y: np.ndarray) -> float:
    device = next(model.parameters()).device
    with torch.inference_mode():
        predictions = model(torch.from_numpy(x).to(device)).argmax(dim=1).cpu().numpy()
    return float((predictions == y).mean())


# ------------------------------------------------------------------------------ locating the shared folder


def test_shared_dir_honours_environment_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ZEROOPT_SHARED", str(tmp_path))
    assert datasets.shared_dir() == tmp_path


def test_shared_dir_defaults_next_to_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ZEROOPT_SHARED", raising=False)
    repo_root = Path(datasets.__file__).resolve().parent.parent
    assert datasets.shared_dir() == repo_root.parent / "shared"


@pytest.mark.parametrize(
    "loader",
    [
        datasets.load_mnist_test,
        datasets.load_cifar10_test_jpeg,
        datasets.load_cifar10_lossless_samples,
        datasets.load_higgs,
        load_mnist_cw_bn,
        load_cifar10_resnet20,
    ],
)
def test_missing_shared_files_name_path_and_override(
    loader, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ZEROOPT_SHARED", str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="ZEROOPT_SHARED") as info:
        loader()
    assert str(tmp_path / "nowhere") in str(info.value)


def test_missing_explicit_model_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="absent.pt"):
        load_mnist_cw_bn(tmp_path / "absent.pt")


def _write_idx(path: Path, magic: int, dims: tuple[int, ...], payload: bytes) -> None:
    header = magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in dims)
    with gzip.open(path, "wb") as fh:
        fh.write(header + payload)


def test_mnist_reader_rejects_wrong_magic_and_truncation(tmp_path: Path) -> None:
    labels = tmp_path / "t10k-labels-idx1-ubyte.gz"
    _write_idx(labels, 0x801, (2,), bytes([1, 2]))
    # Images file carrying the labels' magic number: the classic swapped-files mistake.
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", 0x801, (2, 28, 28), bytes(2 * 784))
    with pytest.raises(ValueError, match="magic number is 0x00000801, expected 0x00000803"):
        datasets.load_mnist_test(tmp_path)
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", 0x803, (2, 28, 28), bytes(784))
    with pytest.raises(ValueError, match="truncated"):
        datasets.load_mnist_test(tmp_path)
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", 0x803, (2, 28, 28), bytes(range(256)) * 6 + bytes(32))
    x, y = datasets.load_mnist_test(tmp_path)
    assert x.shape == (2, 1, 28, 28) and x.max() == 1.0 and y.tolist() == [1, 2]


# --------------------------------------------------------------------------------------------------- data


def test_mnist_test_set(mnist: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = mnist
    assert x.shape == (10000, 1, 28, 28) and x.dtype == np.float32
    assert y.shape == (10000,) and y.dtype == np.int64
    assert x.min() == 0.0 and x.max() == 1.0
    assert np.bincount(y).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


def test_cifar10_jpeg(cifar_jpeg: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = cifar_jpeg
    assert x.shape == (10000, 3, 32, 32) and x.dtype == np.float32
    assert y.dtype == np.int64 and np.bincount(y).tolist() == [1000] * 10
    assert 0.0 <= x.min() and x.max() <= 1.0
    # The file is sorted by class: a prefix is one class only.
    assert (np.diff(y) >= 0).all()


def test_cifar10_jpeg_interleaved_prefixes_are_balanced(
    cifar_jpeg: tuple[np.ndarray, np.ndarray], cifar_interleaved: tuple[np.ndarray, np.ndarray]
) -> None:
    x, y = cifar_interleaved
    assert y[:20].tolist() == list(range(10)) * 2
    # Same images, only reordered.
    assert np.isclose(x.sum(dtype=np.float64), cifar_jpeg[0].sum(dtype=np.float64))
    with pytest.raises(ValueError, match="order"):
        datasets.load_cifar10_test_jpeg(order="random")  # type: ignore[arg-type]


def test_cifar10_lossless_samples_match_their_jpeg_copies(
    cifar_lossless: tuple[np.ndarray, np.ndarray], cifar_interleaved: tuple[np.ndarray, np.ndarray]
) -> None:
    x, y = cifar_lossless
    assert x.shape == (20, 3, 32, 32) and x.dtype == np.float32 and y.dtype == np.int64
    assert y.tolist() == FIRST_20_CIFAR10_LABELS
    jpeg_x, jpeg_y = cifar_interleaved
    for i, label in enumerate(y):
        # These are the first test images, so earlier samples of the same class give the rank within class.
        rank = int((y[:i] == label).sum())
        copy = jpeg_x[10 * rank + label]  # interleaved position of (class, rank); every class has 1000
        assert jpeg_y[10 * rank + label] == label
        # The README bounds the JPEG error by 70/255; a wrong pairing or channel order would be far off.
        assert np.abs(copy - x[i]).max() <= 70.5 / 255
        assert np.abs(copy - x[i]).mean() <= 10 / 255


def test_higgs(shared: Path) -> None:
    x_train, y_train, x_test, y_test = datasets.load_higgs()
    assert x_train.shape == (7000, 28) and x_test.shape == (500, 28)
    assert x_train.dtype == np.float64 and y_train.dtype == np.int64
    assert set(np.unique(y_train)) == {0, 1} and set(np.unique(y_test)) <= {0, 1}
    assert np.isfinite(x_train).all()


# ------------------------------------------------------------------------------------------------- models


def test_mnist_cnn_accuracy_on_first_500(mnist: tuple[np.ndarray, np.ndarray]) -> None:
    model = load_mnist_cw_bn(device="cpu")
    assert not model.training
    x, y = mnist
    # 99.49% on all 10000 (README); the first 500 alone give 99.4%.
    assert _accuracy(model, x[:500], y[:500]) >= 0.98


def test_resnet20_on_lossless_samples(
    resnet: NormalizedModel, cifar_lossless: tuple[np.ndarray, np.ndarray]
) -> None:
    model = resnet
    assert isinstance(model, NormalizedModel) and not model.training
    x, y = cifar_lossless
    # All 20 are classified correctly with the weights shipped; allow a little numerical slack across devices.
    assert _accuracy(model, x, y) >= 0.9


def test_resnet20_normalises_inside(
    resnet: NormalizedModel, cifar_lossless: tuple[np.ndarray, np.ndarray]
) -> None:
    model = resnet
    x = torch.from_numpy(cifar_lossless[0][:4])
    mean = torch.tensor(CIFAR10_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(CIFAR10_STD).view(1, 3, 1, 1)
    with torch.inference_mode():
        torch.testing.assert_close(model(x), model.model((x - mean) / std))
    # The normalisation constants are not part of the checkpoint's keys.
    assert set(model.model.state_dict()) == {k.removeprefix("model.") for k in model.state_dict()}


# ------------------------------------------------------------------------------ built-in digits (no files)


def test_digits_split_is_seeded_and_scaled() -> None:
    x_train, y_train, x_test, y_test = load_digits_split(seed=0)
    assert x_train.shape == (1347, 1, 8, 8) and x_test.shape == (450, 1, 8, 8)
    assert x_train.dtype == np.float32 and y_train.dtype == np.int64
    assert x_train.min() == 0.0 and x_train.max() == 1.0
    assert set(np.unique(y_test)) == set(range(10))
    again = load_digits_split(seed=0)
    np.testing.assert_array_equal(again[3], y_test)
    assert not np.array_equal(load_digits_split(seed=1)[3], y_test)


def test_digits_cnn_reaches_95_percent() -> None:
    threads = torch.get_num_threads()
    model, accuracy = train_digits_cnn(seed=0)
    assert accuracy >= 0.95 and not model.training
    assert torch.get_num_threads() == threads  # the single-thread training setting was restored


def test_digits_cnn_is_deterministic() -> None:
    # Two short runs suffice to show that the seed fixes initialisation and batch order.
    model, _ = train_digits_cnn(seed=3, epochs=1)
    twin, _ = train_digits_cnn(seed=3, epochs=1)
    other, _ = train_digits_cnn(seed=4, epochs=1)
    for (name, a), b in zip(model.state_dict().items(), twin.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert not torch.equal(model.state_dict()["classifier.3.bias"], other.state_dict()["classifier.3.bias"])


def test_digits_lightgbm() -> None:
    model, accuracy = train_digits_lightgbm(seed=0)
    assert accuracy >= 0.95
    assert model.classes_.tolist() == list(range(10))  # so indices into classes_ are the digits themselves
    _, _, x_test, _ = load_digits_split(seed=0)
    flat = x_test.reshape(len(x_test), -1)
    small, twin = (train_digits_lightgbm(seed=0, n_estimators=10)[0] for _ in range(2))
    np.testing.assert_array_equal(small.predict_proba(flat), twin.predict_proba(flat))
