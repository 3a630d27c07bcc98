"""Pages written from the code are current: docs/solvers.md is every built-in solver's chain as the code builds it."""

from __future__ import annotations

from pathlib import Path

from zeroopt.recipes.catalogue import PAGE_CONTEXTS, chains_page

ROOT = Path(__file__).resolve().parents[1]


def test_the_solvers_page_is_what_the_code_builds() -> None:
    page = chains_page()
    assert (ROOT / "docs" / "solvers.md").read_text() == page, (
        "docs/solvers.md is stale: python -c \"import zeroopt.recipes.catalogue as c; print(c.chains_page(), end='')\" "
        "> docs/solvers.md")
    # every built-in solver appears once per context, and the default's attack chain names its parts
    assert page.count("sign-growing for SolverContext") == len(PAGE_CONTEXTS)
    assert "semicircle_step" in page and "IterateShapedProbes" in page and "AdaptiveMomentum" in page
