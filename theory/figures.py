"""Small PNG files for the pages the repository keeps: save a figure, then store it as a 256-colour palette PNG.

A matplotlib plot has few distinct colours besides anti-aliasing shades, so an adaptive 256-colour palette
(Pillow's fast octree, no dithering) looks the same and takes a third of the bytes of the RGBA file matplotlib
writes. Pictures of inputs (``photo=True``: CIFAR images, perturbations) use a median-cut palette, which keeps
their colours closer. A file is only replaced when the palette version is smaller.

Pillow is imported only when a PNG is compacted, and the figure is whatever object has ``savefig``, so the
module itself needs neither matplotlib nor Pillow. ``python -m applications.figures`` converts existing PNGs.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

__all__ = ["DPI", "compact_png", "save_figure"]

DPI = 100  # the pages' figures: legible at 100 % zoom, and a fifth fewer pixels than matplotlib's usual 110-120


def compact_png(path: str | Path, *, photo: bool = False) -> int:
    """Rewrite the PNG at ``path`` as a palette PNG if that is smaller; return the bytes saved.

    Parameters
    ----------
    path
        A PNG file (RGB or RGBA; transparency is kept).
    photo
        A picture of inputs rather than a plot: median-cut palette (closer colours) instead of fast octree.
    """
    from PIL import Image

    path = Path(path)
    before = path.stat().st_size
    with Image.open(path) as im:
        im.load()
        if im.mode == "P":
            return 0  # already a palette image
        opaque = im.mode != "RGBA" or im.getextrema()[3][0] == 255
        if opaque:
            method = Image.Quantize.MEDIANCUT if photo else Image.Quantize.FASTOCTREE
            small = im.convert("RGB").quantize(colors=256, method=method, dither=Image.Dither.NONE)
        else:  # only the octree quantizer keeps an alpha channel
            small = im.convert("RGBA").quantize(colors=256, method=Image.Quantize.FASTOCTREE,
                                                dither=Image.Dither.NONE)
    buffer = io.BytesIO()
    small.save(buffer, format="PNG", optimize=True)
    data = buffer.getvalue()
    if len(data) >= before:
        return 0
    path.write_bytes(data)
    return before - len(data)


def save_figure(fig: Any, path: str | Path, *, dpi: int = DPI, photo: bool = False, **savefig: Any) -> Path:
    """``fig.savefig(path, dpi=dpi)``, then :func:`compact_png` for a PNG; returns ``path``.

    Examples
    --------
    >>> import tempfile, matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(figsize=(3, 2)); _ = ax.plot([0, 1], [1, 0])
    >>> out = save_figure(fig, Path(tempfile.mkdtemp()) / "line.png"); plt.close(fig)
    >>> from PIL import Image; Image.open(out).mode
    'P'
    """
    path = Path(path)
    fig.savefig(path, dpi=dpi, **savefig)
    if path.suffix.lower() == ".png":
        compact_png(path, photo=photo)
    return path
