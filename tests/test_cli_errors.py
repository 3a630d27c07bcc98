"""Nothing silent on the command line: each misuse ends with exit 1 or 2 and one stderr line naming it.

Each case checks the exit code, that no Python traceback reaches stderr, and that the last stderr line names the
problem. Cases that need a process of their own (a console script's path, a user without write permission) and one
case of each subcommand run ``python -m applications.cli`` in a child process, as a user would; the others run the
same ``main`` in this process, which skips a second or two of interpreter start and imports per case. Models are the
digits built-ins (trained once for the test run, copied into a private cache folder) or untrained modules saved here.
"""

from __future__ import annotations

import io
import os
import shutil
import sqlite3
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from applications.campaign import Campaign, ResultsDB
from applications.campaign.models import check_device, load_model
from applications.hardlabel.config import DEFAULT_SOLVER
from benchmarks import import_runs

ROOT = Path(__file__).resolve().parents[1]
TINY = ("--n", "1", "-b", "20", "--no-progress")  # one attack of 20 queries: the point is what happens around it
Here = Callable[..., subprocess.CompletedProcess[str]]  # the ``here`` fixture: ``run`` in this process

# The attacks table of a database made before the columns versions and machine existed.
OLD_SCHEMA = """
CREATE TABLE attacks (
    id INTEGER PRIMARY KEY, dataset TEXT NOT NULL, input_id INTEGER NOT NULL, model TEXT NOT NULL,
    solver TEXT NOT NULL, budget INTEGER NOT NULL, seed INTEGER NOT NULL, goal TEXT NOT NULL,
    options TEXT NOT NULL, input_seed INTEGER NOT NULL, label INTEGER NOT NULL, target INTEGER,
    success INTEGER NOT NULL, distortion REAL, queries INTEGER NOT NULL, trace TEXT NOT NULL, x_adv BLOB,
    wall_time REAL, model_calls REAL, group_size INTEGER, executor TEXT, worker TEXT, command TEXT,
    finished_at TEXT,
    UNIQUE (dataset, input_id, model, solver, budget, seed, goal, options)
);
"""


@pytest.fixture(scope="module")
def env(digits_cache: Callable[[], Path]) -> dict[str, str]:
    """The children's environment: this checkout on the path, a private cache (with the digits models), one thread."""
    cache = digits_cache()
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**os.environ, "ZEROOPT_CACHE": str(cache), "PYTHONPATH": path, "OMP_NUM_THREADS": "1"}


def run(env: dict[str, str], *args: str | Path, cwd: Path | None = None,
        launcher: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [*(launcher or [sys.executable, "-m", "applications.cli"]), *map(str, args)]
    return subprocess.run(cmd, cwd=cwd or ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def here(env: dict[str, str], capsys: pytest.CaptureFixture[str],
         monkeypatch: pytest.MonkeyPatch) -> Here:
    """``run`` in this process: the command line's ``main`` with the children's cache; its code, stdout and stderr."""
    from applications.cli import main

    monkeypatch.setenv("ZEROOPT_CACHE", env["ZEROOPT_CACHE"])

    def run_here(*args: str | Path) -> subprocess.CompletedProcess[str]:
        capsys.readouterr()
        code = main(list(map(str, args)))
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out, err)

    return run_here


def fails_cleanly(proc: subprocess.CompletedProcess[str], *says: str, code: int | None = None) -> str:
    """Exit 1 or 2 (``code`` if given), no traceback, and the last stderr line holding every one of ``says``."""
    assert proc.returncode in ({code} if code else {1, 2}), (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    last = [line for line in proc.stderr.splitlines() if line.strip()][-1]
    for text in says:
        assert text in last, (text, last)
    return last


def make_db(path: Path, schema: str) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(schema)
    conn.close()
    return path


# --- the results database --------------------------------------------------------------------------------------


def test_a_db_that_is_a_text_file(here: Here, tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 100)
    proc = here("attack", "-m", "digits-lgbm", "--db", text, *TINY)
    fails_cleanly(proc, str(text), "not a usable SQLite database", code=1)
    assert text.read_text() == "not a database\n" * 100


def test_a_truncated_db(here: Here, tmp_path: Path) -> None:
    good = tmp_path / "good.sqlite"
    conn = sqlite3.connect(good)
    conn.execute("CREATE TABLE t (x)")
    conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(2000)])
    conn.commit()
    conn.close()
    cut = tmp_path / "cut.sqlite"
    cut.write_bytes(good.read_bytes()[:1500])  # inside the first page: the header is there, the rest is not
    fails_cleanly(here("attack", "-m", "digits-lgbm", "--db", cut, *TINY), str(cut), "truncated", code=1)


