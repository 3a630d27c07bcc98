"""A folder of images with a labels file, read at a model's resolution (the ImageNet validation protocol).

The labels file has one line per image, ``<file name> <class index>`` (ImageNet's ``val_labels.txt`` layout,
``ILSVRC2012_val_00000001.JPEG 65``). Each image is read as RGB, its shorter side resized to
``round(256 · r / 224)`` with PIL's bilinear filter (the longer side in proportion, rounded), centre-cropped to
``r × r`` and divided by 255: the standard evaluation preprocessing of ImageNet classifiers (resize 256, crop 224
at ``r = 224``).
:func:`applications.datasets.load_imagenet_val` reads the shared 50 validation images with it.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

__all__ = ["LABEL_FILES", "find_labels", "load_image_folder", "preprocess", "read_labels", "resize_side"]

#: Names a labels file is looked up under by :func:`find_labels`, in this order.
LABEL_FILES = ("val_labels.txt", "labels.txt")


def resize_side(resolution: int) -> int:
    """The shorter side an image is resized to before its centre ``resolution``-pixel crop: 256 at 224.

    Examples
    --------
    >>> resize_side(224), resize_side(240), resize_side(32)
    (256, 274, 37)
    """
    if int(resolution) < 1:
        raise ValueError(f"resolution must be a positive number of pixels, got {resolution}")
    return round(256 * int(resolution) / 224)


def preprocess(image: object, resolution: int = 224) -> np.ndarray:
    """One PIL image as a ``(3, r, r)`` float32 array in ``[0, 1]``: shorter side resized, centre crop, / 255.

    Parameters
    ----------
    image
        A ``PIL.Image.Image`` of any mode (converted to RGB) and size.
    resolution
        The side ``r`` of the square the model reads.

    Examples
    --------
    >>> from PIL import Image
    >>> preprocess(Image.new("RGB", (400, 300), (255, 0, 51)), 224)[:, 0, 0]
    array([1. , 0. , 0.2], dtype=float32)
    """
    from PIL import Image  # imported lazily: only image folders need Pillow

    side = resize_side(resolution)
    rgb = image.convert("RGB")  # type: ignore[attr-defined]
    w, h = rgb.size
    # The longer side rounded, which keeps the aspect ratio closest (torchvision's Resize truncates it).
    size = (side, round(side * h / w)) if w <= h else (round(side * w / h), side)
    if size != (w, h):
        rgb = rgb.resize(size, Image.BILINEAR)
    w, h = size
    # torchvision's CenterCrop: offsets rounded half to even, as Python's round does.
    left, top = int(round((w - resolution) / 2.0)), int(round((h - resolution) / 2.0))
    crop = rgb.crop((left, top, left + resolution, top + resolution))
    pixels = np.asarray(crop, dtype=np.uint8)
    return np.ascontiguousarray(pixels.transpose(2, 0, 1), dtype=np.float32) / np.float32(255.0)


def read_labels(path: str | os.PathLike[str]) -> list[tuple[str, int]]:
    """``(file name, class)`` pairs of a labels file, in its order.

    Raises
    ------
    ValueError
        If a line is not ``<name> <non-negative integer>`` (the line number is named), a name repeats, or the
        file lists no image.
    """
    pairs: list[tuple[str, int]] = []
    seen: set[str] = set()
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2 or not fields[1].isdigit():
            raise ValueError(f"{path}, line {number}: expected '<image file> <class index>', got {line.strip()!r}")
        if fields[0] in seen:
            raise ValueError(f"{path}, line {number}: {fields[0]} is listed twice")
        seen.add(fields[0])
        pairs.append((fields[0], int(fields[1])))
    if not pairs:
        raise ValueError(f"{path} lists no image")
    return pairs


def find_labels(folder: str | os.PathLike[str]) -> tuple[Path, Path] | None:
    """``(images folder, labels file)`` of an image folder, or ``None`` when ``folder`` holds no labels file.

    The labels file is the first of :data:`LABEL_FILES` inside ``folder``; the images are in ``folder/val``
    when that is a folder (the shared ImageNet layout), else in ``folder`` itself.
    """
    folder = Path(folder)
    for name in LABEL_FILES:
        labels = folder / name
        if labels.is_file():
            images = folder / "val"
            return (images if images.is_dir() else folder), labels
    return None


def load_image_folder(
    images: str | os.PathLike[str],
    labels: str | os.PathLike[str],
    resolution: int = 224,
    *,
    limit: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The images a labels file lists, preprocessed by :func:`preprocess`, and their classes.

    Parameters
    ----------
    images
        Folder holding the image files the labels file names.
    labels
        The labels file (``<file name> <class index>`` per line).
    resolution
        The model's input side ``r``.
    limit
        Read only the first ``limit`` images listed (``None``: all).

    Returns
    -------
    x : numpy.ndarray
        ``float32``, shape ``(N, 3, r, r)``, RGB pixels / 255 in ``[0, 1]``, NCHW, in the labels file's order.
    y : numpy.ndarray
        ``int64``, shape ``(N,)``.

    Raises
    ------
    FileNotFoundError
        If the labels file or a listed image is missing (named).
    ValueError
        If the labels file is malformed or an image cannot be decoded.

    Examples
    --------
    >>> import tempfile
    >>> from PIL import Image
    >>> folder = Path(tempfile.mkdtemp())
    >>> Image.new("RGB", (64, 48), (0, 128, 255)).save(folder / "a.png")
    >>> _ = (folder / "labels.txt").write_text("a.png 7\\n")
    >>> x, y = load_image_folder(folder, folder / "labels.txt", resolution=32)
    >>> x.shape, x.dtype, y.tolist()
    ((1, 3, 32, 32), dtype('float32'), [7])
    """
    from PIL import Image, UnidentifiedImageError

    labels = Path(labels)
    if not labels.is_file():
        raise FileNotFoundError(f"labels file not found: {labels}")
    pairs = read_labels(labels)[:limit]
    x = np.empty((len(pairs), 3, resolution, resolution), dtype=np.float32)
    for i, (name, _) in enumerate(pairs):
        path = Path(images) / name
        if not path.is_file():
            raise FileNotFoundError(f"{labels} lists {name}, which is not in {images}")
        try:
            with Image.open(path) as image:
                x[i] = preprocess(image, resolution)
        except (UnidentifiedImageError, OSError) as err:
            raise ValueError(f"{path}: not a readable image ({err})") from None
    return x, np.array([c for _, c in pairs], dtype=np.int64)
