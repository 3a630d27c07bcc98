"""The ``zeroopt`` command group; each subcommand lives in its own module."""

from __future__ import annotations

import sqlite3

import click

from . import attack, bench, exact, minimize, report
from .common import set_argv


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
    epilog="Examples:\n\n\b\n"
    "  zeroopt attack --model digits-cnn --n 5 --budget 1000\n"
    "  zeroopt campaign campaign.toml --executor ray --workers 2\n"
    "  zeroopt report --out campaign-report\n"
    "  zeroopt exact --model digits-lgbm --n 5 --attack-budget 2000\n"
    "  zeroopt minimize --problem log_norm --dim 64 --solver rgf --budget 20000\n"
    "  zeroopt study list\n"
    "  zeroopt bench import",
)
@click.version_option(package_name="zeroopt")
def cli() -> None:
    """Zeroth-order optimisation with an inexact oracle, and hard-label attacks built on it."""


cli.add_command(attack.attack_command)
cli.add_command(attack.campaign_command)
cli.add_command(report.report_command)
cli.add_command(exact.exact_command)
cli.add_command(minimize.minimize_command)
cli.add_command(minimize.study_command)
cli.add_command(bench.bench_group)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (for ``python -m applications.cli`` and tests).

    Exit codes: 0 done, 1 a runtime problem (an unusable database, a model that cannot be loaded, failed
    attacks), 2 a usage problem (a wrong option or campaign file), 130 interrupted. Each problem is one line
    on stderr naming it and what to do; an error of zeroopt's own code keeps its traceback.
    """
    set_argv(argv)
    try:
        # Without standalone mode click returns a command's ctx.exit(code) as the value.
        code = cli.main(args=argv, prog_name="zeroopt", standalone_mode=False)
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    except click.ClickException as err:
        err.show()
        return err.exit_code
    except click.exceptions.Abort:
        click.echo("interrupted (Ctrl-C): stopped; what was stored before stays stored", err=True)
        return 130
    except sqlite3.Error as err:  # every database operation explains its errors; this names any other one
        from applications.campaign.db import ResultsDBError

        text = str(err) if isinstance(err, ResultsDBError) else f"database error: {type(err).__name__}: {err}"
        click.echo(f"Error: {text}", err=True)
        return 1
    return code if isinstance(code, int) else 0
