"""What an iteration asks, the stages before the estimate: the precision of its requests (:mod:`.precision`), the
number of probes (:mod:`.counts`; a constant one is :class:`~zeroopt.FixedProbes`), the directions they go along
(:mod:`.samplers` and its registry, :mod:`.orthogonal`, :mod:`.subspace`, :mod:`.mixture`, :mod:`.box`) and their
shape around the iterate (:mod:`.shaping`, :mod:`.history_subspace`).
"""
