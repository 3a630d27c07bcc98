"""``zeroopt report``: Markdown tables and PNG plots from a results database."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("report", epilog="Examples:\n\n\b\n"
               "  zeroopt report --out campaign-report\n"
               "  zeroopt report runs.sqlite --out report --model digits-cnn")
@click.argument("db", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("zeroopt-report"),
              show_default=True, help="folder for README.md and the plots")
@click.option("--model", "models", multiple=True, help="only these models")
@click.option("--dataset", "datasets", multiple=True, help="only these datasets")
def report_command(db: Path | None, out: Path, models: tuple[str, ...], datasets: tuple[str, ...]) -> None:
    """Summarise the attacks of a results DB [default ~/.cache/zeroopt/results.sqlite].

    One Markdown table per (dataset, goal): success, median and mean L2, queries, time per attack, for every
    (model, solver, budget); one PNG per table of median L2 against the budget.
    """
    from applications.campaign import ResultsDB, default_db_path
    from applications.campaign.report import write_report

    path = db or default_db_path()
    if not path.exists():
        raise click.BadParameter(f"no database at {path}; run `zeroopt attack ...` first or pass its path",
                                 param_hint="DB")
    where, params = [], []
    for column, values in (("model", models), ("dataset", datasets)):
        if values:
            where.append(f"{column} IN ({','.join('?' * len(values))})")
            params += list(values)
    with ResultsDB(path, write=False) as results:
        if results.count() == 0:
            raise click.ClickException(f"{path} holds no attacks yet")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise click.BadParameter(f"cannot make the folder {out}: {err.strerror or err}", param_hint="--out") \
                from None
        page = write_report(results, out, where=" AND ".join(where), params=params)
    click.echo(f"wrote {page}")
