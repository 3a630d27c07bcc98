"""benchmarks.studies.tag_compare: one attack's stored runs under several tags, on the inputs every tag ran."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchmarks.store import RunStore
from benchmarks.studies.tag_compare import compare, main


def _record(image: int, distances: list[float], budget: int = 4000) -> dict:
    queries = [100, 1000, 3000][: len(distances)]
    return {"experiment": "mnist-untargeted", "attack": "ours-x", "image": image, "position": image,
            "budget": budget, "success": True, "distortion": distances[-1], "trace": {"q": queries, "d": distances}}


def test_medians_are_over_the_common_inputs_and_unrun_budgets_have_no_figure(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    old, new = RunStore(db, "old"), RunStore(db, "new")
    for i, d in enumerate([[4.0, 2.0, 1.0], [6.0, 3.0, 2.0], [9.0, 9.0, 9.0]]):
        old.save(_record(i, d))
    for i, d in enumerate([[2.0, 1.0, 0.5], [3.0, 2.0, 1.5]]):  # input 2 never ran under "new"
        new.save(_record(i, d, budget=2000 if i else 4000))
    t = compare("mnist-untargeted", "ours-x", {"old": old, "new": new})
    assert t["inputs"] == [0, 1]
    col = t["budgets"].index(1000)
    assert t["median"]["old"][col] == 2.5 and t["median"]["new"][col] == 1.5
    far = t["budgets"].index(4000)
    assert t["median"]["old"][far] == 1.5 and np.isnan(t["median"]["new"][far])  # input 1 stopped at 2k
    assert compare("cifar-untargeted", "ours-x", {"old": old})["inputs"] == []
    out = tmp_path / "page.md"
    main(["--experiments", "mnist-untargeted", "--tags", "old,new", "--labels", "before,after", "--attack", "ours-x",
          "--db", str(db), "--out", str(out)])
    text = out.read_text()
    assert "| after (`new`) (median) |" in text and "—" in text and "--labels before,after" in text
    assert json.loads(out.with_suffix(".json").read_text())[0]["inputs"] == [0, 1]
    # --budgets keeps only the columns asked for (an attack that plans from its budget: the one its runs had).
    t1k = compare("mnist-untargeted", "ours-x", {"old": old, "new": new}, only={1000, 123})
    assert t1k["budgets"] == [1000] and t1k["median"]["new"] == [1.5]
    main(["--experiments", "mnist-untargeted,cifar-untargeted", "--tags", "old,new", "--attack", "ours-x",
          "--db", str(db), "--out", str(out), "--budgets", "1000"])
    assert "| 1,000 |" in out.read_text() and "| 2,000 |" not in out.read_text()


def test_a_tag_with_B_reads_each_column_from_the_runs_made_with_that_budget(tmp_path: Path) -> None:
    from benchmarks.studies.tag_compare import compare_per_budget

    db = tmp_path / "runs.sqlite"
    # Runs made with budget 1000 (tags a-1000, b-1000) and 2000 (a-2000 only): a column b lacks is left out.
    for tag, scale in (("a-1000", 1.0), ("b-1000", 0.5), ("a-2000", 3.0)):
        store = RunStore(db, tag)
        for i in range(2):
            store.save(_record(i, [scale * (i + 1), scale * (i + 1)], budget=int(tag.split("-")[1])))
    # (the 2k runs' trace at 1000 is not read: column 1000 comes from the 1000 tags alone)
    t = compare_per_budget("mnist-untargeted", "ours-x", {"a": "a-{B}", "b": "b-{B}"}, str(db), {1000, 2000})
    assert t["budgets"] == [1000] and t["inputs"] == [0, 1]
    assert t["median"]["a"] == [1.5] and t["median"]["b"] == [0.75] and t["paired"]["b"] == ["0.500 (100% / 0%)"]
    out = tmp_path / "page.md"
    main(["--experiments", "mnist-untargeted", "--tags", "a-{B},b-{B}", "--attack", "ours-x", "--db", str(db),
          "--out", str(out), "--budgets", "1000,2000"])
    assert "| b-{B} (`b-{B}`) (median) | 0.750 |" in out.read_text()
