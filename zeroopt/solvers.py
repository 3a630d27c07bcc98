"""The built-in solvers, each a few lines composing a sampler, an estimator and a step rule.

Defaults follow the paper (Cheng et al., ICLR 2019) where it gives a value: q = 20 probe directions,
smoothing radius β = 0.005; the stall rule and line-search factors follow the authors' reference code
(step 0.2, ×2 / ×0.25, step floor 1e-4, β ← β/10, stop at β < 1e-8). Sign-OPT's K = 200 sign queries and
h = 0.001 are the sign solver's defaults.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from .directions import CoordinateDirections, make_sampler
from .estimators import forward_difference, sign_of_difference
from .linesearch import armijo_step, fixed_step, opt_line_search
from .registry import SolverContext, register_solver
from .solver import ComposedSolver

__all__ = ["CoordinateOptions", "RGFFixedOptions", "RGFOptions", "SignOptions"]

# Paper constants (Section 3.2 and the reference code), named once here.
PAPER_Q = 20
REFERENCE_CODE_Q = 10  # the authors' untargeted L2 code uses q = 10, not the paper's 20
PAPER_BETA = 0.005
REFERENCE_CODE_BETA = 0.001
REFERENCE_STEP = 0.2
REFERENCE_GROW = 2.0
REFERENCE_SHRINK = 0.25
REFERENCE_STEP_MIN = 1e-4
REFERENCE_STEP_RESET = 1.0  # the reference code restarts the step at 1.0 when it shrinks below the floor
REFERENCE_BETA_DECAY = 0.1
REFERENCE_BETA_MIN = 1e-8
SIGN_OPT_K = 200

LineSearch = Literal["opt", "armijo", "fixed"]
Retraction = Callable[[NDArray[np.float64]], NDArray[np.float64]] | None


def _positive(name: str, value: float | None, *, integer: bool = False, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"option {name} must be a number, got {value!r}")
    if integer and int(value) != value:
        raise ValueError(f"option {name} must be an integer, got {value!r}")
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"option {name} must be positive and finite, got {value!r}")


@dataclass(frozen=True)
class _DescentOptions:
    """Options shared by the descent solvers (see :class:`~zeroopt.solver.ComposedSolver`)."""

    q: int = PAPER_Q
    beta: float = PAPER_BETA
    directions: str = "gaussian"
    line_search: LineSearch = "opt"
    step: float = REFERENCE_STEP
    step_reset: float | None = REFERENCE_STEP_RESET
    grow: float = REFERENCE_GROW
    shrink: float = REFERENCE_SHRINK
    step_min: float = REFERENCE_STEP_MIN
    beta_decay: float = REFERENCE_BETA_DECAY
    beta_min: float = REFERENCE_BETA_MIN
    eps: float | None = None
    eps_per_beta: float | None = None
    retract: Retraction = None

    def validate(self) -> None:
        _positive("q", self.q, integer=True)
        _positive("beta", self.beta)
        _positive("step", self.step)
        _positive("step_reset", self.step_reset, allow_none=True)
        _positive("grow", self.grow)
        _positive("shrink", self.shrink)
        _positive("eps", self.eps, allow_none=True)
        _positive("eps_per_beta", self.eps_per_beta, allow_none=True)
        if self.line_search not in ("opt", "armijo", "fixed"):
            raise ValueError(f"line_search must be 'opt', 'armijo' or 'fixed', got {self.line_search!r}")
        if not 0 < self.beta_decay <= 1:
            raise ValueError(f"beta_decay must be in (0, 1], got {self.beta_decay!r}")
        make_sampler(self.directions)  # raises for an unknown name
        if self.retract is not None and not callable(self.retract):
            raise TypeError("retract must be a callable x -> x or None")


def _step_rule(opts: _DescentOptions) -> tuple[Callable, tuple[tuple[str, object], ...]]:
    if opts.line_search == "opt":
        return opt_line_search, (("grow", opts.grow), ("shrink", opts.shrink))
    if opts.line_search == "armijo":
        return armijo_step, (("grow", opts.grow),)
    return fixed_step, ()


def _compose(name: str, opts: _DescentOptions, estimator: Callable, *, sampler=None, **extra) -> ComposedSolver:
    rule, rule_opts = _step_rule(opts)
    fixed = opts.line_search == "fixed"
    return ComposedSolver(
        name=name,
        sampler=sampler or make_sampler(opts.directions),
        estimator=estimator,
        step_rule=rule,
        q=int(opts.q),
        beta=float(opts.beta),
        step=float(opts.step),
        step_reset=opts.step_reset,
        eps=opts.eps,
        eps_per_beta=opts.eps_per_beta,
        # A fixed step never shrinks, so the stall rule cannot fire; keep it off to make that explicit.
        step_min=0.0 if fixed else opts.step_min,
        beta_decay=1.0 if fixed else opts.beta_decay,
        beta_min=opts.beta_min,
        retract=opts.retract,
        step_rule_options=rule_opts,
        **extra,
    )


@dataclass(frozen=True)
class RGFOptions(_DescentOptions):
    """``"rgf"``: paper's Algorithm 2 — forward differences averaged over q directions, OPT line search.

    ``use_best_probe`` moves to the best probe when it beats the line search (reference code).
    """

    use_best_probe: bool = True


@register_solver("rgf", RGFOptions, "Randomized Gradient-Free with q-averaging and backtracking line search")
def _make_rgf(opts: RGFOptions, ctx: SolverContext) -> ComposedSolver:
    return _compose("rgf", opts, forward_difference, use_best_probe=opts.use_best_probe)


@dataclass(frozen=True)
class RGFFixedOptions(_DescentOptions):
    """``"rgf-fixed"``: the same estimator with Nesterov–Spokoiny's theory step ``1/(4(d+4)L₁)``.

    ``lipschitz`` is L₁ (taken from the problem when it knows it). ``step`` defaults to the theory step;
    ``beta`` defaults to Theorem 1's scaling ``delta / ((d + 4) L₁)`` for the target accuracy ``delta``.
    """

    q: int = 1
    beta: float | None = None  # type: ignore[assignment]
    step: float | None = None  # type: ignore[assignment]
    line_search: LineSearch = "fixed"
    lipschitz: float | None = None
    delta: float = 1e-2

    def validate(self) -> None:
        _positive("lipschitz", self.lipschitz, allow_none=True)
        _positive("delta", self.delta)
        # The shared checks, with the two options that default to a theory value filled in for the check.
        filled = dataclasses.replace(self, beta=self.beta or 1.0, step=self.step or 1.0)
        _DescentOptions.validate(filled)


def theory_step(dim: int, lipschitz: float) -> float:
    """Nesterov–Spokoiny's RGF step ``1 / (4 (d + 4) L₁)``."""
    return 1.0 / (4.0 * (dim + 4) * lipschitz)


