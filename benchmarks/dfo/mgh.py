"""The 22 Moré–Garbow–Hillstrom residual functions of the Moré–Wild benchmark, and their standard starts.

Each function maps a point ``x`` (shape ``(n,)``) to its residual vector ``F(x)`` (shape ``(m,)``); the
problems are built from them in :mod:`benchmarks.dfo.more_wild`. Definitions and data follow Moré, Garbow &
Hillstrom, "Testing unconstrained optimization software", ACM TOMS 7(1), 1981, with the starting points of
Moré & Wild's benchmark (SIAM J. Optim. 20(1), 2009), which differ from MGH's for Watson, Cube and Osborne 1.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

Vec = NDArray[np.float64]

BARD_Y = np.array([0.14, 0.18, 0.22, 0.25, 0.29, 0.32, 0.35, 0.39, 0.37, 0.58, 0.73, 0.96, 1.34, 2.10, 4.39])
KOWALIK_U = np.array([4.0, 2.0, 1.0, 0.5, 0.25, 0.167, 0.125, 0.1, 0.0833, 0.0714, 0.0625])
KOWALIK_Y = np.array([0.1957, 0.1947, 0.1735, 0.16, 0.0844, 0.0627, 0.0456, 0.0342, 0.0323, 0.0235, 0.0246])
MEYER_Y = np.array([34780, 28610, 23650, 19630, 16370, 13720, 11540, 9744, 8261, 7030, 6005, 5147, 4427, 3820,
                    3307, 2872], dtype=float)
OSBORNE1_Y = np.array([0.844, 0.908, 0.932, 0.936, 0.925, 0.908, 0.881, 0.850, 0.818, 0.784, 0.751, 0.718, 0.685,
                       0.658, 0.628, 0.603, 0.580, 0.558, 0.538, 0.522, 0.506, 0.490, 0.478, 0.467, 0.457, 0.448,
                       0.438, 0.431, 0.424, 0.420, 0.414, 0.411, 0.406])
OSBORNE2_Y = np.array([1.366, 1.191, 1.112, 1.013, 0.991, 0.885, 0.831, 0.847, 0.786, 0.725, 0.746, 0.679, 0.608,
                       0.655, 0.616, 0.606, 0.602, 0.626, 0.651, 0.724, 0.649, 0.649, 0.694, 0.644, 0.624, 0.661,
                       0.612, 0.558, 0.533, 0.495, 0.500, 0.423, 0.395, 0.375, 0.372, 0.391, 0.396, 0.405, 0.428,
                       0.429, 0.523, 0.562, 0.607, 0.653, 0.672, 0.708, 0.633, 0.668, 0.645, 0.632, 0.591, 0.559,
                       0.597, 0.625, 0.739, 0.710, 0.729, 0.720, 0.636, 0.581, 0.428, 0.292, 0.162, 0.098, 0.054])
HEART_Y = np.array([-0.69, -0.044, -1.57, -1.31, -2.65, 2.0, -12.6, 9.48])


def linear_full_rank(x: Vec, m: int) -> Vec:
    out = np.full(m, -2.0 * x.sum() / m - 1.0)
    out[: len(x)] += x
    return out


def linear_rank_one(x: Vec, m: int) -> Vec:
    return np.arange(1, m + 1) * (np.arange(1, len(x) + 1) @ x) - 1.0


def linear_rank_one_zero(x: Vec, m: int) -> Vec:
    n = len(x)
    out = np.arange(m) * (np.arange(2, n) @ x[1:-1]) - 1.0
    out[-1] = -1.0
    return out


def rosenbrock(x: Vec, m: int) -> Vec:
    return np.array([10.0 * (x[1] - x[0] ** 2), 1.0 - x[0]])


def helical_valley(x: Vec, m: int) -> Vec:
    if x[0] > 0:
        theta = np.arctan(x[1] / x[0]) / (2 * np.pi)
    elif x[0] < 0:
        theta = np.arctan(x[1] / x[0]) / (2 * np.pi) + 0.5
    else:
        theta = 0.25 * np.sign(x[1])
    return np.array([10.0 * (x[2] - 10.0 * theta), 10.0 * (np.hypot(x[0], x[1]) - 1.0), x[2]])


def powell_singular(x: Vec, m: int) -> Vec:
    return np.array([x[0] + 10 * x[1], np.sqrt(5.0) * (x[2] - x[3]), (x[1] - 2 * x[2]) ** 2,
                     np.sqrt(10.0) * (x[0] - x[3]) ** 2])


def freudenstein_roth(x: Vec, m: int) -> Vec:
    return np.array([-13 + x[0] + ((5 - x[1]) * x[1] - 2) * x[1], -29 + x[0] + ((x[1] + 1) * x[1] - 14) * x[1]])


def bard(x: Vec, m: int) -> Vec:
    u = np.arange(1, 16, dtype=float)
    v = 16 - u
    return BARD_Y - (x[0] + u / (v * x[1] + np.minimum(u, v) * x[2]))


def kowalik_osborne(x: Vec, m: int) -> Vec:
    u = KOWALIK_U
    return KOWALIK_Y - x[0] * u * (u + x[1]) / (u * (u + x[2]) + x[3])


def meyer(x: Vec, m: int) -> Vec:
    t = 45.0 + 5.0 * np.arange(1, 17)
    return x[0] * np.exp(x[1] / (t + x[2])) - MEYER_Y


def watson(x: Vec, m: int) -> Vec:
    n = len(x)
    t = np.arange(1, 30)[:, None] / 29.0
    j = np.arange(n)
    s1 = (j[1:] * t ** (j[1:] - 1)) @ x[1:]
    s2 = (t**j) @ x
    return np.concatenate([s1 - s2**2 - 1.0, [x[0], x[1] - x[0] ** 2 - 1.0]])


def box_3d(x: Vec, m: int) -> Vec:
    t = 0.1 * np.arange(1, m + 1)
    return np.exp(-t * x[0]) - np.exp(-t * x[1]) - x[2] * (np.exp(-t) - np.exp(-10 * t))


def jennrich_sampson(x: Vec, m: int) -> Vec:
    i = np.arange(1, m + 1)
    return 2.0 + 2.0 * i - (np.exp(i * x[0]) + np.exp(i * x[1]))


def brown_dennis(x: Vec, m: int) -> Vec:
    t = np.arange(1, m + 1) / 5.0
    return (x[0] + t * x[1] - np.exp(t)) ** 2 + (x[2] + x[3] * np.sin(t) - np.cos(t)) ** 2


def chebyquad(x: Vec, m: int) -> Vec:
    y = 2.0 * x - 1.0
    # Shifted Chebyshev polynomials T_i(2x - 1) by their three-term recurrence.
    prev, cur = np.ones_like(y), y.copy()
    out = np.empty(m)
    for i in range(1, m + 1):
        out[i - 1] = cur.mean() + (1.0 / (i * i - 1.0) if i % 2 == 0 else 0.0)
        prev, cur = cur, 2.0 * y * cur - prev
    return out


def brown_almost_linear(x: Vec, m: int) -> Vec:
    out = x + x.sum() - (len(x) + 1.0)
    out[-1] = np.prod(x) - 1.0
    return out


def osborne_1(x: Vec, m: int) -> Vec:
    t = 10.0 * np.arange(33)
    return OSBORNE1_Y - (x[0] + x[1] * np.exp(-t * x[3]) + x[2] * np.exp(-t * x[4]))


def osborne_2(x: Vec, m: int) -> Vec:
    t = np.arange(65) / 10.0
    model = x[0] * np.exp(-t * x[4]) + sum(x[k] * np.exp(-((t - x[k + 7]) ** 2) * x[k + 4]) for k in (1, 2, 3))
    return OSBORNE2_Y - model


def bdqrtic(x: Vec, m: int) -> Vec:
    k = len(x) - 4
    quad = x[:k] ** 2 + 2 * x[1:k + 1] ** 2 + 3 * x[2:k + 2] ** 2 + 4 * x[3:k + 3] ** 2 + 5 * x[-1] ** 2
    return np.concatenate([3.0 - 4.0 * x[:k], quad])


def cube(x: Vec, m: int) -> Vec:
    out = np.empty(len(x))
    out[0] = x[0] - 1.0
    out[1:] = 10.0 * (x[1:] - x[:-1] ** 3)
    return out


def _mancino_sum(xi: float, i: int, n: int) -> float:
    v = np.sqrt(xi**2 + i / np.arange(1, n + 1))
    lv = np.log(v)
    return float(np.sum(v * (np.sin(lv) ** 5 + np.cos(lv) ** 5)))


def mancino(x: Vec, m: int) -> Vec:
    n = len(x)
    return np.array([1400.0 * x[i] + (i + 1 - 50.0) ** 3 + _mancino_sum(x[i], i + 1, n) for i in range(n)])


def heart_8(x: Vec, m: int) -> Vec:
    a, b, c, d, t, u, v, w = x
    return np.array([
        a + b - HEART_Y[0],
        c + d - HEART_Y[1],
        t * a + u * b - v * c - w * d - HEART_Y[2],
        v * a + w * b + t * c + u * d - HEART_Y[3],
        a * (t**2 - v**2) - 2 * c * t * v + b * (u**2 - w**2) - 2 * d * u * w - HEART_Y[4],
        c * (t**2 - v**2) + 2 * a * t * v + d * (u**2 - w**2) + 2 * b * u * w - HEART_Y[5],
        a * t * (t**2 - 3 * v**2) + c * v * (v**2 - 3 * t**2) + b * u * (u**2 - 3 * w**2)
        + d * w * (w**2 - 3 * u**2) - HEART_Y[6],
        c * t * (t**2 - 3 * v**2) - a * v * (v**2 - 3 * t**2) + d * u * (u**2 - 3 * w**2)
        - b * w * (w**2 - 3 * u**2) - HEART_Y[7],
    ])


def _mancino_start(n: int, scale: float = -8.710996e-4) -> Vec:
    """Moré–Wild's start for Mancino: ``scale`` times the residual's constant part at x = 0."""
    return np.array([scale * ((i - 50.0) ** 3 + _mancino_sum(0.0, i, n)) for i in range(1, n + 1)])


#: The functions by Moré–Wild's number (1–22): name, residuals and standard start (a function of n).
FUNCTIONS: dict[int, tuple[str, Callable[[Vec, int], Vec], Callable[[int], Vec]]] = {
    1: ("linear_full_rank", linear_full_rank, np.ones),
    2: ("linear_rank_one", linear_rank_one, np.ones),
    3: ("linear_rank_one_zero", linear_rank_one_zero, np.ones),
    4: ("rosenbrock", rosenbrock, lambda n: np.array([-1.2, 1.0])),
    5: ("helical_valley", helical_valley, lambda n: np.array([-1.0, 0.0, 0.0])),
    6: ("powell_singular", powell_singular, lambda n: np.array([3.0, -1.0, 0.0, 1.0])),
    7: ("freudenstein_roth", freudenstein_roth, lambda n: np.array([0.5, -2.0])),
    8: ("bard", bard, np.ones),
    9: ("kowalik_osborne", kowalik_osborne, lambda n: np.array([0.25, 0.39, 0.415, 0.39])),
    10: ("meyer", meyer, lambda n: np.array([0.02, 4000.0, 250.0])),
    11: ("watson", watson, lambda n: np.full(n, 0.5)),
    12: ("box_3d", box_3d, lambda n: np.array([0.0, 10.0, 20.0])),
    13: ("jennrich_sampson", jennrich_sampson, lambda n: np.array([0.3, 0.4])),
    14: ("brown_dennis", brown_dennis, lambda n: np.array([25.0, 5.0, -5.0, -1.0])),
    15: ("chebyquad", chebyquad, lambda n: np.arange(1, n + 1) / (n + 1.0)),
    16: ("brown_almost_linear", brown_almost_linear, lambda n: np.full(n, 0.5)),
    17: ("osborne_1", osborne_1, lambda n: np.array([0.5, 1.5, 1.0, 0.01, 0.02])),
    18: ("osborne_2", osborne_2, lambda n: np.array([1.3, 0.65, 0.65, 0.7, 0.6, 3.0, 5.0, 7.0, 2.0, 4.5, 5.5])),
    19: ("bdqrtic", bdqrtic, np.ones),
    20: ("cube", cube, lambda n: np.full(n, 0.5)),
    21: ("mancino", mancino, _mancino_start),
    22: ("heart_8", heart_8, lambda n: np.array([-0.3, -0.39, 0.3, -0.344, -1.2, 2.69, 1.59, -1.5])),
}
