"""The published constants every solver's defaults start from, named once (a leaf: it imports nothing).

The paper is Cheng et al., "Query-Efficient Hard-label Black-box Attack: An Optimization-based Approach"
(ICLR 2019), Section 3.2; the reference code is its authors' implementation, whose constants differ from the
paper's in places and are kept apart here so that either set can be asked for by name (:data:`PRESETS`).
"""

from __future__ import annotations

__all__ = [
    "PAPER_BETA", "PAPER_Q", "PRESETS", "REFERENCE_BETA_DECAY", "REFERENCE_BETA_MIN", "REFERENCE_CODE_BETA",
    "REFERENCE_CODE_Q", "REFERENCE_EPS_PER_BETA", "REFERENCE_GROW", "REFERENCE_SHRINK", "REFERENCE_STEP",
    "REFERENCE_STEP_MIN", "REFERENCE_STEP_RESET", "SIGN_OPT_K",
]

#: The paper's q: random directions averaged per gradient estimate.
PAPER_Q = 20
#: The paper's smoothing radius β.
PAPER_BETA = 0.005
#: The authors' untargeted L2 code averages q = 10 directions, not the paper's 20.
REFERENCE_CODE_Q = 10
#: The authors' code probes at β = 0.001.
REFERENCE_CODE_BETA = 0.001
#: The reference code's initial step size.
REFERENCE_STEP = 0.2
#: Its line search doubles the step while the value falls ...
REFERENCE_GROW = 2.0
#: ... and quarters it until the value falls.
REFERENCE_SHRINK = 0.25
#: Below this step the reference code counts the iteration as stalled ...
REFERENCE_STEP_MIN = 1e-4
#: ... restarts the step at 1.0 ...
REFERENCE_STEP_RESET = 1.0
#: ... and shrinks β tenfold ...
REFERENCE_BETA_DECAY = 0.1
#: ... until β falls below 1e-8, where it stops.
REFERENCE_BETA_MIN = 1e-8
#: The reference code's binary searches stop at β/500: with an oracle of adjustable precision, ε follows β.
REFERENCE_EPS_PER_BETA = 1 / 500
#: Sign-OPT's K: one-bit comparisons per gradient estimate (Cheng et al., ICLR 2020).
SIGN_OPT_K = 200

#: Published constant sets a solver context may ask for (``SolverContext(constants=...)``).
PRESETS: dict[str, dict[str, float]] = {
    "paper": {"q": PAPER_Q, "beta": PAPER_BETA},
    "reference": {"q": REFERENCE_CODE_Q, "beta": REFERENCE_CODE_BETA},
}
