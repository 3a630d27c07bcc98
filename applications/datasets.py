"""Loaders for the real data sets kept in the read-only shared folder.

The shared folder (see ``shared/README.md``) sits next to the repository and is never copied into it. Every
loader takes an optional ``root``, the directory that holds that data set's files, so the same code reads a
copy kept anywhere else; with ``root=None`` it reads from :func:`shared_dir`.

All image loaders return ``float32`` arrays in ``[0, 1]``, NCHW, and ``int64`` labels: the format the models
in :mod:`applications.models` and the hard-label attack expect.
"""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path
from typing import Literal

import numpy as np

from applications.image_folder import find_labels, load_image_folder

__all__ = [
    "CIFAR10_CLASSES",
    "SHARED_ENV_VAR",
    "load_cifar10_lossless_samples",
    "load_cifar10_test_jpeg",
    "IMAGENET_RESOLUTION",
    "load_higgs",
    "load_image_folder",
    "load_imagenet_val",
    "load_mnist_test",
    "shared_dir",
    "shared_path",
]

#: Environment variable that overrides the location of the shared folder.
SHARED_ENV_VAR = "ZEROOPT_SHARED"

#: CIFAR-10 class names, indexed by label.
CIFAR10_CLASSES: tuple[str, ...] = (
    "airplane",
    "automobile",
    "bird",
    "cat",
    "deer",
    "dog",
    "frog",
    "horse",
    "ship",
    "truck",
)

#: Input side of the ImageNet models here (EfficientNet-Lite0): images are read at 256 then centre-cropped.
IMAGENET_RESOLUTION = 224

_IDX_IMAGES_MAGIC = 0x00000803  # unsigned byte data, 3 dimensions
_IDX_LABELS_MAGIC = 0x00000801  # unsigned byte data, 1 dimension
_LOSSLESS_NAME = re.compile(r"^cifar10_(\d+)_(\d)\.png$")
_HIGGS_COLUMNS = 29  # label + 28 features


def shared_dir() -> Path:
    """Location of the shared data and models folder.

    Returns
    -------
    pathlib.Path
        ``$ZEROOPT_SHARED`` when that variable is set and non-empty, otherwise ``<repo root>/../shared``,
        where the repository root is the parent of the ``applications`` package. The path is not checked for
        existence here; the loaders do that and say what is missing.
    """
    override = os.environ.get(SHARED_ENV_VAR, "").strip()
    if override:
        return Path(override).expanduser()
    repo_root = Path(__file__).resolve().parent.parent
    return repo_root.parent / "shared"


def shared_path(*parts: str) -> Path:
    """Path of a file or folder inside :func:`shared_dir`, checked to exist.

    Parameters
    ----------
    *parts
        Path components relative to the shared folder, e.g. ``("models", "mnist_cw_bn.pt")``.

    Returns
    -------
    pathlib.Path
        The existing path.

    Raises
    ------
    FileNotFoundError
        If the path does not exist; the message names it and the ``ZEROOPT_SHARED`` override.
    """
    path = shared_dir().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(_missing_message(path, from_shared=True))
    return path


def _missing_message(path: Path, *, from_shared: bool) -> str:
    if from_shared:
        hint = (
            f"it is looked up in the shared folder {shared_dir()}; set the environment variable "
            f"{SHARED_ENV_VAR} to the folder that holds 'data/' and 'models/' if your copy lives elsewhere"
        )
    else:
        hint = "check the root/path argument you passed"
    return f"required file not found: {path} ({hint})"


def _resolve(root: str | os.PathLike[str] | None, default: tuple[str, ...], name: str) -> Path:
    """Path of ``name`` under ``root`` (or under the shared default), raising a helpful error if missing."""
    base = shared_dir().joinpath(*default) if root is None else Path(root)
    path = base / name
    if not path.exists():
        raise FileNotFoundError(_missing_message(path, from_shared=root is None))
    return path


# --------------------------------------------------------------------------------------------------- MNIST


def _read_idx(path: Path, magic: int, ndim: int) -> np.ndarray:
    """Read a gzip'd IDX file of unsigned bytes, checking its magic number and its declared size."""
    with gzip.open(path, "rb") as fh:
        raw = fh.read()
    header_len = 4 + 4 * ndim
    if len(raw) < header_len:
        raise ValueError(f"{path} is not an IDX file: only {len(raw)} bytes after decompression")
    found = int.from_bytes(raw[:4], "big")
    if found != magic:
        raise ValueError(
            f"{path}: IDX magic number is {found:#010x}, expected {magic:#010x}; "
            "is this the right file (images vs labels) and not corrupted?"
        )
    dims = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    expected = int(np.prod(dims))
    if len(raw) - header_len != expected:
        raise ValueError(
            f"{path}: header declares dims {dims} ({expected} bytes of data) but the file holds "
            f"{len(raw) - header_len}; the file is truncated or corrupted"
        )
    return np.frombuffer(raw, dtype=np.uint8, offset=header_len).reshape(dims)