@register_solver("rgf-fixed", RGFFixedOptions, "RGF with the theory step 1/(4(d+4)L1), as analysed by Theorem 1")
def _make_rgf_fixed(opts: RGFFixedOptions, ctx: SolverContext) -> ComposedSolver:
    lip = opts.lipschitz if opts.lipschitz is not None else ctx.lipschitz
    if lip is None and (opts.step is None or opts.beta is None):
        raise ValueError(
            "rgf-fixed needs the gradient's Lipschitz constant L1 for its theory step: pass lipschitz=L1 "
            "(or both step= and beta=), or minimize a zeroopt.problems problem, which knows its L1"
        )
    d = ctx.dim
    step = opts.step if opts.step is not None else theory_step(d, lip)  # type: ignore[arg-type]
    beta = opts.beta if opts.beta is not None else opts.delta / ((d + 4) * lip)  # type: ignore[operator]
    resolved = RGFOptions(
        q=opts.q, beta=beta, directions=opts.directions, line_search=opts.line_search, step=step,
        step_reset=opts.step_reset, grow=opts.grow, shrink=opts.shrink, step_min=opts.step_min,
        beta_decay=opts.beta_decay,
        beta_min=opts.beta_min, eps=opts.eps, eps_per_beta=opts.eps_per_beta, retract=opts.retract,
        use_best_probe=False,
    )
    return _compose("rgf-fixed", resolved, forward_difference)


@dataclass(frozen=True)
class CoordinateOptions(_DescentOptions):
    """``"coordinate"``: zeroth-order coordinate descent on ``q`` coordinates per iteration.

    ``order`` is ``"random"`` (without replacement within an iteration) or ``"cyclic"``.
    """

    q: int = 10
    beta: float = 1e-4
    directions: str = "coordinate"
    order: Literal["random", "cyclic"] = "random"

    def validate(self) -> None:
        super().validate()
        if self.order not in ("random", "cyclic"):
            raise ValueError(f"order must be 'random' or 'cyclic', got {self.order!r}")


@register_solver("coordinate", CoordinateOptions, "Zeroth-order coordinate descent (random or cyclic coordinates)")
def _make_coordinate(opts: CoordinateOptions, ctx: SolverContext) -> ComposedSolver:
    sampler = CoordinateDirections(cyclic=opts.order == "cyclic")
    return _compose("coordinate", opts, forward_difference, sampler=sampler, use_best_probe=True)


@dataclass(frozen=True)
class SignOptions(_DescentOptions):
    """``"sign"``: Sign-OPT / ZO-signSGD — q one-bit comparisons per gradient estimate."""

    q: int = SIGN_OPT_K
    beta: float = REFERENCE_CODE_BETA
    directions: str = "sphere"


@register_solver("sign", SignOptions, "Sign-OPT-style descent: sign of each directional difference from a comparison")
def _make_sign(opts: SignOptions, ctx: SolverContext) -> ComposedSolver:
    return _compose("sign", opts, sign_of_difference)

