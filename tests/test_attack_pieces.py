"""The attack's pieces: their defaults as docs/attack.md tables them, flat settings mapped onto them, the checks."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from applications.campaign import Campaign
from applications.hardlabel import (
    CHEAP_START,
    REFERENCE_START,
    AttackConfig,
    BoundarySearch,
    ModelOptions,
    Polish,
    Race,
    Runs,
    Start,
    Verify,
    attack,
    attack_keywords,
)
from applications.hardlabel.config import PIECES, SETTINGS

DOC = Path(__file__).resolve().parents[1] / "docs" / "attack.md"


def _table() -> dict[tuple[str, str], object]:
    """``(piece class name, setting) -> default`` from the table of docs/attack.md's *The pieces*."""
    rows: dict[tuple[str, str], object] = {}
    piece = ""
    for line in DOC.read_text().split("## The pieces", 1)[1].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("| ") else []
        if len(cells) != 5 or cells[1] in ("setting", "---"):
            continue
        named = re.match(r"`(\w+)` \(", cells[0])
        piece = named.group(1) if named else (piece if not cells[0] else "")
        if piece and cells[1] != "—":
            rows[(piece, cells[1].strip("`"))] = ast.literal_eval(cells[2].strip("`"))
    return rows


def test_the_docs_table_lists_every_setting_with_its_default() -> None:
    table = _table()
    defaults = {(cls.__name__, f.name): getattr(cls(), f.name) for cls in PIECES.values()
                for f in dataclasses.fields(cls)}
    assert table == defaults


def test_flat_settings_map_onto_their_pieces_and_the_rest_onto_the_solver() -> None:
    keywords = attack_keywords({"n_initial": 50, "race_starts": 1, "local_growth": 1.0, "restarts": 0,
                                "prune": False, "verify": 0, "batch_size": 1, "q": 10, "beta": 0.02})
    assert keywords == {"start": Start(n_initial=50), "race": Race(race_starts=1),
                        "boundary_search": BoundarySearch(local_growth=1.0), "runs": Runs(restarts=0),
                        "polish": Polish(prune=False), "verify": Verify(queries=0),
                        "model_options": ModelOptions(batch_size=1), "solver_options": {"q": 10, "beta": 0.02}}
    config = AttackConfig(**{k: v for k, v in keywords.items() if k != "solver_options"})
    assert config.settings("verify", "n_initial", "prune") == {"verify": 0, "n_initial": 50, "prune": False}
    assert sorted(SETTINGS) == sorted({*(f.name for cls in PIECES.values() for f in dataclasses.fields(cls))}
                                      - {"queries"} | {"verify"})
    assert attack_keywords({}) == {**AttackConfig().keywords(), "solver_options": {}}


def test_the_presets_are_pieces() -> None:
    assert REFERENCE_START["start"] == Start(n_initial=100, initial_directions="gaussian",
                                             initial_selection="bisect-all")
    assert REFERENCE_START["boundary_search"].local_growth == 1.0
    assert REFERENCE_START["race"].race_starts == 1 and REFERENCE_START["polish"].prune is False
    assert dict(CHEAP_START) == {"start": Start(), "race": Race()}  # the cheap start is the default
    with pytest.raises(TypeError):
        REFERENCE_START["start"] = Start()  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Start().n_initial = 5  # type: ignore[misc]


def test_the_reference_start_runs_as_its_flat_settings_did() -> None:
    w = np.array([[1.0, -1.0], [-1.0, 1.0]])
    model = lambda x: x.reshape(len(x), -1) @ w.T  # noqa: E731
    x, y = np.array([[0.8, 0.2], [0.7, 0.4]]), np.array([0, 0])
    by_pieces = attack(model, x, y, budget=400, solver="rgf", seed=0, **REFERENCE_START)
    by_settings = attack(model, x, y, budget=400, solver="rgf", seed=0, **attack_keywords(
        AttackConfig(**REFERENCE_START).settings("initial_directions", "initial_selection", "n_initial",
                                                 "local_growth", "race_starts", "prune")))
    np.testing.assert_array_equal(by_pieces.x_adv, by_settings.x_adv)
    np.testing.assert_array_equal(by_pieces.queries, by_settings.queries)


@pytest.mark.parametrize(("piece", "bad", "says"), [
    (Start, {"initial_directions": "nope"}, "Start: initial_directions must be one of"),
    (Start, {"target_pool": np.zeros(3)}, "Start: target_pool must be a pair"),
    (Runs, {"max_iter": -1}, "Runs: max_iter must be a non-negative integer"),
    (Runs, {"preset": "papers"}, "Runs: preset must be one of"),
    (Verify, {"queries": -1}, "Verify: queries must be a non-negative integer"),
    (ModelOptions, {"batch_size": 0}, "ModelOptions: batch_size must be a positive integer"),
    (BoundarySearch, {"local_ratio": 1.0}, r"BoundarySearch: local_ratio must be a number in \(0, 1\)"),
])
def test_each_piece_checks_its_own_settings(piece: type, bad: dict, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        piece(**bad)


def test_a_misplaced_keyword_names_every_piece_it_belongs_to() -> None:
    model = lambda x: x.reshape(len(x), -1) @ np.eye(2)  # noqa: E731
    with pytest.raises(TypeError) as info:
        attack(model, np.array([[0.8, 0.2]]), np.array([0]), budget=100, n_initial=50,
               initial_selection="tournament", prune=False, q=10, beta=0.1)
    assert str(info.value) == (
        "n_initial and initial_selection belong to the start: pass start=Start(n_initial=50, "
        "initial_selection='tournament'); prune belongs to the polish: pass polish=Polish(prune=False); "
        "q and beta are options of solver 'sign-growing': pass solver_options={'q': 10, 'beta': 0.1}")
    with pytest.raises(TypeError, match=r"config is no keyword of attack\(\).*\*\*config\.keywords\(\)"):
        attack(model, np.array([[0.8, 0.2]]), np.array([0]), budget=100, config=AttackConfig())
    with pytest.raises(TypeError, match="start takes a Start"):
        attack(model, np.array([[0.8, 0.2]]), np.array([0]), budget=100, start={"n_initial": 5})


def test_a_campaign_maps_its_options_onto_the_pieces_and_refuses_bad_ones_at_once() -> None:
    Campaign(models=["digits-lgbm"], options={"n_initial": 50, "prune": False, "q": 10})
    with pytest.raises(ValueError, match="options: Start: n_initial must be a positive integer"):
        Campaign(models=["digits-lgbm"], options={"n_initial": 0})
    with pytest.raises(ValueError, match="options: batch_size is not an .options. entry"):
        Campaign(models=["digits-lgbm"], options={"batch_size": 4})


def test_the_attack_code_reports_no_measurement() -> None:
    """Docstrings and comments of the attack say what a piece does; what it measured is on docs/attack.md."""
    package = Path(__file__).resolve().parents[1] / "applications" / "hardlabel"
    citing = [str(p.relative_to(package)) for p in package.rglob("*.py") if "benchmarks/results" in p.read_text()]
    assert not citing, f"move the measurements these cite to docs/attack.md: {citing}"
