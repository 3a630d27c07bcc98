"""ModelOptions(arrays="model"): the attack computes in torch tensors on the model's device, with numpy's result.

Every solver part, every ray and every batch is then a tensor where the model lives (on a GPU, no batch crosses
from the host). The arithmetic is the same IEEE operations in another library, and the points the model sees are
the same float32 values: on a CPU torch model the two runs give the same distortions, queries and model calls.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from applications.hardlabel import ModelOptions, Race, Start, attack

torch = pytest.importorskip("torch")
pytest.importorskip("array_api_compat")


@pytest.fixture(scope="module")
def digits(digits_cache: Callable[[], Path]) -> tuple:
    from applications.campaign.models import load_model
    from applications.digits import load_digits_split

    _, _, x, y = load_digits_split(seed=0)
    with pytest.MonkeyPatch.context() as mp:  # the built-in digits CNN: train_digits_cnn(seed=0), trained once
        mp.setenv("ZEROOPT_CACHE", str(digits_cache()))
        return load_model("digits-cnn", device="cpu").model, x, y


CASES = {
    "untargeted": lambda x, y: {"budget": 1500},
    "targeted": lambda x, y: {"budget": 600, "target": (y[:3] + 1) % 10,
                              "start": Start(target_pool=(x[100:400], y[100:400]))},
    "linf": lambda x, y: {"budget": 600, "norm": np.inf},
    "race-with-state": lambda x, y: {"budget": 1200, "race": Race(race_starts=2, race_keeps_state=True)},
    # The tournament starts hand their winner back as a tensor of the model's (no .copy() on a Tensor).
    "tournament": lambda x, y: {"budget": 300, "start": Start(initial_selection="tournament")},
    "halving-tournament": lambda x, y: {"budget": 300, "start": Start(initial_selection="halving-tournament")},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_model_arrays_give_the_numpy_result(digits: tuple, case: str) -> None:
    model, x, y = digits
    runs = [attack(model, x[:3], y[:3], seed=1, n_classes=10, model_options=ModelOptions(arrays=arrays),
                   **CASES[case](x, y)) for arrays in ("numpy", "model")]
    a, b = runs
    assert np.array_equal(a.distortion, b.distortion) and np.array_equal(a.queries, b.queries)
    assert a.model_calls == b.model_calls and np.array_equal(a.success, b.success)
    assert np.array_equal(a.x_adv, b.x_adv) and isinstance(b.x_adv, np.ndarray)


def test_the_solver_and_the_rays_run_on_tensors(digits: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    import zeroopt
    from applications.hardlabel.ray import Ray

    model, x, y = digits
    seen: dict[str, int] = {"tensor iterates": 0, "numpy iterates": 0, "tensor rays": 0}
    step = zeroopt.Chain.step_generator
    make = Ray.make.__func__  # type: ignore[attr-defined]
    make_many = Ray.make_many.__func__  # type: ignore[attr-defined]

    def counting_step(self, state):  # type: ignore[no-untyped-def]
        seen["tensor iterates" if isinstance(state.x, torch.Tensor) else "numpy iterates"] += 1
        return step(self, state)

    def counting_make(cls, x0, theta, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen["tensor rays"] += isinstance(theta, torch.Tensor)
        return make(cls, x0, theta, *args, **kwargs)

    def counting_make_many(cls, x0, thetas, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen["tensor rays"] += len(thetas) if isinstance(thetas, torch.Tensor) else 0
        return make_many(cls, x0, thetas, *args, **kwargs)

    monkeypatch.setattr(zeroopt.Chain, "step_generator", counting_step)
    monkeypatch.setattr(Ray, "make", classmethod(counting_make))
    monkeypatch.setattr(Ray, "make_many", classmethod(counting_make_many))
    attack(model, x[:2], y[:2], budget=400, seed=0, n_classes=10, model_options=ModelOptions(arrays="model"))
    assert seen["tensor iterates"] > 0 and seen["numpy iterates"] == 0 and seen["tensor rays"] > 100


def test_where_the_attack_computes(digits: tuple) -> None:
    from applications.hardlabel import as_label_model

    model, x, y = digits
    torch_model = as_label_model(model, n_classes=10)
    assert ModelOptions().device_for(torch_model) is None  # "auto" on a CPU: numpy, exactly as before
    assert ModelOptions(arrays="model").device_for(torch_model) == torch.device("cpu")
    callable_model = as_label_model(lambda b: np.zeros(len(b), dtype=np.int64), n_classes=10)
    assert ModelOptions(arrays="auto").device_for(callable_model) is None
    with pytest.raises(ValueError, match="needs a torch module"):
        ModelOptions(arrays="model").device_for(callable_model)
    with pytest.raises(ValueError, match="arrays must be one of"):
        ModelOptions(arrays="gpu")
