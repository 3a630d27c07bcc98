"""Checked argument types for the argparse command lines (``zeroopt study``, ``zeroopt bench dfo``).

Each type turns a bad value into :class:`argparse.ArgumentTypeError`, so argparse ends the command with exit 2 and
one line naming the option and the value, before any work; :func:`folder_problem` and :func:`memory_problem` say
what is wrong with an output folder or a size before anything is made or allocated, and :func:`option_problem`
what is wrong with the names of a solver's options (every command line that takes them: ``-o KEY=VALUE``, a
campaign's ``[options]``, a study's solver options). The ``zeroopt`` commands built on click (``attack``,
``campaign``, ``minimize``) get the same checks from ``click.IntRange`` and their own helpers.
"""

from __future__ import annotations

import argparse
import difflib
import math
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

import zeroopt

T = TypeVar("T")

__all__ = ["count", "counts", "folder_problem", "memory_problem", "number", "numbers", "option_problem"]


def _int(text: str, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None


def count(minimum: int = 1, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer from ``minimum`` to ``maximum`` (inclusive; ``None``: no upper end).

    Examples
    --------
    >>> count(1)("3")
    3
    """
    what = f"an integer >= {minimum}" if maximum is None else f"an integer from {minimum} to {maximum}"

    def parse(text: str) -> int:
        value = _int(text, what)
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse


def counts(minimum: int = 1, maximum: int | None = None) -> Callable[[str], tuple[int, ...]]:
    """An argparse type: a comma-separated list of integers, each as :func:`count` checks it (at least one).

    Examples
    --------
    >>> counts(1, 53)("7,9")
    (7, 9)
    """
    return _listed(count(minimum, maximum))


def number(*, minimum: float = 0.0, strict: bool = True, infinite: bool = False) -> Callable[[str], float]:
    """An argparse type: a number above ``minimum`` (``strict``) or at least it; NaN never, infinity if ``infinite``.

    Examples
    --------
    >>> number(minimum=0.0)("0.5")
    0.5
    """
    what = f"a number {'>' if strict else '>='} {minimum:g}{'' if infinite else ' (finite)'}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        finite_ok = math.isfinite(value) or (infinite and value == math.inf)
        if not finite_ok or value < minimum or (strict and value == minimum):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse


def numbers(*, minimum: float = 0.0, strict: bool = True) -> Callable[[str], tuple[float, ...]]:
    """An argparse type: a comma-separated list of finite numbers, each as :func:`number` checks it (at least one).

    Examples
    --------
    >>> numbers()("0.1,0.2")
    (0.1, 0.2)
    """
    return _listed(number(minimum=minimum, strict=strict))


def _listed(one: Callable[[str], T]) -> Callable[[str], tuple[T, ...]]:
    """An argparse type: a comma-separated list (at least one item), each item parsed by ``one``."""

    def parse(text: str) -> tuple[T, ...]:
        parts = [p for p in text.split(",") if p.strip()]
        if not parts:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
        try:
            return tuple(one(p) for p in parts)
        except argparse.ArgumentTypeError as err:
            raise argparse.ArgumentTypeError(f"{err} in {text!r}" if len(parts) > 1 else str(err)) from None

    return parse


def folder_problem(path: Path) -> str | None:
    """Make the folder ``path`` (and its parents) if needed; what is wrong when that fails, else ``None``.

    Examples
    --------
    >>> import tempfile
    >>> folder_problem(Path(tempfile.mkdtemp()) / "a" / "b") is None
    True
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        return f"{path} is a file, not a folder; pass a folder"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        return f"cannot make the folder {path}: {err.strerror or err}; pass another folder"
    return None


def memory_problem(nbytes: float, what: str) -> str | None:
    """Why ``what`` cannot run when it needs at least ``nbytes`` of memory (more than the machine has), else ``None``.

    ``nbytes`` is a lower bound of what is allocated, so a refusal is sure: nothing that fits is refused.

    Examples
    --------
    >>> memory_problem(1e30, "d = 10^15") is not None, memory_problem(8.0, "d = 1")
    (True, None)
    """
    try:
        total = float(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):  # not POSIX: no refusal (an allocation error would say it)
        return None
    if nbytes <= total:
        return None
    return (f"{what} needs at least {_size(nbytes)} of memory, more than this machine's {_size(total)}; "
            "use a smaller size")


def option_problem(names: Iterable[str], solvers: Iterable[str], settings: Iterable[str] = ()) -> str | None:
    """What is wrong with option ``names`` for every one of ``solvers`` (one sentence), else ``None``.

    A name no solver takes fails every run at run time; this says so before the first one, with the closest valid
    name and all of them.

    Parameters
    ----------
    names
        The option names given (a mapping's keys).
    solvers
        Solver names. Only those registered now are checked (``zeroopt.list_solvers()``): a plugin's solver before
        its plugin is loaded is left to the caller's later check, and an unknown name to the solver check.
    settings
        Other names the caller takes beside the solver's options (an attack's piece settings: ``n_initial``,
        ``prune``, ...; :data:`applications.hardlabel.config.SETTINGS`).

    Returns
    -------
    str or None
        The first unknown name, the solver it fails for, the closest valid name and the valid names.

    Examples
    --------
    >>> option_problem({"q": 4, "n_initial": 10}, ["rgf"], settings=["n_initial"]) is None
    True
    >>> print(option_problem(["betaa"], ["rgf"]).split(";")[0])
    'betaa' is not an option of solver 'rgf' (did you mean 'beta'?)
    """
    settings = list(settings)
    registered = zeroopt.list_solvers()
    known = [registered[name] for name in dict.fromkeys(solvers) if name in registered]
    for key in names:
        if key in settings:
            continue
        takes = [spec.name for spec in known if spec.accepts(key)]
        for spec in (spec for spec in known if not spec.accepts(key)):
            valid = spec.option_names()
            close = difflib.get_close_matches(key, [*valid, *settings], n=1)
            text = (f"{key!r} is neither a setting of the attack's pieces nor an option of solver {spec.name!r}"
                    if settings else f"{key!r} is not an option of solver {spec.name!r}")
            text += f" (did you mean {close[0]!r}?)" if close else ""
            if takes:
                text += (f"; solver {takes[0]!r} takes it: run solvers that take different options in separate "
                         "commands")
            text += f"; give one of {spec.name}'s options ({', '.join(valid)})"
            return text + (f" or of the pieces' settings ({', '.join(settings)})" if settings else "")
    return None


def _size(nbytes: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if nbytes < 1024 or unit == "PiB":
            return f"{nbytes:.3g} {unit}"
        nbytes /= 1024
    return f"{nbytes:.3g} PiB"  # pragma: no cover
