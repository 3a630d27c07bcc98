"""``zeroopt attack`` / ``zeroopt campaign``: run a campaign of hard-label attacks and store every result."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from applications.hardlabel.config import DEFAULT_SOLVER, SETTINGS
from theory.arguments import option_problem

from .common import (
    check_solvers,
    command_line,
    load_plugins,
    parse_batch_size,
    parse_bounds,
    parse_inputs,
    parse_options,
)


def _campaign_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The options shared by ``attack`` and ``campaign`` (on the command line they override the TOML file)."""
    options = [
        click.option("--model", "-m", "models", multiple=True, metavar="SPEC",
                     help="built-in (digits-cnn, digits-lgbm, mnist-cnn, cifar-resnet20, imagenet-effnet-lite0), "
                          "weights file with --arch, LightGBM model file, or module:function; repeat for several"),
        click.option("--arch", default=None,
                     help="architecture of weights files: mnist-cnn, cifar-resnet20, digits-cnn"),
        click.option("--data", "-d", default=None, metavar="SPEC",
                     help="digits, mnist, cifar10, higgs, imagenet, or a path (image folder with labels.txt, IDX "
                          "folder, .npz, .csv, LibSVM); default: the first built-in model's dataset"),
        click.option("--n", "-n", type=click.IntRange(min=1), default=None, help="attack the first N inputs [20]"),
        click.option("--inputs", default=None, metavar="IDS", help="input ids instead of --n, e.g. 0,3,10-19"),
        click.option("--solver", "-s", "solvers", multiple=True,
                     help=f"zeroopt solver(s): {DEFAULT_SOLVER}, rgf, sign, coordinate, ... [{DEFAULT_SOLVER}, "
                          "the attack's own]"),
        click.option("--plugin", "plugins", multiple=True, metavar="MODULE",
                     help="a module or .py file registering solvers (e.g. docs/examples/spsa_plugin.py with --solver "
                          "spsa); repeat for several; also ZEROOPT_PLUGINS (comma-separated), passed to the workers"),
        click.option("--budget", "-b", "budgets", multiple=True, type=click.IntRange(min=1),
                     help="queries per input (hard cap); repeat for several [1000]"),
        click.option("--seed", "seeds", multiple=True, type=int, help="seed(s) [0]"),
        click.option("--targeted/--untargeted", default=None, help="target (label + 1) mod K [untargeted]"),
        click.option("--option", "-o", "options", multiple=True, metavar="KEY=VALUE",
                     help="solver option or setting of an attack piece (value as JSON), e.g. -o q=10 "
                          "-o n_initial=50"),
        click.option("--batch-size", default=None, help="samples per model call: auto, N or none (1: bit-identical "
                                                       "on every executor) [auto]"),
        click.option("--chunk", type=click.IntRange(min=1), default=None, help="inputs per attack call [32]"),
        click.option("--device", default=None,
                     help="torch device for torch models: cpu, cuda, cuda:N [cuda where torch sees a GPU, else cpu; "
                          "a module:function model stays where it put its module]"),
        click.option("--bounds", default=None, metavar="LO,HI", help="input domain [0,1 for images]"),
        click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="results database [~/.cache/zeroopt/results.sqlite]"),
        click.option("--no-db", is_flag=True, help="keep the results in a temporary database only"),
        click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
                     help="write tables, plots and adversarial examples here"),
        click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True),
        click.option("--address", default=None, help="Ray cluster address (default: start a local one)"),
        click.option("--workers", type=click.IntRange(min=1), default=None, help="Ray workers [one per CPU]"),
        click.option("--cpus-per-worker", type=float, default=1.0, show_default=True),
        click.option("--gpus-per-worker", type=float, default=0.0, show_default=True,
                     help="fraction of a GPU per Ray worker (e.g. 0.25: four workers share one GPU)"),
        click.option("--threads", type=click.IntRange(min=1), default=1, show_default=True,
                     help="torch threads of the local executor"),
        click.option("--commit", type=click.Choice(["attack", "task"]), default="attack", show_default=True,
                     help="one database transaction per attack, or per finished chunk (faster for big campaigns)"),
        click.option("--no-adv", is_flag=True, help="do not keep adversarial inputs in the database"),
        click.option("--no-progress", is_flag=True, help="no progress bars"),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@click.command("attack", epilog="Examples:\n\n\b\n"
               "  zeroopt attack --model digits-cnn --n 5 --budget 1000\n"
               "  zeroopt attack -m digits-cnn -m digits-lgbm -s rgf -s sign -b 500 -b 1000 --n 20 --out report\n"
               "  zeroopt attack -m mnist-cnn --data mnist --n 100 --budget 4000 --solver sign\n"
               "  zeroopt attack -m weights.pt --arch mnist-cnn --data mnist --n 10\n"
               "  zeroopt attack -m mypkg.models:build --data inputs.npz --n 50 --executor ray --workers 4\n"
               "  zeroopt attack -m digits-lgbm --n 5 --budget 500 --plugin docs/examples/spsa_plugin.py -s spsa")
