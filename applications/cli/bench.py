"""``zeroopt bench``: the repository's benchmarks, run from a zeroopt checkout.

The benchmarks are not part of the installed package (``applications`` never imports ``benchmarks``), so
each subcommand runs ``python -m benchmarks.<module> ARGS`` in a child process with the checkout on the path.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import click

MODULES = {
    "suite": ("run_suite", "the paper's tables beside ART and foolbox (e.g. zeroopt bench suite --quick)"),
    "parallel": ("parallel", "the suite's runs over Ray workers (e.g. zeroopt bench parallel --executor ray ...)"),
    "import": ("import_runs", "load run files (results/**/runs, runs.tgz) into the results database"),
    "quality": ("hardlabel_quality", "MNIST quality of our solvers vs the paper's bars"),
    "speed": ("hardlabel_speed", "attack queries/s vs the model's forward throughput"),
    "campaign-scaling": ("campaign_scaling", "throughput of one campaign on the local and Ray executors"),
    "overhead": ("overhead", "the attacks' own cost per query beside a nearly free model, ours and the peers'"),
    "dfo": ("dfo", "zeroopt beside nevergrad, pycma, COBYQA, BOBYQA on the Moré–Wild set: data profiles"),
    "coco": ("coco", "zeroopt and the DFO peers on COCO's bbob suites: exdata for cocopp, ECDF areas per group"),
}


def _checkout() -> Path:
    """The checkout holding ``benchmarks/`` (this installation's, else the working directory's)."""
    here = Path(__file__).resolve().parents[2]
    if (here / "benchmarks" / "__init__.py").exists():
        return here
    spec = importlib.util.find_spec("benchmarks")
    if spec is not None and spec.origin:
        return Path(spec.origin).resolve().parents[1]
    raise click.ClickException("the benchmarks live in a zeroopt checkout: run zeroopt bench from one")


class _BenchGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(MODULES)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in MODULES:
            return None
        module, summary = MODULES[name]

        @click.command(name, help=f"{summary[0].upper()}{summary[1:]}. Arguments go to python -m "
                       f"benchmarks.{module} (see its --help).",
                       context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                         "help_option_names": []})
        @click.argument("args", nargs=-1, type=click.UNPROCESSED)
        @click.pass_context
        def run(inner: click.Context, args: tuple[str, ...]) -> None:
            root = _checkout()
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [env.get("PYTHONPATH")])])
            cmd = [sys.executable, "-m", f"benchmarks.{module}", *args]
            inner.exit(subprocess.call(cmd, env=env))

        return run


@click.group("bench", cls=_BenchGroup, epilog="Examples:\n\n\b\n"
             "  zeroopt bench suite --quick\n"
             "  zeroopt bench import\n"
             "  zeroopt bench suite --preset full --batched-solvers none   # pages from the database\n"
             "  zeroopt bench suite --help")
def bench_group() -> None:
    """The repository's benchmarks (needs a zeroopt checkout): suite, parallel, import, quality, speed, dfo, coco."""
