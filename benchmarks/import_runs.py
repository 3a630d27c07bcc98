"""Load per-run files into the results database, or write stored files back out.

``python -m benchmarks.import_runs [--results benchmarks/results] [--db PATH]`` loads

* every suite run file ``suite/<tag>/runs/<experiment>/<attack>/<image>.json[.gz]`` into ``suite_runs``
  (a run already stored at a larger budget is kept), and
* every other per-run file (``**/runs/*.json`` of the quality benchmark, ``**/runs.tgz`` archives, member by
  member) into ``files``, under its path relative to the results folder (archive members as
  ``<archive path>/<member>``).

``--export DIR`` writes the stored files back under ``DIR`` (``--prefix`` selects the names that begin with it,
character for character), each file written beside its place and renamed. The default
database is ``~/.cache/zeroopt/results.sqlite`` (``$ZEROOPT_CACHE`` moves it); also ``zeroopt bench import``.

An archive with a member whose name would land outside the folder it is exported to (an absolute path, a
``..`` part, a link pointing outside) is refused whole, before any of its members is stored; so is such a
stored name on export. So is an archive cut short (nothing of it stored: every member is listed, reading the
whole stream, before the first is stored), and an export where a file and a folder would share a path (nothing
written). Every failure is one line on stderr, exit code 1 (2 for a
wrong argument, 130 when interrupted).
"""

from __future__ import annotations

import argparse
import os
import posixpath
import sqlite3
import sys
import tarfile
import zlib
from pathlib import Path, PurePosixPath

from tqdm.auto import tqdm

from benchmarks.store import FileStore, RunStore, db_file, read_record
from theory.storage import StorageError

RESULTS = Path(__file__).resolve().parent / "results"


class UnsafeNameError(ValueError):
    """An archive member or stored name that would be written outside the output folder."""


class DamagedFileError(ValueError):
    """A suite run file that cannot be read as one (cut short, not gzip or JSON)."""


class ExportConflictError(ValueError):
    """An export where a file and a folder would share a path (two stored names, or what is already there)."""


def _escapes(name: str) -> bool:
    """Whether the relative path ``name`` (``/``-separated) would leave the folder it is joined to."""
    path = PurePosixPath(name.replace("\\", "/"))
    return path.is_absolute() or ".." in path.parts or (len(name) > 1 and name[1] == ":")


def check_members(archive: Path, tar: tarfile.TarFile) -> list[tarfile.TarInfo]:
    """The archive's members, once each is known to stay inside the folder it would be written to.

    Raises
    ------
    UnsafeNameError
        For an absolute name, a ``..`` part, or a link whose target leaves the archive's folder.
    """
    members = tar.getmembers()
    for member in members:
        if _escapes(member.name):
            raise UnsafeNameError(f"{archive}: member {member.name!r} would be written outside the output folder "
                                  "(absolute path or '..'); refusing the archive, nothing of it stored")
        if member.issym() or member.islnk():
            # A symbolic link is relative to its own folder, a hard link to the archive's root.
            base = posixpath.dirname(member.name) if member.issym() else ""
            target = posixpath.normpath(posixpath.join(base, member.linkname))
            if _escapes(target):
                raise UnsafeNameError(f"{archive}: link {member.name!r} points outside the output folder "
                                      f"({member.linkname!r}); refusing the archive, nothing of it stored")
    return members


def import_suite_runs(results: Path, db: Path | None, progress: bool = True) -> dict[str, int]:
    """Load every suite run file under ``results/suite``; returns runs written per tag."""
    counts: dict[str, int] = {}
    for runs in sorted((results / "suite").glob("*/runs")):
        tag = runs.parent.name
        store = RunStore(db, tag)
        files = sorted(p for p in runs.rglob("*.json*") if p.is_file())
        written = 0
        for path in tqdm(files, desc=f"suite/{tag}", disable=not progress, leave=False):
            try:
                record = read_record(path)
            except (ValueError, EOFError, zlib.error) as err:  # JSON, gzip: a file cut short or not a run file
                raise DamagedFileError(f"{path}: not a readable run file ({type(err).__name__}: {err}); "
                                       f"{written} run(s) of suite/{tag} stored before it") from None
            written += store.save(record, keep_larger=True)
        counts[tag] = written
    return counts


def import_files(results: Path, db: Path | None) -> int:
    """Load the other per-run files and archives; returns how many files were stored."""
    files = FileStore(db)
    count = 0
    for path in sorted(results.rglob("runs/*.json")):
        if "suite" in path.relative_to(results).parts[:1]:
            continue
        files.put(str(path.relative_to(results)), path.read_bytes())
        count += 1
    for archive in sorted(results.rglob("runs.tgz")):
        count += _import_archive(files, archive, results)
    return count


