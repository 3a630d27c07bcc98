"""The README's two set-up commands are exactly what CI runs, and its tour's code runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _bash_blocks(text: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", text, flags=re.S)]


def test_ci_runs_the_readme_commands() -> None:
    blocks = _bash_blocks((ROOT / "README.md").read_text())
    assert len(blocks) >= 2, "the README must start with the setup command and the test command"
    ci = (ROOT / ".ci" / "run").read_text()
    for command in blocks[:2]:
        assert command in ci.splitlines(), f"CI does not run the README command: {command}"


def _python_block_under(heading: str) -> str:
    """The first ```python block of the README section whose heading is ``heading``."""
    text = (ROOT / "README.md").read_text()
    section = re.split(r"^#+ ", text, flags=re.M)
    body = next(s for s in section if s.startswith(heading + "\n"))
    return re.findall(r"```python\n(.*?)```", body, flags=re.S)[0]


def test_tour_minimize_example_runs() -> None:
    block = _python_block_under("Minimise a function")
    namespace: dict = {}
    exec(compile(block, "README tour", "exec"), namespace)  # noqa: S102 - the README's own example
    res = namespace["res"]
    assert res.queries <= 20_000 and res.fun < 1e-3 * 50


def test_tour_theory_example_runs() -> None:
    block = _python_block_under("Theory and studies")
    namespace: dict = {}
    exec(compile(block, "README theory tour", "exec"), namespace)  # noqa: S102 - the README's own example
    res, prob = namespace["res"], namespace["prob"]
    # The final iterate reaches the example's δ = 0.2 (measured: ‖∇f‖ = 0.002, f from 2.3 to 1e-6).
    assert np.linalg.norm(prob.gradient(res.x_last)) <= 0.2
    assert prob(res.x_last) < 1e-3 * prob(prob.x0)


def test_write_your_own_solver_example_runs_as_written() -> None:
    """The own-solver block, in a fresh interpreter (it registers a solver): minimize, then both digits models."""
    block = _python_block_under("Write your own solver")
    assert len(block.strip().splitlines()) <= 32
    out = subprocess.run([sys.executable, "-c", block], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    fun, queries = lines[0].split()
    assert float(fun) < 1e-3 * 50 and int(queries) <= 20_000
    summaries = [line for line in lines if "adversarial" in line]
    assert len(summaries) == 2 and all(line.startswith("3/3 adversarial") for line in summaries), out.stdout


def test_what_happens_when_things_go_wrong_example_runs() -> None:
    block = _python_block_under("What happens when things go wrong")
    namespace: dict = {}
    exec(compile(block, "README faults", "exec"), namespace)  # noqa: S102 - the README's own example
    res = namespace["res"]
    assert res.status.value == "error" and res.queries == 500 and 0 <= res.fun < 10 and res.history


def test_tour_tree_ensemble_example_runs() -> None:
    text = (ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "exact_minimal_adversarial" in b)
    namespace: dict = {}
    exec(compile(block, "README tree tour", "exec"), namespace)  # noqa: S102 - the README's own example
    exact, res = namespace["exact"], namespace["res"]
    assert exact.status == ["optimal"] * 4 and all(res.success)
    # No attack can beat the proven minimum: every ratio is at least 1 (up to float32 rounding of the points).
    assert all(res.distortion >= exact.distance * (1 - 1e-6))
