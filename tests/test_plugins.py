"""Solvers from outside zeroopt (:mod:`zeroopt.recipes.plugins`): by module, path, ``ZEROOPT_PLUGINS`` and entry
points, the errors, and the SPSA example plugin reached from every command line and from the processes they start.

The loader's own tests run in this process, each on a copy of the registry; the SPSA plugin (which registers a
sampler too) runs in child processes, on budgets of a few hundred queries.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import zeroopt
from zeroopt.recipes import plugins

ROOT = Path(__file__).resolve().parents[1]
SPSA = "docs/examples/spsa_plugin.py"
TOY = """
from dataclasses import replace

import zeroopt


def make(context, *, q: int = 20, beta: float = 0.005):
    return replace(zeroopt.rgf(context, q=q, beta=beta), name={name!r})


{how}
"""
AT_IMPORT = "zeroopt.register_recipe({name!r}, make, 'rgf under another name')"
ON_CALL = "def register():\n    zeroopt.register_recipe({name!r}, make, 'rgf under another name')"


def toy(folder: Path, module: str, name: str, *, on_call: bool = False) -> Path:
    """A plugin module ``folder/module.py`` registering solver ``name`` on import (or when ``register()`` runs)."""
    how = (ON_CALL if on_call else AT_IMPORT).format(name=name)
    path = folder / f"{module}.py"
    path.write_text(TOY.format(name=name, how=how))
    return path


def runs(name: str) -> zeroopt.OptimizeResult:
    res = zeroopt.minimize(lambda x: float(x @ x), np.ones(4), solver=name, budget=200, seed=0)
    assert res.solver == name and 0 < res.queries <= 200 and res.fun < 4.0
    return res


def test_load_plugin_by_module_name(fresh: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toy(tmp_path, "toy_by_module", "toy-module")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "toy-module" not in zeroopt.list_solvers()
    assert zeroopt.load_plugin("toy_by_module") == ("toy-module",)
    assert zeroopt.load_plugin("toy_by_module") == ("toy-module",)  # once: no "already registered"
    runs("toy-module")
    assert os.environ[plugins.ENV_VAR] == "toy_by_module"  # for the processes this one starts


def test_a_module_imported_before_it_is_loaded_still_names_its_solvers(fresh: None, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    toy(tmp_path, "toy_imported_first", "toy-first")
    monkeypatch.syspath_prepend(str(tmp_path))
    __import__("toy_imported_first")  # registers on import, before the loader sees it
    assert zeroopt.load_plugin("toy_imported_first") == ("toy-first",)


def test_load_plugin_by_path_relative_or_absolute(fresh: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = toy(tmp_path, "toy_by_path", "toy-path")
    monkeypatch.chdir(tmp_path)
    assert zeroopt.load_plugin("toy_by_path.py") == ("toy-path",)
    assert zeroopt.load_plugin(path) == ("toy-path",)  # the same file by another name: loaded once
    runs("toy-path")
    assert os.environ[plugins.ENV_VAR] == str(path.resolve())  # absolute: a child may run elsewhere


def test_module_colon_function_calls_it(fresh: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toy(tmp_path, "toy_on_call", "toy-call", on_call=True)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert zeroopt.load_plugin("toy_on_call:register") == ("toy-call",)
    runs("toy-call")


def test_entry_points_load_when_a_name_is_unknown(fresh: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A distribution's ``zeroopt.solvers`` entry points, a module and a function; a broken one only warns."""
    toy(tmp_path, "toy_ep_module", "toy-ep-module")
    toy(tmp_path, "toy_ep_function", "toy-ep-function", on_call=True)
    info = tmp_path / "toy_solvers-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-solvers\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[zeroopt.solvers]\nmodule = toy_ep_module\n"
                                           "function = toy_ep_function:register\nbroken = no_such_module_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "toy-ep-module" not in zeroopt.list_solvers()
    with pytest.warns(UserWarning, match="entry point 'broken'.*no module named 'no_such_module_xyz'"):
        assert zeroopt.get_solver("toy-ep-module").name == "toy-ep-module"
    assert "toy-ep-function" in zeroopt.list_solvers()
    runs("toy-ep-module")
    runs("toy-ep-function")
    assert plugins.ENV_VAR not in os.environ  # installed: every process finds them itself


