"""The search over sign vectors (zeroopt.sign_flips) and the L∞ attack it runs by default."""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt
from zeroopt.recipes.sign_flips import BlockFlips, block_order, signs_of


def test_blocks_halve_level_by_level_and_single_coordinates_repeat() -> None:
    part = BlockFlips()
    blocks, position = part.blocks(5, (0, 0), 1 + 2 + 3 + 5 + 4)
    # levels of ⌈5/2ˡ⌉ coordinates, the last block of a level shorter: 5 | 3 2 | 2 2 1 | 1 1 1 1 1 | 1 1 1 1
    assert [len(b) for b in blocks] == [5, 3, 2, 2, 2, 1] + [1] * 9
    assert [b.tolist() for b in blocks[1:3]] == [[0, 1, 2], [3, 4]]
    assert blocks[-4].tolist() == [0] and position == (3, 4)  # level 3 (single coordinates) again from 0
    assert all(np.array_equal(np.sort(np.concatenate(blocks[k:k + n])), np.arange(5))
               for k, n in ((0, 1), (1, 2), (3, 3)))  # each level covers every coordinate once


def test_revisit_starts_the_schedule_again_once_blocks_are_single_coordinates() -> None:
    blocks, position = BlockFlips(revisit=1).blocks(5, (3, 0), 5 + 2 + 3)
    assert [len(b) for b in blocks] == [1] * 5 + [3, 2] + [2, 2, 1]  # level 3, then levels 1 and 2 again
    assert position == (3, 0)
    with pytest.raises(ValueError, match="revisit"):
        zeroopt.sign_flips(5, revisit=-1)


