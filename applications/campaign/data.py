"""Turn a data name on the command line into inputs to attack: built-in sets or files.

Accepted forms of ``spec`` (see :func:`load_data`):

* ``digits`` (scikit-learn's bundled 8×8 digits, the test split of :mod:`applications.digits`; no download),
  ``mnist``, ``cifar10`` (the JPEG copies), ``higgs`` (the test rows) and ``imagenet`` (the 50 validation
  images, at 224 × 224) from the shared folder;
* a folder of images with a labels file ``val_labels.txt`` or ``labels.txt`` (``<image file> <class>`` per line;
  images in ``val/`` or beside it), read as ImageNet's are (:func:`applications.datasets.load_imagenet_val`);
* a folder holding MNIST's IDX files ``t10k-images-idx3-ubyte[.gz]`` and ``t10k-labels-idx1-ubyte[.gz]``;
* an ``.npz`` file with arrays ``x`` (inputs, batch first) and ``y`` (integer labels);
* a ``.csv`` file with the label in the first column and the features after it (HIGGS's layout);
* a LibSVM / SVMlight file (``.svm``, ``.libsvm``, ``.svmlight``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["BUILTIN_DATA", "Dataset", "load_data"]

BUILTIN_DATA = ("digits", "mnist", "cifar10", "higgs", "imagenet")
LIBSVM_SUFFIXES = (".svm", ".libsvm", ".svmlight")


@dataclass
class Dataset:
    """Inputs ``x`` (batch first, ``float32``), labels ``y`` (``int64``), the input domain ``bounds``."""

    name: str
    x: np.ndarray
    y: np.ndarray
    bounds: tuple[float, float]

    @property
    def is_image(self) -> bool:
        """Whether the inputs are images (``(C, H, W)`` or ``(H, W)``), for plots."""
        return self.x.ndim >= 3


def _tabular_bounds(x: np.ndarray) -> tuple[float, float]:
    """The global feature range, widened to whole numbers (as the benchmark's GBDT experiments do)."""
    return float(np.floor(x.min())), float(np.ceil(x.max()))


def _builtin(name: str) -> Dataset:
    from applications import datasets

    if name == "digits":
        from applications.digits import load_digits_split

        _, _, x, y = load_digits_split(seed=0)
        return Dataset(name, x, y, (0.0, 1.0))
    if name == "mnist":
        x, y = datasets.load_mnist_test()
        return Dataset(name, x, y, (0.0, 1.0))
    if name == "cifar10":
        x, y = datasets.load_cifar10_test_jpeg()
        return Dataset(name, x, y, (0.0, 1.0))
    if name == "imagenet":
        x, y = datasets.load_imagenet_val()
        return Dataset(name, x, y, (0.0, 1.0))
    x_train, _, x, y = datasets.load_higgs()
    return Dataset(name, x.astype(np.float32), y, _tabular_bounds(x_train))


def load_data(spec: str, *, bounds: tuple[float, float] | None = None) -> Dataset:
    """Load the inputs named by ``spec`` (see the module docstring for the accepted forms).

    Parameters
    ----------
    spec
        A built-in name or a path.
    bounds
        The input domain; default ``(0, 1)`` for images and the global feature range for tabular files.

    Raises
    ------
    FileNotFoundError
        When a path does not exist.
    ValueError
        When a file's layout is not one of the accepted ones.
    """
    if spec in BUILTIN_DATA:
        data = _builtin(spec)
    else:
        path = Path(spec).expanduser()
        if not path.exists():
            raise FileNotFoundError(
                f"data {spec!r} is neither a built-in name ({', '.join(BUILTIN_DATA)}) nor an existing path"
            )
        data = _from_path(path)
    if bounds is not None:
        data.bounds = (float(bounds[0]), float(bounds[1]))
    lo, hi = data.bounds
    if data.x.min() < lo or data.x.max() > hi:
        raise ValueError(
            f"{spec}: inputs span [{data.x.min():.4g}, {data.x.max():.4g}], outside the bounds {data.bounds}; "
            "pass --bounds LO,HI or rescale the data"
        )
    return data


def _from_path(path: Path) -> Dataset:
    name = str(path)
    if path.is_dir():
        from applications.datasets import load_imagenet_val, load_mnist_test
        from applications.image_folder import find_labels

        x, y = load_imagenet_val(path) if find_labels(path) is not None else load_mnist_test(path)
        return Dataset(name, x, y, (0.0, 1.0))
    suffix = path.suffix.lower()
    if suffix == ".npz":
        with np.load(path) as archive:
            if "x" not in archive or "y" not in archive:
                raise ValueError(f"{path}: an .npz needs arrays 'x' and 'y', found {sorted(archive.files)}")
            x, y = archive["x"].astype(np.float32), archive["y"].astype(np.int64)
        default = (0.0, 1.0) if x.ndim >= 3 else _tabular_bounds(x)
        return Dataset(name, x, y, default)
    if suffix == ".csv":
        table = np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=2)
        return _labelled_table(name, table[:, 1:], table[:, 0])
    if suffix in LIBSVM_SUFFIXES:
        from sklearn.datasets import load_svmlight_file

        x, y = load_svmlight_file(str(path))
        return _labelled_table(name, np.asarray(x.todense()), y)
    raise ValueError(
        f"{path}: unknown data format {suffix!r}; use a folder of images with labels.txt, a folder of IDX files, "
        f".npz (x, y), .csv (label first) or LibSVM ({', '.join(LIBSVM_SUFFIXES)})"
    )


def _labelled_table(name: str, x: np.ndarray, labels: np.ndarray) -> Dataset:
    if not np.all(labels == np.round(labels)) or labels.min() < 0:
        raise ValueError(f"{name}: labels must be non-negative integers (classes 0..K-1)")
    return Dataset(name, np.ascontiguousarray(x, dtype=np.float32), labels.astype(np.int64), _tabular_bounds(x))


def resolve_name(spec: str) -> str:
    """The name under which a dataset is stored: built-in names as is, paths made absolute."""
    return spec if spec in BUILTIN_DATA else os.path.abspath(os.path.expanduser(spec))
