"""What an iteration does with its direction: the ``step`` stage's step rules (:mod:`.stepping`), the ``amend`` stage's
parts that amend the move — the best probe and the unit-sphere retraction (:mod:`.amends`), the probe radius β's
rules (:mod:`.radius`, :mod:`.radius_step`, :mod:`.noise`) — and the ``stop`` stage's rules (:mod:`.stopping`).
"""
