"""The README's two set-up commands are exactly what CI runs, and every Python block of the README and docs/ runs.

Each named test below runs every ```python block of one page and checks what the page says the block does;
:func:`test_every_other_page_runs` runs the blocks of every other page under docs/, so no block goes unrun.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
# Pages whose blocks a named test below runs (and checks); every other docs/*.md page is run as it is.
CHECKED_BY_NAME = {"README.md", "docs/writing-a-solver.md", "docs/theory.md", "docs/failures.md", "docs/trees.md"}


def _blocks(page: str, language: str) -> list[str]:
    return [b.strip() for b in re.findall(rf"```{language}\n(.*?)```", (ROOT / page).read_text(), flags=re.S)]


def _run_blocks(page: str, count: int) -> dict:
    """Execute the page's python blocks in order in one namespace (a page's blocks build on each other)."""
    blocks = _blocks(page, "python")
    assert len(blocks) == count, f"{page}: {len(blocks)} python blocks; update the test that checks them"
    namespace: dict = {}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{page} block {i}", "exec"), namespace)  # noqa: S102 - the page's own example
    return namespace


def test_ci_runs_the_readme_commands() -> None:
    text = (ROOT / "README.md").read_text()
    blocks = _blocks("README.md", "bash")
    assert len(blocks) >= 2, "the README must start with the setup command and the test command"
    first_two = [lang for lang, _ in re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M)][:2]
    assert first_two == ["bash", "bash"], "the setup and test commands must be the README's first two code blocks"
    ci = (ROOT / ".ci" / "run").read_text()
    for command in blocks[:2]:
        assert command in ci.splitlines(), f"CI does not run the README command: {command}"


def test_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 150


def test_readme_figures_stand_beside_their_commands() -> None:
    """A paragraph of the README that quotes a measured figure names the command that makes it."""
    text = re.sub(r"```.*?```", "", (ROOT / "README.md").read_text(), flags=re.S)
    for paragraph in text.split("\n\n"):
        if paragraph.lstrip().startswith("#"):
            continue
        prose = re.sub(r"`[^`]*`", "", paragraph)  # versions and option values in code spans are not figures
        if re.search(r"\d\.\d|\d ?%", prose):
            assert re.search(r"`(python -m |zeroopt )[^`]+`", paragraph), f"a figure without its command:\n{paragraph}"


def test_readme_examples_run(capsys: pytest.CaptureFixture[str]) -> None:
    """minimize, the attack on the demo's digits CNN, and the tree ensemble against its exact minimum, in order."""
    blocks = _blocks("README.md", "python")
    assert len(blocks) == 3, "the README has one example each for minimize, the attack and trees"
    namespace: dict = {}
    exec(compile(blocks[0], "README minimize", "exec"), namespace)  # noqa: S102 - the README's own example
    res = namespace["res"]
    assert res.queries <= 20_000 and res.fun < 1e-3 * 50
    exec(compile(blocks[1], "README attack", "exec"), namespace)  # noqa: S102
    res = namespace["res"]
    assert res.success.all() and (res.queries <= 500).all() and "3/3 adversarial" in capsys.readouterr().out
    exec(compile(blocks[2], "README trees", "exec"), namespace)  # noqa: S102
    exact, res = namespace["exact"], namespace["res"]
    assert exact.status == ["optimal"] * 4 and all(res.success)
    # No attack can beat the proven minimum: every ratio is at least 1 (up to float32 rounding of the points).
    assert all(res.distortion >= exact.distance * (1 - 1e-6))


def test_theory_example_runs() -> None:
    ns = _run_blocks("docs/theory.md", 1)
    res, prob = ns["res"], ns["prob"]
    # The final iterate reaches the example's δ = 0.2 (measured: ‖∇f‖ = 0.002, f from 2.3 to 1e-6).
    assert np.linalg.norm(prob.gradient(res.x_last)) <= 0.2
    assert prob(res.x_last) < 1e-3 * prob(prob.x0)


