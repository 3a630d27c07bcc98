"""The study runner and the ``zeroopt-study`` command on a tiny grid: outputs, determinism, censoring, and the
split between the committed summary (``results.json``) and the run records (the results database)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from PIL import Image

from theory import runner
from theory.records import load_partial, load_records, migrate
from theory.runner import StudyInterrupted, StudySpec, run_cell_seed, run_study, seed_sequence
from theory.studies import STUDIES, main

TINY = ["--seeds", "2", "--dims", "4,8", "--deltas", "0.3", "--workers", "1", "--no-progress"]


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run records go to a private results database, never the user's."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("ZEROOPT_CACHE", str(folder))
    return folder


def _runs(folder: Path) -> list[dict]:
    return load_records(json.loads((folder / "results.json").read_text())["records"])


def _strip(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "wall_s"} for r in records]


def test_command_writes_json_markdown_and_plots(tmp_path: Path) -> None:
    assert main(["d-scaling", *TINY, "--out", str(tmp_path)]) == 0
    folder = tmp_path / "d-scaling"
    readme = (folder / "README.md").read_text()
    assert "python -m theory.studies d-scaling --seeds 2 --dims 4,8" in readme
    assert "## Slopes" in readme and "scaling.png" in readme
    text = (folder / "results.json").read_text()
    data = json.loads(text)
    assert data["command"].startswith("python -m theory.studies d-scaling")
    assert {c["d"] for c in data["cells"]} == {4, 8}
    assert data["fits"] and all(f["axis"] == "d" for f in data["fits"])
    # the committed summary carries no run record and no trace; the records are in the results database
    assert "runs" not in data and '"trace"' not in text and '"seed"' not in text
    assert data["records"]["count"] == 4 and data["records"]["stored_as"] in readme
    runs = _runs(folder)
    assert len(runs) == 4 and sum("trace" in r for r in runs) == data["records"]["traced"] > 0
    assert len(text) < 20_000  # cells, fits and findings only: its size does not grow with the seeds
    for name in ("scaling.png", "traces.png"):
        assert (folder / name).stat().st_size > 10_000
        assert Image.open(folder / name).mode == "P"  # written as a compact palette PNG


def test_floor_study_plots_its_floor(tmp_path: Path) -> None:
    assert main(["fixed-beta", *TINY, "--cap", "0.01", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "fixed-beta" / "floor.png").exists()
    runs = _runs(tmp_path / "fixed-beta")
    assert {r["beta"] for r in runs} == {0.005, "admissible"}
    assert all(r["iterations"] == r["max_iter"] for r in runs)  # ran to the cap


def test_list_and_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in STUDIES)
    assert main(["no-such-study"]) == 2


def test_runs_are_reproducible_and_independent_of_workers() -> None:
    spec = StudySpec(name="t", title="", dims=(4, 8), deltas=(0.3,), eps_factors=(0.0, 10.0), seeds=2, cap=0.2,
                     family="rotated_quadratic", traces=1)
    a = run_study(spec, workers=1, progress=False)
    b = run_study(spec, workers=2, progress=False)
    assert _strip(a.records) == _strip(b.records)
    # common random numbers: the same (d, seed) sees the same problem whatever ε is
    by_key = {(r["d"], r["seed"], r["eps_factor"]): r for r in a.records}
    assert by_key[(4, 0, 0.0)]["f_gap"] == by_key[(4, 0, 10.0)]["f_gap"]
    assert seed_sequence(spec, 4, 0).spawn_key == (4, 0)
    assert by_key[(4, 0, 10.0)]["violations"] > 0 and by_key[(4, 0, 0.0)]["violations"] == 0


def test_capped_runs_are_censored() -> None:
    spec = StudySpec(name="t", title="", dims=(8,), deltas=(0.05,), seeds=2, cap=1e-4, family="pseudo_huber",
                     traces=0)
    run = run_study(spec, workers=1, progress=False)
    assert all(r["hit_iterate_censored"] and r["hit_average_censored"] for r in run.records)
    assert all(r["iterations"] == r["max_iter"] for r in run.records)


def test_reanalysis_reproduces_the_report(tmp_path: Path) -> None:
    assert main(["delta-scaling", *TINY, "--deltas", "0.25,0.3", "--dims", "4", "--out", str(tmp_path)]) == 0
    folder = tmp_path / "delta-scaling"
    first = (folder / "README.md").read_text()
    assert main(["delta-scaling", "--reanalyze", "--out", str(tmp_path), "--no-progress"]) == 0
    assert (folder / "README.md").read_text() == first  # same fits, same findings, original command kept
    assert (tmp_path / "README.md").exists()  # the index


def test_reanalysis_needs_the_records_and_says_where_they_are(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["delta-scaling", *TINY, "--dims", "4", "--out", str(tmp_path)]) == 0
    monkeypatch.setenv("ZEROOPT_CACHE", str(tmp_path / "elsewhere"))  # a machine without the database
    with pytest.raises(SystemExit) as ended:  # one line and exit 1, before anything is redone
        main(["delta-scaling", "--reanalyze", "--out", str(tmp_path), "--no-progress"])
    assert ended.value.code == 1 and "--db PATH" in capsys.readouterr().err


def test_migration_moves_the_runs_of_a_full_results_file(tmp_path: Path) -> None:
    assert main(["d-scaling", *TINY, "--out", str(tmp_path)]) == 0
    path = tmp_path / "d-scaling" / "results.json"
    summary = json.loads(path.read_text())
    runs = _runs(tmp_path / "d-scaling")
    old = {k: v for k, v in summary.items() if k != "records"} | {"runs": runs}  # the form before the split
    path.write_text(json.dumps(old))
    db = tmp_path / "other.sqlite"
    assert migrate(tmp_path, db) == [path] and migrate(tmp_path, db) == []  # the second finds nothing to move
    assert json.loads(path.read_text()) == summary  # the same summary and pointer as the writer makes
    assert load_records(summary["records"], db) == runs


def test_an_interrupted_study_resumes_from_the_runs_it_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = StudySpec(name="t", title="", dims=(4, 8), deltas=(0.3,), seeds=2, cap=0.2, traces=1)
    whole = run_study(spec, workers=1, progress=False)
    calls = []

    def interrupt_third(spec: StudySpec, cell: object, seed: int) -> dict:
        calls.append(seed)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return run_cell_seed(spec, cell, seed)

    monkeypatch.setattr(runner, "run_cell_seed", interrupt_third)
    with pytest.raises(StudyInterrupted) as stop:
        run_study(spec, workers=1, progress=False)
    assert len(stop.value.records) == 2 and stop.value.total == 4
    monkeypatch.setattr(runner, "run_cell_seed", run_cell_seed)
    resumed = run_study(spec, workers=1, progress=False, done=stop.value.records)
    assert _strip(resumed.records) == _strip(whole.records)  # the same runs, in the same order


def test_main_keeps_the_finished_runs_of_a_ctrl_c_and_drops_them_once_whole(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["delta-scaling", *TINY, "--dims", "4", "--out", str(tmp_path)]
    real, calls = runner.run_cell_seed, []

    def interrupt_second(*args: object) -> dict:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(runner, "run_cell_seed", interrupt_second)
    assert main(argv) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("interrupted: 1 of 2 runs of delta-scaling finished")
    assert not (tmp_path / "delta-scaling" / "results.json").exists()
    spec = dataclasses.replace(STUDIES["delta-scaling"].spec, seeds=2, dims=(4,), deltas=(0.3,)).to_dict()
    assert len(load_partial(spec)[0]) == 1
    again: list[int] = []
    monkeypatch.setattr(runner, "run_cell_seed", lambda *args: again.append(1) or real(*args))
    assert main(argv) == 0
    assert len(again) == 1  # the kept run was not run again
    assert len(_runs(tmp_path / "delta-scaling")) == 2 and load_partial(spec) == ([], 0.0)
