"""``zeroopt minimize`` (one run of a solver on a test problem) and ``zeroopt study`` (theory's studies)."""

from __future__ import annotations

import math
from typing import Any

import click

from theory.arguments import memory_problem

from .common import check_solvers, load_plugins, parse_options, plugin_option

PROBLEMS = ("log_norm", "rotated_quadratic", "rosenbrock")


@click.command("minimize", epilog="Examples:\n\n\b\n"
               "  zeroopt minimize --problem log_norm --dim 64 --solver rgf --budget 20000\n"
               "  zeroopt minimize --problem rosenbrock --dim 10 --solver sign --budget 50000 --noise uniform "
               "--eps 1e-4\n"
               "  zeroopt minimize --problem log_norm --dim 64 --plugin docs/examples/spsa_plugin.py --solver spsa")
@click.option("--problem", type=click.Choice(PROBLEMS), default="log_norm", show_default=True)
@click.option("--dim", type=click.IntRange(min=1), default=64, show_default=True)
@click.option("--solver", default="rgf", show_default=True, help="any of zeroopt.list_solvers()")
@click.option("--budget", type=click.IntRange(min=1), default=20_000, show_default=True, help="oracle queries")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--noise", type=click.Choice(["none", "bounded", "uniform", "gaussian"]), default="none",
              show_default=True, help="inexact oracle: error injected into every evaluation")
@click.option("--eps", type=click.FloatRange(min=0.0), default=1e-4, show_default=True,
              help="oracle precision with --noise (finite, >= 0)")
@click.option("--option", "-o", "options", multiple=True, metavar="KEY=VALUE", help="solver option (JSON value)")
@plugin_option
def minimize_command(problem: str, dim: int, solver: str, budget: int, seed: int, noise: str, eps: float,
                     options: tuple[str, ...], plugins: tuple[str, ...]) -> None:
    """Minimise a test function of zeroopt.oracles.problems with a zeroth-order solver; print the outcome."""
    import zeroopt
    from zeroopt.oracles import problems

    if not math.isfinite(eps):  # FloatRange lets NaN through (no comparison holds) and +inf
        raise click.BadParameter(f"expected a finite number >= 0, got {eps!r}", param_hint="--eps")
    too_big = memory_problem(_bytes_needed(problem, dim), f"{problem} at --dim {dim}")
    if too_big:  # before the problem allocates its start point (and the rotated quadratic its d × d rotation)
        raise click.BadParameter(too_big, param_hint="--dim")
    load_plugins(plugins)
    check_solvers([solver])
    opts = parse_options(options)
    try:  # the options' own checks, before any query: a wrong value is the caller's, not a crash
        zeroopt.get_solver(solver).options(**opts)
    except (TypeError, ValueError) as err:
        raise click.BadParameter(str(err), param_hint="--option") from None
    prob = getattr(problems, problem)(dim)
    try:  # the solver's own checks of the problem (trust-region's largest d, say), as minimize makes them
        zeroopt.make_solver(solver, zeroopt.SolverContext(dim=dim, lipschitz=prob.L1, shape=prob.x0.shape), **opts)
    except (TypeError, ValueError) as err:
        raise click.UsageError(str(err)) from None
    target: Any = prob if noise == "none" else prob.with_noise(noise, eps)
    res = zeroopt.minimize(target, prob.x0, solver=solver, budget=budget, seed=seed, **opts)
    click.echo(f"{prob.name} by {solver}: f = {res.fun:.6g} (f* = {prob.f_star:.6g}), {res.queries} queries of "
               f"{budget}, {len(res.history)} iterations, status {res.status.value}")


def _bytes_needed(problem: str, dim: int) -> float:
    """A lower bound of the memory a run on ``problem`` at ``dim`` takes: its d × d rotation and the normal draw it
    comes from (the rotated quadratic), else the start point, the iterate and one probe direction."""
    return 16.0 * dim * dim if problem == "rotated_quadratic" else 24.0 * dim


@click.command("study", context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
               epilog="Examples:\n\n\b\n  zeroopt study list\n  zeroopt study d-scaling --help")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def study_command(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Run a convergence study of theory.studies (``zeroopt study list`` names them)."""
    from theory.studies import main

    ctx.exit(main(list(args) or ["list"]))
