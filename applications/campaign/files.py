"""Named files in the results database: :mod:`theory.storage`, re-exported where the campaigns' code looks.

The store needs only the standard library, so it lives below ``applications`` (the theory studies use it too).
"""

from __future__ import annotations

from theory.storage import FileStore, db_file

__all__ = ["FileStore", "db_file"]
