"""End-to-end demo on an embedded default: no data to download.

Trains a small CNN (torch) and a LightGBM model on scikit-learn's bundled 8×8 digits in seconds, attacks
a few correctly classified test digits with the hard-label attack, prints a table and saves a picture of
originals, adversarials and perturbations.

    python -m applications.hardlabel.demo            # 5 digits per model, 3000 queries each
    python -m applications.hardlabel.demo --quick    # 3 digits, 1000 queries (CI smoke run)
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from applications.digits import load_digits_split, train_digits_cnn, train_digits_lightgbm
from applications.hardlabel import DEFAULT_SOLVER, as_label_model, attack
from zeroopt.recipes.plugins import add_plugin_argument, load_plugin_arguments


def _pick(model, x: np.ndarray, y: np.ndarray, n: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    labels = as_label_model(model, n_classes=10)(x)
    return np.flatnonzero(labels == y)[:n]


def _plot(rows: list[tuple[str, np.ndarray, np.ndarray, list[str]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only: the demo must run on machines without a display
    import matplotlib.pyplot as plt

    n = max(len(x0) for _, x0, _, _ in rows)
    fig, axes = plt.subplots(3 * len(rows), n, figsize=(1.3 * n, 1.4 * 3 * len(rows)), squeeze=False)
    for r, (name, x0, xadv, captions) in enumerate(rows):
        for j in range(n):
            for k, (img, title) in enumerate(
                [(x0, "original"), (xadv, "adversarial"), (None, "perturbation")]
            ):
                ax = axes[3 * r + k, j]
                ax.axis("off")
                if j >= len(x0):
                    continue
                if img is None:
                    delta = (xadv[j] - x0[j]).squeeze()
                    lim = max(float(np.abs(delta).max()), 1e-6)
                    ax.imshow(delta, cmap="seismic", vmin=-lim, vmax=lim)
                else:
                    ax.imshow(img[j].squeeze(), cmap="gray", vmin=0, vmax=1)
                if k == 1:
                    ax.text(0.5, -0.08, captions[j], transform=ax.transAxes, ha="center", va="top", fontsize=6)
                if j == 0:
                    ax.set_title(f"{name}: {title}", fontsize=7, loc="left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Hard-label attack demo on scikit-learn's digits (no download).")
    p.add_argument("--images", type=int, default=5, help="digits attacked per model")
    p.add_argument("--budget", type=int, default=3000, help="queries per digit (hard cap)")
    p.add_argument("--solver", default=DEFAULT_SOLVER,
                   help=f"any zeroopt solver (default {DEFAULT_SOLVER}, the attack's own; rgf is the paper's)")
    add_plugin_argument(p)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("attack_demo.png"), help="where to save the picture")
    p.add_argument("--quick", action="store_true", help="3 digits, 1000 queries: a smoke run")
    args = p.parse_args(argv)
    load_plugin_arguments(p, args)
    if args.quick:
        args.images, args.budget = 3, 1000

    t0 = time.perf_counter()
    _, _, x_test, y_test = load_digits_split(seed=args.seed)
    cnn, cnn_acc = train_digits_cnn(seed=args.seed)
    gbdt, gbdt_acc = train_digits_lightgbm(seed=args.seed)
    print(f"trained on sklearn digits in {time.perf_counter() - t0:.1f} s: CNN test accuracy {cnn_acc:.3f}, "
          f"LightGBM {gbdt_acc:.3f}")

    header = f"{'model':<9} {'digit':>5} {'label':>5} {'adv':>4} {'success':>7} {'L2':>7} {'queries':>7}"
    rows = []
    print(f"\nuntargeted hard-label attack, solver={args.solver!r}, budget {args.budget} queries per digit")
    for name, model in (("CNN", cnn), ("LightGBM", gbdt)):
        idx = _pick(model, x_test, y_test, args.images)
        res = attack(model, x_test[idx], y_test[idx], budget=args.budget, solver=args.solver, seed=args.seed,
                     n_classes=10, progress=True)
        adv_labels = as_label_model(model, n_classes=10)(res.x_adv)
        print(header)
        for j, i in enumerate(idx):
            print(f"{name:<9} {int(i):>5} {int(y_test[i]):>5} {int(adv_labels[j]):>4} {bool(res.success[j])!s:>7} "
                  f"{res.distortion[j]:>7.3f} {int(res.queries[j]):>7}")
        print(f"{name}: {res.summary()}\n")
        captions = [f"{int(y_test[i])}→{int(a)}, L2 {d:.2f}" for i, a, d in zip(idx, adv_labels, res.distortion,
                                                                              strict=True)]
        rows.append((name, x_test[idx], res.x_adv, captions))
    _plot(rows, args.out)
    print(f"saved originals, adversarials and perturbations to {args.out.resolve()}")


if __name__ == "__main__":
    main()
