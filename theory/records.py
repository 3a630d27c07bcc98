"""Where a study's per-run records live: the results database, not the repository.

A study's ``results.json`` (in git) keeps the spec, cell summaries, fits and findings, and a small pointer to
its run records; the records themselves (one per run, with the traced seeds' traces: most of the bytes) go to
table ``files`` of the results database (``~/.cache/zeroopt/results.sqlite`` by default, ``$ZEROOPT_CACHE``
moves it) under ``theory/<study>/runs-<spec digest>.json``. The digest keys the records by the study's full
spec, so a smaller variant written elsewhere (``--out /tmp/x --seeds 2``) never replaces the published runs.

``python -m theory.studies migrate`` moves the records out of ``results.json`` files of the old, full form
(:func:`migrate`); ``python -m theory.studies NAME --reanalyze`` redoes a page from the stored records.

A study stopped by Ctrl-C keeps the runs that finished under ``theory/<study>/partial-<spec digest>.json``
(:func:`store_partial`); the next invocation of the same spec starts from them (:func:`load_partial`) and drops
them once the study is whole (:func:`drop_partial`).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .storage import FileStore, db_file

__all__ = ["clean_record", "drop_partial", "load_partial", "load_records", "migrate", "partial_name", "records_name",
           "store_partial", "store_records"]


def clean_record(record: dict[str, Any]) -> dict[str, Any]:
    """Drop NaN/inf (JSON has none) and round the wall time."""
    out = {}
    for k, v in record.items():
        if isinstance(v, float) and not math.isfinite(v):
            v = None
        if k == "wall_s":
            v = round(v, 4)
        out[k] = v
    return out


def records_name(spec: dict[str, Any]) -> str:
    """The name of a study's records in the database: ``theory/<name>/runs-<12 hex digits of the spec>.json``."""
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()
    return f"theory/{spec['name']}/runs-{digest[:12]}.json"


def partial_name(spec: dict[str, Any]) -> str:
    """Where the finished runs of an interrupted study are kept: ``theory/<name>/partial-<12 hex digits>.json``."""
    return records_name(spec).replace("/runs-", "/partial-")


def store_partial(records: Sequence[dict[str, Any]], spec: dict[str, Any], wall_s: float,
                  db: str | Path | None = None) -> str:
    """Keep the finished runs of an interrupted study (and the seconds they took); return the name they are under.

    Parameters
    ----------
    records
        The runs that finished, as :func:`theory.runner.run_study` made them (NaN/inf become ``None``).
    spec
        The study's spec (``StudySpec.to_dict()``): only a run of the same spec resumes from them.
    wall_s
        The wall-clock seconds spent on them so far.
    db
        The results database (``None``: the user's default one).

    Returns
    -------
    str
        The name in the database's ``files`` table.
    """
    name = partial_name(spec)
    data = json.dumps({"wall_s": wall_s, "records": [clean_record(r) for r in records]}, separators=(",", ":"),
                      allow_nan=False).encode()
    store = FileStore(db)
    try:
        store.put(name, data)
    finally:
        store.close()
    return name


def load_partial(spec: dict[str, Any], db: str | Path | None = None) -> tuple[list[dict[str, Any]], float]:
    """The runs an interrupted invocation of ``spec`` finished, and the seconds they took (``[]``, 0: none)."""
    store = FileStore(db)
    try:
        data = store.get(partial_name(spec))
    finally:
        store.close()
    if data is None:
        return [], 0.0
    kept = json.loads(data)
    return list(kept["records"]), float(kept["wall_s"])


def drop_partial(spec: dict[str, Any], db: str | Path | None = None) -> None:
    """Forget the kept runs of ``spec`` (its whole set is stored now)."""
    store = FileStore(db)
    try:
        store.delete(partial_name(spec))
    finally:
        store.close()


def _encode(records: Sequence[dict[str, Any]]) -> bytes:
    return json.dumps(list(records), separators=(",", ":"), allow_nan=False).encode()


def store_records(records: Sequence[dict[str, Any]], spec: dict[str, Any], db: str | Path | None = None
                  ) -> dict[str, Any]:
    """Store a study's (cleaned) run records in the results database; return the pointer ``results.json`` keeps.

    Parameters
    ----------
    records
        One dict per run, as :func:`theory.runner.run_study` makes them (NaN/inf become ``None``).
    spec
        The study's spec (``StudySpec.to_dict()``); its digest names the stored file.
    db
        The results database (``None``: the user's default one).

    Returns
    -------
    dict
        ``{"stored_as", "count", "traced", "sha256"}``: enough to find the records and check them.
    """
    data = _encode([clean_record(r) for r in records])
    name = records_name(spec)
    store = FileStore(db)
    try:
        store.put(name, data)
    finally:
        store.close()
    return {
        "stored_as": name,
        "count": len(records),
        "traced": sum("trace" in r for r in records),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def load_records(pointer: dict[str, Any], db: str | Path | None = None) -> list[dict[str, Any]]:
    """The run records a ``results.json`` pointer names, checked against its digest.

    Raises
    ------
    FileNotFoundError
        When the database does not hold them (say how to get them back).
    ValueError
        When the stored records are not the ones the summary was made from.
    """
    store = FileStore(db)
    try:
        data = store.get(pointer["stored_as"])
    finally:
        store.close()
    if data is None:
        raise FileNotFoundError(
            f"the run records {pointer['stored_as']} are not in the results database {db_file(db)}: pass the "
            "database that holds them with --db PATH, or rerun the study (the command at the top of its page)"
        )
    if hashlib.sha256(data).hexdigest() != pointer["sha256"]:
        raise ValueError(
            f"{pointer['stored_as']} in {db_file(db)} is not the set of runs this summary was made from "
            "(another run of the same spec replaced it?); rerun the study to write both again"
        )
    return json.loads(data)


def migrate(out: Path, db: str | Path | None = None) -> list[Path]:
    """Move the run records out of every full-form ``out/*/results.json`` into the database.

    Each such file (one with a ``runs`` list: the form before summaries and records were split) has its runs
    stored with :func:`store_records` and is rewritten as the summary with a pointer; already-migrated files
    are left alone. Returns the files rewritten.
    """
    done = []
    for path in sorted(Path(out).glob("*/results.json")):
        data = json.loads(path.read_text())
        if not isinstance(data.get("runs"), list):
            continue
        pointer = store_records(data.pop("runs"), data["spec"], db)
        data["records"] = pointer
        path.write_text(json.dumps(data, indent=1, allow_nan=False) + "\n")
        done.append(path)
    return done
