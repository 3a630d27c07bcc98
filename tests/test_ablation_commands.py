"""benchmarks.studies.ablation names, on its page, commands that remake every run the page shows."""

from __future__ import annotations

import shlex
from pathlib import Path

from benchmarks.studies.ablation import VARIANTS, _slug, main, remake_commands


def _run(exp: str, variant: str, seed: int, n: int = 20, budget: int = 20000) -> dict:
    return {"experiment": exp, "variant": variant, "n": n, "budget": budget, "seed": seed}


def _cache_name(rec: dict) -> str:
    """The file name under which benchmarks.studies.ablation looks a run up in its cache."""
    key = f"{rec['experiment']}__{rec['variant']}__n{rec['n']}__b{rec['budget']}__s{rec['seed']}"
    return _slug(key.replace(" ", "_").replace("/", "-")) + ".json"


def _cache_run(runs: Path, variant: str, n: int, budget: int, at: dict[str, list[float]]) -> None:
    """Write one mnist-untargeted run (seed 0) into the ablation's cache folder ``runs``, as run_variant would."""
    import json

    rec = {**_run("mnist-untargeted", variant, 0, n=n, budget=budget), "solver": "sign", "options": {},
           "success": 1.0, "seconds": 1.0, "device": "cpu", "distortion_at": at,
           "median_at": {k: float(v[0]) for k, v in at.items()}}
    (runs / _cache_name(rec)).write_text(json.dumps(rec))


def _made_by(command: str) -> set[tuple]:
    """The (experiment, variant, n, budget, seed) runs a command makes, parsed back from its words."""
    words = shlex.split(command)
    arg = {words[i]: words[i + 1] for i in range(3, len(words) - 1) if words[i].startswith("--")}
    return {(e, v, int(arg["--n"]), int(arg["--budget"]), int(arg["--seed"]))
            for e in arg["--experiments"].split(",") for v in arg["--variants"].split(",")}


def test_every_run_is_made_by_exactly_one_command_and_no_command_makes_more() -> None:
    default, other, third = list(VARIANTS)[:3]
    runs = [_run("mnist-untargeted", default, 0), _run("mnist-untargeted", other, 0),
            _run("mnist-targeted", default, 0), _run("mnist-targeted", other, 0),  # same variants: one command
            _run("mnist-untargeted", default, 1), _run("mnist-untargeted", third, 1),
            _run("cifar-targeted", default, 0, n=10)]
    commands = remake_commands(runs, Path("out/dir"), plots=False)
    made = [_made_by(c) for c in commands]
    wanted = {(r["experiment"], r["variant"], r["n"], r["budget"], r["seed"]) for r in runs}
    assert set().union(*made) == wanted and sum(len(m) for m in made) == len(wanted)
    assert len(commands) == 3 and all(c.endswith("--out out/dir --no-plots") for c in commands)
    # The variants keep the order of VARIANTS (the first is each page's reference row).
    (mnist,) = [c for c in commands if "mnist-targeted,mnist-untargeted" in c]
    assert f"--variants {shlex.quote(default + ',' + other)}" in mnist


def test_the_page_lists_the_commands_of_its_cached_runs(tmp_path: Path) -> None:
    import json

    runs = tmp_path / "runs"
    runs.mkdir()
    for i, variant in enumerate(list(VARIANTS)[:2]):
        rec = {**_run("mnist-untargeted", variant, 0, n=2, budget=300), "solver": "sign", "options": {},
               "success": 1.0, "seconds": 1.0, "device": "cpu",
               "distortion_at": {"250": [1.0 + i, 2.0], "300": [0.9, 1.8]}, "median_at": {"250": 1.5, "300": 1.35}}
        (runs / _cache_name(rec)).write_text(json.dumps(rec))
    # Every run is cached, so the command only rewrites the page from the cache (no model is loaded).
    main(["--experiments", "mnist-untargeted", "--n", "2", "--budget", "300", "--variants",
          ",".join(list(VARIANTS)[:2]), "--out", str(tmp_path), "--no-plots"])
    page = (tmp_path / "README.md").read_text()
    (listed,) = [line for line in page.splitlines() if line.startswith("- `python -m benchmarks.studies.ablation")]
    assert _made_by(listed.strip("- `")) == {("mnist-untargeted", v, 2, 300, 0) for v in list(VARIANTS)[:2]}


