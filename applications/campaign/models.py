"""Turn a model name on the command line into a model: built-ins, weights + architecture, entry points, LightGBM.

Accepted forms of ``spec`` (see :func:`load_model`):

* a built-in name: ``digits-cnn`` and ``digits-lgbm`` (trained on scikit-learn's bundled digits on first use,
  then read from the cache folder), ``mnist-cnn`` and ``cifar-resnet20`` (the shared pretrained networks);
* a weights file with ``arch``: ``mnist_cw_bn.pt`` + ``mnist-cnn`` / ``cifar-resnet20`` / ``digits-cnn``;
* a LightGBM model file (``.txt``, ``.lgb``, ``.lgbm``, ``.model``): loaded as a ``lightgbm.Booster``;
* a Python entry point ``package.module:function``: ``function()`` is called and must return the model.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .paths import cache_dir

__all__ = ["BUILTIN_MODELS", "LoadedModel", "load_model"]

LIGHTGBM_SUFFIXES = (".txt", ".lgb", ".lgbm", ".model")
DIGITS_SEED = 0  # the built-in digits models are those of applications.digits with this seed


@dataclass
class LoadedModel:
    """A model ready for :func:`applications.hardlabel.attack`, with what the campaign needs to know of it."""

    name: str
    model: Any
    n_classes: int | None
    default_data: str | None = None  # the built-in dataset it was made for, if any


def _digits_cnn(device: str | None) -> LoadedModel:
    import torch

    from applications.digits import DigitsCNN, train_digits_cnn

    path = cache_dir() / "models" / f"digits-cnn-seed{DIGITS_SEED}.pt"
    net = DigitsCNN()
    if path.exists():
        net.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    else:
        net, _ = train_digits_cnn(seed=DIGITS_SEED)
        _atomic_save(path, lambda tmp: torch.save(net.state_dict(), tmp))
    return LoadedModel("digits-cnn", net.to(device or "cpu").eval(), 10, "digits")


def _digits_lgbm(device: str | None) -> LoadedModel:
    import lightgbm

    from applications.digits import train_digits_lightgbm

    path = cache_dir() / "models" / f"digits-lgbm-seed{DIGITS_SEED}.txt"
    if not path.exists():
        clf, _ = train_digits_lightgbm(seed=DIGITS_SEED)
        _atomic_save(path, lambda tmp: clf.booster_.save_model(str(tmp)))
    # Read back from the file in every case, so a first run and a cached run use the very same model.
    return LoadedModel("digits-lgbm", lightgbm.Booster(model_file=str(path)), 10, "digits")


def _mnist_cnn(device: str | None, path: str | None = None) -> LoadedModel:
    from applications.models import load_mnist_cw_bn

    return LoadedModel(path or "mnist-cnn", load_mnist_cw_bn(path, device=device or "cpu"), 10, "mnist")


def _cifar_resnet20(device: str | None, path: str | None = None) -> LoadedModel:
    from applications.models import load_cifar10_resnet20

    return LoadedModel(path or "cifar-resnet20", load_cifar10_resnet20(path, device=device or "cpu"), 10, "cifar10")


def _digits_cnn_weights(device: str | None, path: str) -> LoadedModel:
    import torch

    from applications.digits import DigitsCNN

    net = DigitsCNN()
    net.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    return LoadedModel(path, net.to(device or "cpu").eval(), 10, "digits")


BUILTIN_MODELS: dict[str, Callable[[str | None], LoadedModel]] = {
    "digits-cnn": _digits_cnn,
    "digits-lgbm": _digits_lgbm,
    "mnist-cnn": _mnist_cnn,
    "cifar-resnet20": _cifar_resnet20,
}
ARCHITECTURES: dict[str, Callable[[str | None, str], LoadedModel]] = {
    "mnist-cnn": _mnist_cnn,
    "cifar-resnet20": _cifar_resnet20,
    "digits-cnn": _digits_cnn_weights,
}


def load_model(spec: str, *, arch: str | None = None, device: str | None = None) -> LoadedModel:
    """Load the model named by ``spec`` (see the module docstring for the accepted forms).

    Parameters
    ----------
    spec
        Built-in name, weights file (with ``arch``), LightGBM model file, or ``module:function``.
    arch
        Architecture of a weights file: one of ``mnist-cnn``, ``cifar-resnet20``, ``digits-cnn``.
    device
        Torch device for torch models (default: the CPU).

    Raises
    ------
    ValueError
        When ``spec`` matches no accepted form, with the forms listed.
    FileNotFoundError
        When a file named by ``spec`` does not exist.
    """
    if arch is not None:
        if arch not in ARCHITECTURES:
            raise ValueError(f"unknown architecture {arch!r}; choose from {', '.join(ARCHITECTURES)}")
        if not os.path.exists(spec):
            raise FileNotFoundError(f"weights file not found: {spec}")
        return ARCHITECTURES[arch](device, spec)
    if spec in BUILTIN_MODELS:
        return BUILTIN_MODELS[spec](device)
    if os.path.exists(spec):
        if spec.endswith(LIGHTGBM_SUFFIXES):
            import lightgbm

            booster = lightgbm.Booster(model_file=spec)
            return LoadedModel(spec, booster, None)
        raise ValueError(
            f"{spec}: a weights file needs its architecture (--arch {'/'.join(ARCHITECTURES)}); LightGBM model "
            f"files must end in {', '.join(LIGHTGBM_SUFFIXES)}"
        )
    module_name, colon, attr = spec.partition(":")
    if colon and module_name and attr:
        factory = getattr(importlib.import_module(module_name), attr, None)
        if not callable(factory):
            raise ValueError(f"{spec}: {attr!r} is not a callable of module {module_name!r}")
        return LoadedModel(spec, factory(), None)
    raise ValueError(
        f"unknown model {spec!r}: give a built-in name ({', '.join(BUILTIN_MODELS)}), a weights file with "
        "--arch, a LightGBM model file, or a Python entry point module:function"
    )


def _atomic_save(path: Path, write: Callable[[Path], Any]) -> None:
    """Write through a temporary file, so a concurrent reader (another worker) never sees half a model."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    write(tmp)
    os.replace(tmp, path)
