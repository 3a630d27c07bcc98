"""The studies behind ``benchmarks/results/theory/``, and the ``zeroopt-study`` command.

Usage (from the repository root)::

    python -m theory.studies list                 # the studies and what each shows
    python -m theory.studies d-scaling            # run one; writes benchmarks/results/theory/d-scaling/
    python -m theory.studies all                  # every study
    python -m theory.studies index                # rewrite benchmarks/results/theory/README.md
    python -m theory.studies d-scaling --reanalyze   # redo a page from its run records in the results database
    python -m theory.studies migrate              # move run records out of old full-form results.json files
    python -m theory.studies d-scaling --seeds 8 --dims 16,64 --out /tmp/res   # a smaller variant
    python -m theory.studies d-scaling --plugin docs/examples/spsa_plugin.py --solver spsa --out /tmp/res

Each study writes ``results.json`` (spec, cell summaries, fits, findings), ``README.md`` (the exact
command, findings, slope and cell tables, plots) and PNG plots into ``<out>/<study>/``; its run records go to
the results database (``--db PATH``, default ``~/.cache/zeroopt/results.sqlite``; see :mod:`theory.records`).
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import zeroopt
from zeroopt.recipes.plugins import load_plugins

from .analysis import CellSummary, Fit, fit_all, summarize
from .arguments import folder_problem
from .findings import (
    beta_findings,
    d_findings,
    delta_findings,
    eps_findings,
    linesearch_findings,
    predicted_floor,
)
from .records import drop_partial, load_partial, load_records, migrate, store_partial
from .report import Report, write_index, write_report
from .runner import StudyInterrupted, StudyRun, StudySpec, run_study
from .storage import db_file
from .study_options import DEFAULT_OUT, check_before_work, override, parser

__all__ = ["DEFAULT_OUT", "STUDIES", "Study", "load_run", "main", "run_named_study"]


@dataclass(frozen=True)
class Study:
    """A named study: its grid, the measures it fits, and how it reads its own results."""

    spec: StudySpec
    measures: tuple[str, ...]
    summary: str
    findings: Callable[[StudyRun, Sequence[CellSummary], Sequence[Fit]], list[str]]
    floor_plot: bool = False
    trace_color: str = "d"


# ---------------------------------------------------------------------------------------------- presets

_HITS = ("iterate_iterations", "iterate_queries", "average_iterations", "average_queries")

STUDIES: dict[str, Study] = {
    "d-scaling": Study(
        StudySpec(
            name="d-scaling",
            title="d-scaling with the theory step: iterations to δ grow like d+4",
            solver="rgf-fixed", family="log_norm", dims=(16, 32, 64, 128, 256), deltas=(0.2,), seeds=32, cap=0.5,
        ),
        _HITS,
        "rgf-fixed (step 1/(4(d+4)L1), q=1, admissible β) on log(1+‖x‖²), d = 16…256, δ = 0.2",
        d_findings,
    ),
    "d-scaling-quadratic": Study(
        StudySpec(
            name="d-scaling-quadratic",
            title="d-scaling with the theory step on a rotated fixed-spectrum quadratic, q = 1 and 4",
            solver="rgf-fixed", family="rotated_quadratic", dims=(16, 32, 64, 128, 256), deltas=(0.1,), qs=(1, 4),
            seeds=32, cap=0.5,
        ),
        _HITS,
        "rgf-fixed on ½xᵀQᵀΛQx (spectrum [0.2, 1]), d = 16…256, δ = 0.1, q ∈ {1, 4}",
        d_findings,
    ),
    "d-scaling-linesearch": Study(
        StudySpec(
            name="d-scaling-linesearch",
            title="d-scaling with the line-searched step: oracle queries grow like d",
            solver="rgf", family="log_norm", dims=(16, 32, 64, 128, 256), deltas=(0.1,), qs=(4,), seeds=32, cap=0.5,
            # The line search converges fast and its stall rule ends the run (β below its floor) long before a
            # running average of ‖∇f‖² could reach δ²: the average is Theorem 1's fixed-step quantity, so only
            # the iterate criterion is measured here.
            criteria=("iterate",),
        ),
        ("iterate_iterations", "iterate_queries"),
        "rgf (OPT line search, q=4, admissible β) on log(1+‖x‖²), d = 16…256, δ = 0.1",
        linesearch_findings,
    ),
    "delta-scaling": Study(
        StudySpec(
            name="delta-scaling",
            title="δ-scaling with the theory step on log(1+‖x‖²): the theorem's average grows like 1/δ²",
            solver="rgf-fixed", family="log_norm", dims=(16,), deltas=(0.05, 0.0707, 0.1, 0.1414, 0.2), seeds=32,
            cap=0.5,
        ),
        ("average_iterations", "iterate_iterations"),
        "rgf-fixed on log(1+‖x‖²), d = 16, δ = 0.05…0.2",
        delta_findings,
        trace_color="delta",
    ),
    "delta-scaling-hard": Study(
        StudySpec(
            name="delta-scaling-hard",
            title="δ-scaling on the worst-case pseudo-Huber family: single iterates need 1/δ² too",
            solver="rgf-fixed", family="pseudo_huber", dims=(16,), deltas=(0.05, 0.0707, 0.1, 0.1414, 0.2),
            seeds=32, cap=0.5,
        ),
        ("iterate_iterations", "average_iterations"),
        "rgf-fixed on a(√(s²+‖x‖²)−s) with a = 2δ, L1 = 1, f(x0)−f* = 1, d = 16, δ = 0.05…0.2",
        delta_findings,
        trace_color="delta",
    ),
    "eps": Study(
        StudySpec(
            name="eps",
            title="Oracle precision ε: rates hold within Theorem 1's condition, a flagged floor far above it",
            solver="rgf-fixed", family="rotated_quadratic", dims=(16, 64, 256), deltas=(0.1,),
            eps_factors=(0.0, 1.0, 10.0, 100.0, 1000.0), seeds=16, cap=0.4, noise="uniform",
        ),
        ("iterate_iterations", "average_iterations"),
        "rgf-fixed on the rotated quadratic with uniform oracle error ε = factor·βδ², d ∈ {16, 64, 256}, δ = 0.1",
        eps_findings,
        trace_color="eps_factor",
    ),
    "fixed-beta": Study(
        StudySpec(
            name="fixed-beta",
            title="A smoothing radius fixed across d leaves a noise floor growing with d; a theory-scaled one does not",
            solver="rgf-fixed", family="log_norm", dims=(16, 32, 64, 128, 256), deltas=(0.1,),
            betas=(0.005, "admissible"), seeds=16, cap=0.03, stop_at_hit=False,
        ),
        ("tail_grad", "iterate_iterations"),
        "rgf-fixed on log(1+‖x‖²), β = 0.005 (the paper's constant) vs admissible β ∝ δ/((d+4)L1), run to the cap",
        beta_findings,
        floor_plot=True,
        trace_color="beta",
    ),
}


# ------------------------------------------------------------------------------------------------ running


def load_run(folder: Path, db: Path | None = None) -> tuple[StudyRun, str]:
    """A study's runs and original command: ``folder/results.json`` and the run records it points to in ``db``."""
    data = json.loads((folder / "results.json").read_text())
    records = data["runs"] if "runs" in data else load_records(data["records"], db)  # "runs": the old full form
    raw = dict(data["spec"])
    for key in ("dims", "deltas", "eps_factors", "qs", "betas", "criteria"):
        if key in raw:
            raw[key] = tuple(raw[key])
    raw["solver_options"] = tuple(raw.get("solver_options", {}).items())
    raw["family_options"] = tuple(raw.get("family_options", {}).items())
    env = data["environment"]
    run = StudyRun(spec=StudySpec(**raw), records=records, wall_s=env["wall_s"], workers=env["workers"])
    return run, data["command"]


