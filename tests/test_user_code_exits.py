"""User code that ends the program, fails part way or is loaded twice is reported as what it is, never as success.

A plugin, a model module or a model function that calls ``sys.exit`` is an error of that code (one stderr line,
exit 1 or 2); Ctrl-C is exit 130 with one line; a plugin that fails part way leaves nothing registered; a plugin
loaded by its path and by its module name runs once. Command lines run in child processes, as a user runs them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import zeroopt
from applications.campaign.models import load_model

ROOT = Path(__file__).resolve().parents[1]
TINY = ("--data", "digits", "--n", "1", "-b", "20", "--no-db", "--no-progress")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    cache = tmp_path_factory.mktemp("zeroopt-cache")
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**os.environ, "ZEROOPT_CACHE": str(cache), "PYTHONPATH": path, "OMP_NUM_THREADS": "1"}


def cli(env: dict[str, str], *args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    # As the console script runs: the current folder is found by the entry-point loader, not by sys.path[0].
    launcher = [sys.executable, "-c", "import sys; del sys.path[0]; from applications.cli import main; "
                "raise SystemExit(main())"]
    return subprocess.run([*launcher, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def last_line(proc: subprocess.CompletedProcess[str], code: int, *says: str) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    last = [line for line in proc.stderr.splitlines() if line.strip()][-1]
    for text in says:
        assert text in last, (text, last)
    return last


# --- command lines ----------------------------------------------------------------------------------------------


def test_a_plugin_calling_sys_exit_is_a_usage_error(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(0)\n")
    proc = cli(env, "minimize", "--plugin", "exits.py", "--dim", "4", "--budget", "10", cwd=tmp_path)
    last_line(proc, 2, "exits.py", "called sys.exit(0)")
    assert proc.stdout == ""  # nothing that reads as a finished minimisation


def test_ctrl_c_in_a_plugin_is_exit_130_in_one_line(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "stops.py").write_text("raise KeyboardInterrupt\n")
    proc = cli(env, "minimize", "--plugin", "stops.py", "--dim", "4", "--budget", "10", cwd=tmp_path)
    last_line(proc, 130, "interrupted")
    assert len([line for line in proc.stderr.splitlines() if line.strip()]) == 1 and proc.stdout == ""


MODELS = "import sys\n\n\ndef exits():\n    sys.exit(3)\n"


@pytest.mark.parametrize("spec, says", [
    ("sys:exit", "called sys.exit(None)"),
    ("mymodels:exits", "called sys.exit(3)"),
])
def test_a_model_function_calling_sys_exit_is_an_error(env: dict[str, str], tmp_path: Path, spec: str,
                                                       says: str) -> None:
    (tmp_path / "mymodels.py").write_text(MODELS)
    proc = cli(env, "attack", "-m", spec, *TINY, cwd=tmp_path)
    last_line(proc, 1, spec, says)
    assert "attacks run" not in proc.stdout


def test_a_campaign_of_a_model_that_exits_stores_nothing_and_says_why(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text('models = ["builtins:exit"]\ndata = "digits"\nn = 1\nbudgets = [20]\n')
    proc = cli(env, "campaign", "c.toml", "--db", tmp_path / "r.sqlite", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "builtins:exit: the model function called sys.exit(None)" in proc.stderr


def test_a_text_file_that_is_no_lightgbm_model(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "model.txt").write_text("hello\n")
    proc = cli(env, "attack", "-m", "model.txt", *TINY, cwd=tmp_path)
    last_line(proc, 1, "model.txt", "not a LightGBM model file")


def test_a_negative_campaign_seed_is_refused_up_front(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text('models = ["digits-lgbm"]\nn = 1\nbudgets = [20]\nseeds = [0, -1]\n')
    proc = cli(env, "campaign", "c.toml", "--db", tmp_path / "r.sqlite", "--no-progress", cwd=tmp_path)
    last_line(proc, 2, "c.toml", "seeds must be non-negative integers", "[0, -1]")
    assert "failed" not in proc.stderr.lower()


# --- in this process --------------------------------------------------------------------------------------------


def test_model_specs_that_make_no_model() -> None:
    for spec, says in (("builtins:exit", "called sys.exit(None)"), ("builtins:print", "returned None")):
        with pytest.raises(ValueError, match=r"builtins:\w+: the model function " + says.replace("(", r"\(")
                           .replace(")", r"\)")):
            load_model(spec)


PLUGIN = """
from dataclasses import replace

import zeroopt

open({log!r}, "a").write("ran\\n")


def make(context, *, q: int = 20, beta: float = 0.005):
    return replace(zeroopt.rgf(context, q=q, beta=beta), name="toy")


zeroopt.register_recipe({name!r}, make, "rgf under another name")
{after}
"""


def plugin(folder: Path, module: str, name: str, after: str = "") -> Path:
    path = folder / f"{module}.py"
    path.write_text(PLUGIN.format(name=name, after=after, log=str(folder / f"{module}.log")))
    return path


@pytest.mark.parametrize("after, says", [
    ("raise RuntimeError('half done')", "RuntimeError: half done"),
    ("import sys; sys.exit(0)", r"called sys.exit\(0\)"),
])
def test_a_plugin_failing_part_way_leaves_nothing_registered(fresh: None, tmp_path: Path, after: str,
                                                             says: str) -> None:
    path = plugin(tmp_path, "half_plugin", "toy-half", after)
    with pytest.raises(zeroopt.PluginError, match=says):
        zeroopt.load_plugin(path)
    assert "toy-half" not in zeroopt.list_solvers()
    plugin(tmp_path, "half_plugin", "toy-half")  # corrected
    assert zeroopt.load_plugin(path) == ("toy-half",)


@pytest.mark.parametrize("first", ["path", "module"])
def test_a_plugin_by_path_and_by_module_name_runs_once(fresh: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      first: str) -> None:
    module = f"twice_{first}"
    path = plugin(tmp_path, module, f"toy-twice-{first}")
    monkeypatch.syspath_prepend(str(tmp_path))
    specs = [path, module] if first == "path" else [module, path]
    try:
        for spec in specs:
            assert zeroopt.load_plugin(spec) == (f"toy-twice-{first}",)
    finally:
        for name in (module, f"zeroopt_plugin_{module}"):
            sys.modules.pop(name, None)
    assert (tmp_path / f"{module}.log").read_text() == "ran\n"
