"""``python -m benchmarks.optiprofiler``: zeroopt's entries and the DFO harness's peers through OptiProfiler.

Runs OptiProfiler's ``benchmark`` once per feature (``plain``, ``noisy``, ``truncated``) on its bundled S2MPJ problems,
each entry wrapped by :class:`benchmarks.optiprofiler.Solver`; prints the scores, leaves OptiProfiler's own profiles
under ``--out`` (where given) and, with ``--page``, writes a results page.
Needs ``pip install -e ".[optiprofiler,dfo]"``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

from ..dfo.peers import PEERS, available, is_zeroopt
from ..pages import command_line
from .run import Plan, benchmark_feature, write
from .solvers import FEATURES


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.optiprofiler", description=__doc__.splitlines()[0])
    ap.add_argument("--solvers", default="coordinate+qn,coordinate+qn+noise",
                    help="zeroopt entries, comma-separated (registered solvers or the DFO harness's entries)")
    ap.add_argument("--peers", default="Powell,COBYQA", help=f"peers, comma-separated; of {sorted(PEERS)}")
    ap.add_argument("--features", default="plain,noisy,truncated", help=f"of {sorted(FEATURES)}")
    ap.add_argument("--mindim", type=int, default=2)
    ap.add_argument("--maxdim", type=int, default=5)
    ap.add_argument("--max-eval-factor", type=int, default=100, help="budget: this many evaluations per dimension")
    ap.add_argument("--problems", default="", help="OptiProfiler problem names, comma-separated (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None,
                    help="where OptiProfiler writes its profiles (PDF) and data (default: scores only)")
    ap.add_argument("--page", type=Path, default=None, help="write a results page (Markdown, JSON, PNG)")
    return ap


def main(argv: list[str] | None = None) -> int:
    """Run the command line; 0 on success."""
    args = build_parser().parse_args(argv)
    split = [s for s in args.solvers.split(",") if s] + [p for p in args.peers.split(",") if p]
    unknown = [s for s in split if s not in PEERS and not is_zeroopt(s)]
    features = [f for f in args.features.split(",") if f]
    if unknown or not split:
        raise SystemExit(f"unknown solvers {unknown}" if unknown else "no solvers")
    if set(features) - set(FEATURES) or not features:
        raise SystemExit(f"features must be among {sorted(FEATURES)}, got {features}")
    if importlib.util.find_spec("optiprofiler") is None:
        raise SystemExit("OptiProfiler is not installed: pip install -e '.[optiprofiler]'")
    missing = [s for s in split if not available(s)]
    if missing:
        raise SystemExit(f"not installed: the libraries of {missing} (pip install -e '.[dfo]')")
    plan = Plan(tuple(split), tuple(features), args.mindim, args.maxdim, args.max_eval_factor,
                problems=tuple(p for p in args.problems.split(",") if p), seed=args.seed)
    results = {}
    for feature in plan.features:
        results[feature] = benchmark_feature(plan, feature, args.out)
        print(feature, json.dumps(results[feature]["scores"]), f"{results[feature]['seconds']} s", flush=True)
    if args.page is not None:
        write(args.page, plan, results, command_line("optiprofiler", argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
