"""Each model adapter imports its own framework only: attacking a callable or a LightGBM model never imports torch."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import sys
import numpy as np
from applications.hardlabel import attack

w = np.random.default_rng(0).standard_normal((3, 6))
x = np.random.default_rng(1).uniform(0.2, 0.8, size=(2, 6))
scores = lambda z: z.reshape(len(z), -1) @ w.T
res = attack(scores, x, scores(x).argmax(1), budget=300, seed=0, n_classes=3)
assert res.success.all(), res
if "lgb" in sys.argv:
    import lightgbm as lgb
    xs = np.random.default_rng(2).uniform(0, 1, size=(300, 6))
    booster = lgb.train({"objective": "multiclass", "num_class": 3, "verbose": -1, "num_leaves": 4, "seed": 0},
                        lgb.Dataset(xs, scores(xs).argmax(1)), num_boost_round=5)
    res = attack(booster, x, booster.predict(x).argmax(1), budget=300, seed=0)
    assert res.queries.max() <= 300
print("torch imported:", "torch" in sys.modules)
"""


def test_attacking_without_torch_never_imports_it() -> None:
    extra = ["lgb"] if importlib.util.find_spec("lightgbm") is not None else []
    out = subprocess.run([sys.executable, "-c", SCRIPT, *extra], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "torch imported: False" in out.stdout
