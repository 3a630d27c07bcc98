"""``benchmarks.studies.mutation_check --update``: every kept row is named under the one command that made it."""

from __future__ import annotations

from benchmarks.studies.mutation_check import MUTANTS, merge_update


def _row(name: str) -> dict:
    return {"mutant": name, "bug": "", "path": "", "caught": ["t"], "seconds": 1.0}


def test_an_update_names_each_kept_row_under_the_command_that_made_it() -> None:
    a, b, c, d = (m.name for m in MUTANTS[:4])
    full = {"command": "full", "baseline": {}, "mutants": [_row(a), _row(b), _row(c), _row(d)], "earlier": []}
    rows, earlier = merge_update(full, [_row(b)])  # "--only b"
    assert [r["mutant"] for r in rows] == [a, b, c, d]
    assert earlier == [{"command": "full", "baseline": {}, "mutants": [a, c, d]}]
    second = {"command": "only-b", "baseline": {}, "mutants": rows, "earlier": earlier}
    rows, earlier = merge_update(second, [_row(c)])  # "--only c": b's row is only-b's, the rest full's
    assert [(e["command"], e["mutants"]) for e in earlier] == [("full", [a, d]), ("only-b", [b])]
    assert [r["mutant"] for r in rows] == [a, b, c, d]


def test_a_row_an_older_page_listed_twice_goes_to_its_first_command() -> None:
    a, b, c = (m.name for m in MUTANTS[:3])
    page = {"command": "third", "baseline": {}, "mutants": [_row(a), _row(b), _row(c)],
            "earlier": [{"command": "first", "baseline": {}, "mutants": [a]},
                        {"command": "second", "baseline": {}, "mutants": [a, b]}]}
    _, earlier = merge_update(page, [_row(c)])
    assert [(e["command"], e["mutants"]) for e in earlier] == [("first", [a]), ("second", [b])]


def test_every_planted_bug_still_finds_the_code_it_changes() -> None:
    """A mutant whose search text moved would plant nothing: each edit must match exactly once in the tree."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for mutant in MUTANTS:
        text = (root / mutant.path).read_text()
        for search, _ in mutant.edits:
            assert text.count(search) == 1, f"{mutant.name}: search text not found once in {mutant.path}"
            text = text.replace(search, _)
