"""benchmarks.unseen_models: the per-input comparison it writes."""

from __future__ import annotations

from benchmarks.unseen_models import markdown, summarize


def test_the_page_pairs_inputs_and_leaves_out_flips_of_the_order_of_1e_35() -> None:
    rows = [{"model": "toy", "inputs": 4, "budgets": [250, 500],
             "l2": [{"250": [1.0, 2.0, 4.0, 1e-35], "500": [1.0, 1.0, 1.0, 1.0]},
                    {"250": [0.5, 2.0, 8.0, 1e-35], "500": [1.0, 1.0, 1.0, 1.0]}]}]
    text = markdown(summarize(rows), ["old", "new"], "python -m benchmarks.unseen_models ...")
    line = next(x for x in text.splitlines() if x.startswith("| new / old, per input"))
    # 250: ratios 0.5, 1, 2 (the 1e-35 flip left out): median 1.000, one input lower, one higher, of four.
    assert "| 1.000 (25% / 25%) | 1.000 (0% / 0%) |" in line
    assert "| median old | 1.500 | 1.000 |" in text and "| mean new | 2.625 | 1.000 |" in text
