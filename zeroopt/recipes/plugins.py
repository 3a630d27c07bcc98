"""Solvers from outside zeroopt: plugins, modules whose import calls :func:`zeroopt.register_recipe` (or
:func:`zeroopt.register_solver`).

A plugin reaches the registry in three ways, all through one loader:

* ``zeroopt.load_plugin("mypkg.solvers")`` or ``zeroopt.load_plugin("path/to/my_solver.py")`` imports it, so its
  ``register_solver`` calls run; ``"mypkg.solvers:register"`` calls that function (no arguments) after the
  import. Every command line takes the same as ``--plugin MODULE`` (repeatable).
* The environment variable ``ZEROOPT_PLUGINS`` (comma-separated, the same forms): read the first time a solver
  name is not registered, in every process. :func:`load_plugin` adds what it loads to it (paths made absolute),
  so the processes this one starts (multiprocessing, Ray workers, ``zeroopt bench``) find the solver by name.
* The entry points of group ``zeroopt.solvers`` of the installed distributions, each naming a module or a
  callable (``[project.entry-points."zeroopt.solvers"]`` / ``spsa = "mypkg.solvers"`` in a pyproject.toml):
  loaded the first time a solver name is not registered.

Loading is idempotent: a plugin loaded twice (by module name, path or variable, the same file by its path and
then by its module name or the other way round) runs once. A plugin that fails part way (an error, or a call of
``sys.exit``, which is reported as an error of the plugin) leaves nothing registered, so a corrected retry works.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import os
import re
import sys
import threading
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from .registry import list_solvers, set_solver_discovery

__all__ = [
    "ENTRY_POINT_GROUP", "ENV_VAR", "PLUGIN_HELP", "PluginError", "add_plugin_argument", "discover",
    "exported_plugins", "load_plugin", "load_plugin_arguments", "load_plugins", "plugin_key",
]

#: The entry-point group an installed distribution declares its solvers under.
ENTRY_POINT_GROUP = "zeroopt.solvers"
#: The environment variable naming plugins (comma-separated) for every process that reads it.
ENV_VAR = "ZEROOPT_PLUGINS"
#: The help of every command line's ``--plugin``.
PLUGIN_HELP = (f"a module (or a .py file) that registers solvers when imported, e.g. docs/examples/spsa_plugin.py; "
               f"repeat for several (also: the {ENV_VAR} environment variable, comma-separated)")

_LOCK = threading.RLock()
_LOADED: dict[str, tuple[str, ...]] = {}  # plugin key (module[:attr] or absolute path) -> the solvers it registered
_STATE = {"entry_points": False, "discovering": False}


class PluginError(ValueError):
    """A plugin that cannot be loaded (no such module or file, an error on import) or that registers nothing."""


def _is_path(spec: str) -> bool:
    return spec.endswith(".py") or "/" in spec or os.sep in spec


def plugin_key(spec: str | os.PathLike[str]) -> str:
    """What identifies a plugin, and names it to another process: a file's absolute path, else ``module[:attr]``."""
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str):
        raise TypeError(f"a plugin is a module name or a path to a .py file, got {type(spec).__name__}")
    spec = spec.strip()
    if not spec:
        raise PluginError("an empty plugin name: give a module name (mypkg.solvers) or a path to a .py file")
    return str(Path(spec).expanduser().resolve()) if _is_path(spec) else spec


def _sys_path() -> str:
    return ", ".join(p or os.getcwd() for p in sys.path)


