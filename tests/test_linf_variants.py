"""benchmarks.studies.linf_variants: the L∞ attack's parts one at a time, on a page of ratios to the default."""

from __future__ import annotations

import argparse

import pytest

from benchmarks.studies.linf_variants import VARIANTS, _variants, page


def test_the_page_gives_each_variants_median_and_ratio_to_the_default() -> None:
    rows = [{"experiment": "e", "variant": "default", "budget": 250, "values": [0.2, 0.4, float("inf")]},
            {"experiment": "e", "variant": "coarser", "budget": 250, "values": [0.1, 0.4, 0.5]}]
    lines = page(rows, "python -m benchmarks.studies.linf_variants")
    assert lines[2] == "Command: `python -m benchmarks.studies.linf_variants`"
    assert "| e | 250 | default | 0.4000 | 1.000 |" in lines
    assert "| e | 250 | coarser | 0.4000 | 0.500 |" in lines  # per input 0.5, 1, 0 → median 0.5


def test_variants_are_named_from_the_table_and_always_beside_the_default() -> None:
    assert _variants("searched candidates (RayS's)") == ["default", "searched candidates (RayS's)"]
    assert set(VARIANTS) >= {"default", "square tiles", "random start", "start of 30 directions"}
    with pytest.raises(argparse.ArgumentTypeError, match="unknown variant"):
        _variants("bogus")
