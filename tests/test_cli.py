"""The ``zeroopt`` command line: every subcommand's help and a real run of each, model and data sources."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from applications.campaign import ResultsDB
from applications.campaign.data import load_data
from applications.campaign.models import load_model
from applications.cli import main


@pytest.fixture(scope="module")
def module_cache(digits_cache: Callable[[], Path]) -> Path:
    return digits_cache()  # the module's own, holding the digits models trained once for the test run


@pytest.fixture(autouse=True)
def cache(module_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ZEROOPT_CACHE", str(module_cache))
    return module_cache


@pytest.mark.parametrize(
    "command", [[], ["attack"], ["campaign"], ["report"], ["minimize"], ["study"], ["bench"], ["exact"]]
)
def test_every_subcommand_shows_a_working_example(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*command, "--help"]) == 0
    text = capsys.readouterr().out
    assert "Example" in text and "zeroopt " in text.split("Example", 1)[1]


def test_attack_writes_the_database_a_report_and_pictures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, out = tmp_path / "r.sqlite", tmp_path / "out"
    args = ["attack", "-m", "digits-cnn", "-s", "rgf", "--n", "3", "-b", "300", "--db", str(db), "--out", str(out),
            "--no-progress"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "digits-cnn" in text and "3 attacks run and stored, 0 already stored" in text
    assert {p.name for p in out.iterdir()} >= {"README.md", "digits_untargeted.png", "examples_digits-cnn_rgf_b300.png"}
    rows = list(ResultsDB(db).rows(with_adv=True))
    assert len(rows) == 3 and all(r["queries"] <= 300 and r["command"].startswith("zeroopt attack") for r in rows)
    assert all(r["x_adv"] is not None for r in rows if r["success"])
    assert main(args) == 0 and "0 attacks run and stored, 3 already stored" in capsys.readouterr().out
    assert main(["report", str(db), "--out", str(tmp_path / "rep")]) == 0
    page = (tmp_path / "rep" / "README.md").read_text()
    assert "| digits-cnn | rgf | 300 | 3 |" in page


def test_campaign_file_with_command_line_overrides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text('models = ["digits-lgbm"]\nsolvers = ["sign"]\nbudgets = [150, 250]\nn = 2\ntargeted = true\n'
                    "[options]\nstep = 0.1\n")
    db = tmp_path / "r.sqlite"
    assert main(["campaign", str(toml), "--db", str(db), "--no-progress", "--n", "1", "--commit", "task"]) == 0
    rows = list(ResultsDB(db).rows())
    assert sorted(r["budget"] for r in rows) == [150, 250]  # n overridden to 1, both budgets of the file
    assert all(r["goal"] == "targeted:next" and r["target"] == (r["label"] + 1) % 10 for r in rows)
    assert all(r["options"] == '{"step":0.1}' for r in rows)
    toml.write_text('models = ["digits-cnn"]\nbudget = 5\n')
    assert main(["campaign", str(toml), "--db", str(db)]) == 2
    assert "unknown key(s) ['budget']" in capsys.readouterr().err


def test_clear_errors_for_a_bad_model_or_missing_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["attack", "-m", "no-such-model", "--data", "digits", "--no-db", "--no-progress"]) == 1
    assert "unknown model 'no-such-model'" in capsys.readouterr().err
    assert main(["attack", "-m", "digits-cnn", "--data", str(tmp_path / "missing.npz"), "--no-db"]) == 1
    assert "neither a built-in name" in capsys.readouterr().err


def test_minimize_and_study_dispatch(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["minimize", "--problem", "log_norm", "--dim", "8", "--budget", "3000"]) == 0
    out = capsys.readouterr().out
    assert "log_norm(d=8)" in out and "queries of 3000" in out
    assert main(["study", "list"]) == 0 and "d-scaling" in capsys.readouterr().out


@pytest.mark.parametrize("option, says", [("q=0", "option q must be positive"),
                                          ("nonsense=1", "has no option 'nonsense'"),
                                          ("history_span=0", "option history_span must be positive")])
def test_minimize_says_which_option_is_wrong_before_any_query(option: str, says: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["minimize", "--dim", "8", "--solver", "sign", "--budget", "300", "-o", option]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_models_from_a_lightgbm_file_an_entry_point_and_weights(tmp_path: Path) -> None:
    booster = load_model("digits-lgbm").model
    path = tmp_path / "m.txt"
    booster.save_model(str(path))
    x = load_data("digits").x[:10].reshape(10, -1)
    assert np.array_equal(load_model(str(path)).model.predict(x), booster.predict(x))
    entry = load_model("applications.digits:DigitsCNN")  # any module:function returning a model
    assert type(entry.model).__name__ == "DigitsCNN"
    import torch

    weights = tmp_path / "w.pt"
    torch.save(load_model("digits-cnn").model.state_dict(), weights)
    again = load_model(str(weights), arch="digits-cnn").model
    xt = torch.from_numpy(load_data("digits").x[:5])
    assert torch.equal(again(xt), load_model("digits-cnn").model(xt))
    with pytest.raises(ValueError, match="needs its architecture"):
        load_model(str(weights))


def test_data_from_npz_csv_and_libsvm(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.random((6, 1, 4, 4)).astype(np.float32), rng.integers(0, 3, 6)
    np.savez(tmp_path / "d.npz", x=x, y=y)
    d = load_data(str(tmp_path / "d.npz"))
    assert d.is_image and d.bounds == (0.0, 1.0) and np.array_equal(d.y, y)
    table = np.column_stack([y, rng.normal(size=(6, 3)) * 2])
    np.savetxt(tmp_path / "d.csv", table, delimiter=",")
    d = load_data(str(tmp_path / "d.csv"))
    assert d.x.shape == (6, 3) and d.bounds[0] <= d.x.min() and d.bounds[1] >= d.x.max()
    from sklearn.datasets import dump_svmlight_file

    dump_svmlight_file(table[:, 1:], y, str(tmp_path / "d.svm"))
    assert np.allclose(load_data(str(tmp_path / "d.svm")).x, table[:, 1:], atol=1e-6)
    with pytest.raises(ValueError, match="outside the bounds"):
        load_data(str(tmp_path / "d.csv"), bounds=(0.0, 0.5))
    assert os.path.exists(tmp_path / "d.npz")


def test_exact_gives_the_proven_minimum_and_the_attacks_gap(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["exact", "--model", "digits-lgbm", "--n", "2", "--attack-budget", "300"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.strip().startswith(("0 ", "1 "))]
    assert len(rows) == 2 and all(r[2] == "optimal" for r in rows)
    # No attack beats the proven minimum: every ratio is at least 1.
    assert all(float(r[-1]) >= 1.0 - 1e-6 for r in rows)
