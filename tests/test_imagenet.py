"""ImageNet as a setting: the image-folder loader (on images made here) and the ``imagenet`` data spec.

The loader's logic is checked on small images written to a temporary folder, so it needs neither the shared
folder nor the EfficientNet wheels; the test on the shared 50 validation images skips without them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PIL", reason="Pillow reads the image folders")
from PIL import Image  # noqa: E402

from applications import datasets  # noqa: E402
from applications.campaign.data import BUILTIN_DATA, load_data  # noqa: E402
from applications.image_folder import find_labels, load_image_folder, preprocess, read_labels, resize_side  # noqa: E402

SHARED_IMAGENET = datasets.shared_dir() / "data" / "imagenet"
# The class of the first ILSVRC2012 validation image (a published fact, independent of the files here).
FIRST_VAL_CLASS = 65


def _coordinates(width: int, height: int) -> Image.Image:
    """An RGB image whose red channel is the column and green the row (mod 256): crops can be read off it."""
    cols, rows = np.meshgrid(np.arange(width), np.arange(height))
    pixels = np.stack([cols % 256, rows % 256, np.full_like(cols, 7)], axis=-1).astype(np.uint8)
    return Image.fromarray(pixels, "RGB")


def test_resize_side_follows_256_over_224() -> None:
    assert [resize_side(r) for r in (224, 256, 240, 32, 1)] == [256, 293, 274, 37, 1]
    with pytest.raises(ValueError, match="positive"):
        resize_side(0)


def test_centre_crop_without_resize_keeps_the_middle_pixels() -> None:
    # Shorter side already 256 at r = 224: no resampling, so the crop is exact: columns 16.., rows 144..
    x = preprocess(_coordinates(256, 512), 224)
    assert x.shape == (3, 224, 224) and x.dtype == np.float32
    assert x[0, 0, 0] * 255 == pytest.approx(16) and x[1, 0, 0] * 255 == pytest.approx(144)
    assert x[0, 0, -1] * 255 == pytest.approx(16 + 223) and x[1, -1, 0] * 255 == pytest.approx((144 + 223) % 256)
    assert np.all(x[2] * 255 == pytest.approx(7))


def test_shorter_side_is_resized_and_the_aspect_ratio_kept() -> None:
    # 100 x 50 to r = 32: the shorter side goes to 37, the longer to 74; the crop is the middle 32 of each.
    image = _coordinates(100, 50)
    x = preprocess(image, 32)
    expected = image.resize((74, 37), Image.BILINEAR).crop((21, 2, 53, 34))
    assert np.array_equal(np.round(x * 255).astype(np.uint8), np.asarray(expected).transpose(2, 0, 1))


def test_any_mode_becomes_three_channels_in_unit_range() -> None:
    grey = Image.new("L", (40, 60), 51)
    rgba = Image.new("RGBA", (60, 40), (255, 0, 0, 10))
    assert np.allclose(preprocess(grey, 16), 0.2)
    y = preprocess(rgba, 16)
    assert y.shape == (3, 16, 16) and np.allclose(y[0], 1) and np.allclose(y[1:], 0)


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    """The shared ImageNet layout: val/ with three JPEGs, val_labels.txt listing them out of name order."""
    (tmp_path / "val").mkdir()
    colours = {"c.JPEG": (255, 0, 0), "a.JPEG": (0, 255, 0), "b.JPEG": (0, 0, 255)}
    for name, colour in colours.items():
        Image.new("RGB", (80, 60), colour).save(tmp_path / "val" / name, quality=100)
    (tmp_path / "val_labels.txt").write_text("c.JPEG 3\na.JPEG 999\n\nb.JPEG 0\n")
    yield tmp_path


def test_image_folder_reads_in_the_labels_files_order(folder: Path) -> None:
    x, y = datasets.load_imagenet_val(folder, resolution=24)
    assert x.shape == (3, 3, 24, 24) and x.dtype == np.float32 and y.dtype == np.int64
    assert y.tolist() == [3, 999, 0]
    assert [int(np.argmax(x[i].mean(axis=(1, 2)))) for i in range(3)] == [0, 1, 2]  # red, green, blue
    assert 0 <= x.min() and x.max() <= 1
    x2, y2 = datasets.load_imagenet_val(folder, resolution=24, limit=2)
    assert np.array_equal(x2, x[:2]) and y2.tolist() == [3, 999]


def test_a_flat_folder_with_labels_txt(tmp_path: Path) -> None:
    Image.new("RGB", (30, 30), (10, 20, 30)).save(tmp_path / "one.png")
    (tmp_path / "labels.txt").write_text("one.png 5\n")
    assert find_labels(tmp_path) == (tmp_path, tmp_path / "labels.txt")
    x, y = load_image_folder(tmp_path, tmp_path / "labels.txt", resolution=8)
    assert y.tolist() == [5] and np.allclose(x[:, :, 0, 0] * 255, [[10, 20, 30]])
    assert find_labels(tmp_path / "missing") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [("a.JPEG\n", "line 1: expected"), ("a.JPEG 1\na.JPEG 2\n", "line 2: a.JPEG is listed twice"),
     ("a.JPEG -1\n", "expected"), ("\n\n", "lists no image")],
)
def test_malformed_labels_files_are_refused(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "labels.txt").write_text(text)
    with pytest.raises(ValueError, match=message):
        read_labels(tmp_path / "labels.txt")


def test_missing_and_broken_images_are_named(folder: Path) -> None:
    (folder / "val_labels.txt").write_text("a.JPEG 1\nz.JPEG 2\n")
    with pytest.raises(FileNotFoundError, match="z.JPEG"):
        datasets.load_imagenet_val(folder)
    (folder / "val" / "z.JPEG").write_bytes(b"not a jpeg")
    with pytest.raises(ValueError, match="z.JPEG: not a readable image"):
        datasets.load_imagenet_val(folder)
    with pytest.raises(FileNotFoundError, match="no labels file"):
        datasets.load_imagenet_val(folder / "val")


def test_data_spec_reads_an_image_folder_path(folder: Path) -> None:
    assert "imagenet" in BUILTIN_DATA
    data = load_data(str(folder))
    assert data.x.shape == (3, 3, 224, 224) and data.bounds == (0.0, 1.0) and data.is_image
    assert data.y.tolist() == [3, 999, 0]


@pytest.fixture(scope="module")
def shared_val() -> tuple[np.ndarray, np.ndarray]:
    if not (SHARED_IMAGENET / "val_labels.txt").is_file():
        pytest.skip(f"shared ImageNet images not found at {SHARED_IMAGENET}; set ZEROOPT_SHARED to run this test")
    return datasets.load_imagenet_val()


def test_shared_validation_images(shared_val: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = shared_val
    assert x.shape == (50, 3, 224, 224) and y[0] == FIRST_VAL_CLASS and 0 <= y.min() and y.max() <= 999
    assert load_data("imagenet").x.shape == x.shape


def test_docstring_examples() -> None:
    import doctest

    import applications.image_folder

    result = doctest.testmod(applications.image_folder, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
