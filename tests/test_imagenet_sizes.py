"""benchmarks.studies.imagenet_sizes: the band<N> configurations and the page's column order."""

from __future__ import annotations

import pytest

from benchmarks.studies.imagenet_sizes import band_options, config_order, main, runs_of_page, write


def test_a_band_keeps_the_lowest_n_frequencies_of_each_side_at_any_resolution() -> None:
    from zeroopt import SolverContext
    from zeroopt.sample.samplers import make_sampler

    assert band_options("default") is None and band_options("band0") is None
    assert band_options("band32") == {"directions": "band32"} == band_options("band32")  # registered once
    for side in (192, 224, 240):
        sampler = make_sampler("band32", SolverContext(dim=3 * side * side, shape=(3, side, side)))
        assert sampler.subspace_dim == 3 * 32 * 32
    cifar = make_sampler("band32", SolverContext(dim=3 * 32 * 32, shape=(3, 32, 32)))
    assert cifar.subspace_dim == 3 * 32 * 32  # the whole space of a 32-sample side
    with pytest.raises(ValueError, match="no image shape"):
        make_sampler("band32", SolverContext(dim=10))


def test_columns_put_ours_then_the_widest_band_then_the_peers() -> None:
    assert config_order({"cgba-h", "band16", "default", "band32"}) == ["default", "band32", "band16", "cgba-h"]


def test_an_unknown_configuration_is_refused_with_the_choices() -> None:
    with pytest.raises(SystemExit):
        main(["--configs", "default,bandwidth"])


def test_a_page_s_runs_resume_a_study_of_the_same_settings_only(tmp_path) -> None:
    meta = {"k": 2, "seed": 0, "order_seed": 0, "threads": 1, "targeted": False}
    rec = {"config": "default", "budget": 250, "image": 3, "l2": 1.5, "success": True, "queries": 250,
           "own_ms_per_query": 4.0, "wall_s": 9.0}
    cache = {"meta": {**meta, "images": {"lite0@224": [3]}}, "cells": {"lite0@224|default|250": [rec]}}
    out = tmp_path / "README.md"
    assert runs_of_page(out, meta) is None  # no page yet
    write(out, "python -m benchmarks.studies.imagenet_sizes --k 2", cache, "cgba-h")
    resumed = runs_of_page(out, meta)
    assert resumed is not None and resumed["meta"]["images"] == {"lite0@224": [3]}
    assert resumed["cells"]["lite0@224|default|250"][0]["l2"] == 1.5  # the page's fields, not the timings
    assert "wall_s" not in resumed["cells"]["lite0@224|default|250"][0]
    assert runs_of_page(out, {**meta, "targeted": True}) is None
    assert runs_of_page(out, {**meta, "k": 10}) is None
