"""The attack's arithmetic made cheaper leaves its results exactly as they were.

Distortions (as float hex), per-input queries and model calls of three inputs of a random linear layer at
d = 784 and 3,072, attacked together with seed 0, stored from the code before the speed-ups of issue 48
(``benchmarks/overhead.py``): every change to the solver's and the boundary search's arithmetic must give
these bits back.
"""

from __future__ import annotations

import numpy as np
import pytest

from applications.hardlabel import attack

EXPECTED: dict[str, tuple[list[str], list[int], int]] = {
    "1x28x28/sign-growing/250": (
        ["0x1.2b30d1e978e6fp+0", "0x1.345712703c85bp+0", "0x1.511c815291fb9p-1"],
        [250, 250, 250],
        229,
    ),
    "1x28x28/sign-growing/1000": (
        ["0x1.79ac2b8ba1ae2p-2", "0x1.c8c670ebba885p-2", "0x1.d4478845f93d1p-3"],
        [1000, 1000, 1000],
        423,
    ),
    "1x28x28/sign/250": (["0x1.22cf70036be2bp+2", "0x1.dadbe7f30e46cp+1", "0x1.d47ba0305c1c4p+0"], [250, 250, 250], 78),
    "1x28x28/rgf/250": (["0x1.21cba7b21d5a7p+2", "0x1.d74908c9f820ep+1", "0x1.d1bd58b6c5861p+0"], [250, 250, 250], 85),
    "3x32x32/sign-growing/250": (
        ["0x1.f6d7ce5871b78p+0", "0x1.e911576c5236ep-1", "0x1.0c0bbd53949fdp+1"],
        [250, 250, 250],
        213,
    ),
    "3x32x32/sign-growing/1000": (
        ["0x1.378226240747bp-1", "0x1.4d45ab7305af5p-2", "0x1.72f612331dc1cp-1"],
        [1000, 1000, 1000],
        342,
    ),
    "3x32x32/sign/250": (["0x1.83e3d5980a723p+2", "0x1.b241590f8ef33p+1", "0x1.062e260b272f1p+3"], [250, 250, 250], 75),
    "3x32x32/rgf/250": (["0x1.81a88085aa1e2p+2", "0x1.afefadc787cdap+1", "0x1.03cddd3e1b54fp+3"], [250, 250, 250], 82),
}


def _linear(shape: tuple[int, ...], seed: int = 0):
    d = int(np.prod(shape))
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((10, d)).astype(np.float32) / np.float32(np.sqrt(d))
    x = rng.random((3, *shape), dtype=np.float32)
    return (lambda b: b.reshape(len(b), -1) @ w.T), x


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_results_bit_identical_to_before_the_speed_ups(key: str) -> None:
    shape_s, solver, budget = key.split("/")
    model, x = _linear(tuple(int(s) for s in shape_s.split("x")))
    res = attack(model, x, model(x).argmax(1), budget=int(budget), solver=solver, seed=0, n_classes=10)
    distortion, queries, calls = EXPECTED[key]
    assert [float(v).hex() for v in res.distortion] == distortion
    assert res.queries.tolist() == queries
    assert res.model_calls == calls
