"""A campaign: inputs × models × solvers × budgets × seeds, from the command line or a small TOML file.

Example TOML (every key but ``models`` is optional)::

    data = "digits"            # built-in name or path (see applications.campaign.data)
    models = ["digits-cnn", "digits-lgbm"]
    solvers = ["rgf", "sign"]  # default: the attack's own (applications.hardlabel.DEFAULT_SOLVER)
    budgets = [500, 1000]
    seeds = [0]
    n = 20                     # the first n inputs (or: inputs = [0, 5, 7])
    targeted = false           # true: target (label + 1) mod K
    batch_size = "auto"        # samples per model call (1: bit-identical on every executor)
    chunk = 32                 # inputs per attack call (one unit of work, written when it finishes)
    [options]                  # for every attack: solver options (q, beta, ...) and the settings of the
    q = 20                     # attack's pieces by their flat names (n_initial, race_starts, prune, verify, ...)
    n_initial = 50

A model named ``module:function`` runs that function: trust a campaign file as you would its code.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from applications.hardlabel.config import DEFAULT_SOLVER, SETTINGS
from theory.arguments import option_problem

from .models import unknown_model

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 reads TOML with the tomli backport (a dependency there)
    import tomli as tomllib

__all__ = ["Campaign", "Task", "input_seed"]


def input_seed(seed: int, input_id: int) -> int:
    """The seed of one input's attack: a function of the campaign seed and the input alone.

    So an input gets the same randomness whatever chunk, worker or executor attacks it.
    """
    return int(np.random.SeedSequence([int(seed), int(input_id)]).generate_state(1)[0])


@dataclass
class Campaign:
    """What to attack, with what, how hard.

    Attributes
    ----------
    models
        Model specs (see :func:`applications.campaign.models.load_model`).
    data
        Data spec (see :func:`applications.campaign.data.load_data`); default: the built-in dataset of the
        first built-in model.
    solvers, budgets, seeds
        The grid; every (input, model, solver, budget, seed) is one attack and one database row. The solver
        defaults to the attack's own, :data:`applications.hardlabel.DEFAULT_SOLVER`.
    n, inputs
        The inputs: explicit ids into the dataset, else the first ``n``.
    targeted
        Targeted attacks toward (label + 1) mod K instead of untargeted ones.
    options
        Solver options and the settings of the attack's pieces by their flat names, for every attack (part of
        the database key): :func:`applications.hardlabel.attack_keywords` maps each setting onto its piece
        (``n_initial`` onto ``Start``, ``prune`` onto ``Polish``, ...) and passes the rest to the solver.
    batch_size
        Samples per model call (``"auto"``, an integer or ``None``); 1 makes results bit-identical across
        executors and chunkings (see :mod:`applications.campaign.executors`).
    chunk
        Inputs per attack call: the unit of work and of resumption.
    arch, device, bounds
        Architecture of weights files, torch device, input domain override.
    pool
        Size of the pool of other inputs a targeted attack starts from (examples of the target class; an
        untargeted attack falls back on them when no random direction changes the label).
    """

    models: list[str]
    data: str | None = None
    solvers: list[str] = field(default_factory=lambda: [DEFAULT_SOLVER])
    budgets: list[int] = field(default_factory=lambda: [1000])
    seeds: list[int] = field(default_factory=lambda: [0])
    n: int | None = 20
    inputs: list[int] | None = None
    targeted: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    batch_size: int | str | None = "auto"
    chunk: int = 32
    arch: str | None = None
    device: str | None = None
    bounds: tuple[float, float] | None = None
    pool: int = 500

    def __post_init__(self) -> None:
        _check_types(self)
        if not self.models:
            raise ValueError("a campaign needs at least one model (--model NAME)")
        for what in ("solvers", "budgets", "seeds"):
            if not getattr(self, what):
                raise ValueError(f"a campaign needs at least one of {what}")
        if any(int(b) <= 0 for b in self.budgets):
            raise ValueError(f"budgets must be positive query counts, got {self.budgets}")
        if any(int(s) < 0 for s in self.seeds):
            raise ValueError(f"seeds must be non-negative integers (e.g. {_EXAMPLES['seeds']}), got {self.seeds}")
        if self.chunk < 1:
            raise ValueError(f"chunk must be >= 1 input per attack call, got {self.chunk}")
        if self.inputs is None and (self.n is None or self.n < 1):
            raise ValueError("give n >= 1 (the first n inputs) or an explicit list of inputs")
        if self.data is None:
            self.data = _default_data(self.models)

    @classmethod
    def from_toml(cls, path: str | Path, **overrides: Any) -> Campaign:
        """Read a campaign file; ``overrides`` (not ``None``) replace its values.

        Raises
        ------
        ValueError
            Naming the file and the problem: not TOML, an unknown key, no models, a value of the wrong type.
        """
        with open(path, "rb") as fh:
            try:
                spec = tomllib.load(fh)
            except tomllib.TOMLDecodeError as err:
                raise ValueError(f"{path}: not valid TOML: {err}") from None
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(spec) - known)
        if unknown:
            raise ValueError(f"{path}: unknown key(s) {unknown}; known keys: {sorted(known)}")
        spec.update({k: v for k, v in overrides.items() if v is not None})
        if not spec.get("models"):
            raise ValueError(f'{path}: no models: the file needs a line like models = ["digits-cnn"] (or give --model)')
        try:
            return cls(**spec)
        except ValueError as err:
            raise ValueError(f"{path}: {err}") from None

    @property
    def goal(self) -> str:
        """``"untargeted"`` or ``"targeted:next"`` (target = (label + 1) mod K)."""
        return "targeted:next" if self.targeted else "untargeted"

    @property
    def options_key(self) -> str:
        """The solver options as canonical JSON (part of the database key)."""
        return json.dumps(self.options, sort_keys=True, separators=(",", ":"))

    def pool_ids(self, available: int, attacked: list[int]) -> list[int]:
        """Dataset indices of the starting pool: the first ``pool`` inputs that are not attacked."""
        skip = set(attacked)
        return [i for i in range(available) if i not in skip][: self.pool]

    def input_ids(self, available: int) -> list[int]:
        """The dataset indices attacked, checked against the dataset's size."""
        ids = list(range(min(int(self.n or 0), available))) if self.inputs is None else [int(i) for i in self.inputs]
        bad = [i for i in ids if not 0 <= i < available]
        if bad:
            raise ValueError(f"input ids {bad[:5]} are outside the dataset (0..{available - 1})")
        return ids


