"""Campaigns: the results database, resumption after an interrupt, and the local and Ray executors.

The grid of the issue: 2 models (the built-in digits CNN and LightGBM) × 2 solvers × 20 inputs at a tiny budget,
interrupted mid-way and restarted, must end with every attack stored exactly once — in process, through a real
SIGINT to the command line, and on a real local Ray cluster (skipped without ray), also through a real SIGINT to
``zeroopt attack --executor ray`` (marked slow).
"""

from __future__ import annotations

import importlib.util
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from applications.campaign import Campaign, LocalExecutor, ResultsDB, run_campaign
from applications.campaign.db import KEY

ROOT = Path(__file__).resolve().parents[1]
BUDGET = 120  # tiny: the point is the bookkeeping, not the attack
HAVE_RAY = importlib.util.find_spec("ray") is not None


@pytest.fixture(scope="module")
def cache(digits_cache: Callable[[], Path]) -> Path:
    """A private cache folder for the module, holding the built-in digits models (trained once for the test run)."""
    folder = digits_cache()
    old = os.environ.get("ZEROOPT_CACHE")
    os.environ["ZEROOPT_CACHE"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("ZEROOPT_CACHE", None)
    else:
        os.environ["ZEROOPT_CACHE"] = old


def grid() -> Campaign:
    # batch_size=1: each sample alone through the model, so results are bit-identical on every executor.
    return Campaign(models=["digits-cnn", "digits-lgbm"], solvers=["rgf", "sign"], budgets=[BUDGET], n=20, chunk=5,
                    batch_size=1)


class Stop:
    """Raises KeyboardInterrupt (as a Ctrl-C would) once ``after`` rows are committed."""

    def __init__(self, after: int) -> None:
        self.after, self.seen = after, 0

    def __call__(self, row: dict[str, Any]) -> None:
        self.seen += 1
        if self.seen == self.after:
            raise KeyboardInterrupt


def stored_once(path: Path) -> list[tuple[Any, ...]]:
    """Every key in the file, asserting none appears twice."""
    with sqlite3.connect(path) as conn:
        keys = conn.execute(f"SELECT {', '.join(KEY)} FROM attacks").fetchall()
    assert len(keys) == len(set(keys))
    return keys


def results(path: Path) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    with ResultsDB(path) as db:
        return {tuple(r[k] for k in KEY): (r["distortion"], r["queries"], r["success"], r["trace"])
                for r in db.rows()}


@pytest.fixture(scope="module")
def local_db(cache: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any]:
    """The grid on the local executor, interrupted after 23 rows, then resumed."""
    path = tmp_path_factory.mktemp("local") / "r.sqlite"
    with ResultsDB(path) as db:
        first = run_campaign(grid(), db, LocalExecutor(), progress=False, on_row=Stop(23))
    with ResultsDB(path) as db:
        second = run_campaign(grid(), db, LocalExecutor(), progress=False)
    return path, first, second


def test_local_campaign_killed_midway_resumes_with_every_attack_once(local_db: tuple[Path, Any, Any]) -> None:
    path, first, second = local_db
    assert first.interrupted and first.stored == 23 and first.planned == 80
    assert not second.interrupted and second.already_stored == 23 and second.stored == 57
    keys = stored_once(path)
    assert len(keys) == 80
    assert {(k[2], k[3]) for k in keys} == {(m, s) for m in ("digits-cnn", "digits-lgbm") for s in ("rgf", "sign")}
    rows = list(ResultsDB(path).rows())
    assert all(r["queries"] <= BUDGET and r["trace"] and r["command"] is not None for r in rows)
    assert sum(r["success"] for r in rows) >= 70  # the attack works on these tiny models even at 120 queries


def test_database_keeps_one_row_per_attack_and_uses_wal(tmp_path: Path) -> None:
    db = ResultsDB(tmp_path / "r.sqlite")
    row = {"dataset": "d", "input_id": 1, "model": "m", "solver": "s", "budget": 10, "seed": 0, "goal": "untargeted",
           "options": "{}", "input_seed": 5, "label": 3, "success": True, "distortion": 0.5, "queries": 10,
           "trace": [[4, 0.9], [10, 0.5]]}
    assert db.insert(row) and not db.insert({**row, "distortion": 0.1})
    assert [r["distortion"] for r in db.rows()] == [0.5]
    assert db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    other = ResultsDB(tmp_path / "r.sqlite")  # a second campaign on the same file
    assert other.insert({**row, "seed": 1}) and db.count() == 2
    assert db.insert_many([{**row, "seed": 2}, {**row, "seed": 3}, row]) == 2 and db.count() == 4
    assert db.stored_keys([tuple(row[k] for k in KEY), ("d", 2, "m", "s", 10, 0, "untargeted", "{}")]) == {
        tuple(row[k] for k in KEY)}


def _default_sigint() -> None:
    # A test run started in the background of a non-interactive shell (`pytest &`) inherits SIGINT ignored, and
    # a Python started with SIGINT ignored never raises KeyboardInterrupt: the child gets the default back.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _cli(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "applications.cli", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=_default_sigint)


def _wait_for_rows(db: Path, proc: subprocess.Popen[str], rows: int, timeout: float, poll: float = 0.1) -> int:
    """Poll the database until ``rows`` attacks are stored (or the process ends); return how many are."""
    seen = 0
    deadline = time.monotonic() + timeout
    while seen < rows and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(poll)
        if db.exists():
            try:
                seen = len(stored_once(db))
            except sqlite3.OperationalError:  # the table is not created yet
                pass
    return seen


def test_ctrl_c_on_the_command_line_leaves_a_consistent_database(cache: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    env = {**os.environ, "ZEROOPT_CACHE": str(cache), "OMP_NUM_THREADS": "1"}
    args = ("attack", "-m", "digits-cnn", "-s", "rgf", "--n", "20", "-b", str(BUDGET), "--chunk", "2", "--db", str(db),
            "--no-progress", "--batch-size", "1")
    proc = _cli(*args, env=env)
    _wait_for_rows(db, proc, 4, timeout=120, poll=0.05)
    assert proc.poll() is None, "the campaign finished before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, out
    assert "rerun the same command to resume" in out
    partial = len(stored_once(db))
    assert 4 <= partial < 20
    again = _cli(*args, env=env)
    out, _ = again.communicate(timeout=120)
    assert again.returncode == 0, out
    assert f"{20 - partial} attacks run and stored, {partial} already stored" in out
    assert len(stored_once(db)) == 20


@pytest.fixture(scope="module")
def ray_cluster() -> Any:
    """One real local Ray cluster (2 CPUs) for the module: starting Ray takes seconds."""
    if not HAVE_RAY:
        pytest.skip("ray is not installed (pip install -e '.[ray]')")
    import ray

    from applications.campaign.executors import init_ray

    init_ray(num_cpus=2)
    yield ray
    ray.shutdown()


def test_ray_campaign_killed_midway_resumes_and_matches_the_local_executor_bit_for_bit(
    ray_cluster: Any, local_db: tuple[Path, Any, Any], tmp_path: Path
) -> None:
    from applications.campaign import RayExecutor

    path = tmp_path / "ray.sqlite"
    executor = RayExecutor(workers=2)
    try:
        with ResultsDB(path) as db:
            first = run_campaign(grid(), db, executor, progress=False, on_row=Stop(31))
            assert first.interrupted and first.stored == 31
            second = run_campaign(grid(), db, executor, progress=False)
    finally:
        executor.close()
    assert not first.failed and not second.failed, first.failed + second.failed
    assert second.already_stored == 31 and second.stored == 49
    assert len(stored_once(path)) == 80
    with ResultsDB(path) as db:
        workers = {r["worker"] for r in db.rows()}
    assert workers == {"ray-0", "ray-1"}  # both workers took part; only the driver wrote the file
    ours, local = results(path), results(local_db[0])
    differ = [k for k in local if ours.get(k) != local[k]]
    assert not differ, f"{len(differ)} inputs differ, e.g. {differ[:3]}"  # same seeds, batch_size=1: bit-identical


@pytest.mark.slow  # two real Ray clusters started from the command line: 40-65 s on 2 busy cores
def test_ctrl_c_on_a_ray_campaign_from_the_command_line(cache: Path, tmp_path: Path) -> None:
    """A real Ctrl-C on ``zeroopt attack --executor ray``: consistent database, clean exit, exact resume.

    The signal goes to the whole process group, as a terminal's Ctrl-C does (Ray's local processes included).
    """
    if not HAVE_RAY:
        pytest.skip("ray is not installed (pip install -e '.[ray]')")
    db = tmp_path / "r.sqlite"
    env = {**os.environ, "ZEROOPT_CACHE": str(cache), "OMP_NUM_THREADS": "1"}
    args = ("attack", "-m", "digits-cnn", "-s", "rgf", "--n", "24", "-b", str(BUDGET), "--chunk", "2", "--db", str(db),
            "--no-progress", "--batch-size", "1", "--executor", "ray", "--workers", "2")
    proc = subprocess.Popen([sys.executable, "-m", "applications.cli", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        seen = _wait_for_rows(db, proc, 4, timeout=180)
        assert proc.poll() is None, f"the campaign ended before it could be interrupted ({seen} rows)"
        os.killpg(proc.pid, signal.SIGINT)  # the driver, and whatever Ray started in its group, as Ctrl-C does
        out, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, out
    assert "rerun the same command to resume" in out and "Traceback" not in out, out
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # every row complete, and made by a Ray worker
        assert conn.execute("SELECT COUNT(*) FROM attacks WHERE trace IS NULL OR trace = '' OR finished_at IS NULL "
                            "OR worker NOT LIKE 'ray-%'").fetchone()[0] == 0
    partial = len(stored_once(db))
    assert 4 <= partial < 24
    again = subprocess.run([sys.executable, "-m", "applications.cli", *args], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"{24 - partial} attacks run and stored, {partial} already stored" in again.stdout
    keys = stored_once(db)
    assert len(keys) == 24 and len({k[1] for k in keys}) == 24  # every input once
