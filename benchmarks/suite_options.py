"""The command line of ``python -m benchmarks.run_suite``: its options, and the experiments and plan they select.

Kept apart from :mod:`benchmarks.run_suite` (which runs the attacks and writes the pages) so that the options
can be read, and tested, without running anything.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from applications.hardlabel.config import SETTINGS
from benchmarks import sizing
from benchmarks.attacks.ours import DEFAULT_IMPL
from benchmarks.experiments import NAMES, Plan
from benchmarks.headline import PLANNED_PEERS  # run on request, once per budget (--max-budget B, a tag each)
from theory.arguments import option_problem
from zeroopt import list_solvers
from zeroopt.recipes.plugins import add_plugin_argument, load_plugin_arguments

__all__ = ["PARTS", "PEERS", "RESULTS", "experiment_names", "options_for", "parse_args", "plan_for"]

DESCRIPTION = "Run the whole benchmark suite: ``python -m benchmarks.run_suite [--quick | --preset full] [options]``."

RESULTS = Path(__file__).resolve().parent / "results" / "suite"
PARTS = {
    "mnist": ("mnist-untargeted", "mnist-targeted"),
    "cifar": ("cifar-untargeted", "cifar-targeted"),
    "gbdt": ("gbdt-higgs", "gbdt-mnist"),
    "imagenet": ("imagenet-untargeted", "imagenet-targeted"),  # not in --parts' default: a CPU run takes hours
}
PEERS = ("art-hsj", "art-signopt", "fb-boundary", "fb-hsja", "cgba-h", "cgba", "cw-l2")


def _count(minimum: int) -> Any:
    def parse(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {text}")
        return value

    return parse


def _shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(v) for v in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected K/N with integers, got {text!r}") from None
    if n < 1 or not 0 <= k < n:
        raise argparse.ArgumentTypeError(f"need N >= 1 and 0 <= K < N, got {text!r}")
    return k, n


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.run_suite", description=DESCRIPTION)
    p.add_argument("--quick", action="store_true", help="the quick preset (under two minutes)")
    p.add_argument("--preset", choices=sorted(sizing.PRESETS), default=None, help="sizes (default: default)")
    p.add_argument("--tag", default=None, help="results sub-folder (default: the preset name)")
    p.add_argument("--results-dir", type=Path, default=RESULTS, help=f"tables and plots (default {RESULTS})")
    p.add_argument("--db", type=Path, default=None,
                   help="database of the per-run records (default ~/.cache/zeroopt/results.sqlite)")
    p.add_argument("--parts", default="mnist,cifar,gbdt,speed",
                   help="comma list of mnist, cifar, gbdt, imagenet, speed")
    p.add_argument("--experiments", default=None, help=f"comma list among {', '.join(NAMES)} (overrides --parts)")
    p.add_argument("--attacks", default=None,
                   help=f"comma list among ours, ours-<solver>, {', '.join(PEERS + PLANNED_PEERS)}")
    p.add_argument("--solvers", default=None, help="our solvers (default: all of zeroopt.list_solvers())")
    add_plugin_argument(p)  # e.g. --plugin docs/examples/spsa_plugin.py --attacks ours-spsa
    p.add_argument("--images", type=_count(1), default=None, help="inputs per experiment for ours")
    p.add_argument("--peer-images", type=_count(1), default=None, help="inputs per experiment for peers")
    p.add_argument("--long-images", type=_count(0), default=None, help="inputs run to the long budget")
    p.add_argument("--max-budget", type=_count(1), default=None, help="drop budgets above this one")
    p.add_argument("--batched-solvers", default="rgf", help="solvers timed batched over inputs ('none': skip)")
    p.add_argument("--seed", type=int, default=0, help="the one seed every random choice derives from")
    p.add_argument("--replicate", type=_count(0), default=0,
                   help="another draw of each attack call's seed on the same inputs (0: the suite's own; give "
                   "each replicate its own --tag)")
    p.add_argument("--threads", type=_count(1), default=1, help="torch threads (1: best on a shared 2-core CPU)")
    p.add_argument("--cw-steps", type=int, default=None, help="C&W steps per binary-search step")
    p.add_argument("--ours-impl", default=DEFAULT_IMPL, help="our attack as module:function")
    p.add_argument(
        "--ours-option",
        action="append",
        default=[],
        metavar="[SOLVER:]KEY=VALUE",
        help="extra option of our attack (value as JSON), for every solver or only SOLVER",
    )
    p.add_argument("--retry-errors", action="store_true", help="rerun stored runs that ended in an error")
    p.add_argument(
        "--redo-nonadversarial",
        action="store_true",
        help="rerun stored runs whose returned point the harness did not label adversarial (claim.adversarial "
        "false in the record), with the code as it is now",
    )
    p.add_argument(
        "--stored-only",
        action="store_true",
        help="run nothing: write the tables, plots and index from the stored runs only (runs not stored are "
        "reported as left; the speed part, which re-measures the model, is skipped)",
    )
    p.add_argument(
        "--peer-group",
        type=_count(1),
        default=None,
        help="inputs per call for the peers that run batched (foolbox, C&W; default: all the peers' inputs). "
        "One input whose attack fails (e.g. NaN candidates) ends its whole batch: --peer-group 1 "
        "--retry-errors reruns such a batch input by input",
    )
    p.add_argument("--fresh", action="store_true", help="delete this tag's stored runs and history first")
    p.add_argument(
        "--fresh-selection",
        action="store_true",
        help="delete this tag's stored runs of the chosen experiments and attacks first, keeping the tag's other "
        "runs (to remake one attack's runs after its default changed; resume an interrupted remake without it)",
    )
    p.add_argument("--plan", action="store_true", help="print the plan and time estimate, run nothing")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument(
        "--shard",
        type=_shard,
        default=None,
        metavar="K/N",
        help="run only the inputs at positions p with p %% N == K (parallel workers share one results folder)",
    )
    p.add_argument(
        "--runs-only",
        action="store_true",
        help="store runs only: no tables, speed table or history (for parallel workers; a later plain invocation "
        "reuses their runs and writes everything)",
    )
    p.add_argument(
        "--deadline-minutes",
        type=float,
        default=None,
        help="start no new attack call after this many minutes (what is unfinished is left for a later invocation)",
    )
    p.add_argument(
        "--made-on",
        default=None,
        help="label for runs made away from the reference machine (kept in each record; the speed table leaves "
        "such runs out)",
    )
    p.add_argument(
        "--torch-device",
        default="cpu",
        help="device of the torch models (cpu, cuda); TF32 is turned off on CUDA so labels match float32 math",
    )
    args = p.parse_args(argv)
    load_plugin_arguments(p, args)  # before the solvers are listed: a plugin's join them
    if args.quick:
        if args.preset not in (None, "quick"):
            p.error("--quick conflicts with --preset")
        args.preset = "quick"
    args.preset = args.preset or "default"
    args.tag = args.tag or args.preset
    if args.fresh_selection and args.stored_only:
        p.error("--fresh-selection deletes the runs --stored-only would report: use one or the other")
    if args.fresh_selection and args.shard is not None:
        # a worker started after another had stored runs would delete them
        p.error("--fresh-selection with --shard would let one shard delete another's new runs: delete them once "
                "(the same command without --shard, with --fresh-selection --runs-only --deadline-minutes 0), then "
                "start the shards without --fresh-selection")
    _check_ours_options(p, args)
    return args


def _check_ours_options(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every ``--ours-option`` name is a piece setting or an option of each solver it reaches (exit 2 before any
    run; otherwise every run of that solver fails)."""
    solvers = [s for s in (args.solvers.split(",") if args.solvers else list_solvers()) if s]
    if args.batched_solvers != "none":
        solvers += [s for s in args.batched_solvers.split(",") if s]
    for pair in (pair for pair in args.ours_option if "=" in pair):  # options_for says what a pair without one lacks
        scope, colon, key = pair.partition("=")[0].rpartition(":")
        problem = option_problem([key], [scope] if colon else solvers, SETTINGS)
        if problem:
            p.error(f"argument --ours-option {pair!r}: {problem}")


