"""A solver is a chain of parts: :func:`chain` composes them, :class:`Chain` runs them, one iteration at a time.

``init`` builds the state from the starting point (each part adds what it remembers from the start);
``step_generator`` passes an :class:`~zeroopt.core.stages.Iteration` through every part in turn, yielding the
oracle requests the parts make and returning the next state — so the same solver runs alone
(:func:`zeroopt.minimize`) or in lockstep with other runs whose requests are answered together
(:func:`zeroopt.drive`).

>>> import numpy as np, zeroopt
>>> from zeroopt import Estimate, FixedPrecision, FixedProbes, GaussianDirections, Sample, Step, StallRule
>>> rgf = zeroopt.chain(FixedPrecision(1e-8), FixedProbes(10), Sample(GaussianDirections()),
...                     Estimate(zeroopt.forward_difference), Step(zeroopt.opt_line_search), StallRule(1e-4),
...                     name="my-rgf", beta=0.005, step=0.2)
>>> res = zeroopt.minimize(lambda x: float(x @ x), np.ones(5), solver=rgf, budget=400, seed=0)
>>> bool(res.fun < 1e-3)
True
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from ..oracles.requests import Request, Response
from .arrays import is_numpy, norm
from .base import SolverState, StepOutcome
from .describe import describe_chain
from .stages import STAGES, Iteration, Part, carried

__all__ = ["Chain", "chain"]

P = TypeVar("P")


@dataclass(frozen=True)
class Chain:
    """A zeroth-order solver: its parts, in the order each iteration runs them, and its starting settings.

    Parameters
    ----------
    name
        Registry name, for results and messages.
    parts
        The parts (:class:`~zeroopt.core.stages.Part`), each of one stage (:data:`~zeroopt.core.stages.STAGES`); an
        iteration needs a probe count, a sampler, an estimator and a step rule at least.
    beta
        Initial smoothing radius (the probes' finite-difference step).
    step
        Initial step size for the step rule.
    retract
        Optional map applied to every new iterate (e.g. :func:`~zeroopt.step.amends.unit_sphere`).
    options
        For a chain built from a registered solver's options: the names of the options that set each part, in
        the parts' order (:meth:`describe` shows them beside each part); empty: none.
    """

    name: str
    parts: tuple[Part, ...]
    beta: float
    step: float
    retract: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None
    options: tuple[tuple[str, ...], ...] = ()

    def __post_init__(self) -> None:
        for part in self.parts:
            if not isinstance(part, Part) or getattr(part, "stage", None) not in STAGES:
                raise TypeError(f"{part!r} is not a part of a stage in {STAGES}: give it a stage, init and update "
                                "(zeroopt.core.stages), or wrap a behaviour with Amend, a sampler with Sample")
        if self.options and len(self.options) != len(self.parts):
            raise ValueError(f"options name the options of each part: {len(self.options)} for {len(self.parts)} parts")
        missing = [s for s in ("count", "sample", "estimate", "step") if not self.parts_at(s)]
        if missing:
            raise ValueError(f"solver {self.name!r} has no part for the stage(s) {missing}")

    def describe(self, context: Any = None) -> str:
        """The chain as text: a line per part, in the order an iteration runs them, with its stage and settings."""
        return describe_chain(self, context)

    def parts_at(self, stage: str) -> tuple[Part, ...]:
        """The parts of ``stage``, in chain order."""
        return tuple(p for p in self.parts if p.stage == stage)

    def find(self, kind: type[P]) -> P | None:
        """The first part that is a ``kind`` (what a part carries counts: :func:`~zeroopt.core.stages.carried`),
        or ``None``."""
        for part in self.parts:
            for candidate in carried(part):
                if isinstance(candidate, kind):
                    return candidate  # type: ignore[return-value]
        return None

    def with_part(self, new: Part, *, replacing: type | None = None) -> Chain:
        """This solver with ``new`` in place of its part of the same stage — or of the part of type ``replacing``
        (what a wrapper part carries counts) where the stage holds several — or, where the stage
        has none, with ``new`` added where its stage runs (:meth:`with_added`). A part overridden by a part."""
        if replacing is not None:
            matches = [k for k, p in enumerate(self.parts) if any(isinstance(c, replacing) for c in carried(p))]
        else:
            matches = [k for k, p in enumerate(self.parts) if p.stage == new.stage]
        if len(matches) > 1:
            raise ValueError(f"{self.name!r} has {len(matches)} {new.stage} parts "
                             f"({[type(self.parts[k]).__name__ for k in matches]}): name the one to replace with "
                             "replacing=<its type>")
        if not matches and replacing is not None:
            raise ValueError(f"{self.name!r} has no {replacing.__name__} part to replace")
        if not matches:
            return self.with_added(new)
        parts = list(self.parts)
        parts[matches[0]] = new
        return replace(self, parts=tuple(parts))

    def with_added(self, new: Part) -> Chain:
        """This solver with ``new`` added after its last part of the same or an earlier stage."""
        order = STAGES.index(new.stage)
        at = max((k + 1 for k, p in enumerate(self.parts) if STAGES.index(p.stage) <= order), default=0)
        options = (*self.options[:at], (), *self.options[at:]) if self.options else ()
        return replace(self, parts=(*self.parts[:at], new, *self.parts[at:]), options=options)

    def requested_eps(self, beta: float, value: float = math.nan) -> float | None:
        """Precision to request at smoothing radius ``beta`` from an iterate of value ``value`` (``None``: the
        oracle's default)."""
        rules = self.parts_at("precision")
        return None if not rules else rules[0](beta, value)  # type: ignore[operator]

    def probes(self, state: SolverState) -> int:
        """Number of probe directions for the iteration starting from ``state``."""
        return int(self.parts_at("count")[0](state))  # type: ignore[operator]

    def init(self, x0: NDArray[np.float64], f0: float, f0_eps: float, rng: np.random.Generator) -> SolverState:
        """State at the starting point (``f0`` already known, so nothing is re-evaluated)."""
        x = np.asarray(x0, dtype=float) if is_numpy(x0) else x0
        if self.retract is not None:
            x = self.retract(x)
        memory: dict[str, Any] = {}
        for part in self.parts:
            memory.update(part.init(x))
        return SolverState(x=x, fx=f0, fx_eps=f0_eps, beta=self.beta, step=self.step, iteration=0, rng=rng,
                           memory=memory)

    def step_generator(self, state: SolverState) -> Generator[Request, Response, StepOutcome]:
        """One iteration: every part in turn, then every part's ``finish`` (for parts that remember a result
        of the whole iteration)."""
        it = Iteration(solver=self, state=state, memory=state.memory)
        for part in self.parts:
            out = part.update(it)
            it = (yield from out) if inspect.isgenerator(out) else out  # type: ignore[assignment]
        for part in self.parts:
            finish = getattr(part, "finish", None)
            if finish is not None:
                it = finish(it)
        start, move, est = it.state, it.move, it.estimate
        assert move is not None and est is not None
        new_state = replace(start, x=move.x, fx=move.fx, fx_eps=move.fx_eps, beta=move.beta, step=move.next_step,
                            iteration=start.iteration + 1, memory=move.memory)
        return StepOutcome(
            state=new_state,
            eps=max(est.eps, move.fx_eps, start.fx_eps),
            beta=start.beta,
            step_taken=move.step_taken,
            grad_norm=norm(est.g),
            converged=move.converged,
        )


def chain(
    *parts: Part | None,
    name: str,
    beta: float,
    step: float,
    retract: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None,
) -> Chain:
    """The solver that runs ``parts`` in the order given (a ``None`` stands for a part left out)."""
    return Chain(name=name, parts=tuple(p for p in parts if p is not None), beta=float(beta), step=float(step),
                 retract=retract)
