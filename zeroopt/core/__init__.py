"""What every part of a solver shares: the contract (the state, the move and the protocols in :mod:`.base`, the stages
of an iteration and the wrapper parts in :mod:`.stages`, the chain that runs them in :mod:`.chain`, its text in
:mod:`.describe`, the published constants in :mod:`.constants`), the errors and input checks (:mod:`.errors`,
:mod:`.checks`) and the array helpers (:mod:`.arrays`, :mod:`.rowwise`). It imports nothing from the other
subpackages but the oracle's request types.
"""
