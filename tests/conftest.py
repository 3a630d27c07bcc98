"""Shared test settings."""

from hypothesis import Phase, settings

# For benchmarks.studies.mutation_check: a planted bug makes property tests fail, and shrinking (and explaining) a
# failure re-runs whole studies many times over; the first failing example is all a mutation run needs.
settings.register_profile("mutation", phases=(Phase.explicit, Phase.generate), database=None)
