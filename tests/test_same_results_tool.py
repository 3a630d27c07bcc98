"""benchmarks.same_results: two fingerprints compared input by input."""

from __future__ import annotations

import copy

from benchmarks.same_results import compare

FINGERPRINT = {
    "experiments": {"mnist-untargeted": {"250": [{"image": 7, "success": True, "queries": 250,
                                                  "distortion": (1.25).hex(), "error": ""}]}},
    "demo": [{"model": "CNN", "digit": 0, "success": True, "queries": 1000, "distortion": (0.5).hex()}],
}


def test_identical_fingerprints_have_no_difference() -> None:
    assert compare(FINGERPRINT, copy.deepcopy(FINGERPRINT)) == []


def test_a_changed_distortion_or_demo_row_is_named() -> None:
    after = copy.deepcopy(FINGERPRINT)
    after["experiments"]["mnist-untargeted"]["250"][0]["distortion"] = (1.2500000000000002).hex()
    after["demo"][0]["queries"] = 999
    diffs = compare(FINGERPRINT, after)
    assert len(diffs) == 2
    assert "mnist-untargeted @ 250, input 0 (image 7): distortion 1.25 -> 1.2500000000000002" in diffs[0]
    assert diffs[1].startswith("demo table")


def test_a_missing_experiment_is_named() -> None:
    after = copy.deepcopy(FINGERPRINT)
    after["experiments"]["cifar-targeted"] = {}
    assert compare(FINGERPRINT, after) == ["cifar-targeted: only in after"]
