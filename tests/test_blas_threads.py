"""The attack caps numpy's BLAS threads while it runs and gives the caller's setting back, also on a failure
(``ModelOptions(blas_threads=1)``, the default: an idle OpenBLAS worker spins and takes a core from the model)."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from applications.hardlabel import ModelOptions, attack
from applications.hardlabel.config import numpy_blas_paths

W = np.array([[1.0, -1.0], [-1.0, 1.0]])


def _blas_threads() -> list[int]:
    mine = set(numpy_blas_paths())
    return [int(p["num_threads"]) for p in threadpool_info() if p["filepath"] in mine]


def _watching_model(seen: list[list[int]], fail_after: int | None = None):  # type: ignore[no-untyped-def]
    def model(x: np.ndarray) -> np.ndarray:
        seen.append(_blas_threads())
        if fail_after is not None and len(seen) > fail_after:
            raise RuntimeError("the model went away")
        return x.reshape(len(x), -1) @ W.T  # the scores of a 2-class linear model

    return model


@pytest.fixture
def two_blas_threads():  # type: ignore[no-untyped-def]
    if not _blas_threads():
        pytest.skip("numpy's own BLAS is not visible to threadpoolctl here (a shared one is left alone)")
    with threadpool_limits(limits={path: 2 for path in numpy_blas_paths()}):
        yield _blas_threads()


def test_the_attack_runs_with_one_blas_thread_and_restores_the_callers(two_blas_threads: list[int]) -> None:
    seen: list[list[int]] = []
    res = attack(_watching_model(seen), np.array([[0.8, 0.2]]), np.array([0]), budget=300, seed=0)
    assert res.success[0] and seen
    assert all(threads == [1] * len(two_blas_threads) for threads in seen)
    assert _blas_threads() == two_blas_threads


def test_blas_threads_none_leaves_them_as_the_caller_set_them(two_blas_threads: list[int]) -> None:
    seen: list[list[int]] = []
    attack(_watching_model(seen), np.array([[0.8, 0.2]]), np.array([0]), budget=300, seed=0,
           model_options=ModelOptions(blas_threads=None))
    assert seen and all(threads == two_blas_threads for threads in seen)


def test_a_failing_model_still_gets_the_callers_threads_back(two_blas_threads: list[int]) -> None:
    seen: list[list[int]] = []
    with pytest.raises(RuntimeError, match="went away") as info:
        attack(_watching_model(seen, fail_after=3), np.array([[0.8, 0.2]]), np.array([0]), budget=300, seed=0)
    assert hasattr(info.value, "partial_result")
    assert _blas_threads() == two_blas_threads


def test_numpys_own_blas_is_found_and_torchs_threads_are_not_touched() -> None:
    # numpy's wheel ships its OpenBLAS in its own folder (this project's environment: pip wheels).
    assert numpy_blas_paths(), "numpy's BLAS not found: the attack would leave its threads spinning"
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    seen: list[list[int]] = []
    attack(_watching_model(seen), np.array([[0.8, 0.2]]), np.array([0]), budget=100, seed=0)
    assert torch.get_num_threads() == before


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_a_bad_blas_threads_is_refused_before_any_query(bad: object) -> None:
    seen: list[list[int]] = []
    with pytest.raises(ValueError, match="blas_threads"):
        attack(_watching_model(seen), np.array([[0.8, 0.2]]), np.array([0]), budget=300,
               model_options=ModelOptions(blas_threads=bad))
    assert not seen
