"""The white-box L∞ floor: PGD bisected over ε finds the exact L∞ distance to a linear boundary."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _linear(w: np.ndarray, b: float):
    """Two classes: class 1 where w·x + b > 0."""
    weight = torch.as_tensor(w, dtype=torch.float32)

    class Linear(torch.nn.Module):
        def forward(self, x):
            z = x.reshape(len(x), -1) @ weight + b
            return torch.stack([torch.zeros_like(z), z], dim=1)

    model = Linear()

    def labels(x):
        return (np.asarray(x, dtype=np.float32).reshape(len(x), -1) @ w + b > 0).astype(np.int64)

    return model, labels


def test_the_floor_is_the_exact_linf_distance_to_a_linear_boundary_from_above():
    from benchmarks.studies.linf_floor import white_box_linf

    rng = np.random.default_rng(0)
    w = rng.standard_normal(50)
    x0 = rng.uniform(-0.5, 0.5, (4, 50)).astype(np.float32)
    b = -float((x0 @ w).max()) - 1.0  # every input in class 0
    model, labels = _linear(w, b)
    exact = -(x0.astype(np.float64) @ w + b) / np.abs(w).sum()  # the box (±10) clips nothing this close
    floor = white_box_linf(model, labels, x0, np.zeros(4, dtype=np.int64), (-10.0, 10.0), steps=40, restarts=1,
                           bisections=22)
    assert np.all(floor >= exact * (1 - 1e-4))  # a found point is adversarial: never below the true minimum
    np.testing.assert_allclose(floor, exact, rtol=1e-2)


def test_the_page_counts_inputs_at_and_below_the_floor():
    from benchmarks.studies.linf_floor import page, rows_beside

    study = [{"experiment": "e", "budget": 100, "key": "ours", "attack": "ours", "values": [1.0, 2.0, None]},
             {"experiment": "e", "budget": 100, "key": "rays", "attack": "RayS", "values": [0.9, 4.0, 3.0]}]
    rows = rows_beside(study, [1.0, 2.0, 3.0])
    ours, rays = rows
    assert ours["median_ratio"] == 1.0 and ours["at_floor"] == pytest.approx(2 / 3) and ours["below"] == 0
    assert rays["median_ratio"] == 1.0 and rays["below"] == 1
    text = "\n".join(page("e", rows, [1.0, 2.0, 3.0], {"steps": 1}, "cmd"))
    assert "asks about 0.900 × it" in text