def test_zeroopt_plugins_is_read_for_an_unknown_name(fresh: None, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = toy(tmp_path, "toy_from_env", "toy-env")
    monkeypatch.setenv(plugins.ENV_VAR, f" ,{path}")
    runs("toy-env")


def test_a_missing_module_says_where_it_was_looked_for(fresh: None) -> None:
    with pytest.raises(zeroopt.PluginError, match=r"no module named 'no_such_plugin_xyz' on sys.path \(.*"
                       + re.escape(sys.path[-1])):
        zeroopt.load_plugin("no_such_plugin_xyz")
    with pytest.raises(zeroopt.PluginError, match=r"no file .*nowhere[/\\]plugin\.py"):
        zeroopt.load_plugin("nowhere/plugin.py")
    with pytest.raises(zeroopt.PluginError, match="empty plugin name"):
        zeroopt.load_plugin(" ")


def test_a_module_that_fails_to_import_is_named_with_its_error(fresh: None, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "toy_raises.py").write_text("raise RuntimeError('boom')\n")
    (tmp_path / "toy_needs.py").write_text("import no_such_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(zeroopt.PluginError, match=r"toy_raises\.py\) failed to import: RuntimeError: boom"):
        zeroopt.load_plugin(str(tmp_path / "toy_raises.py"))
    # a dependency missing inside the plugin is not the plugin missing
    with pytest.raises(zeroopt.PluginError, match="'toy_needs' failed to import: ModuleNotFoundError: No module named "
                                                  "'no_such_dependency_xyz'"):
        zeroopt.load_plugin("toy_needs")
    with pytest.raises(zeroopt.PluginError, match="has no attribute 'nope'"):
        zeroopt.load_plugin("json:nope")


def test_a_plugin_that_registers_nothing_says_so(fresh: None, tmp_path: Path) -> None:
    (tmp_path / "toy_empty.py").write_text("x = 1\n")
    with pytest.raises(zeroopt.PluginError, match=r"toy_empty\.py.*registered no solver.*register_solver"):
        zeroopt.load_plugin(tmp_path / "toy_empty.py")
    with pytest.raises(zeroopt.PluginError, match="'json'.*registered no solver"):
        zeroopt.load_plugin("json")


def test_an_unknown_name_tries_the_variable_then_says_how_to_add_one(fresh: None,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match=r"unknown solver 'toy-none'.*--plugin MODULE"):
        zeroopt.get_solver("toy-none")
    monkeypatch.setenv(plugins.ENV_VAR, "no_such_plugin_xyz")
    with pytest.raises(zeroopt.PluginError, match="no module named 'no_such_plugin_xyz'"):
        zeroopt.get_solver("toy-none")
    runs("rgf")  # a registered name never reads the variable


def test_the_page_shows_the_example_plugin_and_it_is_short() -> None:
    """docs/writing-a-solver.md's third block is the example file's code, at most 30 lines beside blank lines,
    comments and the docstring."""
    text = (ROOT / SPSA).read_text()
    code = "\n".join(text.splitlines()[ast.parse(text).body[0].end_lineno:]).strip()
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs/writing-a-solver.md").read_text(), flags=re.S)
    assert blocks[2].strip() == code
    lines = [line for line in code.splitlines() if line.strip() and not line.strip().startswith("#")]
    assert len(lines) <= 30, len(lines)
    assert "alpha: float = 0.602" in code and "gamma: float = 0.101" in code


def child(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """A child process in the checkout, one thread, this checkout first on the path."""
    base = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    base.pop(plugins.ENV_VAR, None)
    return subprocess.run([sys.executable, *args], cwd=ROOT, env={**base, **(env or {})}, capture_output=True,
                          text=True, timeout=timeout)


SPAWNED = """
import multiprocessing, sys
import numpy as np
import zeroopt


def run(seed):
    res = zeroopt.minimize(lambda x: float(x @ x), np.ones(8), solver="spsa", budget=300, seed=seed)
    return f"{res.solver} {res.queries} {res.fun:.6g}"


if __name__ == "__main__":
    if sys.argv[1:] == ["load"]:
        zeroopt.load_plugin("docs/examples/spsa_plugin.py")
    print(run(0))
    with multiprocessing.get_context("spawn").Pool(1) as pool:  # a fresh interpreter: only the variable tells it
        print(pool.apply(run, (1,)))
"""


@pytest.mark.parametrize("how", ["variable", "load"])
def test_spsa_reaches_spawned_processes(how: str, tmp_path: Path) -> None:
    (tmp_path / "spawned.py").write_text(SPAWNED)
    out = child(str(tmp_path / "spawned.py"), *(["load"] if how == "load" else []),
                env={plugins.ENV_VAR: SPSA} if how == "variable" else None)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")[:2]
    for line in lines:
        name, queries, fun = line.split()
        assert name == "spsa" and 0 < int(queries) <= 300 and float(fun) < 8.0, out.stdout


def test_spsa_from_zeroopt_minimize() -> None:
    out = child("-m", "applications.cli", "minimize", "--problem", "log_norm", "--dim", "8", "--budget", "300",
                "--plugin", SPSA, "--solver", "spsa", "-o", "A=5")
    assert out.returncode == 0, out.stderr
    found = re.search(r"log_norm\(d=8\) by spsa: f = (\S+) .*, (\d+) queries of 300", out.stdout)
    assert found and int(found[2]) > 0 and float(found[1]) < np.log(1 + 8.0), out.stdout


def test_spsa_from_zeroopt_attack(tmp_path: Path, digits_cache: Callable[[], Path]) -> None:
    db = tmp_path / "results.sqlite"
    out = child("-m", "applications.cli", "attack", "-m", "digits-lgbm", "--n", "1", "-b", "100", "--no-progress",
                "--db", str(db), "--plugin", SPSA, "-s", "spsa", env={"ZEROOPT_CACHE": str(digits_cache())})
    assert out.returncode == 0, out.stderr
    rows = sqlite3.connect(db).execute("SELECT solver, queries, success FROM attacks").fetchall()
    assert len(rows) == 1 and rows[0][0] == "spsa" and 0 < rows[0][1] <= 100 and rows[0][2] == 1, rows
    (command,) = sqlite3.connect(db).execute("SELECT command FROM attacks").fetchone()
    assert "spsa" in out.stdout and f"--plugin {SPSA}" in command


def test_a_bad_plugin_is_a_usage_error_on_every_command_line() -> None:
    for args in (["-m", "applications.cli", "minimize", "--plugin", "no_such_plugin_xyz"],
                 ["-m", "theory.studies", "d-scaling", "--plugin", "no_such_plugin_xyz"],
                 ["-m", "theory.studies", "d-scaling", "--solver", "no-such-solver"]):
        out = child(*args)
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        assert "no_such_plugin_xyz" in out.stderr or "unknown solver 'no-such-solver'" in out.stderr


def test_spsa_from_theory_studies_with_worker_processes(tmp_path: Path) -> None:
    out = child("-m", "theory.studies", "d-scaling", "--plugin", SPSA, "--solver", "spsa", "--seeds", "2",
                "--dims", "4", "--deltas", "0.5", "--cap", "0.05", "--workers", "2", "--no-progress",
                "--out", str(tmp_path), "--db", str(tmp_path / "db.sqlite"))
    assert out.returncode == 0, out.stderr
    results = json.loads((tmp_path / "d-scaling" / "results.json").read_text())
    assert results["spec"]["solver"] == "spsa" and f"--plugin {SPSA}" in results["command"]
    (cell,) = results["cells"]
    assert cell["runs"] == 2 and cell["medians"]["iterate_queries"] > 0


def _shared_higgs() -> bool:
    from applications.datasets import shared_dir

    return (shared_dir() / "data" / "higgs").exists()


@pytest.mark.skipif(not _shared_higgs(), reason="the shared HIGGS data is missing; set ZEROOPT_SHARED")
def test_spsa_from_the_benchmark_harness_through_zeroopt_bench(tmp_path: Path) -> None:
    """``zeroopt bench suite`` hands ``--plugin`` to ``python -m benchmarks.run_suite``, which runs the solver."""
    from benchmarks.store import RunStore

    out = child("-m", "applications.cli", "bench", "suite", "--quick", "--experiments", "gbdt-higgs", "--attacks",
                "ours-spsa", "--images", "1", "--max-budget", "100", "--runs-only", "--no-progress", "--db",
                str(tmp_path / "db.sqlite"), "--results-dir", str(tmp_path / "results"), "--plugin", SPSA)
    assert out.returncode == 0, out.stderr
    assert "attacks ['ours-spsa']" in out.stdout, out.stdout
    (record,) = RunStore(tmp_path / "db.sqlite", "quick").all_records()
    assert record["attack"] == "ours-spsa" and not record["error"], record
    assert 0 < record["queries"] <= record["budget"] <= 100 and record["distortion"] is not None, record
    assert f"--plugin {SPSA}" in record["command"]


def test_ray_workers_get_the_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """init_ray hands ZEROOPT_PLUGINS (files by absolute path) to a local cluster's workers and a remote one's."""
    from applications.campaign.executors import init_ray

    calls: list[dict] = []
    monkeypatch.setitem(sys.modules, "ray", SimpleNamespace(init=lambda **kw: calls.append(kw)))
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv(plugins.ENV_VAR, f"{SPSA},mypkg.solvers")
    init_ray(None)
    init_ray("ray://head:10001")
    wanted = f"{ROOT / SPSA},mypkg.solvers"
    assert [c["runtime_env"]["env_vars"][plugins.ENV_VAR] for c in calls] == [wanted, wanted]
    local, remote = (c["runtime_env"]["env_vars"] for c in calls)
    assert "PYTHONPATH" in local and "PYTHONPATH" not in remote


def test_parallel_tasks_pass_the_plugin_to_their_suite(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks import parallel

    monkeypatch.chdir(ROOT)
    args = SimpleNamespace(preset="quick", torch_device="cpu", seed=0, results_dir=Path("r"), tag=None, attacks=None,
                           made_on=None, plugins=[SPSA, "mypkg.solvers"])
    cmd = parallel.suite_argv(parallel.Task("gbdt-higgs", 0, 1), args)
    assert cmd[-4:] == ["--plugin", str(ROOT / SPSA), "--plugin", "mypkg.solvers"]