@_campaign_options
@click.pass_context
def attack_command(ctx: click.Context, **kw: Any) -> None:
    """Attack models with top-1 labels only (every input × model × solver × budget × seed).

    Each finished attack is stored as one row of the results database, so rerunning an interrupted
    command does only what is missing. Prints a summary table at the end.
    """
    ctx.exit(_run(None, kw))


@click.command("campaign", epilog="Example campaign.toml:\n\n\b\n"
               '  models = ["digits-cnn", "digits-lgbm"]\n'
               '  solvers = ["rgf", "sign"]\n'
               "  budgets = [500, 1000]\n"
               "  n = 20\n\n"
               "Examples:\n\n\b\n"
               "  zeroopt campaign campaign.toml\n"
               "  zeroopt campaign campaign.toml --executor ray --workers 2 --db runs.sqlite\n\n"
               "Trust: a model named module:function runs that function, so trust a campaign file as you would its "
               "code; the Ray executor runs the attacks on whatever cluster --address names, so use a cluster you "
               "trust (see docs/reliability.md).")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_campaign_options
@click.pass_context
def campaign_command(ctx: click.Context, file: Path, **kw: Any) -> None:
    """Run the campaign declared in a TOML FILE (options given here override the file's)."""
    ctx.exit(_run(file, kw))


def _campaign(file: Path | None, kw: dict[str, Any]) -> Any:
    from applications.campaign import Campaign

    given: dict[str, Any] = {
        "models": list(kw["models"]) or None,
        "data": kw["data"],
        "solvers": list(kw["solvers"]) or None,
        "budgets": list(kw["budgets"]) or None,
        "seeds": list(kw["seeds"]) or None,
        "n": kw["n"],
        "inputs": parse_inputs(kw["inputs"]),
        "targeted": kw["targeted"],
        "options": parse_options(kw["options"]) or None,
        "chunk": kw["chunk"],
        "arch": kw["arch"],
        "device": kw["device"] or ("cuda" if kw["gpus_per_worker"] > 0 else None),
        "bounds": parse_bounds(kw["bounds"]),
    }
    if kw["batch_size"] is not None:
        given["batch_size"] = parse_batch_size(kw["batch_size"])
    if file is not None:
        return Campaign.from_toml(file, **given)
    if not given["models"]:
        raise click.UsageError("give at least one --model (e.g. --model digits-cnn)")
    return Campaign(**{k: v for k, v in given.items() if v is not None})


def _check_device(device: str | None) -> None:
    """A --device that names no torch device is a usage error, before any work."""
    if device is None:
        return
    import torch

    try:
        torch.device(device)
    except (RuntimeError, TypeError):
        raise click.BadParameter(f"{device!r} is not a torch device; use cpu, cuda or cuda:N, or leave it out "
                                 "(cuda where torch sees a GPU, else cpu)", param_hint="--device") from None


