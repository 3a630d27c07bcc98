"""Every results page runs from its command: the command at the top of each page under benchmarks/results and
docs would run as written (read by its module's own parser, its names known), and a page that names a command
writing it gives that command at its top (``benchmarks.page_commands`` says what "the top" is). No command runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.command_check import check, parser_of, writes
from benchmarks.page_commands import ROOT, pages, problems, shell_commands, top_lines
from benchmarks.studies.ablation_variants import VARIANTS

ABLATION = "python -m benchmarks.studies.ablation --experiments mnist-untargeted --n 2 --budget 300"
VARIANT = next(iter(VARIANTS))


def test_every_page_runs_from_the_command_at_its_top() -> None:
    found = [f"{page.relative_to(ROOT)}: {problem}" for page in pages() for problem in problems(page)]
    assert not found, "fix these pages (benchmarks.page_commands says what each must hold):\n" + "\n".join(found)


def test_the_pages_checked_are_the_results_and_docs_pages() -> None:
    names = {page.relative_to(ROOT).as_posix() for page in pages()}
    assert {"benchmarks/results/README.md", "benchmarks/results/ablation/radius-step/README.md",
            "docs/benchmarks.md"} <= names
    assert all(n.startswith(("benchmarks/results/", "docs/")) for n in names)


def _page(tmp_path: Path, body: str, name: str = "README.md") -> Path:
    page = tmp_path / "out" / name
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(f"# A page\n\n{body}\n\nWhat the runs found.\n")
    return page


@pytest.mark.parametrize(("command", "says"), [
    (f"{ABLATION} --variants 'no such variant' --out out", "unknown variant 'no such variant'"),
    (f"{ABLATION} --variants '{VARIANT}' --no-such-flag --out out", "unrecognized arguments: --no-such-flag"),
    (f"{ABLATION} --variants '{VARIANT}' --n ten --out out", "invalid int value"),
    (f"python -m benchmarks.studies.ablation --experiments mnist-sideways --variants '{VARIANT}' --out out",
     "unknown experiment 'mnist-sideways'"),
    ("python -m benchmarks.no_such_module --out out", "ModuleNotFoundError"),
    ("python -m theory.studies no-such-study --workers 2", "unknown study 'no-such-study'"),
    ("python -m benchmarks.run_suite --tag t --solvers rgf,no-such-solver", "unknown solver 'no-such-solver'"),
])
def test_a_broken_command_at_the_top_is_caught(tmp_path: Path, command: str, says: str) -> None:
    found = problems(_page(tmp_path, f"Command: `{command}`"), root=tmp_path)
    assert any(says in problem for problem in found), found
    # the same command in a fenced block, after an assignment, is caught alike
    block = "```bash\nN=2\n" + command.replace("--n 2", "--n $N") + "\n```"
    assert any(says in problem for problem in problems(_page(tmp_path, block), root=tmp_path))


def test_a_command_that_would_run_passes_and_runs_nothing(tmp_path: Path) -> None:
    command = f"{ABLATION} --variants '{VARIANT}' --out out --no-plots"
    assert problems(_page(tmp_path, f"Command: `{command}`"), root=tmp_path) == []
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["README.md"]  # no runs/ cache: nothing ran


def test_a_command_below_a_preamble_is_caught(tmp_path: Path) -> None:
    command = f"{ABLATION} --variants '{VARIANT}' --out out"
    for body in (f"Made at commit abc1234 by:\n\n`{command}`", f"Produced by:\n\n```\n{command}\n```",
                 f"Findings first.\n\n- `{command}`"):
        (found,) = problems(_page(tmp_path, body), root=tmp_path)
        assert found.startswith("its command is not at the top"), found
    # a page that only cites another page's command is free to (an index)
    assert problems(_page(tmp_path, f"See `{command.replace('--out out', '--out elsewhere')}`."), root=tmp_path) == []


def test_a_listed_command_that_writes_the_page_is_checked_too(tmp_path: Path) -> None:
    good = f"{ABLATION} --variants '{VARIANT}' --out out"
    body = f"Command: `{good}`\n\nEvery run is made by one of:\n\n- `{good.replace(VARIANT, 'gone variant')}`"
    assert any("unknown variant 'gone variant'" in p for p in problems(_page(tmp_path, body), root=tmp_path))


def test_tag_compare_names_the_tags_and_labels_its_record_holds(tmp_path: Path) -> None:
    command = ("python -m benchmarks.studies.tag_compare --experiments gbdt-mnist --tags {tags} --labels {labels} "
               "--out out/tags.md")
    page = _page(tmp_path, "Command: `" + command.format(tags="a-{B},b-{B}", labels="'one,two'") + "`", "tags.md")
    page.with_suffix(".json").write_text(json.dumps([{"median": {"one (`a-{B}`)": [1.0], "two (`b-{B}`)": [2.0]}}]))
    assert problems(page, root=tmp_path) == []
    page.write_text(page.read_text().replace("b-{B}", "c-{B}"))
    assert problems(page, root=tmp_path) == [
        "benchmarks.studies.tag_compare: tag 'c-{B}' labelled 'two' is in no table of tags.json"]


def test_the_top_is_the_first_line_after_the_title() -> None:
    assert top_lines("# T\n\n<!-- marker -->\n\nCommand: `python -m x --a 1` (commit abc)\n") == ["python -m x --a 1"]
    assert top_lines("# T\n\n```python\nimport zeroopt\n```\n") is None  # an example, not a command
    assert top_lines("# T\n\nCommands below.\n\n```\npython -m x\n```\n") is None


def test_shell_blocks_expand_variables_and_loops() -> None:
    lines = ['V="a,b c"  # the variants', "for s in 0 1; do for v in x y; do python -m m --s $s --v \"$v\" "
             "--all \"$V\"; done; done", "OMP_NUM_THREADS=1 python -m m --s 9 && echo done \\", "  twice"]
    runs = shell_commands(lines)
    assert runs[:4] == [["python", "-m", "m", "--s", s, "--v", v, "--all", "a,b c"] for s in "01" for v in "xy"]
    assert runs[4:] == [["python", "-m", "m", "--s", "9"], ["echo", "done", "twice"]]


def test_the_parser_is_the_modules_own_and_writes_follow_its_defaults() -> None:
    assert parser_of("benchmarks.studies.tag_compare").parse_args(
        ["--experiments", "e", "--tags", "t", "--out", "o.md"]).tags == "t"
    assert writes(["python", "-m", "theory.studies", "eps"], Path("/r")) == [
        Path("/r/benchmarks/results/theory/eps/README.md")]
    assert writes(["python", "-m", "benchmarks.dfo", "--set", "highdim"], Path("/r")) == [
        Path("/r/benchmarks/results/dfo/highdim.md")]
    assert check(["echo", "python", "-m"]) == [] and check(["python", "-m", "pytest", "-q"]) == []
