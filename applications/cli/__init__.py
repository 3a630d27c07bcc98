"""The ``zeroopt`` command line (built on click): ``attack``, ``campaign``, ``report``, ``minimize``, ``study``,
``bench``. ``zeroopt --help`` and ``zeroopt COMMAND --help`` show a working example for each.

The command line lives in ``applications`` because most of it drives attacks; ``zeroopt`` (the optimisation
package) stays free of attacks, torch and trees.
"""

from __future__ import annotations

import sys

try:
    from .main import cli, main
except ModuleNotFoundError as _missing:
    # `pip install zeroopt` brings the optimiser only; the command line's frameworks come with the extra.
    if _missing.name not in {"click", "torch", "lightgbm", "sklearn", "threadpoolctl", "tqdm", "matplotlib", "tomli"}:
        raise
    _WHY = (f"zeroopt: the command line needs {_missing.name}, which this installation lacks; "
            "install the attack's extra: pip install 'zeroopt[attack]' (in a checkout: pip install -e '.[attack]')")
    cli = None

    def main(argv: list[str] | None = None) -> int:
        """Say which package is missing and how to install it (exit code 1)."""
        print(_WHY, file=sys.stderr)
        return 1

__all__ = ["cli", "main"]
