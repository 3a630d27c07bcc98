"""``benchmarks.same_solver_results``: the same code gives the same fingerprint, and a changed run is named."""

from __future__ import annotations

from benchmarks.same_solver_results import OPTIONS, compare, fingerprint

SOME = (OPTIONS[0], {"momentum": 1.0}, {"line_search": "fixed", "patience": 5})


def test_a_fingerprint_is_the_same_twice_and_a_changed_run_is_named() -> None:
    first, second = fingerprint(("sign-growing",), SOME), fingerprint(("sign-growing",), SOME)
    assert first == second and len(first) == 4 * len(SOME) * 2  # four contexts, two seeds
    assert all(isinstance(v, list) or v.startswith("refused") for v in first.values())
    key = next(k for k, v in first.items() if isinstance(v, list))
    changed = {**second, key: [(1.0).hex(), *second[key][1:]]}
    assert compare(first, second) == [] and compare(first, changed) == [f"{key}: {first[key]} -> {changed[key]}"]
