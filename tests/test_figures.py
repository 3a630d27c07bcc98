"""The pages' PNG files: written as palette PNGs, smaller than matplotlib's RGBA, and converted in place."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from applications.figures import compact_png, main, save_figure  # noqa: E402


def _figure(transparent: bool = False) -> plt.Figure:
    rng = np.random.default_rng(0)
    fig, ax = plt.subplots(figsize=(5, 3))
    for k in range(5):
        ax.plot(np.cumsum(rng.normal(size=300)), label=f"run {k}")
    ax.fill_between(np.arange(300), -5, 5, alpha=0.2)
    ax.legend()
    if transparent:
        fig.patch.set_alpha(0.0)
    return fig


def test_saved_figures_are_palette_pngs_and_smaller(tmp_path: Path) -> None:
    fig = _figure()
    fig.savefig(tmp_path / "plain.png", dpi=100)
    save_figure(fig, tmp_path / "small.png")
    plt.close(fig)
    plain, small = Image.open(tmp_path / "plain.png"), Image.open(tmp_path / "small.png")
    assert plain.mode == "RGBA" and small.mode == "P" and small.size == plain.size
    assert (tmp_path / "small.png").stat().st_size < 0.6 * (tmp_path / "plain.png").stat().st_size
    # the picture is the same up to palette rounding: no pixel off by more than a few grey levels on average
    diff = np.abs(np.asarray(plain.convert("RGB"), int) - np.asarray(small.convert("RGB"), int))
    assert diff.mean() < 3 and np.percentile(diff, 99) < 30


def test_transparency_is_kept_and_conversion_is_idempotent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fig = _figure(transparent=True)
    fig.savefig(tmp_path / "a.png", dpi=80)
    (tmp_path / "sub").mkdir()
    fig.savefig(tmp_path / "sub" / "b_examples.png", dpi=80)
    plt.close(fig)
    assert main([str(tmp_path)]) == 0
    assert "2 PNG file(s)" in capsys.readouterr().out
    a = Image.open(tmp_path / "a.png")
    assert a.mode == "P" and a.convert("RGBA").getextrema()[3][0] == 0  # transparent pixels stay transparent
    assert compact_png(tmp_path / "a.png") == 0  # already a palette PNG: nothing to do
