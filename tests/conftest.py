"""Shared test settings and fixtures."""

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import Phase, settings

from zeroopt.recipes import plugins, registry

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


@pytest.fixture(scope="session")
def digits_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``models`` folder of a cache in which ``load_model`` trained and saved the built-in digits CNN and LightGBM.

    Trained once for the whole test run (the CNN takes seconds); ``digits_cache`` gives each module that runs the
    built-ins a private cache holding a copy, so no results database or other file is shared between modules.
    """
    from applications.campaign.models import load_model

    folder = tmp_path_factory.mktemp("zeroopt-digits-models")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZEROOPT_CACHE", str(folder))
        load_model("digits-cnn", device="cpu"), load_model("digits-lgbm")
    return folder / "models"


@pytest.fixture(scope="session")
def digits_cache(tmp_path_factory: pytest.TempPathFactory, digits_models: Path) -> Callable[[], Path]:
    """Makes a fresh cache folder (for ``ZEROOPT_CACHE``) holding a copy of the trained digits models."""

    def make() -> Path:
        folder = tmp_path_factory.mktemp("zeroopt-cache")
        shutil.copytree(digits_models, folder / "models")
        return folder

    return make
