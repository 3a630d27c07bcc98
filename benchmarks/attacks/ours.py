"""Our attack, plugged in through its public contract and nothing else.

``applications.hardlabel.attack(model, x0, y0, *, target, budget, solver, seed, bounds, progress, n_classes,
**pieces)`` is called with the monitor as the model (a callable returning labels), so it sees hard labels only and every
sample it asks for is counted by the harness. By default each call attacks one input (``group_size=1``), so
the monitor attributes queries exactly (owner mode), as for the peers; with a larger group the inputs'
probes share model calls and the monitor falls back to nearest-original attribution, which the suite uses
only to time the batched attack. Either way the adapter keeps the attack's own per-input ``queries`` so the
harness can cross-check them against the monitor's counts. The attack enforces its budget itself, so the
monitor only records an overshoot (as a violation) instead of stopping it.

Targeted runs get the same target-class examples as the peers (``target_pool``: the pool of each input's
target class, from which the attack draws its initial directions).

The implementation is looked up by name (``module:function``, default ``applications.hardlabel:attack``) so
that the harness can be exercised with a stand-in implementing the same contract before the real one lands.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchmarks.attacks.base import Attribution, Batch, Family, Reported
from benchmarks.monitor import QueryMonitor

DEFAULT_IMPL = "applications.hardlabel:attack"


def resolve(spec: str) -> Callable[..., Any]:
    """Import ``module:function`` and return the function (``ImportError``/``AttributeError`` if missing)."""
    module, _, func = spec.partition(":")
    if not module or not func:
        raise ValueError(f"implementation must be 'module:function', got {spec!r}")
    return getattr(importlib.import_module(module), func)


def list_solvers() -> list[str]:
    """Our solver names from ``zeroopt.list_solvers()`` that take the attack's objective
    (:func:`applications.hardlabel.attack_solvers`; empty if zeroopt is not there yet)."""
    try:
        return list(importlib.import_module("applications.hardlabel").attack_solvers())
    except (ImportError, AttributeError):
        return []


@dataclass
class Ours:
    """One of our solvers, run through ``applications.hardlabel.attack``.

    Parameters
    ----------
    solver : str
        Solver name passed to the attack (``"rgf"``, ``"sign"``, ...).
    group_size : int
        Inputs per attack call (1: exact owner-mode attribution; more: mixed in the same model calls, and
        named ``ours-<solver>-x<group_size>``).
    impl : str or callable
        ``module:function`` of the attack, or the function itself.
    options : dict
        Flat settings of the attack's pieces and the solver's options (``{"n_initial": 50, "q": 10}``), mapped
        onto the pieces by :func:`applications.hardlabel.attack_keywords`. A solver's own defaults for the
        attack's objective come from the zeroopt registry (e.g. rgf-fixed's L1 = 1 on the unit sphere; override it with
        ``--ours-option rgf-fixed:lipschitz=VALUE``); the harness keeps no table of its own.
    """

    solver: str
    group_size: int = 1
    impl: str | Callable[..., Any] = DEFAULT_IMPL
    options: dict[str, Any] = field(default_factory=dict)
    family: Family = "ours"
    hard_budget: bool = True

    @property
    def attribution(self) -> Attribution:
        return "owner" if self.group_size == 1 else "nearest"

    @property
    def name(self) -> str:
        return f"ours-{self.solver}" + (f"-x{self.group_size}" if self.group_size > 1 else "")

    def _fn(self) -> Callable[..., Any]:
        return self.impl if callable(self.impl) else resolve(self.impl)

    def unavailable(self) -> str | None:
        try:
            self._fn()
        except (ImportError, AttributeError) as exc:
            return f"{self.impl} cannot be imported: {exc}"
        return None

    def run(self, monitor: QueryMonitor | None, batch: Batch, budget: int, seed: int) -> list[Reported]:
        from applications.hardlabel import attack_keywords

        assert monitor is not None
        options = dict(self.options)
        # The monitor is a plain callable: say what the model is, as a user with a wrapped tree model would.
        options.setdefault("piecewise_constant", batch.piecewise_constant)
        if batch.starts is not None:
            # Targeted: the target-class starting pool. Untargeted: images of another class ((y0 + 1) mod K),
            # which the attack uses only as fallback starting directions when random ones all fail.
            pool = batch.starts.reshape(-1, *batch.x0.shape[1:])
            pool_class = batch.target if batch.target is not None else (batch.y0 + 1) % batch.n_classes
            options.setdefault("target_pool", (pool, np.repeat(pool_class, batch.starts.shape[1])))
        result = self._fn()(
            monitor,
            batch.x0,
            batch.y0,
            target=batch.target,
            budget=budget,
            solver=self.solver,
            seed=seed,
            bounds=batch.bounds,
            progress=False,
            n_classes=batch.n_classes,
            **attack_keywords(options),
        )
        x_adv = np.asarray(result.x_adv)
        queries = np.asarray(result.queries)
        success = np.asarray(result.success)
        if x_adv.shape != batch.x0.shape or queries.shape != (len(batch),):
            raise ValueError(f"attack returned x_adv {x_adv.shape} / queries {queries.shape} for {len(batch)} inputs")
        return [
            Reported(
                x_adv=x_adv[i],
                queries=int(queries[i]),
                note="" if success[i] else "attack reports failure",
            )
            for i in range(len(batch))
        ]
