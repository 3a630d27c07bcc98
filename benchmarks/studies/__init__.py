"""One-off studies of the attack and of the test suite: each module is a script that writes its own page under
``benchmarks/results/`` (white-box looks at the runs, ablations, seed spread, the floor, mutation checks).

The suite that reproduces the paper's tables, compares the peers and measures speed is ``benchmarks`` itself.
"""
