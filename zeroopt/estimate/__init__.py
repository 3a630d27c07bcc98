"""The ``estimate`` stage: gradient estimators from the probes' answers (:mod:`.estimators`), differences whose width
adapts to the noise (:mod:`.differences`) and the noise of answers nobody stated, measured from repeats at the
iterate (:mod:`.unstated_noise`).
"""
