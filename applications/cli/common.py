"""Parsing helpers shared by the subcommands (each turns bad input into a clear usage error)."""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

import click

_ARGV: list[str] | None = None  # the arguments main() was given (None: the process's own)


def set_argv(argv: list[str] | None) -> None:
    """Remember the arguments of this invocation, for :func:`command_line`."""
    global _ARGV
    _ARGV = None if argv is None else list(argv)


def command_line() -> str:
    """The command that is running, as a shell line (stored with every result)."""
    args = sys.argv[1:] if _ARGV is None else _ARGV
    return "zeroopt " + " ".join(shlex.quote(a) for a in args)


def parse_inputs(text: str | None) -> list[int] | None:
    """``"0,3,10-19"`` → ``[0, 3, 10, ..., 19]``."""
    if text is None:
        return None
    out: list[int] = []
    try:
        for part in filter(None, (p.strip() for p in text.split(","))):
            lo, dash, hi = part.partition("-")
            out += list(range(int(lo), int(hi) + 1)) if dash else [int(lo)]
    except ValueError:
        raise click.BadParameter(f"expected ids like 0,3,10-19, got {text!r}", param_hint="--inputs") from None
    return out


def parse_options(pairs: tuple[str, ...]) -> dict[str, Any]:
    """``("q=10", "beta=0.001")`` → ``{"q": 10, "beta": 0.001}`` (values as JSON, else strings)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint="--option")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def parse_bounds(text: str | None) -> tuple[float, float] | None:
    """``"0,1"`` → ``(0.0, 1.0)``."""
    if text is None:
        return None
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise click.BadParameter(f"expected LO,HI, got {text!r}", param_hint="--bounds") from None
    if not lo < hi:
        raise click.BadParameter(f"need LO < HI, got {text!r}", param_hint="--bounds")
    return lo, hi


def parse_batch_size(text: str) -> int | str | None:
    """``auto``, ``none`` or a positive integer."""
    if text in ("auto", "none"):
        return None if text == "none" else "auto"
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise click.BadParameter(f"expected auto, none or a positive integer, got {text!r}", param_hint="--batch-size")
    return value


def plugin_option(fn: Any) -> Any:
    """The ``--plugin MODULE`` option (repeatable): modules or .py files that register solvers."""
    from zeroopt.recipes.plugins import PLUGIN_HELP

    return click.option("--plugin", "plugins", multiple=True, metavar="MODULE", help=PLUGIN_HELP)(fn)


def load_plugins(specs: tuple[str, ...] | list[str]) -> None:
    """Load every ``--plugin`` (and export it to ``ZEROOPT_PLUGINS`` for the workers); a bad one is a usage error."""
    from zeroopt.recipes import plugins as loader

    try:
        loader.load_plugins(specs)
    except loader.PluginError as err:
        raise click.BadParameter(str(err), param_hint="--plugin") from None


def check_solvers(names: list[str] | tuple[str, ...]) -> None:
    """Every solver name is registered, or comes from a plugin (``--plugin``, ``ZEROOPT_PLUGINS``, entry points)."""
    import zeroopt

    unknown = []
    for name in names:
        try:
            zeroopt.get_solver(name)
        except zeroopt.PluginError as err:  # a plugin of ZEROOPT_PLUGINS that cannot be loaded
            raise click.BadParameter(str(err), param_hint="ZEROOPT_PLUGINS") from None
        except (TypeError, ValueError):
            unknown.append(name)
    if unknown:
        raise click.BadParameter(f"unknown solver(s) {', '.join(map(repr, unknown))}; choose from "
                                 f"{', '.join(zeroopt.list_solvers())}, or load yours with --plugin MODULE",
                                 param_hint="--solver")
