"""The noise of answers whose precision nobody stated, estimated from repeated answers at the iterate:
:class:`EstimatedNoise`.

An oracle that states its precision (ε with each answer, :class:`~zeroopt.oracles.requests.Evaluation`'s ``eps``)
lets the noise-aware parts weigh the probes' differences against it (:class:`~zeroopt.step.noise.RadiusAboveNoise`, and
:class:`~zeroopt.QuasiNewton`, which keeps out curvature pairs that noise alone may have made). A plain callable
states nothing: its answers come as exact (ε = 0), and a noisy one then steers the descent by its noise — the
narrow radius's differences are noise divided by β, the estimate points anywhere, and the step's first try lands
where that estimate's size says.

:class:`EstimatedNoise` asks the iterate's value once more at the first iteration. The same answer twice is an
objective without noise (or with noise too coarse to show in two draws), and nothing more is asked: a deterministic
objective pays one answer per run. Two different answers make the answers noisy: from then on each iteration asks
the iterate once more, and the spread of those repeats — the difference of a fresh answer from the mean of the
earlier ones at the same point, over the last :data:`NOISE_WINDOW` iterations — estimates the noise's standard
deviation σ (the repeated evaluations of Moré & Wild's ECnoise, on the iterate alone). σ then stands as the
precision of the iterate's value and of the probes' answers, the way a stated ε does, so the same noise-aware parts
weigh it; the iterate's value is the mean of its answers, so one lucky draw does not hold the run at a point that
is no better. An oracle that states a precision of its own is left to it: the part asks nothing and changes nothing.

A comparison estimate (the sign solvers') observes no differences, only which probes came out below the level; but a
plain objective answers each comparison by evaluating, and the answer carries the values
(:class:`~zeroopt.oracles.requests.Comparison`'s ``values``). Once a noise is seen, the part keeps those values less
the levels compared with as the estimate's differences, so the noise-aware radius weighs them against σ the way it
weighs forward differences; a one-bit oracle's comparisons carry no values, and nothing is kept.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ..core.arrays import host
from ..core.describe import describe_part
from ..core.stages import Iteration, Part, wrapped
from ..direction.step_bound import start_scale
from ..oracles.requests import Compare, Comparison, Evaluate, Evaluation, Request, Response
from ..step.noise import ESTIMATED_NOISE, ESTIMATED_NOISE_CEILING

__all__ = ["NOISE_WINDOW", "WIDEST_BETA", "EstimatedNoise", "NoiseLog"]

#: The repeats the noise estimate pools: enough for σ within about a quarter (a χ² with 8 degrees of freedom), few
#: enough to follow a noise that shrinks with the value (multiplicative noise, as the iterate descends).
NOISE_WINDOW = 8
#: The widest probe radius a noise estimated here may ask for, as a share of the start's scale max(‖x0‖, 1): the
#: step bound's (:data:`~zeroopt.direction.step_bound.STEP_BOUND`), so no probe reaches further from the iterate than a
#: step's first try — on a noisy plateau, where the differences never rise above the noise, β stops there.
WIDEST_BETA = 1.0


@dataclass(frozen=True)
class NoiseLog:
    """What :class:`EstimatedNoise` knows: whether it has looked (``checked``), whether the oracle states its own
    precision (``stated``), the last squared spreads of repeats (each scaled to one answer's variance), and the
    point whose answers ``mean`` averages, with their number."""

    checked: bool = False
    stated: bool = False
    spreads: tuple[float, ...] = ()
    point: NDArray[np.float64] | None = None
    mean: float = math.nan
    count: int = 0

    @property
    def sigma(self) -> float:
        """The estimated standard deviation of one answer (0 without noise seen)."""
        return math.sqrt(sum(self.spreads) / len(self.spreads)) if self.spreads else 0.0


@dataclass(frozen=True)
class EstimatedNoise:
    """Stage ``estimate``: the estimate ``inner`` makes, with the answers' noise estimated from repeats at the iterate
    where the oracle states no precision (module docstring).

    Parameters
    ----------
    inner
        The estimate part it runs (forward or central differences, the adaptive switch).
    window
        Repeats pooled in the estimate, >= 1.

    Examples
    --------
    >>> import numpy as np, zeroopt
    >>> rng = np.random.default_rng(0)
    >>> noisy = lambda x: float(x @ x + 0.1 * rng.standard_normal())
    >>> far = []
    >>> res = zeroopt.minimize(lambda x: far.append(np.linalg.norm(x)) or noisy(x), np.full(10, 2.0),
    ...                        solver="coordinate", budget=1000, seed=0)
    >>> bool(max(far) < 3 * np.linalg.norm(np.full(10, 2.0)))
    True
    """

    inner: Part
    window: int = NOISE_WINDOW
    key: str = field(default="noise_log", repr=False)  # where it keeps its log: not a setting
    stage: ClassVar[str] = "estimate"

    def __repr__(self) -> str:
        return f"EstimatedNoise({describe_part(wrapped(self.inner))}, window={self.window})"

    def __post_init__(self) -> None:
        if isinstance(self.window, bool) or not isinstance(self.window, (int, np.integer)) or self.window < 1:
            raise ValueError(f"window is a number of repeats, a positive integer; got {self.window!r}")

    def init(self, x0: NDArray[np.float64]) -> Mapping[str, Any]:
        widest = WIDEST_BETA * start_scale(x0)
        return {**self.inner.init(x0), self.key: NoiseLog(), ESTIMATED_NOISE: 0.0, ESTIMATED_NOISE_CEILING: widest}

    def update(self, it: Iteration) -> Generator[Request, Response, Iteration]:
        s = it.state
        log: NoiseLog = it.memory.get(self.key, NoiseLog())
        if not log.checked and s.fx_eps > 0:
            log = replace(log, checked=True, stated=True)
        if log.stated or (log.checked and log.count == 0) or not math.isfinite(s.fx):
            out = yield from _run(self.inner, it)
            return replace(out, memory={**out.memory, self.key: log})
        resp = yield Evaluate(points=s.x[None, :], eps=it.eps, hints=np.array([s.fx]))
        assert isinstance(resp, Evaluation)
        value, stated = float(resp.values[0]), float(resp.eps[0])
        log = self._logged(log, host(s.x), float(s.fx), value, stated)
        sigma = 0.0 if log.stated else log.sigma
        state = s
        if log.count > 0:  # noisy: the iterate's value is the mean of its answers, known to σ/√count
            state = replace(s, fx=log.mean, fx_eps=max(float(s.fx_eps), sigma / math.sqrt(log.count)))
        compared: list[NDArray[np.float64]] = []
        out = yield from _run(self.inner, replace(it, state=state), compared)
        est = out.estimate
        if sigma > 0 and est is not None:
            if est.differences is None and compared:  # a comparison estimate: what its answers' values differed by
                seen = np.concatenate(compared)
                est = replace(est, differences=seen[np.isfinite(seen)])
            out = replace(out, estimate=replace(est, eps=max(float(est.eps), sigma)))
        return replace(out, memory={**out.memory, self.key: log, ESTIMATED_NOISE: sigma})

    def _logged(self, log: NoiseLog, x: NDArray[np.float64], fx: float, value: float, stated: float) -> NoiseLog:
        """The log after a repeat ``value`` at ``x``, whose value so far is ``fx``."""
        if stated > 0:
            return replace(log, checked=True, stated=True)
        if not math.isfinite(value):
            return replace(log, checked=True)
        same = log.point is not None and log.point.shape == x.shape and bool(np.array_equal(log.point, x))
        mean, count = (log.mean, log.count) if same else (fx, 1)
        spread = value - mean
        if not log.checked and spread == 0.0:  # the same answer twice: no noise, and no more repeats
            return replace(log, checked=True, count=0)
        # value − mean of count answers has the variance σ² (1 + 1/count): scaled to one answer's.
        spreads = (*log.spreads, spread * spread / (1.0 + 1.0 / count))[-int(self.window):]
        return NoiseLog(checked=True, stated=False, spreads=spreads, point=np.array(x, dtype=float),
                        mean=(mean * count + value) / (count + 1), count=count + 1)


def _run(part: Part, it: Iteration, compared: list[NDArray[np.float64]] | None = None,
         ) -> Generator[Request, Response, Iteration]:
    """``part``'s update of ``it``, whether it asks the oracle or not; with ``compared``, each comparison answered with
    values leaves there those values less the levels compared with."""
    out = part.update(it)
    if isinstance(out, Iteration):
        return out
    if compared is None:
        return (yield from out)
    return (yield from _keeping_comparisons(out, compared))


def _keeping_comparisons(run: Generator[Request, Response, Iteration], compared: list[NDArray[np.float64]],
                         ) -> Generator[Request, Response, Iteration]:
    """``yield from run``, keeping in ``compared`` the values less the levels of each comparison answered with values
    (an exception thrown in goes on to ``run``, as with ``yield from``)."""
    try:
        request = next(run)
        while True:
            try:
                response = yield request
            except GeneratorExit:
                run.close()
                raise
            except BaseException as err:  # thrown in: ``run`` has it, as with yield from
                request = run.throw(err)
                continue
            if isinstance(request, Compare) and isinstance(response, Comparison) and response.values is not None:
                values = np.asarray(response.values, dtype=float)
                compared.append(values - np.asarray(request.levels, dtype=float)[: len(values)])
            request = run.send(response)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
