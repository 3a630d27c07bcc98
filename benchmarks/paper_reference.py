"""The figures each suite experiment is compared with: the paper's tables and the peers' published medians.

``REFERENCE[experiment]``: the paper's averages (Opt-attack, the Boundary attack, white-box C&W) and, at
:data:`ANCHOR_BUDGETS`, the median L2 of OPT, Sign-OPT and the Boundary attack recomputed from the Sign-OPT
authors' logs (``../shared/ANCHORS.md`` §2);
``PAPER_GBDT``: Table 3's query counts and average L2 for the two LightGBM models. The suite's pages print them
beside our runs; nothing here is measured.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ANCHOR_BUDGETS", "PAPER_GBDT", "REFERENCE"]

ANCHOR_BUDGETS = [4000, 8000, 14000]
REFERENCE: dict[str, dict[str, Any]] = {
    "mnist-untargeted": {
        "anchors_budgets": ANCHOR_BUDGETS,
        "anchors_median": {"OPT": [3.66, 2.42, 1.76], "Sign-OPT": [1.54, 1.19, 1.10], "Boundary": [4.25, 4.25, 2.14]},
        "paper": {
            "Opt-attack avg L2 @ avg queries": "1.188 @ 22,940; 1.049 @ 51,683; 1.011 @ 126,486",
            "Decision (Boundary) attack": "1.1222 @ 60,293; 1.1087 @ 143,357",
            "C&W (white-box)": "0.9921",
        },
    },
    "mnist-targeted": {
        "anchors_budgets": ANCHOR_BUDGETS,
        "anchors_median": {"OPT": [3.44, 2.75, 2.35], "Sign-OPT": [2.24, 1.67, 1.50]},
        "paper": {
            "Opt-attack avg L2 @ avg queries": "1.8522 @ 46,248; 1.7744 @ 57,741; 1.7114 @ 73,293",
            "Decision (Boundary) attack": "2.3158 @ 30,103; 2.0052 @ 58,508; 1.8668 @ 192,018",
            "C&W (white-box)": "1.4178",
        },
    },
    "cifar-untargeted": {
        "anchors_budgets": ANCHOR_BUDGETS,
        "anchors_median": {"OPT": [0.77, 0.43, 0.31], "Sign-OPT": [0.265, 0.167, 0.132]},
        "paper": {
            "note": "the paper's CIFAR-10 model is the C&W CNN on the real test images, not ResNet-20 on JPEG copies",
            "Opt-attack avg L2 @ avg queries": "0.2050 @ 40,941; 0.1625 @ 77,327; 0.1451 @ 133,662",
            "C&W (white-box)": "0.1012",
        },
    },
    "cifar-targeted": {
        "paper": {
            "note": "the paper's CIFAR-10 model is the C&W CNN on the real test images, not ResNet-20 on JPEG copies",
            "Opt-attack avg L2 @ avg queries": "0.2758 @ 61,869; 0.2369 @ 141,437; 0.2300 @ 186,753",
            "C&W (white-box)": "0.1901",
        },
    },
}

PAPER_GBDT = {
    "gbdt-higgs": {"queries": (4229, 11139, 29598), "l2": (0.3458, 0.2179, 0.1704)},
    "gbdt-mnist": {"queries": (5125, 11858, 32230), "l2": (0.6113, 0.5576, 0.5505)},
}
