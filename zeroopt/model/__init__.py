"""A model-based trust region: its parts of several stages (:mod:`.trust_region`: the probes that start or repair the
model, its estimate, its step and radius) and the quadratic model they fit (:mod:`.quadratic_model`).
"""
