"""``python -m benchmarks.coco`` (``zeroopt bench coco``): zeroopt's solvers and the DFO harness's peers on COCO's
suites, writing COCO's ``exdata`` (for ``cocopp``) and, with ``--page``, a results page of ECDF areas per group.

Needs the ``coco`` extra (``pip install -e ".[coco]"``) and, for the peers, the ``dfo`` extra.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from theory.arguments import count, number

from ..pages import command_line
from .run import BUDGET_MULTIPLIER, DEFAULT_SOLVERS, SUITES, Plan, check_plan, parse_numbers, run_plan, solvers_known


def _numbers(text: str) -> tuple[int, ...]:
    try:
        found = parse_numbers(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers and ranges such as 1-5,7, got {text!r}") from None
    if not found or min(found) < 1:
        raise argparse.ArgumentTypeError(f"expected positive numbers and ranges such as 1-5,7, got {text!r}")
    return found


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.coco", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Example: python -m benchmarks.coco --suite bbob --dims 2 --functions 1 "
                                        "--instances 1 --budget-multiplier 20 --solvers coordinate+qn --exdata /tmp/c")
    ap.add_argument("--suite", choices=sorted(SUITES), default="bbob")
    ap.add_argument("--dims", type=_numbers, default=(2, 10), help="dimensions, e.g. 2,10 (bbob-largescale: 20-640)")
    ap.add_argument("--instances", type=_numbers, default=(1, 2, 3, 4, 5), help="instance numbers, e.g. 1-5")
    ap.add_argument("--functions", type=_numbers, default=(),
                    help="COCO's function numbers, e.g. 1-24 (bbob-noisy 101-130); default every one of the suite")
    ap.add_argument("--budget-multiplier", type=count(1), default=BUDGET_MULTIPLIER,
                    help="evaluations per dimension: each run's budget is this times d")
    ap.add_argument("--solvers", default=",".join(DEFAULT_SOLVERS),
                    help="comma list: zeroopt's registered solvers, the DFO harness's entries and peers "
                         "(benchmarks.dfo.peers); a zeroopt name with /one-run makes one run, without restarts")
    ap.add_argument("--seed", type=count(0), default=0)
    ap.add_argument("--seconds", type=number(minimum=0.0, infinite=True), default=math.inf,
                    help="wall-clock limit per run")
    ap.add_argument("--exdata", type=Path, default=Path("."),
                    help="the folder COCO's exdata/ goes in (and runs-<suite>.json, the runs' summary)")
    ap.add_argument("--force", action="store_true", help="replace a solver's exdata folder of an earlier run")
    ap.add_argument("--page", type=Path, default=None, help="write a results page (Markdown, JSON and ECDF PNG)")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    solvers = tuple(s for s in args.solvers.split(",") if s)
    unknown = solvers_known(solvers)
    if unknown or not solvers:
        ap.error(f"argument --solvers: unknown {unknown}" if unknown else "argument --solvers: none given")
    plan = Plan(args.suite, args.dims, args.instances, args.functions or tuple(SUITES[args.suite]), solvers,
                args.budget_multiplier, args.seed, args.seconds)
    problem = check_plan(plan)
    if problem:
        ap.error(problem)
    records = run_plan(plan, args.exdata, force=args.force)
    if args.page is not None:
        from .page import write

        write(args.page, plan, args.exdata, records, command_line("coco", argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