def _import_archive(files: FileStore, archive: Path, results: Path) -> int:
    """Store one archive's files; a truncated or damaged archive is a :class:`tarfile.ReadError` naming it.

    Every member header is read (and so the whole compressed stream) before the first member is stored, so an
    archive cut short is refused before any of it is stored.
    """
    stored = 0
    try:
        with tarfile.open(archive) as tar:
            for member in check_members(archive, tar):
                if member.isfile():  # links inside the archive are not stored: only the files they name
                    data = tar.extractfile(member)
                    assert data is not None
                    files.put(f"{archive.relative_to(results)}/{member.name}", data.read())
                    stored += 1
    except (tarfile.TarError, EOFError, zlib.error, OSError) as err:
        if isinstance(err, FileNotFoundError | PermissionError | IsADirectoryError):
            raise
        kept = f"{stored} of its files stored before the damage" if stored else "nothing of it stored"
        raise tarfile.ReadError(f"{archive}: not a readable tar archive, truncated or damaged "
                                f"({type(err).__name__}: {err}); {kept}") from None
    return stored


def export_files(db: Path | None, out: Path, prefix: str = "") -> int:
    """Write stored files back under ``out``; returns how many."""
    files = FileStore(db)
    names = files.names(prefix)
    unsafe = [name for name in names if _escapes(name)]
    if unsafe:
        raise UnsafeNameError(f"stored file name(s) {unsafe[:3]} would be written outside {out}; nothing exported")
    check_export(out, names)
    for name in names:
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        data = files.get(name)
        assert data is not None
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")  # written beside and renamed: whole or absent
        tmp.write_bytes(data)
        os.replace(tmp, target)
    return len(names)


def check_export(out: Path, names: list[str]) -> None:
    """Refuse, before anything is written, an export where a file and a folder would share a path.

    Raises
    ------
    ExportConflictError
        When a stored name is also the folder of another (``a`` and ``a/b``), or a path under ``out`` is in the
        way (a file where a folder is needed, a folder where a file would go).
    """
    stored = set(names)
    for name in names:
        parts = PurePosixPath(name).parts
        for k in range(1, len(parts)):
            folder = "/".join(parts[:k])
            if folder in stored:
                raise ExportConflictError(f"stored files {folder!r} and {name!r} cannot both be written: {folder!r} "
                                          "would be a file and a folder; export them separately with --prefix; "
                                          "nothing exported")
    if out.exists() and not out.is_dir():
        raise ExportConflictError(f"--export {out} is a file, not a folder; nothing exported")
    for name in names:
        target = out / name
        if target.is_dir():
            raise ExportConflictError(f"{target} is a folder, where stored file {name!r} would be written; "
                                      "export into an empty folder; nothing exported")
        for parent in target.relative_to(out).parents:
            if parent != Path(".") and (out / parent).exists() and not (out / parent).is_dir():
                raise ExportConflictError(f"{out / parent} is a file, where stored file {name!r} needs a folder; "
                                          "export into an empty folder; nothing exported")


def main(argv: list[str] | None = None) -> int:
    """Import (default) or export; returns a process exit code."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.import_runs", description=__doc__.split("\n\n")[0])
    p.add_argument("--results", type=Path, default=RESULTS, help=f"results folder (default {RESULTS})")
    p.add_argument("--db", type=Path, default=None, help="database file (default ~/.cache/zeroopt/results.sqlite)")
    p.add_argument("--export", type=Path, default=None, metavar="DIR", help="write the stored files under DIR")
    p.add_argument("--prefix", default="", help="with --export: only names starting with this")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    if args.export is None and not args.results.is_dir():
        p.error(f"--results {args.results}: no such folder (the results folder holding suite/ and **/runs)")
    if args.export is None and args.prefix:
        p.error("--prefix selects the stored files --export writes; give --export DIR with it")
    try:
        if args.export is not None:
            n = export_files(args.db, args.export, args.prefix)
            print(f"[import] wrote {n} file(s) under {args.export}")
            return 0
        counts = import_suite_runs(args.results, args.db, progress=not args.no_progress)
        n_files = import_files(args.results, args.db)
    except (ValueError, OSError, tarfile.TarError, sqlite3.Error) as err:
        # UnsafeNameError, ExportConflictError, DamagedFileError, StorageError name their file themselves.
        text = str(err) if isinstance(err, ValueError | tarfile.TarError | StorageError) else \
            f"{type(err).__name__}: {err}"
        print(f"[import] error: {text}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("[import] interrupted: what was stored before stays stored (each file is one transaction)",
              file=sys.stderr)
        return 130
    for tag, n in counts.items():
        print(f"[import] suite/{tag}: {n} run(s) stored")
    print(f"[import] {n_files} other per-run file(s) stored; database {db_file(args.db)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