def options_for(pairs: list[str], solver: str) -> dict[str, Any]:
    """The ``--ours-option`` values that apply to ``solver``."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"--ours-option needs [SOLVER:]KEY=VALUE, got {pair!r}")
        scope, colon, key = key.rpartition(":")
        if colon and scope != solver:
            continue
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def experiment_names(args: argparse.Namespace) -> list[str]:
    """Experiments selected by ``--experiments`` or ``--parts``."""
    if args.experiments:
        names = [n.strip() for n in args.experiments.split(",") if n.strip()]
        bad = [n for n in names if n not in NAMES]
        if bad:
            raise SystemExit(f"unknown experiment(s) {bad}; choose from {', '.join(NAMES)}")
        return names
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    bad = [p for p in parts if p not in (*PARTS, "speed")]
    if bad:
        raise SystemExit(f"unknown part(s) {bad}; choose from {', '.join([*PARTS, 'speed'])}")
    return [n for p in parts if p in PARTS for n in PARTS[p]]


def plan_for(args: argparse.Namespace, name: str) -> Plan:
    """The preset's plan for an experiment, with the command-line overrides."""
    return sizing.PRESETS[args.preset][name].scaled(
        n_ours=args.images, n_peers=args.peer_images, n_long=args.long_images, max_budget=args.max_budget
    )
