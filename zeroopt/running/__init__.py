"""Running solvers: one run or many in lockstep sharing oracle calls (:mod:`.driver`), by hand (:mod:`.ask_tell`),
restarted until the budget is spent (:mod:`.whole_budget`, with CMA-ES phases between local runs in
:mod:`.global_phase`), as fresh starts (:mod:`.restarts`) or a race between starts (:mod:`.racing`), a point's
pruning (:mod:`.pruning`), callbacks (:mod:`.callbacks`), the records a run returns (:mod:`.records`) and how runs
end when something fails (:mod:`.faults`).
"""