def run_named_study(
    study: Study,
    *,
    out: Path,
    command: str,
    workers: int | None = None,
    progress: bool = True,
    reanalyze: bool = False,
    db: Path | None = None,
) -> Path:
    """Run ``study``, fit, plot and write its report under ``out/<name>/``; return the README path.

    With ``reanalyze`` the runs are read back from the results database ``db`` (the records the folder's
    ``results.json`` points to) instead (fits, plots and findings are redone; the original command is kept).
    Ctrl-C keeps the runs that finished in ``db`` (:func:`theory.records.store_partial`; the exception's
    ``stored_as`` names them) and raises :class:`theory.runner.StudyInterrupted`; the next call with the same spec
    runs only the others.
    """
    folder = out / study.spec.name
    if reanalyze:
        run, command = load_run(folder, db)
        study = dataclasses.replace(study, spec=run.spec)
    else:  # starting from the runs an interrupted invocation of the same spec kept, if any
        kept, kept_s = load_partial(study.spec.to_dict(), db)
        try:
            run = run_study(study.spec, workers=workers, progress=progress, done=kept)
        except StudyInterrupted as stop:
            stop.stored_as = store_partial(stop.records, study.spec.to_dict(), kept_s + stop.wall_s, db)
            raise
        run.wall_s += kept_s
    spec = study.spec
    summaries = summarize(run)
    rng = np.random.default_rng(np.random.SeedSequence(spec.root_seed, spawn_key=(0,)))
    fits = fit_all(run, rng=rng, measures=study.measures)
    folder.mkdir(parents=True, exist_ok=True)
    # matplotlib comes with the `attack` extra; importing it here keeps `--help` and `list` working without it.
    from .plots import plot_floor, plot_scaling, plot_traces

    plots = []
    hit_fits = [f for f in fits if f.measure != "tail_grad"]
    if hit_fits:
        plots.append(plot_scaling(hit_fits, summaries, folder / "scaling.png", title=spec.title))
    if study.floor_plot:
        predicted: dict[str, list[tuple[float, float]]] = {}
        for s in summaries:
            p = predicted_floor(spec, s)
            if p is not None:
                predicted.setdefault(s.beta, []).append((s.d, p))
        plots.append(plot_floor(summaries, folder / "floor.png", title=spec.title, group="beta", predicted=predicted))
    if any("trace" in r for r in run.records):
        d_show = spec.dims[len(spec.dims) // 2]
        recs = run.records if study.trace_color == "d" else [r for r in run.records if r["d"] == d_show]
        plots.append(plot_traces(recs, folder / "traces.png", title=f"{spec.title} (traced seeds)",
                                 color_by=study.trace_color, deltas=spec.deltas))
    report = Report(
        name=spec.name, title=spec.title, command=command, spec=spec.to_dict(), summaries=summaries, fits=fits,
        records=run.records, wall_s=run.wall_s, workers=run.workers,
        findings=study.findings(run, summaries, fits), plots=plots,
    )
    readme = write_report(report, folder, db)
    if not reanalyze:
        drop_partial(spec.to_dict(), db)  # the whole set is stored now
    return readme


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``zeroopt-study`` / ``python -m theory.studies``.

    Every argument is checked before the first run (exit 2, or 1 for stored data ``--reanalyze`` lacks, with one
    line naming it); Ctrl-C stops the workers, keeps the runs that finished and returns 130.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    p = parser()
    args = p.parse_args(argv)
    try:  # exported to ZEROOPT_PLUGINS too, for the study's worker processes
        load_plugins(args.plugins)
        if args.solver is not None:
            zeroopt.get_solver(args.solver)
    except ValueError as err:  # no such plugin or solver: before any run
        p.error(str(err))
    if args.study == "list":
        for name, st in STUDIES.items():
            print(f"{name:22s} {st.summary}")
        return 0
    if args.study == "index":
        unusable = folder_problem(args.out)
        if unusable:
            p.error(f"argument --out: {unusable}")
        print(f"wrote {write_index(args.out)}")
        return 0
    if args.study == "migrate":  # one-off: run records out of full-form results.json files, into the database
        moved = migrate(args.out, args.db)
        print(f"moved the run records of {len(moved)} stud(ies) under {args.out} into the results database")
        return 0
    names = list(STUDIES) if args.study == "all" else [args.study]
    unknown = [n for n in names if n not in STUDIES]
    if unknown:
        print(f"unknown study {unknown[0]!r}; choose from: {', '.join(STUDIES)}, all, list", file=sys.stderr)
        return 2
    studies = [dataclasses.replace(STUDIES[n], spec=override(STUDIES[n].spec, args)) for n in names]
    check_before_work(p, args, [st.spec for st in studies], load_run)
    rest = list(argv)
    rest.remove(args.study)
    for name, study in zip(names, studies, strict=True):
        # The command that reproduces this one study (so 'all' records one command per folder).
        command = "python -m theory.studies " + shlex.join([name, *rest])
        try:
            readme = run_named_study(study, out=args.out, command=command, workers=args.workers,
                                     progress=not args.no_progress, reanalyze=args.reanalyze, db=args.db)
        except StudyInterrupted as stop:
            print(f"interrupted: {len(stop.records)} of {stop.total} runs of {name} finished and are kept in "
                  f"{db_file(args.db)} as {stop.stored_as}; rerun the same command to run the "
                  "others", file=sys.stderr)
            return 130
        print(f"{name}: wrote {readme}")
        write_index(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