def _import_file(path: Path, spec: str) -> ModuleType:
    if not path.is_file():
        raise PluginError(f"plugin {spec!r}: no file {path} (a plugin is a module name on sys.path or a path to an "
                          "existing .py file)")
    name = "zeroopt_plugin_" + re.sub(r"\W", "_", path.stem)
    while name in sys.modules:  # another file of the same name: a module name of its own
        name += "_"
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise PluginError(f"plugin {spec!r}: {path} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name while it runs
    try:
        module_spec.loader.exec_module(module)
    except BaseException as err:
        del sys.modules[name]
        if isinstance(err, SystemExit):
            raise PluginError(_exit_message(f"plugin {spec!r} (file {path})", "importing it", err)) from None
        if not isinstance(err, Exception):  # KeyboardInterrupt and the like: what they are
            raise
        raise PluginError(f"plugin {spec!r} (file {path}) failed to import: {type(err).__name__}: {err}") from err
    return module


def _exit_message(what: str, doing: str, err: SystemExit) -> str:
    """The words for a plugin that called ``sys.exit``: it ends no command line; it is an error of the plugin."""
    return (f"{what} called sys.exit({err.code!r}) while {doing}; a plugin must only register solvers "
            "(zeroopt.register_solver), not end the program")


def _module_of_file(path: Path) -> ModuleType | None:
    """The module already imported from the file ``path`` (by another name or path), if any."""
    for module in list(sys.modules.values()):
        where = getattr(module, "__file__", None)
        if isinstance(where, str) and os.path.basename(where) == path.name and Path(where).resolve() == path:
            return module
    return None


def _file_of_module(module: str) -> Path | None:
    """The ``.py`` file that importing ``module`` would run, when it is not imported yet (else ``None``)."""
    if module in sys.modules:
        return None
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):  # a missing package above it: the import proper says so
        return None
    origin = getattr(found, "origin", None)
    return Path(origin).resolve() if isinstance(origin, str) and origin.endswith(".py") else None


def _import_module(module: str, spec: str) -> ModuleType:
    try:
        where = _file_of_module(module)
        same = None if where is None else _module_of_file(where)  # loaded by its path before: the same plugin
        return same if same is not None else importlib.import_module(module)
    except SystemExit as err:
        raise PluginError(_exit_message(f"plugin {spec!r}", "importing it", err)) from None
    except ModuleNotFoundError as err:
        if err.name is not None and (module == err.name or module.startswith(err.name + ".")):
            raise PluginError(f"plugin {spec!r}: no module named {module!r} on sys.path ({_sys_path()}); install "
                              "it, put its folder on PYTHONPATH, or give the path to its .py file") from None
        raise PluginError(f"plugin {spec!r} failed to import: {type(err).__name__}: {err}") from err
    except Exception as err:
        raise PluginError(f"plugin {spec!r} failed to import: {type(err).__name__}: {err}") from err


def _registered_by(module: str) -> tuple[str, ...]:
    """The solvers whose recipe or factory lives in ``module`` or below it (a plugin imported before it was
    loaded)."""
    def inside(spec: object) -> bool:
        where = getattr(getattr(spec, "recipe", None) or getattr(spec, "factory", None), "__module__", None) or ""
        return where == module or where.startswith(module + ".")

    return tuple(sorted(n for n, s in list_solvers().items() if inside(s)))


def _env_specs() -> list[str]:
    return [p.strip() for p in os.environ.get(ENV_VAR, "").split(",") if p.strip()]


def exported_plugins() -> str:
    """``ZEROOPT_PLUGINS`` as a process started elsewhere (another working directory, a Ray worker) needs it:
    every file by its absolute path."""
    return ",".join(plugin_key(p) for p in _env_specs())


def _export(key: str) -> None:
    present = _env_specs()
    if key in present or (_is_path(key) and key in {plugin_key(p) for p in present if _is_path(p)}):
        return
    if "," in key:
        warnings.warn(f"plugin {key!r} is not passed to child processes: {ENV_VAR} is comma-separated", stacklevel=3)
        return
    os.environ[ENV_VAR] = ",".join([*present, key])


def load_plugin(spec: str | os.PathLike[str], *, export: bool = True) -> tuple[str, ...]:
    """Import a plugin so that its :func:`~zeroopt.register_solver` calls run; return the solvers it registered.

    Parameters
    ----------
    spec
        A module name (``"mypkg.solvers"``), ``"module:function"`` (the function is called with no arguments
        after the import), or a path to a ``.py`` file.
    export
        Add the plugin to ``ZEROOPT_PLUGINS`` in this process's environment, so that the processes it starts
        load it too.

    Returns
    -------
    tuple of str
        The names of the solvers the plugin registered (the same on every later call).

    Raises
    ------
    PluginError
        The module or file does not exist (the message says where it was looked for), fails to import, or
        registers no solver.
    """
    with _LOCK:
        key = plugin_key(spec)
        given = os.fspath(spec)
        if key not in _LOADED:
            before = set(list_solvers())
            with _undone_on_failure():
                if _is_path(key):
                    module = _module_of_file(Path(key)) or _import_file(Path(key), given)
                else:
                    name, _, attr = key.partition(":")
                    module = _import_module(name, given)
                    if attr:
                        _call(module, attr, given)
            new = tuple(sorted(set(list_solvers()) - before)) or _registered_by(module.__name__)
            if not new:
                raise PluginError(f"plugin {given!r} ({getattr(module, '__file__', None) or module.__name__}) "
                                  "registered no solver: it must call zeroopt.register_solver(...) when imported")
            _LOADED[key] = new
        if export:
            _export(key)
        return _LOADED[key]


