"""zeroopt and its peers on COCO's suites (``python -m benchmarks.coco``, ``zeroopt bench coco``).

:mod:`.run` runs every (solver, problem) of a suite through ``cocoex`` (the ``coco-experiment`` package) and the DFO
harness's entries and counting wrapper (:mod:`benchmarks.dfo.peers`), writing COCO's standard ``exdata`` folders,
which ``cocopp`` post-processes beside the archived algorithms; :mod:`.exdata` reads them back into ECDFs and their
areas per function group; :mod:`.page` writes a results page from them.
"""
