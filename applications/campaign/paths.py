"""Where zeroopt keeps what it makes outside the repository: trained built-in models and the results database."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir", "default_db_path"]


def cache_dir() -> Path:
    """The user's zeroopt cache folder (created on first use).

    ``$ZEROOPT_CACHE`` when set, else ``$XDG_CACHE_HOME/zeroopt``, else ``~/.cache/zeroopt``.
    """
    explicit = os.environ.get("ZEROOPT_CACHE")
    if explicit:
        root = Path(explicit).expanduser()
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = Path(base).expanduser() / "zeroopt"
    root.mkdir(parents=True, exist_ok=True)
    return root


def default_db_path() -> Path:
    """The default results database, ``<cache_dir>/results.sqlite``."""
    return cache_dir() / "results.sqlite"
