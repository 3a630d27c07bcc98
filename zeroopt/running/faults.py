"""How runs end when something fails: :func:`zeroopt.drive` throws :class:`Abort` into the runs still going.

A run (:func:`zeroopt.run_solver`) that receives an :class:`Abort` at its pending request returns its partial
result, after taking in what the oracle answered of that request before the fault.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from ..oracles.requests import Request, Response
from .records import OptimizeResult, Status

__all__ = ["Abort", "abort_run", "status_for"]


class Abort(Exception):
    """Thrown into a run when something else failed: the run returns its partial result.

    ``response`` holds what the oracle answered of the run's pending request before the fault (or None).
    """

    def __init__(self, status: Status, response: Response | None = None) -> None:
        super().__init__(status.value)
        self.status, self.response = status, response


def status_for(err: BaseException) -> Status:
    """``INTERRUPTED`` for Ctrl-C, ``ERROR`` for anything else."""
    return Status.INTERRUPTED if isinstance(err, KeyboardInterrupt) else Status.ERROR


def abort_run(run: Generator[Request, Response, Any], abort: Abort) -> OptimizeResult | None:
    """End a suspended run with its partial result (``None`` if it had not started or had already ended)."""
    try:
        run.throw(abort)
    except StopIteration as done:
        return done.value
    except Abort:
        return None
    run.close()  # a run that yields again after an Abort is broken; it has no result to give
    return None
