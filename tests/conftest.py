"""Shared test settings."""

import pytest
from hypothesis import Phase, settings

from zeroopt import plugins, registry

# For benchmarks.studies.mutation_check: a planted bug makes property tests fail, and shrinking (and explaining) a
# failure re-runs whole studies many times over; the first failing example is all a mutation run needs.
settings.register_profile("mutation", phases=(Phase.explicit, Phase.generate), database=None)


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """A registry and plugin loader of the test's own: nothing in ZEROOPT_PLUGINS, entry points not yet read."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(plugins, "_LOADED", {})
    monkeypatch.setattr(plugins, "_STATE", {"entry_points": False, "discovering": False})
    monkeypatch.delenv(plugins.ENV_VAR, raising=False)