def test_channel_tiles_are_squares_of_one_channel_at_a_time() -> None:
    order = block_order(3 * 4 * 4, (3, 4, 4), "channel-tiles")
    assert np.array_equal(np.sort(order), np.arange(48))
    assert {int(k) // 16 for k in order[:16]} == {0}  # the first third: channel 0 whole
    assert {divmod(int(k) % 16, 4) for k in order[:4]} == {(0, 0), (0, 1), (1, 0), (1, 1)}  # its top-left tile
    assert np.array_equal(block_order(16, (1, 4, 4), "channel-tiles"), block_order(16, (1, 4, 4), "tiles"))


def test_tiles_are_squares_of_the_image_across_its_channels() -> None:
    order = block_order(3 * 4 * 4, (3, 4, 4), "tiles")
    assert np.array_equal(np.sort(order), np.arange(48))
    pixel = lambda k: divmod(int(order[k]) % 16, 4)  # noqa: E731  (row, column) of the k-th coordinate
    top_left = {pixel(k) for k in range(12)}  # a quarter of the coordinates: 4 pixels, all 3 channels
    assert top_left == {(0, 0), (0, 1), (1, 0), (1, 1)}
    assert {int(order[k]) // 16 for k in range(12)} == {0, 1, 2}
    assert {pixel(k) for k in range(24)} == {(r, c) for r in range(2) for c in range(4)}  # the top half
    assert np.array_equal(block_order(48, (3, 4, 4), "memory"), np.arange(48))
    assert np.array_equal(block_order(10, (10,), "tiles"), np.arange(10))  # no image: memory order
    with pytest.raises(ValueError, match="layout"):
        block_order(4, None, "rows")


def test_minimize_finds_the_best_sign_vector_of_a_linear_objective() -> None:
    w = np.random.default_rng(0).standard_normal(16)
    f = lambda x: float(-(signs_of(x) @ w))  # noqa: E731  smallest at the signs of w
    res = zeroopt.minimize(f, np.ones(16), solver="sign-flips", budget=200, seed=0)
    assert res.fun == pytest.approx(-np.abs(w).sum()) and np.array_equal(signs_of(res.x), signs_of(w))
    assert np.allclose(np.abs(res.x), 1.0) and res.queries <= 200  # the start's length: every coordinate ±1


def test_the_start_is_offered_its_own_signs_once() -> None:
    asked: list[np.ndarray] = []

    def f(x: np.ndarray) -> float:
        asked.append(x.copy())
        return float(np.abs(x - 0.5).sum())

    x0 = np.array([0.1, -0.2, 0.3, 0.4])
    zeroopt.minimize(f, x0, solver="sign-flips", budget=6, seed=0)
    scale = np.linalg.norm(x0) / 2  # ‖x0‖/√d
    assert np.allclose(asked[1], scale * np.array([1, -1, 1, 1]))
    assert not any(np.allclose(a, asked[1]) for a in asked[2:])
    zeroopt.minimize(f, np.full(4, 0.3), solver="sign-flips", budget=3, seed=0)  # a sign vector already: flips only
    assert np.allclose(asked[-2], -0.3 * np.ones(4))


@pytest.mark.parametrize("accept", ["margin", "search"])
def test_a_start_below_every_vertex_still_moves_onto_the_cube_and_finds_the_best_vertex(accept: str) -> None:
    # f is lowest at the start x0 (off the cube) and, among vertices, at the signs of -v: a search that took only
    # candidates below its incumbent would never leave x0, and its flips of x0's signs would rarely meet -v's.
    rng = np.random.default_rng(3)
    x0, v = 0.1 * rng.standard_normal(12), rng.standard_normal(12)
    scale = np.linalg.norm(x0) / np.sqrt(len(v))
    asked: list[np.ndarray] = []

    def f(x: np.ndarray) -> float:
        asked.append(np.array(x))
        return -5.0 if np.allclose(x, x0) else 10.0 + float(signs_of(x) @ v)

    res = zeroopt.minimize(f, x0, solver="sign-flips", budget=150, seed=0, accept=accept, restarts=False)
    assert res.fun == -5.0 and np.allclose(res.x, x0)  # the best point seen is still the start
    assert any(np.allclose(a, scale * signs_of(-v)) for a in asked)  # the flips went on from the cube


def test_the_precision_follows_the_blocks_share_and_the_recipe_checks() -> None:
    betas, values = [], []

    def f(x: np.ndarray) -> float:
        values.append(float(np.abs(x - 0.5).sum()))
        return values[-1]

    res = zeroopt.minimize(f, np.ones(8), solver="sign-flips", budget=40, seed=0)
    betas = [r.beta for r in res.history]
    assert betas[:8] == [1.0, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25, 0.125]  # each iteration's block's share of d
    chain = zeroopt.sign_flips(8, relative_eps=0.01)
    assert chain.requested_eps(0.25, 2.0) == pytest.approx(0.01 * 0.25 * 2.0)
    with pytest.raises(ValueError, match="q must be"):
        zeroopt.sign_flips(8, q=0)
    with pytest.raises(ValueError, match="relative_eps"):
        zeroopt.make_solver("sign-flips", zeroopt.SolverContext(dim=8), relative_eps=0.0)
    spec = zeroopt.get_solver("sign-flips")
    assert spec.search_space == "sign vectors" and spec.defaults()["q"] == 1


def test_options_come_from_the_recipe_signature() -> None:
    def recipe(dim: int, *, q: int = 3, width: float = 0.5) -> zeroopt.Chain:
        raise NotImplementedError

    options = zeroopt.options_from(recipe)
    assert options().q == 3 and options(width=1.0).width == 1.0 and options.__name__ == "RecipeOptions"

    def needs(dim: int, *, q: int) -> zeroopt.Chain:
        raise NotImplementedError

    with pytest.raises(TypeError, match="needs a default"):
        zeroopt.options_from(needs)


def _linear_two_class(d: int, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((2, d))
    x = 0.5 + 0.02 * rng.standard_normal((4, d))
    margin = (x @ (w[0] - w[1]))
    x = x - ((margin - np.abs(margin)) / ((w[0] - w[1]) @ (w[0] - w[1])))[:, None] * (w[0] - w[1])  # all class 0
    exact = np.abs(x @ (w[0] - w[1])) / np.abs(w[0] - w[1]).sum()  # the smallest L∞ move to the boundary
    return (lambda b: b.reshape(len(b), -1) @ w.T), x, exact


def test_the_linf_default_ends_near_the_exact_minimum_of_a_linear_model() -> None:
    """The L∞ attack's default (sign-flips) against the closed-form smallest L∞ perturbation, margin / ‖w₀ − w₁‖₁,
    far inside the box: a change that makes it worse (a wrong block, a candidate asked at the wrong level) shows."""
    from applications.hardlabel import DEFAULT_LINF_SOLVER, attack, default_solver

    assert default_solver(np.inf) == DEFAULT_LINF_SOLVER == "sign-flips" and default_solver(2) == "sign-growing"
    model, x, exact = _linear_two_class(64, seed=1)
    assert np.all(exact < 0.4)  # the exact minimum stays inside the box [0, 1]
    res = attack(model, x, np.zeros(len(x), dtype=int), budget=600, seed=0, norm=np.inf, n_classes=2)
    assert res.success.all() and np.all(res.queries <= 600)
    assert all(r.solver == "sign-flips" for r in res.solver_results if r is not None)
    assert np.all(res.distortion >= exact * (1 - 1e-6)) and np.all(res.distortion <= 1.04 * exact)
    l2_default = attack(model, x, np.zeros(len(x), dtype=int), budget=600, seed=0, norm=np.inf, n_classes=2,
                        solver="sign-growing")
    assert np.median(l2_default.distortion / exact) > 1.05  # the descent on ℝᵈ stays further away


def test_an_linf_attack_never_prunes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Taking coordinates out of a perturbation leaves its largest: the polish pass is an L2 one only."""
    from applications.hardlabel import attack

    asked: list[str] = []
    real = zeroopt.pruning
    monkeypatch.setattr(zeroopt, "pruning", lambda *a, **k: asked.append("prune") or real(*a, **k))
    model, x, _ = _linear_two_class(16, seed=2)
    for norm in (np.inf, 2):
        attack(model, x[:1], np.zeros(1, dtype=int), budget=300, seed=0, norm=norm, n_classes=2)
    assert asked == ["prune"]  # the L2 attack's only


def test_a_margin_acceptance_takes_a_passing_candidate_at_its_target_for_one_query() -> None:
    """``accept="margin"``: every candidate costs exactly one query (no search of its own value), a passing one is
    taken at the target it passed — a value below the incumbent's by the margin, and above its own — and the
    search still reaches the best sign vector of a linear objective."""
    w = np.random.default_rng(3).standard_normal(32)
    values: dict[bytes, float] = {}

    def f(x: np.ndarray) -> float:
        value = float(1.0 / (signs_of(x) @ w + 2.0 * np.abs(w).sum()))  # positive, smallest at the signs of w
        values[signs_of(x).tobytes()] = value
        return value

    res = zeroopt.minimize(f, np.ones(32), solver="sign-flips", budget=300, seed=0, accept="margin", restarts=False)
    assert res.queries == res.iterations + 1  # the start's value, then one comparison per candidate
    taken = [(a, r) for a, r in zip(res.history, res.history[1:], strict=False) if r.f < a.f]
    assert len(taken) >= 3
    assert all(after.f < before.f for before, after in taken)  # a margin below the incumbent
    assert min(values.values()) <= res.history[-1].f  # taken at a target, never below the value it passed under
    assert np.array_equal(signs_of(res.x), signs_of(w)) and res.fun == pytest.approx(1 / (3 * np.abs(w).sum()))
    with pytest.raises(ValueError, match="accept"):
        zeroopt.sign_flips(8, accept="bisect")  # type: ignore[arg-type]
    from zeroopt.recipes.sign_flips import BelowLoweredIncumbent

    with pytest.raises(ValueError, match="growth"):
        BelowLoweredIncumbent(growth=1.0)
