"""``benchmarks.import_runs`` refuses what it cannot do whole, in one stderr line, and exports only what was asked.

Each command-line case runs ``python -m benchmarks.import_runs`` in a child process and checks the exit code, that
no traceback reaches stderr, and that the last stderr line names the problem.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from benchmarks import import_runs
from theory.storage import FileStore

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str | Path, env_cache: Path) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env = {**os.environ, "ZEROOPT_CACHE": str(env_cache), "PYTHONPATH": path}
    return subprocess.run([sys.executable, "-m", "benchmarks.import_runs", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def fails_cleanly(proc: subprocess.CompletedProcess[str], *says: str, code: int) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    last = [line for line in proc.stderr.splitlines() if line.strip()][-1]
    for text in says:
        assert text in last, (text, last)
    return last


def test_a_prefix_is_matched_character_for_character(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    store = FileStore(db)
    for name in ("theory/d_scaling/a.json", "theory/dXscaling/secret.json", "Theory/d_scaling/b.json",
                 "theory/d%/c.json", "theory/dZZ/d.json"):
        store.put(name, b"{}")
    assert store.names("theory/d_scaling/") == ["theory/d_scaling/a.json"]
    assert store.names("theory/d%") == ["theory/d%/c.json"]
    assert len(store.names()) == 5
    out = tmp_path / "out"
    proc = run("--db", db, "--export", out, "--prefix", "theory/d_scaling/", env_cache=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == \
        ["theory/d_scaling/a.json"]


def test_a_truncated_archive_is_one_line_and_nothing_of_it_is_stored(tmp_path: Path) -> None:
    results = tmp_path / "results"
    (results / "q" / "runs").mkdir(parents=True)
    for k in range(20):
        (results / "q" / "runs" / f"{k}.json").write_bytes(os.urandom(2000))
    archive = results / "q" / "runs.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(results / "q" / "runs", arcname="runs")
    for path in (results / "q" / "runs").iterdir():
        path.unlink()
    archive.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    db = tmp_path / "r.sqlite"
    proc = run("--results", results, "--db", db, "--no-progress", env_cache=tmp_path)
    fails_cleanly(proc, "runs.tgz", "truncated or damaged", "nothing of it stored", code=1)
    assert FileStore(db).names() == []


def test_a_damaged_suite_run_file_is_one_line(tmp_path: Path) -> None:
    runs = tmp_path / "results" / "suite" / "tag" / "runs" / "exp" / "att"
    runs.mkdir(parents=True)
    (runs / "0.json.gz").write_bytes(gzip.compress(b'{"experiment": "exp", "att')[:-8])
    proc = run("--results", tmp_path / "results", "--db", tmp_path / "r.sqlite", "--no-progress",
               env_cache=tmp_path)
    fails_cleanly(proc, "0.json.gz", "not a readable run file", code=1)


def test_a_file_and_a_folder_of_one_name_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    store = FileStore(db)
    store.put("q/runs", b"a file")
    store.put("q/runs/0.json", b"{}")
    out = tmp_path / "out"
    proc = run("--db", db, "--export", out, env_cache=tmp_path)
    fails_cleanly(proc, "'q/runs'", "'q/runs/0.json'", "nothing exported", code=1)
    assert not out.exists()


def test_an_export_blocked_by_what_is_there_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    FileStore(db).put("q/runs/0.json", b"{}")
    out = tmp_path / "out"
    (out / "q").mkdir(parents=True)
    (out / "q" / "runs").write_text("in the way")
    fails_cleanly(run("--db", db, "--export", out, env_cache=tmp_path), "is a file", "nothing exported", code=1)
    (tmp_path / "plain").write_text("x")
    fails_cleanly(run("--db", db, "--export", tmp_path / "plain", env_cache=tmp_path), "is a file", code=1)


@pytest.mark.parametrize("args, says", [
    (("--results", "no/such/folder"), "no such folder"),
    (("--prefix", "theory/"), "--export"),
])
def test_wrong_arguments_are_usage_errors(tmp_path: Path, args: tuple[str, ...], says: str) -> None:
    fails_cleanly(run(*args, "--db", tmp_path / "r.sqlite", env_cache=tmp_path), says, code=2)


def test_a_good_export_writes_every_file_whole(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    FileStore(db).put("q/runs/0.json", b"{}")
    FileStore(db).put("q/runs/1.json", b"[]")
    assert import_runs.export_files(db, tmp_path / "out") == 2
    assert (tmp_path / "out" / "q" / "runs" / "1.json").read_bytes() == b"[]"
    assert not [p for p in (tmp_path / "out").rglob("*.tmp")]
