"""The attack's arithmetic made cheaper leaves its results exactly as they were.

Distortions (as float hex), per-input queries and model calls of three inputs of a random linear layer at
d = 784 and 3,072, attacked together with seed 0, stored from the code before the speed-ups of issue 48
(``benchmarks/overhead.py``): every change to the solver's and the boundary search's arithmetic must give
these bits back. The bits are those of one CPU's BLAS kernels (float32 products sum in a kernel-dependent order):
these were recorded by running the attack below at commit 44d9d9d, whose code is the one before the speed-ups, on
an x86_64 machine without AVX-512; on a CPU with other kernels, record them there the same way.
"""

from __future__ import annotations

import numpy as np
import pytest

from applications.hardlabel import attack

EXPECTED: dict[str, tuple[list[str], list[int], int]] = {
    "1x28x28/rgf/250": (
        ["0x1.21cbc3e5b23bdp+2", "0x1.d74908c9f820dp+1", "0x1.d1bcfb80f84c7p+0"],
        [250, 250, 250],
        85,
    ),
    "1x28x28/sign-growing/1000": (
        ["0x1.79ac2b8ba1ae2p-2", "0x1.c8c670ebba885p-2", "0x1.d4478845f93d1p-3"],
        [1000, 1000, 1000],
        423,
    ),
    "1x28x28/sign-growing/250": (
        ["0x1.2b30d1e978e6fp+0", "0x1.345712703c85bp+0", "0x1.511c815291fb9p-1"],
        [250, 250, 250],
        229,
    ),
    "1x28x28/sign/250": (
        ["0x1.22cf8c8ddbc48p+2", "0x1.dadbe7f30e46cp+1", "0x1.d47b41f7b07f5p+0"],
        [250, 250, 250],
        78,
    ),
    "3x32x32/rgf/250": (
        ["0x1.81a8a6921e453p+2", "0x1.aff0046dd68ddp+1", "0x1.03cddd3e1b54fp+3"],
        [250, 250, 250],
        82,
    ),
    "3x32x32/sign-growing/1000": (
        ["0x1.378226240747bp-1", "0x1.4d45ab7305af5p-2", "0x1.72f612331dc1bp-1"],
        [1000, 1000, 1000],
        342,
    ),
    "3x32x32/sign-growing/250": (
        ["0x1.f6d7ce5871b78p+0", "0x1.e911576c5236ep-1", "0x1.0c0bbd53949fdp+1"],
        [250, 250, 250],
        213,
    ),
    "3x32x32/sign/250": (
        ["0x1.83e3fbcbe68e8p+2", "0x1.b241b0066f2b4p+1", "0x1.062e260b272f1p+3"],
        [250, 250, 250],
        75,
    ),
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