def test_runs_of_two_sizes_are_paired_within_their_size(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    first, second = list(VARIANTS)[:2]
    for variant, n in [(first, 2), (second, 2), (first, 3), (second, 3)]:
        at = {"250": [1.0 + (variant == second)] * n, "300": [1.0] * n}  # the second variant 2x at 250
        _cache_run(runs, variant, n, 300, at)
    main(["--experiments", "mnist-untargeted", "--n", "3", "--budget", "300", "--variants", f"{first},{second}",
          "--out", str(tmp_path), "--no-plots"])
    page = (tmp_path / "README.md").read_text()
    assert "## mnist-untargeted (n = 2, 3, seed 0, budget 300)" in page
    paired_rows = [line for line in page.splitlines() if line.startswith(f"| {second} (n = ") and " vs " in line]
    assert len(paired_rows) == 2  # one per size, each against the first row of its own size
    assert all("2.000 (0% / 100%)" in row and "—" not in row for row in paired_rows)


def test_runs_made_with_two_budgets_are_paired_within_their_budget(tmp_path: Path) -> None:
    """A run made with 2000 queries is not paired with one made with 300, though both traces reach 250."""
    runs = tmp_path / "runs"
    runs.mkdir()
    first, second = list(VARIANTS)[:2]
    for variant, budget in [(first, 300), (second, 300), (first, 2000), (second, 2000)]:
        # At 250 the second variant is 2x the first among the runs made with 300 queries, 3x among those with 2000;
        # across budgets the ratios would be 6x (second@2000 / first@300) or 1x (second@300 / first@2000).
        scale = {(first, 300): 1.0, (second, 300): 2.0, (first, 2000): 2.0, (second, 2000): 6.0}[(variant, budget)]
        _cache_run(runs, variant, 2, budget, {"250": [scale, scale]})
    main(["--experiments", "mnist-untargeted", "--n", "2", "--budget", "2000", "--variants", f"{first},{second}",
          "--out", str(tmp_path), "--no-plots"])
    page = (tmp_path / "README.md").read_text()
    assert "## mnist-untargeted (n = 2, seed 0, budgets 300, 2,000)" in page
    paired_rows = {line.split(" vs ")[0]: line for line in page.splitlines() if " vs " in line}
    assert set(paired_rows) == {f"| {second} (budget 300)", f"| {second} (budget 2,000)"}
    assert "2.000 (0% / 100%)" in paired_rows[f"| {second} (budget 300)"]
    assert "3.000 (0% / 100%)" in paired_rows[f"| {second} (budget 2,000)"]


def test_a_rewritten_page_keeps_the_text_written_above_its_marker(tmp_path: Path) -> None:
    from benchmarks.page_commands import top_lines
    from benchmarks.pages import GENERATED_MARKER

    runs = tmp_path / "runs"
    runs.mkdir()
    _cache_run(runs, list(VARIANTS)[0], 2, 300, {"250": [1.0, 2.0], "300": [0.9, 1.8]})
    args = ["--experiments", "mnist-untargeted", "--n", "2", "--budget", "300", "--variants", list(VARIANTS)[0],
            "--out", str(tmp_path), "--no-plots"]
    main(args)
    first = (tmp_path / "README.md").read_text()
    assert GENERATED_MARKER in first and "0.900" in first  # the median at 300
    # A person replaces the tool's title by findings of their own, then the tool writes the page again.
    head = "# What we found\n\nThe part earns its place.\n"
    (tmp_path / "README.md").write_text(head + first[first.index(GENERATED_MARKER):].replace("0.900", "9.999"))
    main(args)
    again = (tmp_path / "README.md").read_text()
    # The command stays at the page's top, right under the person's title; their text follows it.
    command = "python -m benchmarks.studies.ablation " + shlex.join(args)
    assert again.startswith(f"# What we found\n\nCommand: `{command}`\n\nThe part earns its place.\n"
                            + GENERATED_MARKER)
    assert again.count("Command: `") == 1 and top_lines(again) == [command]
    assert "9.999" not in again and "0.900" in again and "# Ablation of the query-efficiency parts" not in again
