"""What a run leaves behind when it fails: the partial result, attached to the exception that stopped it.

Every failure after the first query — the objective raising or returning NaN, a callback raising, a model
failing, Ctrl-C — re-raises the *original* exception (same type, so ``except KeyboardInterrupt`` and
``except NonFiniteValueError`` keep working) with the best result found so far attached as its
``partial_result`` attribute and a note (PEP 678) saying so::

    try:
        res = zeroopt.minimize(f, x0, budget=10_000)
    except Exception as err:  # or KeyboardInterrupt
        res = zeroopt.partial_result(err)  # best x and fun so far, queries spent, history
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "NonFiniteValueError", "NonFiniteValueWarning", "ObjectiveError", "PartialResultError", "attach_partial_result",
    "partial_result", "set_quietly",
]


class NonFiniteValueError(FloatingPointError):
    """The objective returned NaN or ±inf where a finite value was required."""


class NonFiniteValueWarning(RuntimeWarning):
    """The objective returned NaN or ±inf, taken as worse than any finite value (once per oracle)."""


class ObjectiveError(TypeError):
    """The objective returned something that is not one real number per point (e.g. ``None``)."""


class PartialResultError(RuntimeError):
    """Raised ``from`` an exception that cannot carry attributes itself; ``partial_result`` holds the result.

    Rare: almost every exception accepts the attribute, and then the original exception is re-raised.
    """

    def __init__(self, message: str, partial: Any) -> None:
        super().__init__(message)
        self.partial_result = partial


def attach_partial_result(err: BaseException, partial: Any) -> BaseException:
    """Attach ``partial`` to ``err`` as ``err.partial_result`` (replacing an earlier one); return what to raise.

    Returns ``err`` itself, or a :class:`PartialResultError` chained to it when ``err`` accepts no attributes.
    The note added to ``err`` tells a reader of the traceback where to find the partial result.
    """
    try:
        err.partial_result = partial  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        wrapped = PartialResultError(f"{type(err).__name__}: {err}", partial)
        wrapped.__cause__ = err
        return wrapped
    note = "zeroopt: what was found before this error is attached to it as .partial_result"
    notes = getattr(err, "__notes__", [])
    if note not in notes and hasattr(err, "add_note"):
        err.add_note(note)
    return err


def set_quietly(err: BaseException, name: str, value: Any) -> None:
    """Set an attribute on an exception in flight, if it takes one (the exception itself matters more)."""
    try:
        setattr(err, name, value)
    except (AttributeError, TypeError):
        pass


def partial_result(err: BaseException) -> Any:
    """The partial result attached to ``err`` (or to the exception it was raised from), else ``None``."""
    seen: set[int] = set()
    cur: BaseException | None = err
    while cur is not None and id(cur) not in seen:
        if hasattr(cur, "partial_result"):
            return cur.partial_result  # type: ignore[attr-defined]
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None