def _without_write_permission() -> list[str] | None:
    """A command prefix under which file permissions hold (root ignores them), or None if there is none."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    # Without these capabilities root is refused writes by the mode bits like anyone else.
    return None if setpriv is None else [setpriv, "--bounding-set", "-dac_override,-dac_read_search,-fowner"]


def test_a_read_only_db_fails_before_any_attack(env: dict[str, str], tmp_path: Path) -> None:
    prefix = _without_write_permission()
    if prefix is None:
        pytest.skip("running as root without setpriv: a read-only file cannot be made here")
    db = tmp_path / "ro.sqlite"
    with ResultsDB(db):
        pass
    db.chmod(0o444)
    try:
        proc = run(env, "attack", "-m", "digits-lgbm", "--db", db, *TINY,
                   launcher=[*prefix, sys.executable, "-m", "applications.cli"])
    finally:
        db.chmod(0o644)
    fails_cleanly(proc, str(db), "read-only", code=1)
    assert "attacks run" not in proc.stdout  # refused before the campaign, not after its work


def test_a_db_whose_folder_is_a_file(here: Here, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    db = tmp_path / "file" / "r.sqlite"
    fails_cleanly(here("attack", "-m", "digits-lgbm", "--db", db, *TINY), "cannot make its folder", code=1)


def test_report_on_a_corrupt_file(env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"SQLite format 3\x00" + b"\xff" * 300)
    fails_cleanly(run(env, "report", bad, "--out", tmp_path / "rep"), str(bad), "not a usable SQLite database",
                  code=1)


def test_a_db_of_another_schema_missing_a_key_column(here: Here, tmp_path: Path) -> None:
    schema = OLD_SCHEMA.replace("goal TEXT NOT NULL,", "").replace(", goal, options)", ", options)")
    db = make_db(tmp_path / "nokey.sqlite", schema)
    fails_cleanly(here("attack", "-m", "digits-lgbm", "--db", db, *TINY), str(db), "lacks column(s) goal",
                  code=1)


def test_a_db_of_the_older_schema_gets_its_columns_and_stores_rows(here: Here, tmp_path: Path) -> None:
    db = make_db(tmp_path / "old.sqlite", OLD_SCHEMA)
    proc = here("attack", "-m", "digits-lgbm", "--db", db, *TINY)
    assert proc.returncode == 0, proc.stderr
    assert "1 attacks run and stored, 0 already stored" in proc.stdout
    rows = list(ResultsDB(db).rows())
    assert len(rows) == 1 and rows[0]["versions"] and rows[0]["machine"]
    assert rows[0]["solver"] == DEFAULT_SOLVER  # no --solver: the attack's own default
    again = here("attack", "-m", "digits-lgbm", "--db", db, *TINY)
    assert again.returncode == 0 and "0 attacks run and stored, 1 already stored" in again.stdout


# --- campaign files ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, says", [
    ("", "no models"),
    ('models = ["digits-lgbm"]\nn = "5"\n', "n must be an integer"),
    ('models = ["digits-lgbm"]\nbudgets = "abc"\n', "budgets must be a list of integers"),
    ('models = ["digits-lgbm"\n', "not valid TOML"),
])
def test_a_campaign_file_with_a_wrong_field(here: Here, tmp_path: Path, text: str, says: str) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text(text)
    fails_cleanly(here("campaign", toml, "--no-db", "--no-progress"), str(toml), says, code=2)


# --- models -----------------------------------------------------------------------------------------------------


def test_an_entry_point_whose_package_does_not_exist(here: Here) -> None:
    proc = here("attack", "-m", "no_such_pkg.models:build", "--data", "digits", "--no-db", *TINY)
    fails_cleanly(proc, "no_such_pkg", "no module named", code=1)


LOCAL_MODELS = '''
import numpy as np


def build():
    return lambda x: (np.asarray(x).reshape(len(x), -1).sum(axis=1) > 20).astype(np.int64)


def broken():
    raise RuntimeError("boom")
'''
# What the console script does: the current folder is not on sys.path (python -m puts it there).
CONSOLE_SCRIPT = [sys.executable, "-c", "import sys; del sys.path[0]; from applications.cli import main; "
                  "raise SystemExit(main())"]


def test_an_entry_point_in_the_current_folder_from_the_console_script(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "mymodels.py").write_text(LOCAL_MODELS)
    proc = run(env, "attack", "-m", "mymodels:build", "--data", "digits", "--no-db", *TINY, cwd=tmp_path,
               launcher=CONSOLE_SCRIPT)
    assert proc.returncode == 0, proc.stderr
    assert "1 attacks run and stored" in proc.stdout


def test_an_entry_point_that_raises(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "mymodels.py").write_text(LOCAL_MODELS)
    proc = run(env, "attack", "-m", "mymodels:broken", "--data", "digits", "--no-db", *TINY, cwd=tmp_path,
               launcher=CONSOLE_SCRIPT)
    fails_cleanly(proc, "mymodels:broken", "RuntimeError: boom", code=1)


@pytest.fixture(scope="module")
def digits_weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from applications.digits import DigitsCNN

    path = tmp_path_factory.mktemp("weights") / "digits.pt"
    torch.save(DigitsCNN().state_dict(), path)  # untrained: only the keys and shapes matter here
    return path


@pytest.mark.parametrize("arch", ["mnist-cnn", "cifar-resnet20"])
def test_weights_of_another_architecture(here: Here, digits_weights: Path, arch: str) -> None:
    proc = here("attack", "-m", digits_weights, "--arch", arch, "--data", "digits", "--no-db", *TINY)
    fails_cleanly(proc, str(digits_weights), f"not {arch} weights", "pass --arch digits-cnn", code=1)
    assert len(proc.stderr) < 600  # one sentence, not torch's list of every key


def test_weights_of_no_built_in_architecture(here: Here, tmp_path: Path) -> None:
    path = tmp_path / "other.pt"
    torch.save({"weight": torch.zeros(3)}, path)
    proc = here("attack", "-m", path, "--arch", "digits-cnn", "--data", "digits", "--no-db", *TINY)
    fails_cleanly(proc, str(path), "match no built-in architecture", code=1)


def test_a_pickle_as_weights(here: Here, tmp_path: Path) -> None:
    path = tmp_path / "model.pt"
    torch.save(torch.nn.Linear(64, 10), path)  # a whole pickled module, which weights_only refuses
    proc = here("attack", "-m", path, "--arch", "digits-cnn", "--data", "digits", "--no-db", *TINY)
    fails_cleanly(proc, str(path), "not a plain state_dict", code=1)


def test_a_misspelt_model_without_data(here: Here) -> None:
    proc = here("attack", "-m", "digits-cnnn", "--no-db", *TINY)
    fails_cleanly(proc, "unknown model 'digits-cnnn'", "did you mean digits-cnn", "digits-lgbm, mnist-cnn", code=2)


# --- devices ----------------------------------------------------------------------------------------------------


def test_cuda_without_cuda(here: Here) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    proc = here("attack", "-m", "digits-cnn", "--device", "cuda", "--no-db", *TINY)
    fails_cleanly(proc, "device 'cuda'", "CUDA is not available", code=1)


def test_a_device_that_does_not_exist(here: Here) -> None:
    fails_cleanly(here("attack", "-m", "digits-cnn", "--device", "tpu9", "--no-db", *TINY), "--device", "tpu9",
                  code=2)


def test_the_device_defaults_to_cuda_where_torch_sees_one(digits_weights: Path) -> None:
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert check_device(None) == expected
    assert load_model(str(digits_weights), arch="digits-cnn").device.startswith(expected)
    assert load_model(str(digits_weights), arch="digits-cnn", device="cpu").device == "cpu"


# --- defaults, help and other misuses ---------------------------------------------------------------------------


def test_the_solver_default_is_the_attacks_own(here: Here) -> None:
    assert Campaign(models=["digits-lgbm"]).solvers == [DEFAULT_SOLVER]
    text = here("attack", "--help").stdout
    assert f"[{DEFAULT_SOLVER}" in " ".join(text.split()) and "[rgf]" not in text


def test_campaign_help_says_what_to_trust(env: dict[str, str]) -> None:
    text = " ".join(run(env, "campaign", "--help").stdout.split())
    assert "module:function runs that function" in text and "cluster you trust" in text
    assert "## Trust" in (ROOT / "docs" / "reliability.md").read_text()


@pytest.mark.parametrize("args, says, code, child", [
    (("attack", "-m", "digits-lgbm", "-s", "nosuch", "--no-db", *TINY), "unknown solver(s) 'nosuch'", 2, False),
    (("exact", "-m", "no-such-model", "--n", "1"), "unknown model 'no-such-model'", 1, True),
    (("exact", "-m", "digits-lgbm", "--inputs", "99999"), "outside the dataset", 2, False),
    (("exact", "-m", "digits-lgbm", "--data", "missing.npz"), "missing.npz", 1, False),
])
def test_other_misuses(env: dict[str, str], here: Here,
                       args: tuple[str, ...], says: str, code: int, child: bool) -> None:
    fails_cleanly(run(env, *args) if child else here(*args), says, code=code)


def test_an_out_folder_under_a_file(here: Here, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    proc = here("attack", "-m", "digits-lgbm", "--no-db", "--out", tmp_path / "file" / "out", *TINY)
    fails_cleanly(proc, "--out", "cannot make the folder", code=2)
    assert "attacks run" not in proc.stdout  # before the work, not after it


# --- run archives -----------------------------------------------------------------------------------------------


def _archive(path: Path, members: list[tarfile.TarInfo]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for member in members:
            data = b"{}" if member.isfile() else None
            if data is not None:
                member.size = len(data)
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
    return path


def _member(name: str, link: str | None = None, kind: bytes = tarfile.REGTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    if link is not None:
        info.linkname = link
    return info


@pytest.mark.parametrize("bad", [
    _member("../evil.json"),
    _member("/etc/evil.json"),
    _member("runs/../../evil.json"),
    _member("runs/link", "../../outside", tarfile.SYMTYPE),
    _member("runs/abs", "/etc/passwd", tarfile.SYMTYPE),
    _member("runs/hard", "../outside", tarfile.LNKTYPE),
])
def test_an_archive_member_leaving_the_folder_is_refused(tmp_path: Path, bad: tarfile.TarInfo) -> None:
    results = tmp_path / "results"
    _archive(results / "quality" / "runs.tgz", [_member("runs/good.json"), bad])
    db = tmp_path / "r.sqlite"
    with pytest.raises(import_runs.UnsafeNameError, match="outside the output folder"):
        import_runs.import_files(results, db)
    assert import_runs.FileStore(db).names() == []  # refused whole: not even its good member is stored


def test_a_safe_archive_is_imported_and_a_bad_one_reported_by_zeroopt_bench(env: dict[str, str],
                                                                            tmp_path: Path) -> None:
    results = tmp_path / "results"
    _archive(results / "quality" / "runs.tgz", [_member("runs/a.json"), _member("runs/b", "a.json", tarfile.SYMTYPE)])
    db = tmp_path / "r.sqlite"
    assert import_runs.import_files(results, db) == 1
    assert import_runs.FileStore(db).names() == ["quality/runs.tgz/runs/a.json"]
    _archive(results / "speed" / "runs.tgz", [_member("../../escape.json")])
    proc = run(env, "bench", "import", "--results", results, "--db", db, "--no-progress")
    fails_cleanly(proc, "escape.json", "outside the output folder", code=1)


def test_export_refuses_a_stored_name_leaving_the_folder(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    import_runs.FileStore(db).put("../escape.json", b"{}")
    with pytest.raises(import_runs.UnsafeNameError, match="outside"):
        import_runs.export_files(db, tmp_path / "out")
    assert not (tmp_path / "escape.json").exists()