@dataclass
class Task:
    """One attack call: a chunk of inputs of one (model, solver, budget, seed) group. Picklable (Ray)."""

    dataset: str
    model: str
    arch: str | None
    device: str | None
    solver: str
    budget: int
    seed: int
    goal: str
    options: dict[str, Any]
    options_key: str
    batch_size: int | str | None
    input_ids: list[int]
    x: np.ndarray
    y: np.ndarray
    bounds: tuple[float, float]
    store_adv: bool = True
    # (x, y) examples to start targeted attacks from (and the untargeted fallback), or a handle to them in a
    # Ray object store (the executor's ``share``): sent once per worker, not once per task.
    pool: Any = None

    def keys(self) -> list[tuple[Any, ...]]:
        """The database keys of this task's attacks (in :data:`applications.campaign.db.KEY` order)."""
        return [
            (self.dataset, i, self.model, self.solver, self.budget, self.seed, self.goal, self.options_key)
            for i in self.input_ids
        ]


# The list fields and their items' type; an example line of every field, for the error messages.
_LIST_OF = {"models": str, "solvers": str, "budgets": int, "seeds": int, "inputs": int}
_EXAMPLES = {
    "models": 'models = ["digits-cnn"]', "solvers": 'solvers = ["rgf", "sign"]', "budgets": "budgets = [500, 1000]",
    "seeds": "seeds = [0, 1]", "inputs": "inputs = [0, 5, 7]", "n": "n = 20", "chunk": "chunk = 32",
    "pool": "pool = 500", "targeted": "targeted = true", "data": 'data = "digits"', "arch": 'arch = "mnist-cnn"',
    "device": 'device = "cpu"', "options": "[options] table, e.g. q = 20", "bounds": "bounds = [0, 1]",
    "batch_size": 'batch_size = "auto" (or "none", or an integer)',
}


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def _is_number(value: Any) -> bool:
    return _is_int(value) or isinstance(value, float | np.floating)