def load_mnist_test(root: str | os.PathLike[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Load the 10000 MNIST test images.

    Parameters
    ----------
    root
        Directory holding ``t10k-images-idx3-ubyte.gz`` and ``t10k-labels-idx1-ubyte.gz``;
        default ``shared_dir()/data/mnist``.

    Returns
    -------
    x : numpy.ndarray
        ``float32``, shape ``(10000, 1, 28, 28)``, pixels / 255 in ``[0, 1]``.
    y : numpy.ndarray
        ``int64``, shape ``(10000,)``, digits 0..9.

    Raises
    ------
    FileNotFoundError
        If a file is missing.
    ValueError
        If a file has the wrong IDX magic number, a size that does not match its header, or the image and
        label counts disagree.
    """
    images_path = _resolve(root, ("data", "mnist"), "t10k-images-idx3-ubyte.gz")
    labels_path = _resolve(root, ("data", "mnist"), "t10k-labels-idx1-ubyte.gz")
    images = _read_idx(images_path, _IDX_IMAGES_MAGIC, ndim=3)
    labels = _read_idx(labels_path, _IDX_LABELS_MAGIC, ndim=1)
    if images.shape[0] != labels.shape[0]:
        raise ValueError(
            f"{images_path} has {images.shape[0]} images but {labels_path} has {labels.shape[0]} labels"
        )
    if labels.max(initial=0) > 9:
        raise ValueError(f"{labels_path} holds labels up to {labels.max()}, expected digits 0..9")
    x = (images.astype(np.float32) / np.float32(255.0))[:, None, :, :]
    return x, labels.astype(np.int64)


# ------------------------------------------------------------------------------------------------ CIFAR-10


def _hwc_uint8_to_nchw_float(images: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(images.transpose(0, 3, 1, 2), dtype=np.float32) / np.float32(255.0)


def load_cifar10_test_jpeg(
    root: str | os.PathLike[str] | None = None, *, order: Literal["stored", "interleaved"] = "stored"
) -> tuple[np.ndarray, np.ndarray]:
    """Load the 10000 CIFAR-10 test images from their **JPEG-compressed** copies.

    These are lossy copies (pixel errors up to 70/255): a model scores lower on them than on the real test
    set (ResNet-20: about 81% instead of 91.78%), so do not compare accuracies or distortions with published
    figures without saying so. The lossless originals of the first 20 test images are in
    :func:`load_cifar10_lossless_samples`.

    Parameters
    ----------
    root
        Directory holding ``test_jpeg.npz``; default ``shared_dir()/data/cifar10``.
    order
        ``"stored"`` (default) keeps the file's order, which is **sorted by class**: the first 1000 images are
        all airplanes, so a prefix is not a representative sample. ``"interleaved"`` reorders round-robin
        over the classes, each class in its original test-set order (class 0's first image, class 1's first
        image, ..., class 9's first, class 0's second, ...), so any prefix of ``10 m`` images holds ``m`` of
        each class.
        The original global order cannot be recovered from the file.

    Returns
    -------
    x : numpy.ndarray
        ``float32``, shape ``(10000, 3, 32, 32)``, RGB pixels / 255 in ``[0, 1]``, NCHW.
    y : numpy.ndarray
        ``int64``, shape ``(10000,)``, labels 0..9 (names in :data:`CIFAR10_CLASSES`).

    Raises
    ------
    FileNotFoundError
        If the file is missing.
    ValueError
        If ``order`` is unknown or the file does not have the expected keys and shapes.
    """
    if order not in ("stored", "interleaved"):
        raise ValueError(f"order must be 'stored' or 'interleaved', got {order!r}")
    path = _resolve(root, ("data", "cifar10"), "test_jpeg.npz")
    with np.load(path) as data:
        missing = {"x", "y", "index_within_class"} - set(data.files)
        if missing:
            raise ValueError(f"{path} lacks the keys {sorted(missing)} (has {data.files})")
        images, labels, rank = data["x"], data["y"], data["index_within_class"]
    if images.ndim != 4 or images.shape[1:] != (32, 32, 3) or images.dtype != np.uint8:
        raise ValueError(f"{path}: 'x' should be uint8 (N, 32, 32, 3), got {images.dtype} {images.shape}")
    if labels.shape != (images.shape[0],) or rank.shape != labels.shape:
        raise ValueError(f"{path}: 'y' {labels.shape} / 'index_within_class' {rank.shape} do not match 'x'")
    if order == "interleaved":
        # lexsort sorts by the last key first: rank within class, then class.
        perm = np.lexsort((labels, rank))
        images, labels = images[perm], labels[perm]
    return _hwc_uint8_to_nchw_float(images), labels.astype(np.int64)


def load_cifar10_lossless_samples(
    root: str | os.PathLike[str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Load the lossless PNG copies of the first 20 CIFAR-10 test images.

    Parameters
    ----------
    root
        Directory holding ``cifar10_{i:02d}_{label}.png``;
        default ``shared_dir()/data/cifar10/samples_lossless``.

    Returns
    -------
    x : numpy.ndarray
        ``float32``, shape ``(N, 3, 32, 32)``, RGB pixels / 255 in ``[0, 1]``, NCHW, in test-set order.
    y : numpy.ndarray
        ``int64``, shape ``(N,)``, the labels encoded in the file names.

    Raises
    ------
    FileNotFoundError
        If the directory is missing or holds no matching PNG.
    ValueError
        If an image is not 32x32 or two files claim the same index.
    """
    from PIL import Image  # imported lazily: only this loader needs Pillow

    directory = _resolve(root, ("data", "cifar10"), "samples_lossless") if root is None else Path(root)
    if not directory.is_dir():
        raise FileNotFoundError(_missing_message(directory, from_shared=False))
    found: dict[int, tuple[Path, int]] = {}
    for path in directory.iterdir():
        match = _LOSSLESS_NAME.match(path.name)
        if match is None:
            continue
        index, label = int(match.group(1)), int(match.group(2))
        if index in found:
            raise ValueError(f"two files for sample {index}: {found[index][0].name} and {path.name}")
        found[index] = (path, label)
    if not found:
        raise FileNotFoundError(
            f"no file named like cifar10_00_3.png in {directory}"
            + ("" if root is not None else f" (set {SHARED_ENV_VAR} if the shared folder lives elsewhere)")
        )
    images, labels = [], []
    for index in sorted(found):
        path, label = found[index]
        with Image.open(path) as image:
            pixels = np.asarray(image.convert("RGB"), dtype=np.uint8)
        if pixels.shape != (32, 32, 3):
            raise ValueError(f"{path} is {pixels.shape[1]}x{pixels.shape[0]}, expected a 32x32 image")
        images.append(pixels)
        labels.append(label)
    return _hwc_uint8_to_nchw_float(np.stack(images)), np.asarray(labels, dtype=np.int64)


# --------------------------------------------------------------------------------------------------- HIGGS


def _load_higgs_file(path: Path) -> tuple[np.ndarray, np.ndarray]:
    table = np.loadtxt(path, dtype=np.float64, ndmin=2)
    if table.shape[1] != _HIGGS_COLUMNS:
        raise ValueError(
            f"{path} has {table.shape[1]} columns, expected {_HIGGS_COLUMNS} (label + 28 features)"
        )
    labels = table[:, 0]
    if not np.isin(labels, (0.0, 1.0)).all():
        raise ValueError(f"{path}: column 0 should be the 0/1 label, found other values")
    return np.ascontiguousarray(table[:, 1:]), labels.astype(np.int64)


def load_higgs(
    root: str | os.PathLike[str] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Load the HIGGS subset shipped with LightGBM's examples.

    Parameters
    ----------
    root
        Directory holding ``binary.train`` and ``binary.test``; default ``shared_dir()/data/higgs``.

    Returns
    -------
    x_train : numpy.ndarray
        ``float64``, shape ``(7000, 28)``: 21 low-level then 7 high-level features.
    y_train : numpy.ndarray
        ``int64``, shape ``(7000,)``, 1 = signal, 0 = background.
    x_test : numpy.ndarray
        ``float64``, shape ``(500, 28)``.
    y_test : numpy.ndarray
        ``int64``, shape ``(500,)``.

    Raises
    ------
    FileNotFoundError
        If a file is missing.
    ValueError
        If a file does not have 29 columns or its labels are not 0/1.
    """
    train_path = _resolve(root, ("data", "higgs"), "binary.train")
    test_path = _resolve(root, ("data", "higgs"), "binary.test")
    x_train, y_train = _load_higgs_file(train_path)
    x_test, y_test = _load_higgs_file(test_path)
    return x_train, y_train, x_test, y_test


# ------------------------------------------------------------------------------------------------ ImageNet


def load_imagenet_val(
    root: str | os.PathLike[str] | None = None, resolution: int = IMAGENET_RESOLUTION, *, limit: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Load the shared ImageNet validation images (or any image folder) at a model's resolution.

    Parameters
    ----------
    root
        Folder holding ``val_labels.txt`` (or ``labels.txt``) and the images, in ``root/val`` or ``root``
        itself; default ``shared_dir()/data/imagenet`` (the first 50 ILSVRC2012 validation images).
    resolution
        The model's input side ``r``: the shorter side is resized to ``round(256 r / 224)`` (bilinear), then
        the centre ``r x r`` is kept (:func:`applications.image_folder.preprocess`).
    limit
        Read only the first ``limit`` images listed.

    Returns
    -------
    x : numpy.ndarray
        ``float32``, shape ``(N, 3, r, r)``, RGB pixels / 255 in ``[0, 1]``, NCHW.
    y : numpy.ndarray
        ``int64``, shape ``(N,)``, class indices 0..999 in the usual (PyTorch/Caffe) order.

    Raises
    ------
    FileNotFoundError
        If the folder, its labels file or a listed image is missing.
    ValueError
        If the labels file is malformed or an image cannot be read.
    """
    folder = shared_dir() / "data" / "imagenet" if root is None else Path(root)
    if not folder.is_dir():
        raise FileNotFoundError(_missing_message(folder, from_shared=root is None))
    found = find_labels(folder)
    if found is None:
        raise FileNotFoundError(f"{folder} holds no labels file (val_labels.txt or labels.txt: '<image> <class>' "
                                "per line)")
    return load_image_folder(*found, resolution, limit=limit)
