"""``zeroopt exact``: the exact minimal adversarial distance of a tree ensemble, and any attack's gap to it."""

from __future__ import annotations

from typing import Any

import click
import numpy as np

from .common import parse_inputs


@click.command("exact", epilog="Examples:\n\n\b\n"
               "  zeroopt exact --model digits-lgbm --n 5\n"
               "  zeroopt exact --model digits-lgbm --n 5 --norm linf --time-limit 30\n"
               "  zeroopt exact --model model.txt --data higgs --inputs 0-9 --attack-budget 4000")
@click.option("--model", "-m", "model_spec", required=True, metavar="SPEC",
              help="a tree ensemble: digits-lgbm, a LightGBM model file, or module:function returning a "
                   "LightGBM/scikit-learn tree ensemble")
@click.option("--data", "-d", default=None, metavar="SPEC", help="digits, mnist, higgs or a path [the model's own]")
@click.option("--n", "-n", type=click.IntRange(min=1), default=5, show_default=True, help="the first N inputs")
@click.option("--inputs", default=None, metavar="IDS", help="input ids instead of --n, e.g. 0,3,10-19")
@click.option("--norm", type=click.Choice(["l2", "linf", "l1"]), default="l2", show_default=True)
@click.option("--time-limit", type=float, default=None, help="seconds per input (a bound and gap are reported)")
@click.option("--attack-budget", type=click.IntRange(min=1), default=None,
              help="also run the default hard-label attack with this budget and print its ratio to the exact minimum")
def exact_command(model_spec: str, data: str | None, n: int, inputs: str | None, norm: str,
                  time_limit: float | None, attack_budget: int | None) -> None:
    """Exact minimal adversarial perturbation of a tree ensemble (a mixed-integer program solved by HiGHS).

    For a tree ensemble the answer can be computed exactly: here it is, and (with --attack-budget) how far the
    black-box attack is from it.
    """
    from applications.campaign.data import load_data
    from applications.campaign.models import load_model
    from applications.trees import exact_minimal_adversarial

    try:
        loaded = load_model(model_spec)
        dataset = load_data(data or loaded.default_data or "digits")
    except (ValueError, OSError) as err:
        raise click.ClickException(str(err)) from None
    ids = parse_inputs(inputs) or list(range(min(n, len(dataset.x))))
    outside = [i for i in ids if not 0 <= i < len(dataset.x)]
    if outside:
        raise click.BadParameter(f"input ids {outside[:5]} are outside the dataset (0..{len(dataset.x) - 1})",
                                 param_hint="--inputs")
    x, y = dataset.x[ids], dataset.y[ids]
    try:
        res = exact_minimal_adversarial(loaded.model, x, y, norm=norm, bounds=dataset.bounds, time_limit=time_limit,
                                        progress=True)
    except (TypeError, ValueError) as err:
        raise click.UsageError(f"{model_spec}: {err}") from None
    found: Any = None
    if attack_budget is not None:
        from applications.hardlabel import attack

        found = attack(loaded.model, x, y, budget=attack_budget, seed=0, bounds=dataset.bounds,
                       n_classes=loaded.n_classes).distortion
    click.echo(f"\n{'input':>6} {'label':>5} {'status':>10} {norm + ' distance':>14} {'bound':>10} {'seconds':>8}"
               + ("   attack L2   ratio" if found is not None else ""))
    for k, i in enumerate(ids):
        row = (f"{i:>6} {int(y[k]):>5} {res.status[k]:>10} {res.distance[k]:>14.6g} {res.bound[k]:>10.4g} "
               f"{res.seconds[k]:>8.1f}")
        if found is not None:
            ratio = found[k] / res.distance[k] if res.distance[k] > 0 else float("nan")
            row += f"   {found[k]:>9.4f} {ratio:>7.2f}"
        click.echo(row)
    if found is not None and norm == "l2":
        ok = res.distance > 0
        click.echo(f"\nmedian ratio attack / exact: {float(np.median(found[ok] / res.distance[ok])):.2f}")
