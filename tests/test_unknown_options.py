"""An unknown solver option or piece setting is a usage error (exit 2) before any work, on every command line.

Each command runs in-process (``applications.cli.main``, ``theory.studies.main``, the suite's parser) with the
work it would start replaced by a trap: a refusal must come before the trap, name the wrong name, the closest
valid one, and the valid names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import applications.campaign
import theory.studies
import zeroopt
from applications.cli.main import main
from benchmarks.suite_options import parse_args
from theory.arguments import option_problem

ROOT = Path(__file__).resolve().parents[1]


class Reached(Exception):
    """The work a refused command must never start."""


def _trap(*args: object, **kwargs: object) -> None:
    raise Reached


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Attacks, minimisation and studies raise :class:`Reached` instead of running."""
    monkeypatch.setattr(applications.campaign, "run_campaign", _trap)
    monkeypatch.setattr(zeroopt, "minimize", _trap)
    monkeypatch.setattr(theory.studies, "run_named_study", _trap)


def refused(capsys: pytest.CaptureFixture[str], argv: list[str], *says: str) -> str:
    """``zeroopt ARGV`` ends with exit 2 and an error naming every one of ``says``."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    for text in says:
        assert text in err, (text, err)
    return err


ATTACK = ["attack", "-m", "digits-cnn", "--n", "1", "-b", "20", "--no-progress"]


def test_a_misspelt_solver_option_of_attack(no_work: None, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    err = refused(capsys, [*ATTACK, "--db", str(db), "-o", "betaa=0.01"], "'betaa'", "did you mean 'beta'?",
                  "give one of sign-growing's options (q, ", "or of the pieces' settings (n_initial, ")
    assert "Error: " in err and not db.exists()  # not even the database is made


def test_a_misspelt_piece_setting_of_attack(no_work: None, capsys: pytest.CaptureFixture[str]) -> None:
    refused(capsys, [*ATTACK, "--no-db", "-s", "rgf", "-o", "prunee=false"], "'prunee'", "did you mean 'prune'?",
            "solver 'rgf'")


def test_an_option_one_of_the_solvers_lacks(no_work: None, capsys: pytest.CaptureFixture[str]) -> None:
    refused(capsys, [*ATTACK, "--no-db", "-s", "rgf", "-s", "sign-growing", "-o", "use_best_probe=true"],
            "'use_best_probe'", "solver 'sign-growing'", "solver 'rgf' takes it", "separate commands")


def test_valid_names_reach_the_work(no_work: None) -> None:
    with pytest.raises(Reached):  # a piece setting and a solver option, both known: no refusal
        main([*ATTACK, "--no-db", "-s", "rgf", "-o", "n_initial=5", "-o", "use_best_probe=true"])


def test_a_misspelt_option_in_a_campaign_file(no_work: None, capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text('models = ["digits-cnn"]\nn = 1\nbudgets = [20]\n[options]\nn_initail = 5\n')
    refused(capsys, ["campaign", str(toml), "--no-db"], str(toml), "'n_initail'", "did you mean 'n_initial'?")


def test_a_misspelt_option_of_a_plugins_solver(fresh: None, no_work: None, capsys: pytest.CaptureFixture[str]) -> None:
    # The campaign cannot check a solver its plugin has not registered yet: the command checks once it is loaded.
    refused(capsys, [*ATTACK, "--no-db", "--plugin", str(ROOT / "docs/examples/spsa_plugin.py"), "-s", "spsa",
                     "-o", "alpah=0.5"], "'alpah'", "solver 'spsa'", "did you mean 'alpha'?")


def test_a_misspelt_option_of_minimize(no_work: None, capsys: pytest.CaptureFixture[str]) -> None:
    # The registry's own check of the options, made before the problem is built.
    refused(capsys, ["minimize", "--dim", "4", "--solver", "rgf", "-o", "betaa=0.1"], "has no option 'betaa'",
            "Did you mean 'beta'?", "Its options: ['q', ")


def test_a_study_whose_solver_options_the_solver_does_not_take(no_work: None, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    import dataclasses

    study = theory.studies.STUDIES["d-scaling"]
    spec = dataclasses.replace(study.spec, solver_options=(("lipschitz", 2.0),))
    monkeypatch.setitem(theory.studies.STUDIES, "d-scaling", dataclasses.replace(study, spec=spec))
    argv = ["d-scaling", "--out", str(tmp_path / "out"), "--db", str(tmp_path / "db.sqlite")]
    with pytest.raises(Reached):  # rgf-fixed, the study's solver, takes lipschitz
        theory.studies.main(argv)
    with pytest.raises(SystemExit) as stop:
        theory.studies.main([*argv, "--solver", "coordinate"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "argument --solver" in err and "'lipschitz'" in err and "solver 'coordinate'" in err, err


@pytest.mark.parametrize("pair, says", [
    ("betaa=0.1", "did you mean 'beta'?"),
    ("sign:use_best_probe=true", "solver 'sign'"),  # scoped to a solver that lacks it
])
def test_the_suites_ours_option(pair: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        parse_args(["--solvers", "rgf,sign", "--ours-option", pair])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--ours-option" in err and says in err, err


def test_the_suites_valid_ours_options_parse() -> None:
    args = parse_args(["--solvers", "rgf,sign", "--ours-option", "rgf:use_best_probe=true", "--ours-option", "q=4",
                       "--ours-option", "prune=false"])
    assert len(args.ours_option) == 3


def test_option_problem_checks_only_registered_solvers() -> None:
    assert option_problem(["anything"], ["not-registered-yet"]) is None
    assert option_problem(["q"], ["rgf", "sign"]) is None
    assert option_problem(["zzz"], ["rgf"]) is not None and "did you mean" not in option_problem(["zzz"], ["rgf"])
