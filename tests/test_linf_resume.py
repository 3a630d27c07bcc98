"""The L∞ study keeps each finished run and reads it back: a stopped study resumes instead of rerunning."""

import numpy as np
import pytest

pytest.importorskip("torch")


def test_a_second_run_reads_every_run_back_and_attacks_nothing(tmp_path, monkeypatch):
    import applications.hardlabel as hardlabel
    from benchmarks.store import FileStore
    from benchmarks.studies.linf import measure

    store = FileStore(tmp_path / "runs.sqlite")
    try:
        first = measure("mnist-untargeted", 2, [40, 80], 0, peers=[], eps=0.3, store=store)
    except FileNotFoundError as e:  # the shared MNIST model and images
        pytest.skip(str(e))
    assert len(store.names("linf/")) == 4  # two inputs at two budgets

    def no_attack(*args, **kwargs):
        raise AssertionError("a stored run was attacked again")

    monkeypatch.setattr(hardlabel, "attack", no_attack)
    again = measure("mnist-untargeted", 2, [40, 80], 0, peers=[], eps=0.3, store=store)
    for a, b in zip(first, again, strict=True):
        assert a["values"] == b["values"] and a["queries_to_eps"] == b["queries_to_eps"]
    assert all(np.isfinite(v) for r in first for v in r["values"])
    with pytest.raises(AssertionError, match="attacked again"):  # a budget not stored is run
        measure("mnist-untargeted", 2, [60], 0, peers=[], eps=0.3, store=store)


def test_a_stored_empty_trace_reads_back_as_never_within_eps():
    from benchmarks.studies.linf import _first_query_within

    assert _first_query_within([], 0.3) is None  # a failed run's trace, as JSON gives it back
    assert _first_query_within([[5, 0.4], [9, 0.2]], 0.3) == 9


def test_a_change_to_ours_reruns_ours_and_reads_the_peers_back(tmp_path, monkeypatch):
    import benchmarks.hardlabel_quality as quality
    import benchmarks.studies.linf as linf
    from benchmarks.store import FileStore
    from benchmarks.studies.linf_peers import CappedLabels

    def peer(label_fn, x0, y0, budget, n_classes, bounds, seed, target, start):  # its first query, kept
        capped = CappedLabels(label_fn, x0, y0, budget, n_classes, target)
        capped(np.clip(x0 + 0.5, *bounds)[None])
        return capped

    store = FileStore(tmp_path / "runs.sqlite")
    monkeypatch.setattr(quality, "CODE", "before")
    monkeypatch.setitem(linf.PEERS, "toy", ("a toy peer", peer))
    try:
        first = linf.measure("mnist-untargeted", 1, [40], 0, peers=["toy"], eps=0.3, store=store)
    except FileNotFoundError as e:
        pytest.skip(str(e))
    monkeypatch.setattr(quality, "CODE", "after")

    def no_peer(*args, **kwargs):
        raise AssertionError("a stored peer run was run again")

    monkeypatch.setitem(linf.PEERS, "toy", ("a toy peer", no_peer))
    again = linf.measure("mnist-untargeted", 1, [40], 0, peers=["toy"], eps=0.3, store=store)
    assert [r["values"] for r in again] == [r["values"] for r in first]
    assert len(store.names("linf/after/")) == 1  # ours, under the new code version
