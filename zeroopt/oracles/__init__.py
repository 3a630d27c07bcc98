"""The oracle: what a solver asks (the requests :class:`~zeroopt.Evaluate` and :class:`~zeroopt.Compare`, in
:mod:`.requests`), who answers at a counted cost under a hard budget (:mod:`.oracle`: oracles, groups of them, the
query ledger) and ready-made objectives to answer from (:mod:`.problems`).
"""
