"""An earlier headline's JSON as the source of columns: what ``--peers-from`` and ``--redraw`` read from it.

A headline JSON (:mod:`benchmarks.headline`) keeps every attack's L2 per input and budget to
:data:`KEPT_DIGITS` significant digits; the headline computes its figures from values rounded so, so that a table
drawn again from the JSON alone gives the same figures as the one drawn from the runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["KEPT_DIGITS", "kept_digits", "stored_columns", "stored_note"]

#: Significant digits of each per-input L2 a headline JSON keeps.
KEPT_DIGITS = 6


def kept_digits(d: np.ndarray) -> np.ndarray:
    """``d`` rounded to :data:`KEPT_DIGITS` significant digits, as a headline JSON keeps it (nan and inf kept).

    Parameters
    ----------
    d : numpy.ndarray
        Distances, any shape.

    Returns
    -------
    numpy.ndarray
        Float array of the same shape.
    """
    d = np.asarray(d, dtype=float)
    return np.array([float(f"{v:.{KEPT_DIGITS}g}") for v in d.ravel()], dtype=float).reshape(d.shape)


def stored_columns(stored: dict, common: list[int], budgets: tuple[int, ...],
                   exclude: set[str] = frozenset()) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Every attack of an earlier headline's table but those in ``exclude``, on the ``common`` inputs.

    Parameters
    ----------
    stored : dict
        An earlier headline's table of the same experiment (one entry of its JSON).
    common : list of int
        The input positions of the table being drawn.
    budgets : tuple of int
        Its columns; the stored table's must be the same.
    exclude : set of str
        Attacks not to take (those with runs in the database).

    Returns
    -------
    columns : dict of str to numpy.ndarray
        Per attack, its ``(inputs, budgets)`` L2.
    source : dict of str to str
        Per attack, ``"per-input"``: the values that table kept per input, so the bootstrap resamples them like
        any run's; ``"medians"``: a table written before it kept them gives its medians alone, repeated on every
        input — they enter every bootstrap draw unchanged, so the intervals then leave that attack's spread out.

    Raises
    ------
    SystemExit
        Saying what to do, when the inputs or budgets do not pair up.
    """
    if list(stored["budgets"]) != list(budgets):
        raise SystemExit(f"{stored['experiment']}: the stored table's budgets {stored['budgets']} are not this "
                         f"table's {list(budgets)}: the columns would not pair up")
    position = {p: k for k, p in enumerate(stored["inputs"])}
    per_input = stored.get("per_input", {})
    columns: dict[str, np.ndarray] = {}
    source: dict[str, str] = {}
    for a, medians in stored["medians"].items():
        if a in exclude:
            continue
        if a in per_input:
            if not set(common) <= set(position):
                raise SystemExit(f"{stored['experiment']}: our runs cover inputs {common}, the stored table's "
                                 f"{stored['inputs']}: the per-input values would not pair up (run ours on the "
                                 "stored table's inputs)")
            columns[a] = np.array([[per_input[a][str(b)][position[p]] for b in budgets] for p in common], dtype=float)
            source[a] = "per-input"
        else:
            if list(common) != list(stored["inputs"]):
                raise SystemExit(f"{stored['experiment']}: our runs cover inputs {common}, the stored table's "
                                 f"{stored['inputs']}: the medians would not pair up (run ours on the stored "
                                 "table's inputs)")
            row = [np.nan if medians.get(str(b)) is None else float(medians[str(b)]) for b in budgets]
            columns[a] = np.tile(np.array(row, dtype=float), (len(common), 1))
            source[a] = "medians"
    return columns, source


def stored_note(tables: list[dict], path: Path) -> str:
    """What the page says about the attacks taken from an earlier headline JSON (``--peers-from``).

    Parameters
    ----------
    tables : list of dict
        The tables drawn, each with its ``from_stored``.
    path : pathlib.Path
        The JSON they were taken from.

    Returns
    -------
    str
        One paragraph.
    """
    def named(kind: str) -> list[str]:
        return sorted({a for t in tables for a, k in t.get("from_stored", {}).items() if k == kind})

    per_input, medians = named("per-input"), named("medians")
    if not per_input and not medians:
        return f"`{path}` was given, but the database holds runs of every attack: nothing came from it."
    parts = [f"Attacks without runs in this database come from `{path}`, an earlier headline on the same inputs:"]
    if per_input:
        parts.append(", ".join(per_input) + " from the values it kept per input (resampled like any run);")
    if medians:
        parts.append(", ".join(medians) + " from its medians alone (it kept no per-input values for them), which "
                     "enter every bootstrap draw unchanged — the intervals leave their own spread out.")
    return " ".join(parts).rstrip(";") + ("." if not medians else "")
