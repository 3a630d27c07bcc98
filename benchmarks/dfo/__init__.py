"""zeroopt beside nevergrad, pycma, COBYQA, Powell, Nelder–Mead and Py-BOBYQA on standard derivative-free benchmarks.

:mod:`.more_wild` (the Moré–Wild set, from :mod:`.mgh`), :mod:`.highdim` (d >= 100), :mod:`.peers` (the solvers
and the one counting wrapper), :mod:`.profiles` (data and performance profiles), :mod:`.run` (cached runs),
:mod:`.report` (pages). Run with ``python -m benchmarks.dfo`` or ``zeroopt bench dfo``.
"""
