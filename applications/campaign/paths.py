"""Where zeroopt keeps what it makes outside the repository: trained built-in models and the results database.

Defined in :mod:`theory.storage` (standard library only), so the theory studies and the campaigns agree on
one cache folder and one default database.
"""

from __future__ import annotations

from theory.storage import cache_dir, default_db_path

__all__ = ["cache_dir", "default_db_path"]
