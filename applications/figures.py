"""Rewrite the repository's PNG files as 256-colour palette PNGs where that is smaller (:mod:`theory.figures`).

The helpers themselves (:func:`save_figure`, :func:`compact_png`) live in :mod:`theory.figures` so the theory
studies use them without ``applications``; they are re-exported here. Existing PNGs are converted in place with::

    python -m applications.figures benchmarks/results          # every PNG under the folder
"""

from __future__ import annotations

import argparse
import fnmatch
from collections.abc import Sequence
from pathlib import Path

from theory.figures import DPI, compact_png, save_figure

__all__ = ["DPI", "compact_png", "main", "save_figure"]


def main(argv: Sequence[str] | None = None) -> int:
    """Convert the PNGs under the given folders (or the given files) in place; print the bytes saved."""
    p = argparse.ArgumentParser(prog="python -m applications.figures", description=__doc__.split("\n\n")[0])
    p.add_argument("paths", nargs="+", type=Path, help="PNG files or folders (searched recursively)")
    p.add_argument("--photo", default="*examples*",
                   help="file-name pattern of pictures of inputs (median-cut palette) [*examples*]")
    args = p.parse_args(argv)
    files = [f for p_ in args.paths for f in (sorted(p_.rglob("*.png")) if p_.is_dir() else [p_])]
    before = sum(f.stat().st_size for f in files)
    saved = sum(compact_png(f, photo=fnmatch.fnmatch(f.name, args.photo)) for f in files)
    print(f"{len(files)} PNG file(s): {before:,} -> {before - saved:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
