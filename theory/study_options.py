"""The command line of ``zeroopt study`` / ``python -m theory.studies``: its options, checked before any run.

Kept apart from :mod:`theory.studies` (the studies and their running) so that every argument is read and checked —
ranges by the types of :mod:`theory.arguments`, the output folder, the results database, what ``--reanalyze``
needs, the memory a dimension takes, the names of the solver's options — before the first run, each misuse ending
with exit 2 (1 where stored data is missing) and one line naming it.
"""

from __future__ import annotations

import argparse
import dataclasses
import sqlite3
from collections.abc import Callable
from pathlib import Path

from zeroopt.recipes.plugins import add_plugin_argument

from .arguments import count, counts, folder_problem, memory_problem, number, numbers, option_problem
from .runner import StudySpec
from .storage import FileStore

__all__ = ["DEFAULT_OUT", "check_before_work", "override", "parser"]

DEFAULT_OUT = Path("benchmarks/results/theory")
_BETA_NAMES = ("admissible", "theorem1")


def _betas(text: str) -> tuple[float | str, ...]:
    positive = number(minimum=0.0)
    try:
        out = tuple(v if v in _BETA_NAMES else positive(v) for v in (p.strip() for p in text.split(",")) if v)
    except argparse.ArgumentTypeError:
        out = ()
    if not out:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of admissible, theorem1 or positive "
                                         f"numbers, got {text!r}")
    return out


def parser() -> argparse.ArgumentParser:
    """The ``zeroopt-study`` argument parser (each option's type checks its range)."""
    p = argparse.ArgumentParser(
        prog="zeroopt-study",
        description="Empirical studies of RGF against Nesterov–Spokoiny / Theorem 1 (Cheng et al. 2019).",
    )
    p.add_argument("study", help="a study name, 'all', 'list', 'index' (rewrite the results index) or 'migrate'")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"results root (default {DEFAULT_OUT})")
    p.add_argument("--workers", type=count(1), default=None, help="processes (default: all CPUs)")
    p.add_argument("--seeds", type=count(1), help="runs per cell")
    p.add_argument("--dims", type=counts(1), help="comma-separated dimensions")
    p.add_argument("--deltas", type=numbers(minimum=0.0), help="comma-separated targets δ (> 0)")
    p.add_argument("--eps-factors", type=numbers(minimum=0.0, strict=False), help="comma-separated ε/(βδ²) (>= 0)")
    p.add_argument("--qs", type=counts(1), help="comma-separated averaging sizes q")
    p.add_argument("--betas", type=_betas, help="comma-separated β rules: admissible, theorem1 or positive numbers")
    p.add_argument("--family", choices=("log_norm", "rotated_quadratic", "pseudo_huber"))
    p.add_argument("--solver", help="zeroopt solver name (one of yours with --plugin)")
    add_plugin_argument(p)
    p.add_argument("--cap", type=number(minimum=0.0), help="iteration cap as a fraction of 16(d+4)L1(f(x0)-f*)/δ²")
    p.add_argument("--root-seed", type=count(0), help="entropy of the study's SeedSequence")
    p.add_argument("--no-progress", action="store_true", help="no tqdm bars")
    p.add_argument("--reanalyze", action="store_true",
                   help="redo fits, plots and findings from the study's stored run records instead of running it")
    p.add_argument("--db", type=Path, default=None,
                   help="results database for the run records (default ~/.cache/zeroopt/results.sqlite)")
    return p


def override(spec: StudySpec, args: argparse.Namespace) -> StudySpec:
    """``spec`` with the grid and settings given on the command line."""
    changes = {
        field: getattr(args, attr)
        for field, attr in (
            ("seeds", "seeds"), ("dims", "dims"), ("deltas", "deltas"), ("eps_factors", "eps_factors"),
            ("qs", "qs"), ("betas", "betas"), ("family", "family"), ("solver", "solver"), ("cap", "cap"),
            ("root_seed", "root_seed"),
        )
        if getattr(args, attr) is not None
    }
    return dataclasses.replace(spec, **changes)


def check_before_work(p: argparse.ArgumentParser, args: argparse.Namespace, specs: list[StudySpec],
                      load: Callable[[Path, Path | None], object]) -> None:
    """End the command (``p.error``: exit 2, or exit 1 for stored data that is missing) on what would fail later.

    Parameters
    ----------
    p, args
        The parser and what it read.
    specs
        The studies to run, with the command line's overrides.
    load
        Reads a study's stored runs from its folder and a database (:func:`theory.studies.load_run`), for
        ``--reanalyze``.
    """
    for spec in specs:  # an option the solver does not take would fail every run
        wrong = option_problem(dict(spec.solver_options), [spec.solver])
        if wrong:
            p.error(f"argument --solver: study {spec.name}'s solver options: {wrong}")
    for spec in specs:  # the rotated quadratic keeps a d × d rotation and the draw it comes from
        d = max(spec.dims)
        too_big = memory_problem(16.0 * d * d if spec.family == "rotated_quadratic" else 24.0 * d,
                                 f"{spec.family} at d = {d}")
        if too_big:
            p.error(f"argument --dims: {too_big}")
    if args.reanalyze:
        for spec in specs:
            folder = args.out / spec.name
            if not (folder / "results.json").is_file():
                p.exit(1, f"{p.prog}: error: nothing stored to reanalyze for {spec.name}: {folder / 'results.json'} "
                          "does not exist; run the study without --reanalyze first, or pass the --out it wrote to\n")
            try:
                load(folder, args.db)
            except FileNotFoundError as err:  # the records are in another database: the message says --db PATH
                p.exit(1, f"{p.prog}: error: {err}\n")
            except sqlite3.Error as err:
                p.error(f"argument --db: {err}")
            except (ValueError, KeyError, TypeError) as err:  # a results.json that is not a study's (or is cut)
                p.exit(1, f"{p.prog}: error: cannot reanalyze {spec.name} from {folder / 'results.json'}: "
                          f"{type(err).__name__}: {err}\n")
    unusable = folder_problem(args.out)
    if unusable:
        p.error(f"argument --out: {unusable}")
    # Made (or opened) last, once every other argument is known good, but before hours of runs.
    try:
        FileStore(args.db).close()
    except sqlite3.Error as err:
        p.error(f"argument --db: {err}")
