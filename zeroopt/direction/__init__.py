"""The ``direction`` stage: what turns an estimate into the direction stepped along — momentum (:mod:`.momentum`), a
prior from the history (:mod:`.prior`), a quasi-Newton metric (:mod:`.quasi_newton`) — and the bound on a step's
length at the start's scale (:mod:`.step_bound`).
"""