def test_a_chain_written_out_runs_as_written() -> None:
    """The page's first block: a chain of parts described a line per part, run by minimize, a part swapped."""
    block = _blocks("docs/writing-a-solver.md", "python")[0]
    out = subprocess.run([sys.executable, "-c", block], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0].startswith("my-rgf: beta = 0.005") and [line.split()[1] for line in lines[1:7]] == [
        "count", "sample", "estimate", "step", "amend", "stop"]
    fun, swapped = lines[-1].split(" ", 1)
    assert float(fun) < 1e-3 and swapped == "SphereDirections()"


def test_write_your_own_solver_example_runs_as_written() -> None:
    """The own-solver block, in a fresh interpreter (it registers a solver): minimize, then both digits models."""
    block = _blocks("docs/writing-a-solver.md", "python")[1]  # [2], the plugin: tests/test_plugins.py
    assert len(block.splitlines()) <= 32
    out = subprocess.run([sys.executable, "-c", block], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    fun, queries = lines[0].split()
    assert float(fun) < 1e-3 * 50 and int(queries) <= 20_000
    summaries = [line for line in lines if "adversarial" in line]
    assert len(summaries) == 2 and all(line.startswith("3/3 adversarial") for line in summaries), out.stdout


def test_the_contracts_example_runs_a_solver_of_its_own_parts() -> None:
    """The contracts section's block: an estimator that passes hints and a 1/√t step rule that reads t."""
    blocks = _blocks("docs/writing-a-solver.md", "python")
    assert len(blocks) == 4, "the page's blocks: a chain, an own solver, the plugin, the contracts' example"
    out = subprocess.run([sys.executable, "-c", blocks[3]], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    fun, iterations, step = out.stdout.split()
    assert float(fun) < 1e-3 * 10  # from f(x0) = 10
    # Iteration t (from 0) stepped by 0.2 / √(t + 1): the step rule was handed t.
    assert float(step) == pytest.approx(0.2 / np.sqrt(int(iterations)))


def test_what_happens_when_things_go_wrong_example_runs() -> None:
    ns = _run_blocks("docs/failures.md", 2)
    res = ns["res"]
    assert res.status.value == "error" and res.queries == 500 and 0 <= res.fun < 10 and res.history
    # NaN is worse than any value (the best finite point: 1 on the ball's edge), and the noise is estimated.
    assert ns["found"].fun == pytest.approx(1.0, abs=1e-3) and float(ns["noisy"].x @ ns["noisy"].x) < 1.0


def test_tree_ensemble_page_example_runs() -> None:
    ns = _run_blocks("docs/trees.md", 1)
    exact, res = ns["exact"], ns["res"]
    assert exact.status == ["optimal"] * 4 and all(res.success)
    assert all(res.distortion >= exact.distance * (1 - 1e-6))


def _other_pages() -> list[str]:
    pages = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))
    return [p for p in pages if p not in CHECKED_BY_NAME]


@pytest.mark.parametrize("page", _other_pages())
def test_every_other_page_runs(page: str) -> None:
    """Every python block of the page, in order, in a fresh interpreter (a page may register a solver)."""
    blocks = _blocks(page, "python")
    if not blocks:
        return
    env = {**os.environ, "MPLBACKEND": "Agg"}
    out = subprocess.run([sys.executable, "-c", "\n\n".join(blocks)], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, f"{page}:\n{out.stderr}"


LINKED_PAGES = ["README.md", "benchmarks/README.md", "benchmarks/results/README.md",
                *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", LINKED_PAGES)
def test_every_relative_link_resolves(page: str) -> None:
    """Every relative Markdown link of the page (outside code blocks) names a file or folder in the tree."""
    text = re.sub(r"```.*?```", "", (ROOT / page).read_text(), flags=re.S)
    dead = []
    for target in re.findall(r"\[[^\]]*\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL (https:, mailto:) or an anchor on the same page
        if not ((ROOT / page).parent / target.split("#")[0]).exists():
            dead.append(target)
    assert not dead, f"{page}: links to nothing in the tree: {dead}"
