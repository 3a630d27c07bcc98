"""The README's two set-up commands are exactly what CI runs, and its tour's code runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bash_blocks(text: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", text, flags=re.S)]


def test_ci_runs_the_readme_commands() -> None:
    blocks = _bash_blocks((ROOT / "README.md").read_text())
    assert len(blocks) >= 2, "the README must start with the setup command and the test command"
    ci = (ROOT / ".ci" / "run").read_text()
    for command in blocks[:2]:
        assert command in ci.splitlines(), f"CI does not run the README command: {command}"


def test_tour_minimize_example_runs() -> None:
    text = (ROOT / "README.md").read_text()
    block = re.findall(r"```python\n(.*?)```", text, flags=re.S)[0]
    namespace: dict = {}
    exec(compile(block, "README tour", "exec"), namespace)  # noqa: S102 - the README's own example
    res = namespace["res"]
    assert res.queries <= 20_000 and res.fun < 1e-3 * 50


def test_tour_theory_example_runs() -> None:
    text = (ROOT / "README.md").read_text()
    block = re.findall(r"```python\n(.*?)```", text, flags=re.S)[2]
    namespace: dict = {}
    exec(compile(block, "README theory tour", "exec"), namespace)  # noqa: S102 - the README's own example
    assert namespace["res"].fun < namespace["prob"](namespace["prob"].x0)


def test_tour_tree_ensemble_example_runs() -> None:
    text = (ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "exact_minimal_adversarial" in b)
    namespace: dict = {}
    exec(compile(block, "README tree tour", "exec"), namespace)  # noqa: S102 - the README's own example
    exact, res = namespace["exact"], namespace["res"]
    assert exact.status == ["optimal"] * 4 and all(res.success)
    # No attack can beat the proven minimum: every ratio is at least 1 (up to float32 rounding of the points).
    assert all(res.distortion >= exact.distance * (1 - 1e-6))