@contextmanager
def _undone_on_failure() -> Iterator[None]:
    """Undo the registrations (solvers, samplers) of a plugin that fails part way, so a corrected retry can
    register the same names."""
    from ..sample import samplers
    from . import registry

    tables: list[dict[str, Any]] = [registry._REGISTRY, samplers._SAMPLERS]
    before = [set(table) for table in tables]
    try:
        yield
    except BaseException:
        for table, known in zip(tables, before, strict=True):
            for name in set(table) - known:
                del table[name]
        raise


def _call(module: ModuleType, attr: str, spec: str) -> None:
    target: object = module
    try:
        for part in attr.split("."):
            target = getattr(target, part)
    except AttributeError:
        raise PluginError(f"plugin {spec!r}: module {module.__name__!r} has no attribute {attr!r}") from None
    if not callable(target):
        raise PluginError(f"plugin {spec!r}: {attr!r} is not callable (it should register solvers when called)")
    try:
        target()
    except SystemExit as err:
        raise PluginError(_exit_message(f"plugin {spec!r}", f"{attr}() ran", err)) from None
    except Exception as err:
        raise PluginError(f"plugin {spec!r}: {attr}() failed: {type(err).__name__}: {err}") from err


def load_plugins(specs: Iterable[str | os.PathLike[str]], *, export: bool = True) -> tuple[str, ...]:
    """:func:`load_plugin` each of ``specs`` in order; return every solver they registered."""
    return tuple(name for spec in specs for name in load_plugin(spec, export=export))


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    return list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def discover(name: str | None = None) -> bool:
    """Load the plugins not loaded yet that ``ZEROOPT_PLUGINS`` and the entry points name; is ``name`` known now?

    The registry calls it for a solver name it does not know. A plugin of ``ZEROOPT_PLUGINS`` that cannot be
    loaded raises :class:`PluginError`; a broken entry point (an installed distribution's) is reported as a
    warning and skipped, so it cannot stop the other solvers.
    """
    with _LOCK:
        if _STATE["discovering"]:  # a plugin that looks a solver up while it is being imported
            return name is not None and name in list_solvers()
        _STATE["discovering"] = True
        try:
            for spec in _env_specs():
                load_plugin(spec, export=False)
            if not _STATE["entry_points"]:
                _STATE["entry_points"] = True
                for ep in _entry_points():
                    try:
                        load_plugin(re.sub(r"\s*\[.*\]$", "", ep.value), export=False)
                    except PluginError as err:
                        warnings.warn(f"entry point {ep.name!r} of group {ENTRY_POINT_GROUP!r} skipped: {err}",
                                      stacklevel=2)
        finally:
            _STATE["discovering"] = False
        return name is not None and name in list_solvers()


set_solver_discovery(discover)  # get_solver looks a name it does not know up in the plugins not loaded yet


def add_plugin_argument(parser: argparse.ArgumentParser) -> None:
    """Give an argparse command line the ``--plugin MODULE`` option (repeatable; a list under ``plugins``)."""
    parser.add_argument("--plugin", dest="plugins", action="append", default=[], metavar="MODULE", help=PLUGIN_HELP)


def load_plugin_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[str, ...]:
    """Load the plugins of ``args.plugins`` (:func:`add_plugin_argument`); one that fails ends the command line
    through ``parser.error`` (exit code 2, its message on stderr)."""
    try:
        return load_plugins(args.plugins)
    except PluginError as err:
        parser.error(str(err))
