"""``zeroopt minimize``, ``zeroopt study`` and ``zeroopt bench dfo`` check every argument before any work (issue 63).

Each misuse must end with exit 1 or 2, no traceback, exactly one stderr line naming the problem (the last one), and
nothing written that claims success. One misuse of each command line runs in a child process, as a user would run it;
the rest run the same ``main`` in this process (its stdout, stderr and the warnings it shows, as a child would print
them), which skips a second or two of interpreter start and imports per case. Ctrl-C on a study with two workers
stops them at once, keeps the runs that finished and exits 130.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "applications.cli"]
DFO = [sys.executable, "-m", "benchmarks.dfo"]  # what `zeroopt bench dfo` runs, without the launcher's second start


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The children's environment: this checkout on the path, a private cache, one thread."""
    cache = tmp_path_factory.mktemp("zeroopt-cache")
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**os.environ, "ZEROOPT_CACHE": str(cache), "PYTHONPATH": path, "OMP_NUM_THREADS": "1"}


def _run(cmd: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``cmd`` in its own process group, every process of which is killed if it runs past ``timeout``."""
    with subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


# Warnings Python shows on stderr by default (outside __main__): every category but these.
HIDDEN_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


@pytest.fixture
def here(env: dict[str, str], capsys: pytest.CaptureFixture[str],
         monkeypatch: pytest.MonkeyPatch) -> Callable[[list[str], dict[str, str]], subprocess.CompletedProcess[str]]:
    """Runs a command line's ``main`` in this process, in the children's folder and cache: what a child would give."""
    from applications.cli import main as cli_main
    from benchmarks.dfo.__main__ import main as dfo_main

    mains = {tuple(CLI): cli_main, tuple(DFO): dfo_main}
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("ZEROOPT_CACHE", env["ZEROOPT_CACHE"])

    def run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        capsys.readouterr()
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("default")
            try:
                code = mains[tuple(cmd[:3])](cmd[3:])
            except SystemExit as done:  # argparse's usage errors, as in a child
                code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        out, err = capsys.readouterr()
        err += "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno)  # type: ignore[arg-type]
                       for w in shown if not issubclass(w.category, HIDDEN_WARNINGS))
        return subprocess.CompletedProcess(cmd, code, out, err)

    return run


def refused(env: dict[str, str], launcher: list[str], args: list[str], tmp_path: Path, *says: str,
            code: int | None = None,
            run: Callable[[list[str], dict[str, str]], subprocess.CompletedProcess[str]] | None = None,
            ) -> subprocess.CompletedProcess[str]:
    """Run (in a child process unless ``run`` is given), and check: exit 1 or 2 (``code`` if given), no traceback,
    one error line (the last) holding ``says``."""
    (tmp_path / "file").write_text("x")
    args = [a.replace("TMP", str(tmp_path)) for a in args]
    proc = (run or _run)([*launcher, *args], env)
    assert proc.returncode in ({code} if code else {1, 2}), (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    named = [line for line in lines if "error" in line.lower()]
    assert named == [lines[-1]], proc.stderr
    for text in says:
        assert text in lines[-1], (text, lines[-1])
    # Nothing that claims success: no outcome printed, no page, summary or run record written.
    assert proc.stdout.strip() == "", proc.stdout
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix in (".md", ".json", ".png")]
    assert written == [], written
    return proc


@pytest.mark.parametrize("args, says", [
    (["--seed", "-1"], "--seed"),
    (["--noise", "uniform", "--eps", "-1"], "--eps"),
    (["--noise", "uniform", "--eps", "nan"], "--eps"),
    (["--dim", "2001", "--solver", "trust-region"], "d = 2001 is above its 2000"),
    (["--dim", str(10**12)], "--dim"),
])
def test_minimize_refuses(env: dict[str, str], here: Callable, tmp_path: Path, args: list[str], says: str) -> None:
    refused(env, CLI, ["minimize", "--dim", "4", "--budget", "50", *args], tmp_path, says, code=2, run=here)


STUDY = ["study", "d-scaling", "--no-progress", "--out", "TMP/out", "--db", "TMP/db.sqlite"]


@pytest.mark.parametrize("args, says, code", [
    (["--dims", "0"], "--dims", 2),
    (["--dims", "-3"], "--dims", 2),
    (["--deltas", "-0.1"], "--deltas", 2),
    (["--seeds", "0"], "--seeds", 2),  # wrote a study of nothing, exit 0
    (["--cap", "-1"], "--cap", 2),  # the same
    (["--out", "TMP/file"], "is a file", 2),
    (["--db", "TMP/file/db.sqlite"], "--db", 2),
    (["--reanalyze"], "nothing stored to reanalyze", 1),
])
def test_study_refuses(env: dict[str, str], here: Callable, tmp_path: Path, args: list[str], says: str,
                       code: int) -> None:
    refused(env, CLI, [*STUDY, *args], tmp_path, says, code=code, run=here)


DFO_ARGS = ["--set", "more-wild", "--variants", "smooth", "--solvers", "Powell", "--kappa-max", "2",
            "--cache", "TMP/cache", "--out", "TMP/out"]


@pytest.mark.parametrize("launcher, args, says", [
    (DFO, ["--problems", "0"], "--problems"),  # ran problem 53, exit 0
    (DFO, ["--problems", "-1"], "--problems"),  # ran problem 52
    (DFO, ["--problems", "54"], "--problems"),
    (DFO, ["--problems", "abc"], "--problems"),
    (DFO, ["--kappa-max", "0"], "--kappa-max"),  # pages of zero-evaluation runs, exit 0
    (DFO, ["--kappa-max", "-3"], "--kappa-max"),
    (DFO, ["--seconds", "-1"], "--seconds"),
    (DFO, ["--variants", "bogus"], "--variants"),
    (DFO, ["--dims", "0"], "--dims"),
    (DFO, ["--out", "TMP/file"], "--out"),
    (DFO, ["--cache", "TMP/file/cache"], "--cache"),
])
def test_bench_dfo_refuses(env: dict[str, str], here: Callable, tmp_path: Path, launcher: list[str], args: list[str],
                           says: str) -> None:
    refused(env, launcher, [*DFO_ARGS, *args], tmp_path, says, code=2, run=here)


@pytest.mark.parametrize("launcher, args, says, code", [
    (CLI, ["minimize", "--dim", "4", "--budget", "50", "--seed", "-1"], "--seed", 2),
    (CLI, [*STUDY, "--reanalyze"], "nothing stored to reanalyze", 1),
    (CLI + ["bench", "dfo"], [*DFO_ARGS, "--problems", "0"], "--problems", 2),  # through the launcher
    (DFO, [*DFO_ARGS, "--problems", "54"], "--problems", 2),
])
def test_each_command_line_refuses_in_a_child_process(env: dict[str, str], tmp_path: Path, launcher: list[str],
                                                      args: list[str], says: str, code: int) -> None:
    refused(env, launcher, args, tmp_path, says, code=code)


def test_ctrl_c_stops_a_study_with_two_workers_at_once_and_keeps_what_finished(env: dict[str, str],
                                                                               tmp_path: Path) -> None:
    from theory.records import load_partial, partial_name
    from theory.studies import STUDIES
    from theory.study_options import override, parser

    grid = ["--dims", "4", "--deltas", "0.3", "--seeds", "5000"]  # far more runs than finish before the signal
    proc = subprocess.Popen([*CLI, "study", "d-scaling", *grid, "--workers", "2", "--out", str(tmp_path / "out"),
                             "--db", str(tmp_path / "db.sqlite")], cwd=ROOT, env=env, stderr=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, start_new_session=True,
                            # a shell's background job ignores SIGINT and its children inherit that: Ctrl-C's default
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(lambda: proc.stderr.read(1), "")), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        # tqdm's bar: at least two runs finished (it may skip counts between its redraws)
        while max(map(int, re.findall(r"\| (\d+)/5000", "".join(seen))), default=0) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "".join(seen)
        os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C in a terminal: the whole process group
        sent = time.monotonic()
        assert proc.wait(timeout=40) == 130  # a loaded machine takes seconds to stop two workers
        assert time.monotonic() - sent < 30  # not the minutes the queued runs would take
    finally:
        if proc.poll() is None:  # (the code before this fix) no worker left running after the test
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    reader.join(timeout=5)
    err = "".join(seen)
    assert "Traceback" not in err, err
    last = err.replace("\r", "\n").strip().splitlines()[-1]
    assert last.startswith("interrupted: ") and "rerun the same command" in last, last
    finished = int(last.split()[1])
    assert 2 <= finished < 5000
    args = parser().parse_args(["d-scaling", *grid])
    spec = override(STUDIES["d-scaling"].spec, args).to_dict()
    kept, _ = load_partial(spec, tmp_path / "db.sqlite")
    assert len(kept) == finished and partial_name(spec) in last
    assert len({(r["d"], r["seed"]) for r in kept}) == finished  # each a whole record of its own run
    assert not (tmp_path / "out" / "d-scaling" / "results.json").exists()  # no summary of a study not run
    json.dumps(kept)  # plain JSON values