def _run(file: Path | None, kw: dict[str, Any]) -> int:
    from applications.campaign import ResultsDB, default_db_path, make_executor, run_campaign
    from applications.campaign.report import summarise, text_table, write_report

    try:
        campaign = _campaign(file, kw)
    except (ValueError, OSError) as err:
        raise click.UsageError(str(err)) from None
    _check_device(campaign.device)
    load_plugins(kw["plugins"])  # before the solvers are checked; exported to ZEROOPT_PLUGINS for Ray's workers
    check_solvers(campaign.solvers)
    # Again once the plugins are loaded: the campaign checked the built-in solvers' options only.
    problem = option_problem(campaign.options, campaign.solvers, SETTINGS)
    if problem:
        raise click.BadParameter(problem, param_hint="--option / [options]")
    if kw["out"] is not None:
        try:  # here, before the attacks: a folder that cannot be made is known before any work
            kw["out"].mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise click.BadParameter(f"cannot make the folder {kw['out']}: {err.strerror or err}",
                                     param_hint="--out") from None
    tmp = tempfile.TemporaryDirectory(prefix="zeroopt-") if kw["no_db"] else None
    path = Path(tmp.name) / "results.sqlite" if tmp else (kw["db"] or default_db_path())
    command = command_line()
    # Opened (schema checked and completed, writability tried) before any attack runs.
    db = ResultsDB(path)
    import torch

    torch.set_num_threads(kw["threads"])
    try:
        executor = make_executor(kw["executor"], address=kw["address"], workers=kw["workers"],
                                 cpus_per_worker=kw["cpus_per_worker"], gpus_per_worker=kw["gpus_per_worker"]) \
            if kw["executor"] == "ray" else make_executor("local")
    except (RuntimeError, ConnectionError, ValueError) as err:  # ray missing, or no cluster at --address
        db.close()
        raise click.ClickException(f"cannot start the Ray executor: {type(err).__name__}: {err}") from None
    except BaseException:
        db.close()
        raise
    with db:
        try:
            summary = run_campaign(campaign, db, executor, command=command, progress=not kw["no_progress"],
                                   store_adv=not kw["no_adv"], commit=kw["commit"])
        except (ValueError, OSError) as err:
            raise click.ClickException(str(err)) from None
        finally:
            executor.close()
        wanted = set(summary.keys)
        marks = ",".join("?" * len(campaign.models))
        rows = [r for r in db.rows(f"model IN ({marks})", campaign.models, with_adv=kw["out"] is not None)
                if (r["dataset"], r["input_id"], r["model"], r["solver"], r["budget"], r["seed"], r["goal"],
                    r["options"]) in wanted]
        click.echo(text_table(summarise(rows)))
        click.echo(f"{summary.stored} attacks run and stored, {summary.already_stored} already stored; "
                   f"database {path}" + (" (temporary)" if tmp else ""))
        if kw["out"] is not None:
            page = write_report(db, kw["out"], where=f"model IN ({marks})", params=campaign.models)
            _examples(campaign, rows, kw["out"])
            click.echo(f"report: {page}")
    for line in summary.failed:
        click.echo(f"failed (not stored; rerun to retry): {line}", err=True)
    if tmp:
        tmp.cleanup()
    if summary.interrupted:
        click.echo("interrupted: every finished attack is stored; rerun the same command to resume", err=True)
        return 130
    return 1 if summary.failed else 0


def _examples(campaign: Any, rows: list[dict[str, Any]], out: Path, per_plot: int = 8) -> None:
    """Originals / adversarials / perturbations of the first inputs of each (model, solver), largest budget."""
    from applications.campaign.data import load_data
    from applications.campaign.plots import plot_examples
    from applications.campaign.worker import unpack

    data = load_data(campaign.data, bounds=campaign.bounds)
    if not data.is_image:
        return
    shape = data.x.shape[1:]
    budget, seed = max(campaign.budgets), campaign.seeds[0]
    for model in campaign.models:
        for solver in campaign.solvers:
            mine = sorted((r for r in rows if r["model"] == model and r["solver"] == solver and r["budget"] == budget
                           and r["seed"] == seed), key=lambda r: r["input_id"])[:per_plot]
            if not mine:
                continue
            x0 = data.x[[r["input_id"] for r in mine]]
            adv = [None if r["x_adv"] is None else unpack(r["x_adv"], shape) for r in mine]
            captions = [f"#{r['input_id']} L2 {r['distortion']:.2f}" if r["distortion"] is not None
                        else f"#{r['input_id']} failed" for r in mine]
            name = f"examples_{Path(model).name.replace(':', '-')}_{solver}_b{budget}.png"
            plot_examples(x0, adv, captions, out / name, title=f"{model} / {solver}, {budget} queries")