def _wrong(name: str, expected: str, value: Any) -> ValueError:
    return ValueError(f"{name} must be {expected} (e.g. {_EXAMPLES[name]}), got {value!r}")


def _check_types(c: Campaign) -> None:
    """Each field of the type it takes (a TOML file can hold anything), a lone value made a one-item list."""
    for name, kind in _LIST_OF.items():
        value = getattr(c, name)
        if value is None and name == "inputs":
            continue
        check = _is_int if kind is int else (lambda v: isinstance(v, str))
        words = "integers" if kind is int else "strings"
        if check(value):
            value = [value]
        if not isinstance(value, list | tuple) or not all(check(v) for v in value):
            raise _wrong(name, f"a list of {words}", value)
        setattr(c, name, [int(v) if kind is int else v for v in value])
    for name in ("n", "chunk", "pool"):
        value = getattr(c, name)
        if not (value is None and name == "n") and not _is_int(value):
            raise _wrong(name, "an integer", value)
    if not isinstance(c.targeted, bool | np.bool_):
        raise _wrong("targeted", "true or false", c.targeted)
    for name in ("data", "arch", "device"):
        if getattr(c, name) is not None and not isinstance(getattr(c, name), str):
            raise _wrong(name, "a string", getattr(c, name))
    if not isinstance(c.options, dict):
        raise _wrong("options", "a table of solver options", c.options)
    _check_options(c.options, c.solvers)
    if c.bounds is not None:
        if not isinstance(c.bounds, list | tuple) or len(c.bounds) != 2 or not all(map(_is_number, c.bounds)):
            raise _wrong("bounds", "two numbers LO, HI", c.bounds)
        c.bounds = (float(c.bounds[0]), float(c.bounds[1]))
    if c.batch_size == "none":
        c.batch_size = None
    if not (c.batch_size is None or c.batch_size == "auto" or (_is_int(c.batch_size) and c.batch_size >= 1)):
        raise _wrong("batch_size", '"auto", "none" or a positive integer', c.batch_size)


def _check_options(options: dict[str, Any], solvers: list[str]) -> None:
    """The ``[options]`` table maps onto the attack's pieces and every solver's options (a bad setting or an
    unknown name fails here, before any work); what a campaign sets by a key of its own cannot also come from it."""
    from applications.hardlabel import attack_keywords

    for key, own in (("batch_size", "batch_size"), ("target_pool", "pool"), ("n_classes", "models")):
        if key in options:
            raise ValueError(f"options: {key} is not an [options] entry: the campaign sets it ({_EXAMPLES[own]})")
    try:
        attack_keywords(options)
    except (TypeError, ValueError) as err:
        raise ValueError(f"options: {err}") from None
    problem = option_problem(options, solvers, SETTINGS)
    if problem:
        raise ValueError(f"options: {problem}")


def _default_data(models: list[str]) -> str:
    defaults = {"digits-cnn": "digits", "digits-lgbm": "digits", "mnist-cnn": "mnist", "cifar-resnet20": "cifar10",
                "imagenet-effnet-lite0": "imagenet"}
    for m in models:
        if m in defaults:
            return defaults[m]
    for m in models:  # a misspelt built-in is the likelier mistake than a missing --data
        problem = unknown_model(m)
        if problem:
            raise ValueError(problem)
    raise ValueError(
        f"no data given and none of the models ({', '.join(models)}) is a built-in with a default dataset "
        f"({', '.join(defaults)}): pass --data NAME_OR_PATH"
    )
