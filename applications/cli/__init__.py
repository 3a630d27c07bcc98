"""The ``zeroopt`` command line (built on click): ``attack``, ``campaign``, ``report``, ``minimize``, ``study``,
``bench``. ``zeroopt --help`` and ``zeroopt COMMAND --help`` show a working example for each.

The command line lives in ``applications`` because most of it drives attacks; ``zeroopt`` (the optimisation
package) stays free of attacks, torch and trees.
"""

from .main import cli, main

__all__ = ["cli", "main"]
