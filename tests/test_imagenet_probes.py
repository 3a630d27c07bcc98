"""benchmarks.studies.imagenet_probes on a tiny fake model and images: no shared data, no EfficientNet wheel."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks.studies import imagenet_probes as ip

SHAPE = (3, 16, 16)


def _fake(n: int = 6, seed: int = 0):
    """A 3-class linear classifier on (3, 16, 16) images, and images it labels 0/1/2 (the first ones correctly)."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((3, int(np.prod(SHAPE))))

    def labels(x: np.ndarray) -> np.ndarray:
        return np.argmax(np.asarray(x, dtype=float).reshape(len(x), -1) @ w.T, axis=1)

    x = rng.uniform(0.2, 0.8, (n, *SHAPE)).astype(np.float32)
    y = labels(x)
    y[-1] = (y[-1] + 1) % 3  # one image the model gets wrong
    return labels, x, y


def test_first_correct_follows_the_order_and_skips_misclassified():
    labels, x, y = _fake()
    order = np.array([5, 0, 1, 2, 3, 4])
    assert ip.first_correct(labels, x, y, order, 3, chunk=2).tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="only 5 of 6"):
        ip.first_correct(labels, x, y, order, 6)


def test_order_is_the_suites():
    pytest.importorskip("torch")
    from benchmarks.experiment_base import seeded_rng

    assert ip.imagenet_order(50, 0).tolist() == seeded_rng(0, "imagenet").permutation(50).tolist()


def test_cells_summary_and_page(tmp_path):
    labels, x, y = _fake()
    index = np.array([0, 1])
    records = []
    for config in ("full-space", "low-frequency"):
        for budget in (80, 150):
            cell = ip.run_cell(labels, x, y, index, config, budget, seed=0, n_classes=3)
            assert [r["image"] for r in cell] == [0, 1]
            assert all(r["queries"] <= budget and r["success"] and np.isfinite(r["l2"]) for r in cell)
            assert all(r["own_s"] <= r["wall_s"] and r["own_ms_per_query"] > 0 for r in cell)
            records += cell
    summary = ip.summarize(records)
    assert [(s["budget"], s["config"]) for s in summary] == [(80, "full-space"), (80, "low-frequency"),
                                                            (150, "full-space"), (150, "low-frequency")]
    assert all(s["ratios"] == [1.0, 1.0] for s in summary if s["config"] == "full-space")
    low = summary[1]
    by_image = {r["image"]: r["l2"] for r in records if r["config"] == "low-frequency" and r["budget"] == 80}
    base = {r["image"]: r["l2"] for r in records if r["config"] == "full-space" and r["budget"] == 80}
    assert low["ratios"] == pytest.approx([by_image[i] / base[i] for i in (0, 1)])
    assert low["median_l2"] == pytest.approx(np.median(list(by_image.values())))

    cache = {"records": records, "samplers": ip.sampler_cost(SHAPE, qs=(4,), reps=1), "meta": {"k": 2}}
    out = tmp_path / "page" / "README.md"
    ip.write(out, "python -m benchmarks.studies.imagenet_probes --k 2", cache)
    out.write_text(out.read_text() + "A person's reading.\n")
    text = ip.write(out, "python -m benchmarks.studies.imagenet_probes --k 2", cache)
    assert text.splitlines()[3] == "python -m benchmarks.studies.imagenet_probes --k 2"
    assert "## Budget 80" in text and "## Budget 150" in text and "| low-frequency |" in text
    assert text.count("A person's reading.") == 1 and text.rstrip().endswith("A person's reading.")
    data = json.loads(out.with_suffix(".json").read_text())
    assert len(data["records"]) == 8 and {r["sampler"] for r in data["samplers"]} == set(ip.SAMPLERS)


def test_cache_round_trip(tmp_path):
    path = tmp_path / "c.json"
    assert ip.load_cache(path) == {"records": [], "samplers": [], "meta": {}}
    ip.save_cache(path, {"records": [{"a": 1}], "samplers": [], "meta": {"k": 1}})
    assert ip.load_cache(path)["records"] == [{"a": 1}]
