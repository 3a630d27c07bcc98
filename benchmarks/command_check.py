"""One ``python -m`` command of a page, checked as it would run, without running it.

The module imports, its own argparse parser accepts the words (:func:`parser_of` finds the parser without running
the module), and the names it passes exist: suite experiments, ablation variants, theory studies, our solvers,
and the tags and labels a ``benchmarks.studies.tag_compare`` page's record was made from. Used by
:mod:`benchmarks.page_commands`.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def python_module(words: list[str]) -> tuple[str, list[str]] | None:
    """``(module, arguments)`` of a ``python -m MODULE …`` command; ``None`` for any other command.

    Examples
    --------
    >>> python_module(["python", "-m", "benchmarks.overhead", "--out", "x"])
    ('benchmarks.overhead', ['--out', 'x'])
    """
    if len(words) >= 3 and words[0] in ("python", "python3") and words[1] == "-m":
        return words[2], words[3:]
    return None


class _Caught(BaseException):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__("caught")
        self.parser = parser


@functools.cache
def parser_of(module: str) -> argparse.ArgumentParser:
    """The argparse parser a module's command line uses, without running the module.

    The module's ``build_parser()`` where it has one; otherwise its ``main`` is called with
    :meth:`argparse.ArgumentParser.parse_args` replaced, for the call, by one that hands back the parser it was
    called on — before anything after parsing runs.

    Parameters
    ----------
    module : str
        A module run with ``python -m`` (a package's ``__main__`` is found too).

    Returns
    -------
    argparse.ArgumentParser
    """
    mod = importlib.import_module(module)
    if not hasattr(mod, "main") and not hasattr(mod, "build_parser"):
        mod = importlib.import_module(module + ".__main__")
    if callable(getattr(mod, "build_parser", None)):
        return mod.build_parser()

    def hand_back(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _Caught(self)

    original, argv = argparse.ArgumentParser.parse_args, sys.argv
    argparse.ArgumentParser.parse_args = hand_back  # type: ignore[method-assign]
    try:
        try:
            mod.main([])
        except TypeError:  # a main that reads sys.argv only
            sys.argv = [module]
            mod.main()
    except _Caught as caught:
        return caught.parser
    finally:
        argparse.ArgumentParser.parse_args, sys.argv = original, argv  # type: ignore[method-assign]
    raise LookupError(f"{module}.main parsed no arguments")


def parse(module: str, args: list[str]) -> tuple[argparse.Namespace | None, str]:
    """``module``'s parser on ``args``: the namespace, or ``None`` and argparse's message.

    Parameters
    ----------
    module : str
        The module ``python -m`` runs.
    args : list of str
        The words after the module's name.

    Returns
    -------
    (argparse.Namespace or None, str)
    """
    try:
        parser = parser_of(module)
    except (ImportError, LookupError) as err:
        return None, f"{type(err).__name__}: {err}"
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            return parser.parse_args(args), ""
    except SystemExit:
        return None, stderr.getvalue().strip().splitlines()[-1] if stderr.getvalue().strip() else "exit"


def _listed(value: Any) -> list[str]:
    return [v for v in str(value).split(",") if v] if value else []


def _suite_names(ns: argparse.Namespace) -> list[str]:
    from benchmarks.experiments import NAMES

    return [f"unknown experiment {e!r}" for e in _listed(getattr(ns, "experiments", None)) if e not in NAMES]


def _ablation(ns: argparse.Namespace) -> list[str]:
    from benchmarks.studies.ablation_variants import VARIANTS

    names = _listed(ns.variants) if hasattr(ns, "variants") else [ns.variant, *_listed(ns.against)]
    return _suite_names(ns) + [f"unknown variant {v!r}" for v in names if v and v not in VARIANTS]


def _theory(ns: argparse.Namespace) -> list[str]:
    from theory.studies import STUDIES

    known = {*STUDIES, "all", "list", "index", "migrate"}
    return [] if ns.study in known else [f"unknown study {ns.study!r}"]


def _suite(ns: argparse.Namespace) -> list[str]:
    import zeroopt

    if getattr(ns, "plugins", None):
        return _suite_names(ns)
    return _suite_names(ns) + [f"unknown solver {s!r}" for s in _listed(ns.solvers)
                               if s not in zeroopt.list_solvers()]


def _tag_compare(ns: argparse.Namespace, root: Path) -> list[str]:
    """The tags and labels must be those the page's record (the JSON beside ``--out``) was made from."""
    tags = _listed(ns.tags)
    labels = _listed(ns.labels) if ns.labels else tags
    if len(labels) != len(tags):
        return [f"--labels names {len(labels)} tags, --tags gives {len(tags)}"]
    record = root / Path(ns.out).with_suffix(".json")
    if not record.exists():
        return _suite_names(ns)
    keys = {key for table in json.loads(record.read_text()) for key in table.get("median", {})}
    return _suite_names(ns) + [f"tag {tag!r} labelled {label!r} is in no table of {record.name}"
                               for label, tag in zip(labels, tags, strict=True) if f"{label} (`{tag}`)" not in keys]


#: What each module's names must be, beyond what its parser checks: a function of the parsed arguments (and the
#: repository root, where a committed record is read) that returns the problems it finds.
NAME_CHECKS: dict[str, Callable[[argparse.Namespace, Path], list[str]]] = {
    "benchmarks.studies.ablation": lambda ns, _: _ablation(ns),
    "benchmarks.studies.seed_spread": lambda ns, _: _ablation(ns),
    "benchmarks.run_suite": lambda ns, _: _suite(ns),
    "theory.studies": lambda ns, _: _theory(ns),
    "benchmarks.studies.tag_compare": _tag_compare,
    **{f"benchmarks.{m}": lambda ns, _: _suite_names(ns) for m in (
        "headline", "studies.basins", "studies.late_probes", "studies.linf", "studies.gradient_structure")},
}


def check(words: list[str], root: Path = ROOT) -> list[str]:
    """What keeps one ``python -m`` command from running as written (nothing for other commands).

    Parameters
    ----------
    words : list of str
        The command's words, as :func:`shell_commands` gives them.

    Returns
    -------
    list of str
        The problems: the module does not import, its parser refuses the words, or a name it is given does not
        exist. Empty when the command would run.
    """
    found = python_module(words)
    if found is None or found[0] == "pytest":
        return []
    module, args = found
    ns, message = parse(module, args)
    if ns is None:
        return [f"{module}: {message}"]
    return [f"{module}: {problem}" for problem in NAME_CHECKS.get(module, lambda *_: [])(ns, root)]


def _out(ns: argparse.Namespace) -> list[Path]:
    out = Path(ns.out)
    return [out if out.suffix == ".md" else out / "README.md"]


#: The pages a module's command writes, from its parsed arguments, where it is not ``--out`` (a page, or a
#: folder's ``README.md``).
WRITES: dict[str, Callable[[argparse.Namespace], list[Path]]] = {
    "theory.studies": lambda ns: [Path(ns.out) / ns.study / "README.md"],
    "benchmarks.dfo": lambda ns: [Path(ns.out) / f"{s}.md" for s in
                                  (("more-wild", "highdim") if ns.set == "both" else (ns.set,))],
    "benchmarks.run_suite": lambda ns: [Path(ns.results_dir) / (ns.tag or ns.preset or "default") / "README.md"],
    "benchmarks.hardlabel_quality": lambda ns: [Path(ns.out) / "mnist_quality.md"],
    "benchmarks.hardlabel_speed": lambda ns: [ROOT / "benchmarks/results/hardlabel/mnist_speed.md"],
    "benchmarks.campaign_scaling": lambda ns: [Path(ns.out) / f"{ns.name}.md"],
}


def writes(words: list[str], root: Path = ROOT) -> list[Path]:
    """The pages a ``python -m`` command writes, as far as its arguments say (none where they do not parse).

    Parameters
    ----------
    words : list of str
        The command's words.
    root : Path
        The folder the command runs in (relative paths are relative to it).

    Returns
    -------
    list of Path
    """
    found = python_module(words)
    if found is None or found[0] == "pytest":
        return []
    ns, _ = parse(*found)
    if ns is None:  # arguments that do not parse: the page named by --out, if any
        args = found[1]
        outs = [args[i + 1] for i in range(len(args) - 1) if args[i] == "--out"]
        return [root / p for p in _out(argparse.Namespace(out=outs[-1]))] if outs else []
    if found[0] not in WRITES and getattr(ns, "out", None) is None:
        return []
    return [root / p for p in WRITES.get(found[0], _out)(ns)]
